//! Other harnesses' shapes of a tool call → the Chat Completions form the
//! parser reads (`{"id", "type": "function", "function": {"name",
//! "arguments": "<JSON text>"}}`): Inspect calls (`function` a name,
//! `arguments` an object), Anthropic `tool_use` blocks (`input`), the
//! legacy `function_call`, and arguments recorded as objects.

use serde_json::{json, Map, Value as Json};

/// One call in Chat Completions form. Arguments that are not text are
/// written as their JSON text (what the model sent over the wire).
pub fn chat_call(id: Option<&Json>, name: &str, arguments: &Json) -> Json {
    let arguments = match arguments {
        Json::String(s) => s.clone(),
        Json::Null => "{}".to_string(),
        other => other.to_string(),
    };
    json!({
        "id": id.cloned().unwrap_or(Json::Null),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    })
}

/// A recorded `tool_calls` list in Chat Completions form: entries already
/// in that form are kept as they are (a malformed one stays malformed, for
/// the parser to reject as upstream's would); Inspect's form is rewritten.
pub fn normalize_tool_calls(calls: &Json) -> Json {
    let Json::Array(entries) = calls else {
        return calls.clone();
    };
    let needs_rewrite = entries.iter().any(|e| {
        e.get("function").is_some_and(Json::is_string)
            || (e.get("function").is_none() && e.get("name").is_some_and(Json::is_string))
            || e.get("function")
                .and_then(|f| f.get("arguments"))
                .is_some_and(|a| a.is_object() || a.is_array())
    });
    if !needs_rewrite {
        return calls.clone();
    }
    Json::Array(entries.iter().map(normalize_entry).collect())
}

fn normalize_entry(entry: &Json) -> Json {
    match entry.get("function") {
        // Inspect: {"id", "function": NAME, "arguments": {...}}.
        Some(Json::String(name)) => chat_call(
            entry.get("id"),
            name,
            entry.get("arguments").unwrap_or(&Json::Null),
        ),
        // tau2-bench and others: {"id", "name", "arguments"} without `function`.
        None => match entry.get("name") {
            Some(Json::String(name)) => chat_call(
                entry.get("id"),
                name,
                entry.get("arguments").unwrap_or(&Json::Null),
            ),
            _ => entry.clone(),
        },
        Some(Json::Object(f)) => match (f.get("name"), f.get("arguments")) {
            (Some(Json::String(name)), Some(args @ (Json::Object(_) | Json::Array(_)))) => {
                chat_call(entry.get("id"), name, args)
            }
            _ => entry.clone(),
        },
        Some(_) => entry.clone(),
    }
}

/// What an Anthropic-style list of content blocks holds.
#[derive(Debug, Default)]
pub struct Blocks {
    /// The `text` blocks (and plain strings), joined.
    pub text: String,
    /// `tool_use` blocks as Chat Completions calls.
    pub calls: Vec<Json>,
    /// `tool_result` blocks: the call id, the result's text and whether
    /// the block is marked `is_error`.
    pub results: Vec<(Option<String>, String, bool)>,
}

/// Splits content blocks (`text`, `thinking`, `tool_use`, `tool_result`,
/// images). Thinking is not part of the answer the harness acted on.
pub fn split_blocks(parts: &[Json]) -> Blocks {
    let mut out = Blocks::default();
    for part in parts {
        match part {
            Json::String(s) => out.text.push_str(s),
            Json::Object(p) => match p.get("type").and_then(Json::as_str) {
                Some("tool_use" | "server_tool_use") => {
                    let name = p.get("name").and_then(Json::as_str).unwrap_or("");
                    out.calls.push(chat_call(
                        p.get("id"),
                        name,
                        p.get("input").unwrap_or(&Json::Null),
                    ));
                }
                Some("tool_result") => out.results.push((
                    p.get("tool_use_id")
                        .and_then(Json::as_str)
                        .map(str::to_string),
                    result_text(p),
                    p.get("is_error").and_then(Json::as_bool) == Some(true),
                )),
                Some("thinking" | "redacted_thinking" | "reasoning") => {}
                _ => {
                    if let Some(t) = p.get("text").and_then(Json::as_str) {
                        out.text.push_str(t);
                    }
                }
            },
            _ => {}
        }
    }
    out
}

/// Whether a content list holds blocks this module reads specially.
pub fn has_call_blocks(parts: &[Json]) -> bool {
    parts.iter().any(|p| {
        matches!(
            p.get("type").and_then(Json::as_str),
            Some("tool_use" | "server_tool_use" | "tool_result")
        )
    })
}

/// A `tool_result` block's text: its `content` as a string or text blocks.
fn result_text(block: &Map<String, Json>) -> String {
    match block.get("content") {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Json::String(s) => Some(s.as_str()),
                other => other.get("text").and_then(Json::as_str),
            })
            .collect(),
        None | Some(Json::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A finish reason in OpenAI's words: Anthropic's `end_turn`, `tool_use`,
/// `max_tokens`; Inspect's `max_tokens`, `model_length`; OpenTelemetry's
/// `tool_call`. Anything else is kept as recorded.
pub fn openai_finish(reason: &str) -> &str {
    match reason {
        "end_turn" | "stop_sequence" | "pause_turn" => "stop",
        "tool_use" | "tool_call" | "function_call" => "tool_calls",
        "max_tokens" | "model_length" => "length",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspect_calls_become_chat_calls() {
        let calls = json!([{"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}}]);
        assert_eq!(
            normalize_tool_calls(&calls),
            json!([{"id": "c1", "type": "function",
                    "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}])
        );
        let chat =
            json!([{"id": "c", "type": "function", "function": {"name": "a", "arguments": "{}"}}]);
        assert_eq!(normalize_tool_calls(&chat), chat);
        let bare = json!([{"id": "c", "name": "find_user", "arguments": {"id": 1}}]);
        assert_eq!(
            normalize_tool_calls(&bare)[0]["function"],
            json!({"name": "find_user", "arguments": "{\"id\":1}"})
        );
    }

    #[test]
    fn blocks_split_into_text_calls_and_results() {
        let b = split_blocks(&[
            json!({"type": "thinking", "thinking": "hmm"}),
            json!({"type": "text", "text": "Let me look."}),
            json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}}),
            json!({"type": "tool_result", "tool_use_id": "t0",
                   "content": [{"type": "text", "text": "ok"}]}),
        ]);
        assert_eq!(b.text, "Let me look.");
        assert_eq!(b.calls[0]["function"]["arguments"], "{\"path\":\"a\"}");
        assert_eq!(
            b.results,
            [(Some("t0".to_string()), "ok".to_string(), false)]
        );
        let failed = split_blocks(&[json!({"type": "tool_result", "tool_use_id": "t2",
            "content": "No such file", "is_error": true})]);
        assert_eq!(
            failed.results,
            [(Some("t2".to_string()), "No such file".to_string(), true)]
        );
    }

    #[test]
    fn finish_reasons_in_openai_words() {
        assert_eq!(openai_finish("tool_use"), "tool_calls");
        assert_eq!(openai_finish("max_tokens"), "length");
        assert_eq!(openai_finish("content_filter"), "content_filter");
    }
}
