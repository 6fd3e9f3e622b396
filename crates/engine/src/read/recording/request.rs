//! A recorded request → which API it is and the conversation it sends,
//! in the project's chat form (what `read::chat` reads).

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use super::call::{Api, Request};
use crate::read::chat::content_text;
use crate::read::usage::count;

/// The API of a request, from its path, else from its body's shape.
pub fn api_of(path: &str, body: Option<&Json>) -> Api {
    let path_only = path.split('?').next().unwrap_or("").trim_end_matches('/');
    if path_only.ends_with("/chat/completions") {
        return Api::ChatCompletions;
    }
    if path_only.ends_with("/responses") {
        return Api::Responses;
    }
    if path_only.ends_with("/messages") {
        return Api::AnthropicMessages;
    }
    let obj = body.and_then(Json::as_object);
    match obj {
        Some(o) if o.contains_key("input") && o.contains_key("model") => Api::Responses,
        Some(o) if o.get("messages").is_some_and(Json::is_array) => {
            if o.contains_key("system") || anthropic_blocks(o) {
                Api::AnthropicMessages
            } else {
                Api::ChatCompletions
            }
        }
        _ => Api::Other(Arc::from(path_only)),
    }
}

/// Whether the messages use Anthropic's tool blocks.
fn anthropic_blocks(o: &Map<String, Json>) -> bool {
    o.get("messages")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Json::as_array))
        .any(|parts| crate::read::calls::has_call_blocks(parts))
}

/// The conversation a request sends (or why it cannot be seen).
pub fn read(api: &Api, body: Result<Json, String>) -> Request {
    let body = match body {
        Ok(Json::Object(o)) => o,
        Ok(other) => return unreadable(format!("the request body is not an object: {other}")),
        Err(why) => return unreadable(format!("request {why}")),
    };
    let mut request = Request {
        model: body.get("model").and_then(Json::as_str).map(Arc::from),
        max_tokens: ["max_tokens", "max_completion_tokens", "max_output_tokens"]
            .iter()
            .find_map(|k| count(body.get(*k))),
        stream: body.get("stream").and_then(Json::as_bool) == Some(true),
        tools: body
            .get("tools")
            .and_then(Json::as_array)
            .is_some_and(|t| !t.is_empty()),
        ..Request::default()
    };
    match api {
        Api::ChatCompletions | Api::Other(_) => chat(&body, &mut request),
        Api::AnthropicMessages => {
            request.system_prompt = body.get("system").and_then(text_of);
            request.messages = list(&body, "messages");
        }
        Api::Responses => {
            request.system_prompt = body.get("instructions").and_then(text_of);
            responses_input(body.get("input"), &mut request);
        }
    }
    request
}

fn unreadable(why: String) -> Request {
    Request {
        unreadable: Some(why),
        ..Request::default()
    }
}

fn list(body: &Map<String, Json>, key: &str) -> Vec<Json> {
    body.get(key)
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A string, or a list of text parts / blocks: their text.
fn text_of(v: &Json) -> Option<String> {
    match v {
        Json::Null => None,
        other => content_text(Some(other), 0).ok(),
    }
}

/// Chat Completions: the first system or developer message is the system
/// prompt; the rest are the messages.
fn chat(body: &Map<String, Json>, request: &mut Request) {
    let mut messages = list(body, "messages");
    let first_system = messages.iter().position(|m| {
        matches!(
            m.get("role").and_then(Json::as_str),
            Some("system" | "developer")
        )
    });
    if let Some(i) = first_system {
        let m = messages.remove(i);
        request.system_prompt = Some(m.get("content").and_then(text_of).unwrap_or_default());
    }
    request.messages = messages;
}

/// Responses `input`: a string (one user message) or a list of items:
/// messages (`role`, `content` string or `input_text`/`output_text`
/// parts), `function_call` items (an assistant message's tool calls; calls
/// in a row join one message) and `function_call_output` items (tool
/// messages). A system or developer message in the input is the system
/// prompt when `instructions` gave none.
fn responses_input(input: Option<&Json>, request: &mut Request) {
    let items = match input {
        Some(Json::String(s)) => {
            request.messages = vec![json!({"role": "user", "content": s})];
            return;
        }
        Some(Json::Array(items)) => items,
        _ => return,
    };
    let mut out: Vec<Json> = Vec::new();
    for item in items {
        let kind = item.get("type").and_then(Json::as_str);
        match (kind, item.get("role").and_then(Json::as_str)) {
            (Some("function_call"), _) => {
                let call = crate::read::calls::chat_call(
                    item.get("call_id").or_else(|| item.get("id")),
                    item.get("name").and_then(Json::as_str).unwrap_or(""),
                    item.get("arguments").unwrap_or(&Json::Null),
                );
                let joins = out.last().is_some_and(|m| {
                    m.get("role").and_then(Json::as_str) == Some("assistant")
                        && m.get("tool_calls").is_some()
                });
                if joins {
                    if let Some(Json::Array(calls)) =
                        out.last_mut().and_then(|m| m.get_mut("tool_calls"))
                    {
                        calls.push(call);
                    }
                } else {
                    out.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
                }
            }
            (Some("function_call_output"), _) => {
                let output = match item.get("output") {
                    Some(Json::String(s)) => s.clone(),
                    Some(other) => text_of(other).unwrap_or_else(|| other.to_string()),
                    None => String::new(),
                };
                out.push(json!({"role": "tool",
                    "tool_call_id": item.get("call_id").cloned().unwrap_or(Json::Null),
                    "content": output}));
            }
            (_, Some(role)) => {
                let text = item.get("content").and_then(text_of).unwrap_or_default();
                if matches!(role, "system" | "developer") && request.system_prompt.is_none() {
                    request.system_prompt = Some(text);
                } else {
                    out.push(json!({"role": role, "content": text}));
                }
            }
            // Reasoning items and others carry no conversation text.
            _ => {}
        }
    }
    request.messages = out;
}
