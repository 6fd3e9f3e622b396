//! What the attribute conventions say about a span: GenAI semantic
//! conventions (`gen_ai.*`, with their older flattened form) and
//! OpenInference (`llm.*`, `openinference.span.kind`).

use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

use super::otlp::id_text;
use super::{LlmSpan, SpanRole};
use crate::read::calls::chat_call;

pub(super) fn text_attr<'a>(attrs: &'a Map<String, Json>, key: &str) -> Option<&'a str> {
    attrs.get(key).and_then(Json::as_str)
}

pub(super) fn is_llm(attrs: &Map<String, Json>) -> bool {
    matches!(
        text_attr(attrs, "gen_ai.operation.name"),
        Some("chat" | "text_completion" | "generate_content" | "call_llm")
    ) || text_attr(attrs, "openinference.span.kind") == Some("LLM")
}

pub(super) fn is_tool(attrs: &Map<String, Json>) -> bool {
    text_attr(attrs, "gen_ai.operation.name") == Some("execute_tool")
        || text_attr(attrs, "openinference.span.kind") == Some("TOOL")
}

pub(super) fn json_attr(attrs: &Map<String, Json>, key: &str) -> Option<Json> {
    match attrs.get(key)? {
        Json::String(s) => serde_json::from_str(s).ok(),
        other => Some(other.clone()),
    }
}

pub(super) fn system_instructions(attrs: &Map<String, Json>) -> Option<String> {
    let parts = json_attr(attrs, "gen_ai.system_instructions")?;
    Some(parts_text(parts.as_array()?))
}

