//! Which adapter reads an input: the native attempt format, chat
//! transcripts, MiroThinker task logs, or ATIF trajectories.
//!
//! Detection is cheap on purpose (the native reader is on the hot path):
//! the layout (one record per line, or one pretty-printed document) is
//! decided from a file's first non-blank line, and the kind of a record from
//! the keys of its JSON object. A JSONL file is read in the kind of its first
//! record; another kind is only looked for when a line fails that reader.

use serde_json::{Map, Value as Json};

use crate::pyjson;

/// The input format, as forced with `--input-format` or detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputFormat {
    /// Detect per file (and per line where a JSONL file mixes kinds).
    #[default]
    Auto,
    Native,
    Chat,
    #[value(name = "tasklog")]
    TaskLog,
    Atif,
}

impl InputFormat {
    pub const ALL: [InputFormat; 5] = [
        InputFormat::Auto,
        InputFormat::Native,
        InputFormat::Chat,
        InputFormat::TaskLog,
        InputFormat::Atif,
    ];

    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Native => "native",
            InputFormat::Chat => "chat",
            InputFormat::TaskLog => "tasklog",
            InputFormat::Atif => "atif",
        }
    }

    pub fn from_name(name: &str) -> Option<InputFormat> {
        InputFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The record kind a forced format reads everything as.
    pub fn forced_kind(self) -> Option<Kind> {
        match self {
            InputFormat::Auto => None,
            InputFormat::Native => Some(Kind::Native),
            InputFormat::Chat => Some(Kind::Chat),
            InputFormat::TaskLog => Some(Kind::TaskLog),
            InputFormat::Atif => Some(Kind::Atif),
        }
    }
}

/// What one JSON record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One attempt (`trace_id`, …): the spec's line format.
    Native,
    /// One conversation: `{"messages": [...]}` in OpenAI chat form.
    Chat,
    /// A MiroThinker/MiroFlow task log (`TaskLog.to_json`).
    TaskLog,
    /// An ATIF trajectory (`schema_version` "ATIF-…", `steps`).
    Atif,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Native => "native",
            Kind::Chat => "chat",
            Kind::TaskLog => "tasklog",
            Kind::Atif => "atif",
        }
    }
}

/// The kind of a JSON object, from its keys; `None` when it is none of them.
pub fn classify(obj: &Map<String, Json>) -> Option<Kind> {
    let is_atif = obj
        .get("schema_version")
        .and_then(Json::as_str)
        .is_some_and(|v| v.to_ascii_uppercase().starts_with("ATIF"))
        || (obj.get("steps").is_some_and(Json::is_array)
            && obj.get("agent").is_some_and(Json::is_object));
    if is_atif {
        Some(Kind::Atif)
    } else if obj.contains_key("step_logs")
        || obj.contains_key("main_agent_message_history")
        || obj.contains_key("sub_agent_message_history_sessions")
    {
        Some(Kind::TaskLog)
    } else if obj.get("messages").is_some_and(Json::is_array) {
        Some(Kind::Chat)
    } else if obj.contains_key("trace_id") {
        Some(Kind::Native)
    } else {
        None
    }
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

/// Parses JSON text as Python's `json.loads` would accept it: serde_json
/// first, then Python's rules (`NaN`, duplicate keys, lone surrogates), so
/// that nothing upstream could write is lost. The error is serde_json's.
pub fn parse_json(text: &str) -> Result<Json, serde_json::Error> {
    match serde_json::from_str::<Json>(text) {
        Ok(v) => Ok(v),
        Err(first) => match pyjson::loads(text) {
            Ok(v) => Ok(v.to_serde_lossy()),
            Err(_) => Err(first),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(v: Json) -> Option<Kind> {
        classify(v.as_object().unwrap())
    }

    #[test]
    fn objects_are_classified_by_their_keys() {
        assert_eq!(
            kind(json!({"trace_id": "t", "content": "x"})),
            Some(Kind::Native)
        );
        assert_eq!(kind(json!({"id": 3, "messages": []})), Some(Kind::Chat));
        assert_eq!(
            kind(json!({"task_id": "a", "step_logs": []})),
            Some(Kind::TaskLog)
        );
        assert_eq!(
            kind(json!({"schema_version": "ATIF-v1.4", "steps": []})),
            Some(Kind::Atif)
        );
        assert_eq!(kind(json!({"agent": {}, "steps": []})), Some(Kind::Atif));
        assert_eq!(kind(json!({"hello": 1})), None);
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

    #[test]
    fn format_names_round_trip() {
        for f in InputFormat::ALL {
            assert_eq!(InputFormat::from_name(f.name()), Some(f));
        }
    }
}
