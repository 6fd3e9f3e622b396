//! A recorded response (or the recording's `error`) → the call's result:
//! the answer a non-streamed body holds, a stream merged into one
//! ([`super::stream`]), the provider's error message, or why there is
//! nothing to read.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::call::{body_of, header, Answer, Api, CallResult};
use super::stream;
use crate::model::Usage;
use crate::read::calls::{chat_call, openai_finish, split_blocks};
use crate::read::usage;

/// The result of a call, from the line's `response` and `error`.
pub fn read(api: &Api, response: Option<&Json>, error: Option<&Json>) -> CallResult {
    let error = error.and_then(Json::as_object).map(|e| {
        let kind = e.get("kind").and_then(Json::as_str).unwrap_or("unknown");
        let message = e.get("message").and_then(Json::as_str).unwrap_or("");
        (Arc::<str>::from(kind), message.to_string())
    });
    let Some(response) = response.and_then(Json::as_object) else {
        return match error {
            Some((kind, message)) => CallResult::NoResponse { kind, message },
            None => CallResult::Unreadable("neither a response nor an error".into()),
        };
    };
    let status = response
        .get("status")
        .and_then(Json::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(0);
    let cut = error
        .as_ref()
        .map(|(kind, message)| format!("{kind}: {message}"));
    if status == 0 {
        return CallResult::Unreadable("a response without a status".into());
    }
    if status >= 400 {
        return CallResult::Failed {
            status,
            message: error_message(response),
        };
    }
    let empty = Map::new();
    let headers = response
        .get("headers")
        .and_then(Json::as_object)
        .unwrap_or(&empty);
    let is_stream = header(headers, "content-type")
        .is_some_and(|t| t.to_ascii_lowercase().contains("text/event-stream"));
    if let Some(text) = response.get("body_text").and_then(Json::as_str) {
        // A stream whatever its content type says (some servers send
        // `text/plain`), when its text is Server-Sent Events.
        let looks = text.trim_start();
        if is_stream || looks.starts_with("data:") || looks.starts_with("event:") {
            return stream::merge(api, text, cut);
        }
    }
    let mut result = match body_of(response) {
        Ok(body) => answer(api, &body),
        Err(why) => return CallResult::Unreadable(format!("response {why}")),
    };
    if let (CallResult::Answer(a), Some(cut)) = (&mut result, cut) {
        a.incomplete = Some(cut);
    }
    result
}

/// The answer a whole (non-streamed) response body holds.
pub fn answer(api: &Api, body: &Json) -> CallResult {
    let read = match api {
        Api::ChatCompletions => chat_answer(body),
        Api::AnthropicMessages => anthropic_answer(body),
        Api::Responses => responses_answer(body),
        Api::Other(path) => Err(format!("{path} is no model API mirotrace reads")),
    };
    match read {
        Ok(a) => CallResult::Answer(a),
        Err(why) => CallResult::Unreadable(why),
    }
}

fn model_of(body: &Json) -> Option<Arc<str>> {
    body.get("model").and_then(Json::as_str).map(Arc::from)
}

/// Chat Completions: the first choice's message.
pub fn chat_answer(body: &Json) -> Result<Answer, String> {
    let choice = body
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or("a Chat Completions response without choices")?;
    let message = choice.get("message").ok_or("a choice without a message")?;
    let mut text = message
        .get("content")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    if text.is_empty() {
        if let Some(refusal) = message.get("refusal").and_then(Json::as_str) {
            text = refusal.to_string();
        }
    }
    let tool_calls = match message.get("tool_calls") {
        Some(calls @ Json::Array(_)) => crate::read::calls::normalize_tool_calls(calls)
            .as_array()
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(Answer {
        text,
        tool_calls,
        finish: choice
            .get("finish_reason")
            .and_then(Json::as_str)
            .map(|f| openai_finish(f).to_string()),
        usage: body.get("usage").and_then(usage::of),
        model: model_of(body),
        incomplete: None,
    })
}

/// Anthropic's usage: its `input_tokens` leave out the tokens read from
/// and written to the cache, which are input all the same.
pub fn anthropic_usage(u: &Json) -> Option<Usage> {
    let part = |k: &str| usage::count(u.get(k));
    let (input, read, created) = (
        part("input_tokens"),
        part("cache_read_input_tokens"),
        part("cache_creation_input_tokens"),
    );
    let input = match (input, read, created) {
        (None, None, None) => None,
        _ => Some(input.unwrap_or(0) + read.unwrap_or(0) + created.unwrap_or(0)),
    };
    let usage = Usage {
        input_tokens: input,
        output_tokens: part("output_tokens"),
        cached_input_tokens: read,
    };
    (usage != Usage::default()).then_some(usage)
}

/// Anthropic Messages: content blocks (thinking left out), `stop_reason`.
pub fn anthropic_answer(body: &Json) -> Result<Answer, String> {
    let blocks = body
        .get("content")
        .and_then(Json::as_array)
        .ok_or("an Anthropic response without content")?;
    let split = split_blocks(blocks);
    Ok(Answer {
        text: split.text,
        tool_calls: split.calls,
        finish: body
            .get("stop_reason")
            .and_then(Json::as_str)
            .map(|f| openai_finish(f).to_string()),
        usage: body.get("usage").and_then(anthropic_usage),
        model: model_of(body),
        incomplete: None,
    })
}

/// Responses: `output` items (message text parts, function calls);
/// `status` and `incomplete_details` say how it ended.
pub fn responses_answer(body: &Json) -> Result<Answer, String> {
    let output = body
        .get("output")
        .and_then(Json::as_array)
        .ok_or("a Responses response without output")?;
    let mut answer = Answer {
        usage: body.get("usage").and_then(usage::of),
        model: model_of(body),
        ..Answer::default()
    };
    for item in output {
        match item.get("type").and_then(Json::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    let text = match part.get("type").and_then(Json::as_str) {
                        Some("refusal") => part.get("refusal"),
                        _ => part.get("text"),
                    };
                    answer
                        .text
                        .push_str(text.and_then(Json::as_str).unwrap_or(""));
                }
            }
            Some("function_call") => answer.tool_calls.push(chat_call(
                item.get("call_id").or_else(|| item.get("id")),
                item.get("name").and_then(Json::as_str).unwrap_or(""),
                item.get("arguments").unwrap_or(&Json::Null),
            )),
            _ => {}
        }
    }
    answer.finish = responses_finish(body, !answer.tool_calls.is_empty());
    Ok(answer)
}

