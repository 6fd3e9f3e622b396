//! How an input is laid out and what its records are: the layout of a
//! file (JSONL or documents), JSON read as Python writes it, and the
//! shapes the formats' recognisers share. Which format a record is comes
//! from the registry, `read::formats` (above the formats, which use these
//! shapes: this module imports none of them).
//!
//! Detection is cheap on purpose (the native reader is on the hot path):
//! the layout (one record per line, or one pretty-printed document) is
//! decided from a file's first non-blank line, and the kind of a record from
//! the keys of its JSON object. A JSONL file is read in the kind of its first
//! record; another kind is only looked for when a line fails that reader.

use serde_json::{Map, Value as Json};

use crate::pyjson;

/// The native attempt's own fields (the spec's line format, beside
/// `trace_id`): a record with one of them is an attempt even when it also
/// carries a message list (`messages`, …), wherever it stands in a file.
pub const ATTEMPT_KEYS: [&str; 6] = [
    "content",
    "tool_calls",
    "output",
    "finish_reason",
    "llm_error",
    "tool_results",
];

/// Whether a JSON array is an OpenHands event stream: objects with a
/// `source` and an `action` or `observation`, the first few of them.
pub fn is_event_stream(items: &[Json]) -> bool {
    !items.is_empty()
        && items.iter().take(8).all(|e| {
            e.get("source").is_some()
                && (e.get("action").is_some() || e.get("observation").is_some())
        })
}

/// What a JSON value that is not a trace looks like, for messages: its
/// type and, for objects, its first keys.
pub fn describe_value(value: &Json) -> String {
    fn keys(obj: &Map<String, Json>) -> String {
        let mut names: Vec<&str> = obj.keys().map(String::as_str).take(6).collect();
        if obj.len() > names.len() {
            names.push("…");
        }
        if names.is_empty() {
            "no keys".to_string()
        } else {
            format!("keys {}", names.join(", "))
        }
    }
    match value {
        Json::Object(obj) => format!("a JSON object with {}", keys(obj)),
        Json::Array(items) => match items.first() {
            None => "an empty JSON array".to_string(),
            Some(Json::Object(first)) => format!(
                "a JSON array of {} objects, the first with {}",
                items.len(),
                keys(first)
            ),
            Some(_) => format!("a JSON array of {} non-objects", items.len()),
        },
        Json::String(_) => "a JSON string".to_string(),
        Json::Number(_) => "a JSON number".to_string(),
        Json::Bool(_) | Json::Null => "a JSON constant".to_string(),
    }
}

/// Whether an object carries nothing of a native attempt: no `trace_id`
/// and none of [`ATTEMPT_KEYS`] (a record of some other tool's format).
pub fn nothing_native(obj: &Map<String, Json>) -> bool {
    !obj.contains_key("trace_id") && !ATTEMPT_KEYS.iter().any(|k| obj.contains_key(*k))
}

/// Whether a JSON array is one conversation's message list (every element an
/// object with a `role`), as upstream's `collect-trace` converters write.
pub fn is_message_list(items: &[Json]) -> bool {
    !items.is_empty() && items.iter().all(|m| m.get("role").is_some())
}

/// How an input is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One JSON record per line.
    Lines,
    /// One (usually pretty-printed) JSON document.
    Document,
}

/// Decides the layout from the first non-blank line: a line that is a
/// complete JSON value starts a JSONL file; a line that opens an unfinished
/// object or array (`{`, `[`, `"key": {`) starts a document. Anything else is
/// read as lines, so that one garbled first line costs one line, not the file.
pub fn layout_of(first_line: &[u8]) -> Layout {
    let trimmed = first_line.trim_ascii();
    let trimmed = trimmed
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(trimmed)
        .trim_ascii();
    if trimmed.is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return Layout::Lines;
    }
    let opens = matches!(trimmed.first(), Some(b'{' | b'['));
    let unfinished = matches!(trimmed.last(), Some(b'{' | b'[' | b','));
    if opens && unfinished {
        Layout::Document
    } else {
        Layout::Lines
    }
}

/// Keys whose values name a trace, a span or a session: a lone surrogate
/// in a top-level one is kept as its escape (`t\udc00`), not folded into
/// U+FFFD, so ids that differ only there stay apart; an integer too big
/// for 64 bits under one, at any depth, is kept as its digits (a string),
/// never a float.
pub const EXACT_ID_KEYS: [&str; 13] = [
    "trace_id",
    "session",
    "id",
    "task_id",
    "instance_id",
    "sample_id",
    "session_id",
    "sessionId",
    "traceId",
    "span_id",
    "spanId",
    "parent_id",
    "parentSpanId",
];