/// A GenAI message's text: its `text` parts, or a plain `content` string
/// (some exporters write the chat form).
pub(super) fn message_text(m: &Json) -> String {
    match m.get("parts").and_then(Json::as_array) {
        Some(parts) => parts_text(parts),
        None => m
            .get("content")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

/// The text of GenAI message parts (`{"type": "text", "content"}`).
pub(super) fn parts_text(parts: &[Json]) -> String {
    parts
        .iter()
        .filter(|p| p.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|p| p.get("content").and_then(Json::as_str))
        .collect()
}

/// What a span's input shows: its system prompt, and the results of the
/// calls it answers (call id, text), from whichever convention it uses.
/// The rest of the input (the conversation so far) is not kept.
pub(super) fn input_facts(attrs: &Map<String, Json>) -> (Option<String>, Vec<(String, String)>) {
    let mut system = None;
    let mut results = Vec::new();
    if let Some(text) = text_attr(attrs, "gen_ai.input.messages") {
        if let Ok(msgs) = serde_json::from_str::<Vec<InputMessage>>(text) {
            for m in msgs {
                if m.role == "system" && system.is_none() {
                    system = Some(match (&m.parts, &m.content) {
                        (Some(parts), _) => parts
                            .iter()
                            .filter(|p| p.kind == "text")
                            .filter_map(|p| p.content.as_ref().and_then(Json::as_str))
                            .collect(),
                        (None, Some(Json::String(s))) => s.clone(),
                        _ => String::new(),
                    });
                }
                for p in m.parts.into_iter().flatten() {
                    if p.kind == "tool_call_response" {
                        let text = match p.response {
                            Some(Json::String(s)) => s,
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        results.push((id_text(p.id.unwrap_or(Json::Null)), text));
                    }
                }
            }
            return (system, results);
        }
    }
    for field in [
        &(|n: usize, f: &str| format!("gen_ai.prompt.{n}.{f}")) as &dyn Fn(usize, &str) -> String,
        &|n, f| format!("llm.input_messages.{n}.message.{f}"),
    ] {
        let mut n = 0;
        while let Some(role) = text_attr(attrs, &field(n, "role")) {
            let content = || text_attr(attrs, &field(n, "content")).unwrap_or("");
            if role == "system" && system.is_none() {
                system = Some(content().to_string());
            }
            if let Some(call) = text_attr(attrs, &field(n, "tool_call_id")) {
                results.push((call.to_string(), content().to_string()));
            }
            n += 1;
        }
        if n > 0 {
            break;
        }
    }
    (system, results)
}

/// A GenAI input message, as far as [`input_facts`] reads it.
#[derive(Deserialize)]
pub(super) struct InputMessage {
    #[serde(default)]
    role: String,
    #[serde(default)]
    parts: Option<Vec<InputPart>>,
    #[serde(default)]
    content: Option<Json>,
}

#[derive(Deserialize)]
pub(super) struct InputPart {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    id: Option<Json>,
    #[serde(default)]
    content: Option<Json>,
    #[serde(default)]
    response: Option<Json>,
}

/// The span's response as a chat assistant message (text, tool calls,
/// finish reason); `None` when the span recorded no output.
pub(super) fn output_message(attrs: &Map<String, Json>) -> Option<Json> {
    let finish = attrs
        .get("gen_ai.response.finish_reasons")
        .and_then(|f| f.get(0).or(Some(f)))
        .and_then(Json::as_str)
        .map(str::to_string);
    if let Some(Json::Array(msgs)) = json_attr(attrs, "gen_ai.output.messages") {
        let m = msgs.first()?;
        let parts = m
            .get("parts")
            .and_then(Json::as_array)
            .map_or(&[][..], Vec::as_slice);
        let calls: Vec<Json> = parts
            .iter()
            .filter(|p| p.get("type").and_then(Json::as_str) == Some("tool_call"))
            .map(|p| {
                let name = p.get("name").and_then(Json::as_str).unwrap_or("");
                chat_call(p.get("id"), name, p.get("arguments").unwrap_or(&Json::Null))
            })
            .collect();
        let finish = m
            .get("finish_reason")
            .and_then(Json::as_str)
            .map(str::to_string)
            .or(finish);
        return Some(assistant(message_text(m), calls, finish));
    }
    for (prefix, call) in [
        (
            "gen_ai.completion.0.",
            "gen_ai.completion.0.tool_calls.{n}.",
        ),
        (
            "llm.output_messages.0.message.",
            "llm.output_messages.0.message.tool_calls.{n}.tool_call.",
        ),
    ] {
        let key = |f: &str| format!("{prefix}{f}");
        if !attrs.contains_key(&key("role")) && !attrs.contains_key(&key("content")) {
            continue;
        }
        let calls: Vec<Json> = (0..)
            .map_while(|n| {
                let base = call.replace("{n}", &n.to_string());
                let (name, args) = if prefix.starts_with("llm.") {
                    (
                        format!("{base}function.name"),
                        format!("{base}function.arguments"),
                    )
                } else {
                    (format!("{base}name"), format!("{base}arguments"))
                };
                let name = text_attr(attrs, &name)?;
                let id = attrs.get(&format!("{base}id"));
                Some(chat_call(id, name, attrs.get(&args).unwrap_or(&Json::Null)))
            })
            .collect();
        let text = text_attr(attrs, &key("content")).unwrap_or("").to_string();
        let finish = text_attr(attrs, &key("finish_reason"))
            .map(str::to_string)
            .or(finish);
        return Some(assistant(text, calls, finish));
    }
    framework_output(attrs, finish)
}

/// any-agent's output attribute (`gen_ai.output`, earlier `genai.output`)
/// with its `….type`: `text`, or `json` holding the calls (Chat
/// Completions `tool_calls`, or `{"tool.name", "tool.args"}` entries).
fn framework_output(attrs: &Map<String, Json>, finish: Option<String>) -> Option<Json> {
    let (key, kind) = [
        ("gen_ai.output", "gen_ai.output.type"),
        ("genai.output", "genai.output.type"),
    ]
    .into_iter()
    .find(|(k, _)| attrs.contains_key(*k))?;
    let text = || match attrs.get(key) {
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    if text_attr(attrs, kind) != Some("json") {
        return Some(assistant(text(), Vec::new(), finish));
    }
    let calls: Option<Vec<Json>> = json_attr(attrs, key)
        .as_ref()
        .and_then(Json::as_array)
        .filter(|items| !items.is_empty())
        .and_then(|items| items.iter().map(framework_call).collect());
    match calls {
        Some(calls) => Some(assistant(String::new(), calls, finish)),
        // JSON that is not a list of calls (a structured answer) is text.
        None => Some(assistant(text(), Vec::new(), finish)),
    }
}

/// One call of an any-agent output list, in Chat Completions form.
fn framework_call(c: &Json) -> Option<Json> {
    if let Some(f) = c.get("function") {
        let name = f.get("name")?.as_str()?;
        return Some(chat_call(
            c.get("id"),
            name,
            f.get("arguments").unwrap_or(&Json::Null),
        ));
    }
    let name = c.get("tool.name")?.as_str()?;
    Some(chat_call(
        c.get("tool.id").or_else(|| c.get("id")),
        name,
        c.get("tool.args").unwrap_or(&Json::Null),
    ))
}

pub(super) fn assistant(text: String, calls: Vec<Json>, finish: Option<String>) -> Json {
    let mut m = json!({"role": "assistant", "content": text, "finish_reason": finish});
    if !calls.is_empty() {
        m["tool_calls"] = Json::Array(calls);
    }
    m
}

/// A tool span's output: GenAI's `gen_ai.tool.call.result`, OpenInference's `output.value`.
pub(super) fn tool_output(attrs: &Map<String, Json>) -> Option<String> {
    match attrs
        .get("gen_ai.tool.call.result")
        .or_else(|| attrs.get("output.value"))
        .or_else(|| attrs.get("gen_ai.output"))
        .or_else(|| attrs.get("genai.output"))?
    {
        Json::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Whether a span's `status` is an error: OTLP's `{"code": 2}` (or
/// `"STATUS_CODE_ERROR"`), the Python SDK's `{"status_code": "ERROR"}`.
pub(super) fn status_is_error(status: Option<&Json>) -> bool {
    let Some(status) = status else {
        return false;
    };
    let code = status.get("code").or_else(|| status.get("status_code"));
    match code {
        Some(Json::Number(n)) => n.as_u64() == Some(2),
        Some(Json::String(s)) => matches!(s.as_str(), "STATUS_CODE_ERROR" | "ERROR" | "2"),
        _ => false,
    }
}

/// Reads what the conversion needs out of a span's attributes.
pub(super) fn role_of(attrs: &Map<String, Json>) -> SpanRole {
    if is_llm(attrs) {
        let (input_system, results) = input_facts(attrs);
        let system = system_instructions(attrs).or(input_system);
        let model = text_attr(attrs, "gen_ai.response.model")
            .or_else(|| text_attr(attrs, "gen_ai.request.model"))
            .or_else(|| text_attr(attrs, "llm.model_name"))
            .map(str::to_string);
        let mut assistant = output_message(attrs);
        if let (Some(Json::Object(m)), Some(usage)) = (&mut assistant, usage(attrs)) {
            m.insert("usage".into(), usage);
        }
        SpanRole::Llm(Box::new(LlmSpan {
            assistant,
            results,
            system,
            model,
        }))
    } else if is_tool(attrs) {
        SpanRole::Tool {
            call_id: text_attr(attrs, "gen_ai.tool.call.id").map(str::to_string),
            output: tool_output(attrs),
            failed: false,
        }
    } else {
        SpanRole::Other
    }
}

/// The span's token counts (`gen_ai.usage.*`, OpenInference's
/// `llm.token_count.*`) as a usage object the chat reader reads.
fn usage(attrs: &Map<String, Json>) -> Option<Json> {
    let count = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| crate::read::usage::count(attrs.get(*k)))
    };
    let mut u = Map::new();
    let fields = [
        (
            "input_tokens",
            &[
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.prompt_tokens",
                "llm.token_count.prompt",
            ][..],
        ),
        (
            "output_tokens",
            &[
                "gen_ai.usage.output_tokens",
                "gen_ai.usage.completion_tokens",
                "llm.token_count.completion",
            ][..],
        ),
        (
            "cached_input_tokens",
            &[
                "gen_ai.usage.cache_read_input_tokens",
                "gen_ai.usage.cache_read.input_tokens",
                "gen_ai.usage.cached_tokens",
                "llm.token_count.prompt_details.cache_read",
            ][..],
        ),
    ];
    for (name, keys) in fields {
        if let Some(n) = count(keys) {
            u.insert(name.into(), Json::from(n));
        }
    }
    (!u.is_empty()).then_some(Json::Object(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_statuses_mark_failed_calls() {
        for (status, error) in [
            (json!({"code": 2, "message": "boom"}), true),
            (json!({"code": "STATUS_CODE_ERROR"}), true),
            (json!({"status_code": "ERROR", "description": "x"}), true),
            (json!({"code": 1}), false),
            (json!({"code": "STATUS_CODE_OK"}), false),
            (json!({"status_code": "UNSET"}), false),
            (json!({}), false),
        ] {
            assert_eq!(status_is_error(Some(&status)), error, "{status}");
        }
        assert!(!status_is_error(None));
    }

    #[test]
    fn only_tool_spans_take_the_mark() {
        let tool = SpanRole::Tool {
            call_id: None,
            output: Some("x".into()),
            failed: false,
        }
        .failed(true);
        assert!(matches!(tool, SpanRole::Tool { failed: true, .. }));
        assert!(matches!(SpanRole::Other.failed(true), SpanRole::Other));
    }
}