/// How a Responses response ended, in Chat Completions' words.
pub fn responses_finish(body: &Json, has_calls: bool) -> Option<String> {
    let status = body.get("status").and_then(Json::as_str);
    let why = body
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Json::as_str);
    Some(match (status, why) {
        (Some("incomplete"), Some("max_output_tokens")) => "length".into(),
        (Some("incomplete"), Some(other)) => other.to_string(),
        (Some("failed"), _) => "failed".into(),
        _ if has_calls => "tool_calls".into(),
        (Some(_), _) => "stop".into(),
        (None, _) => return None,
    })
}

/// The provider's error message in an error response: OpenAI's
/// `error.message`, Anthropic's `{type: error, error: {message}}`, a bare
/// `message` or `detail`, else the body's text (shortened).
pub fn error_message(response: &Map<String, Json>) -> String {
    if let Ok(body) = body_of(response) {
        if let Some(m) = message_in(&body) {
            return m;
        }
        return shorten(&body.to_string());
    }
    match response.get("body_text").and_then(Json::as_str) {
        Some(text) => shorten(text),
        None => body_of(response).err().unwrap_or_default(),
    }
}

/// The message of an error object, wherever the provider puts it.
pub fn message_in(body: &Json) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    if let Some(s) = error.as_str() {
        return Some(s.to_string());
    }
    ["message", "detail"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Json::as_str))
        .map(str::to_string)
}

fn shorten(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