/// Parses JSON text as Python's `json.loads` would accept it: serde_json
/// first, then Python's rules (`NaN`, duplicate keys, lone surrogates), so
/// that nothing upstream could write is lost. The error is serde_json's.
pub fn parse_json(text: &str) -> Result<Json, serde_json::Error> {
    match serde_json::from_str::<Json>(text) {
        // An id serde_json could only hold as a float (an integer of more
        // than 64 bits) is read again, digit for digit.
        Ok(v) if has_float_id(&v) => Ok(pyjson::loads(text)
            .map(|exact| exact.to_serde_keeping_ids(&EXACT_ID_KEYS))
            .unwrap_or(v)),
        Ok(v) => Ok(v),
        Err(first) => match pyjson::loads(text) {
            Ok(v) => Ok(v.to_serde_keeping_ids(&EXACT_ID_KEYS)),
            Err(_) => Err(first),
        },
    }
}

/// Whether a value holds a non-integer number under one of
/// [`EXACT_ID_KEYS`], at any depth: what serde_json makes of an integer
/// id too big for 64 bits.
pub(crate) fn has_float_id(v: &Json) -> bool {
    match v {
        Json::Object(obj) => obj.iter().any(|(k, v)| match v {
            Json::Number(n) => n.is_f64() && EXACT_ID_KEYS.contains(&k.as_str()),
            Json::Object(_) | Json::Array(_) => has_float_id(v),
            _ => false,
        }),
        Json::Array(items) => items
            .iter()
            .any(|v| matches!(v, Json::Object(_) | Json::Array(_)) && has_float_id(v)),
        _ => false,
    }
}

/// The first JSON value of `text` read with Python's rules (as
/// [`parse_json`] falls back to them), and the byte offset where it ends.
pub fn parse_python_prefix(text: &str) -> Option<(Json, usize)> {
    let (v, end) = pyjson::raw_decode(text).ok()?;
    Some((v.to_serde_keeping_ids(&EXACT_ID_KEYS), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::formats::{classify, Kind, ATIF, CHAT, NATIVE, TASKLOG};
    use serde_json::json;

    fn kind(v: Json) -> Option<Kind> {
        classify(v.as_object().unwrap())
    }

    #[test]
    fn integer_ids_of_any_size_keep_every_digit() {
        let big = "122081058235536943924732489686782150775";
        let text = format!(
            r#"{{"spans": [{{"context": {{"trace_id": {big}, "span_id": 101}}, "parent": {{"trace_id": {big}}}}}], "n": 1.5}}"#
        );
        let v = parse_json(&text).unwrap();
        assert_eq!(v["spans"][0]["context"]["trace_id"], big);
        assert_eq!(v["spans"][0]["parent"]["trace_id"], big);
        assert_eq!(v["spans"][0]["context"]["span_id"], 101);
        assert_eq!(v["n"], 1.5);
        // Two ids that differ in their last digit stay two.
        let other = parse_json(&text.replacen("775", "776", 1)).unwrap();
        assert_ne!(
            other["spans"][0]["context"]["trace_id"],
            v["spans"][0]["context"]["trace_id"]
        );
        // Ids that fit in 64 bits are read as they were.
        assert_eq!(
            parse_json(r#"{"id": 18446744073709551615}"#).unwrap()["id"],
            u64::MAX
        );
    }

    #[test]
    fn objects_are_classified_by_their_keys() {
        assert_eq!(kind(json!({"trace_id": "t", "content": "x"})), Some(NATIVE));
        assert_eq!(kind(json!({"id": 3, "messages": []})), Some(CHAT));
        assert_eq!(
            kind(json!({"task_id": "a", "step_logs": []})),
            Some(TASKLOG)
        );
        assert_eq!(
            kind(json!({"schema_version": "ATIF-v1.4", "steps": []})),
            Some(ATIF)
        );
        assert_eq!(kind(json!({"agent": {}, "steps": []})), Some(ATIF));
        assert_eq!(kind(json!({"hello": 1})), None);
        // A trace id alone is no attempt (the native reader reports it).
        assert_eq!(kind(json!({"trace_id": "t"})), None);
        // An attempt's own field makes a record native, message list or not.
        assert_eq!(
            kind(json!({"trace_id": "t", "content": "x", "messages": []})),
            Some(NATIVE)
        );
        assert_eq!(
            kind(json!({"trace_id": "t", "messages": [{"role": "user"}]})),
            Some(CHAT)
        );
    }

    #[test]
    fn layout_follows_the_first_line() {
        assert_eq!(layout_of(b"{\"trace_id\": \"a\"}\n"), Layout::Lines);
        assert_eq!(layout_of(b"{\n"), Layout::Document);
        assert_eq!(layout_of(b"\xEF\xBB\xBF[\r\n"), Layout::Document);
        assert_eq!(layout_of(b"  \"status\": \"success\","), Layout::Lines);
        assert_eq!(layout_of(b"{\"status\": \"running\","), Layout::Document);
        assert_eq!(layout_of(b"garbage"), Layout::Lines);
    }

    #[test]
    fn python_json_is_accepted() {
        let v = parse_json(r#"{"x": NaN, "x": 2}"#).unwrap();
        assert_eq!(v["x"], json!(2));
        assert!(parse_json("{").is_err());
    }
}
