//! Which adapter reads an input: the native attempt format, chat
//! transcripts, MiroThinker task logs, or ATIF trajectories.
//!
//! Detection is cheap on purpose (the native reader is on the hot path):
//! the layout (one record per line, or one pretty-printed document) is
//! decided from a file's first non-blank line, and the kind of a record from
//! the keys of its JSON object. A JSONL file is read in the kind of its first
//! record; another kind is only looked for when a line fails that reader.

use serde_json::{Map, Value as Json};

use super::{chat, openhands_v1, otel, tau2};
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
    Inspect,
    #[value(name = "openhands")]
    OpenHands,
    SweAgent,
    ClaudeCode,
    Otel,
    #[value(name = "openhands-v1")]
    OpenHandsV1,
    CompletionLog,
    Tau2,
}

impl InputFormat {
    pub const ALL: [InputFormat; 13] = [
        InputFormat::Auto,
        InputFormat::Native,
        InputFormat::Chat,
        InputFormat::TaskLog,
        InputFormat::Atif,
        InputFormat::Inspect,
        InputFormat::OpenHands,
        InputFormat::SweAgent,
        InputFormat::ClaudeCode,
        InputFormat::Otel,
        InputFormat::OpenHandsV1,
        InputFormat::CompletionLog,
        InputFormat::Tau2,
    ];

    pub fn name(self) -> &'static str {
        match self.forced_kind() {
            None => "auto",
            Some(kind) => kind.name(),
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
            InputFormat::Inspect => Some(Kind::Inspect),
            InputFormat::OpenHands => Some(Kind::OpenHands),
            InputFormat::SweAgent => Some(Kind::SweAgent),
            InputFormat::ClaudeCode => Some(Kind::ClaudeCode),
            InputFormat::Otel => Some(Kind::Otel),
            InputFormat::OpenHandsV1 => Some(Kind::OpenHandsV1),
            InputFormat::CompletionLog => Some(Kind::CompletionLog),
            InputFormat::Tau2 => Some(Kind::Tau2),
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
    /// An Inspect AI log (`eval`, `samples[].messages`), or one sample.
    Inspect,
    /// An OpenHands event stream (a list of action/observation events,
    /// bare or under `history`).
    OpenHands,
    /// A SWE-agent `.traj` (`history` with `message_type`s) or a
    /// mini-swe-agent trajectory (`trajectory_format` "mini-swe-agent…").
    SweAgent,
    /// One line of a Claude Code session (`type`, `message`, `sessionId`).
    ClaudeCode,
    /// OpenTelemetry spans exported as OTLP JSON (`resourceSpans`), or as
    /// plain JSON (`{"spans": [...]}`, a list, or one span a line).
    Otel,
    /// One event of an OpenHands V1 (SDK) event stream (`kind`).
    OpenHandsV1,
    /// An LLM completion log (`messages`, `response`), as OpenHands writes.
    CompletionLog,
    /// A tau2-bench results document (`simulations`).
    Tau2,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Native => "native",
            Kind::Chat => "chat",
            Kind::TaskLog => "tasklog",
            Kind::Atif => "atif",
            Kind::Inspect => "inspect",
            Kind::OpenHands => "openhands",
            Kind::SweAgent => "swe-agent",
            Kind::ClaudeCode => "claude-code",
            Kind::Otel => "otel",
            Kind::OpenHandsV1 => "openhands-v1",
            Kind::CompletionLog => "completion-log",
            Kind::Tau2 => "tau2",
        }
    }

    /// What a record of this kind is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Native => "a native attempt line",
            Kind::Chat => "a chat transcript",
            Kind::TaskLog => "a MiroThinker task log",
            Kind::Atif => "an ATIF trajectory",
            Kind::Inspect => "an Inspect AI log",
            Kind::OpenHands => "an OpenHands event stream",
            Kind::SweAgent => "a SWE-agent trajectory",
            Kind::ClaudeCode => "a Claude Code session",
            Kind::Otel => "OpenTelemetry spans (OTLP or plain JSON)",
            Kind::OpenHandsV1 => "an OpenHands V1 event stream",
            Kind::CompletionLog => "an LLM completion log",
            Kind::Tau2 => "tau2-bench results",
        }
    }

    /// Kinds whose records must all be read before any trace is complete
    /// (a session's lines, a trace's spans), so a JSONL file of them is
    /// read whole.
    pub fn reads_whole_file(self) -> bool {
        matches!(self, Kind::ClaudeCode | Kind::Otel | Kind::OpenHandsV1)
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
    if is_attempt(obj) {
        Some(Kind::Native)
    } else if is_atif {
        Some(Kind::Atif)
    } else if obj.contains_key("step_logs")
        || obj.contains_key("main_agent_message_history")
        || obj.contains_key("sub_agent_message_history_sessions")
    {
        Some(Kind::TaskLog)
    } else if obj.get("resourceSpans").is_some_and(Json::is_array)
        || obj.get("resource_spans").is_some_and(Json::is_array)
        || otel::plain::is_span(obj)
        || otel::plain::is_span_list(obj)
    {
        Some(Kind::Otel)
    } else if tau2::is_results(obj) {
        Some(Kind::Tau2)
    } else if openhands_v1::completion::is_completion_log(obj) {
        Some(Kind::CompletionLog)
    } else if openhands_v1::is_event(obj) {
        Some(Kind::OpenHandsV1)
    } else if is_inspect_log(obj) {
        Some(Kind::Inspect)
    } else if obj
        .get("history")
        .and_then(Json::as_array)
        .is_some_and(|events| is_event_stream(events) || openhands_v1::is_event_list(events))
    {
        Some(Kind::OpenHands)
    } else if is_swe_agent(obj) {
        Some(Kind::SweAgent)
    } else if is_claude_code_line(obj) {
        Some(Kind::ClaudeCode)
    } else if chat::find_messages(obj).is_some() {
        Some(Kind::Chat)
    } else if obj.contains_key("trace_id") {
        Some(Kind::Native)
    } else {
        None
    }
}

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

/// A native attempt: a string `trace_id` and one of [`ATTEMPT_KEYS`].
fn is_attempt(obj: &Map<String, Json>) -> bool {
    obj.get("trace_id").is_some_and(Json::is_string)
        && ATTEMPT_KEYS.iter().any(|k| obj.contains_key(*k))
}

/// An Inspect log (`eval` and `samples`, or the header's `eval` and
/// `version`) or one sample of an `.eval` archive (`epoch`, `messages`).
fn is_inspect_log(obj: &Map<String, Json>) -> bool {
    let log = obj.get("eval").is_some_and(Json::is_object)
        && (obj.contains_key("samples") || obj.contains_key("version"));
    let sample = obj.get("epoch").is_some_and(Json::is_number)
        && obj.get("messages").is_some_and(Json::is_array)
        && obj.contains_key("input");
    log || sample
}

/// SWE-agent: a `history` of messages tagged with `message_type` (or
/// beside its `trajectory` steps); mini-swe-agent: `trajectory_format`.
fn is_swe_agent(obj: &Map<String, Json>) -> bool {
    let mini = obj
        .get("trajectory_format")
        .and_then(Json::as_str)
        .is_some_and(|f| f.starts_with("mini-swe-agent"))
        || obj
            .get("info")
            .and_then(|i| i.get("mini_version"))
            .is_some();
    let swe = obj
        .get("history")
        .and_then(Json::as_array)
        .is_some_and(|h| {
            is_message_list(h)
                && (obj.contains_key("trajectory")
                    || h.iter().any(|m| m.get("message_type").is_some()))
        });
    (mini && obj.get("messages").is_some_and(Json::is_array)) || swe
}

/// Line types Claude Code writes to a session file.
const CLAUDE_CODE_TYPES: [&str; 7] = [
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
];

/// One line of a Claude Code session: a known `type` with the session's
/// bookkeeping (`sessionId`, `uuid`, `leafUuid` or `messageId`).
fn is_claude_code_line(obj: &Map<String, Json>) -> bool {
    obj.get("type")
        .and_then(Json::as_str)
        .is_some_and(|t| CLAUDE_CODE_TYPES.contains(&t))
        && ["sessionId", "uuid", "leafUuid", "messageId"]
            .iter()
            .any(|k| obj.contains_key(*k))
}

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

/// Why a record cannot be read as the forced kind, if it cannot: it is
/// recognisably another kind, or nothing mirotrace reads.
pub fn forced_mismatch(forced: Kind, obj: &Map<String, Json>) -> Option<String> {
    let actual = classify(obj);
    let fits = match forced {
        // The native decoder reports what it misses itself.
        Kind::Native => true,
        Kind::Chat => chat::find_messages(obj).is_some(),
        other => actual == Some(other),
    };
    if fits {
        return None;
    }
    let looks = match actual {
        Some(kind) => format!("it looks like {}", kind.describe()),
        None => format!("it is {}", describe_value(&Json::Object(obj.clone()))),
    };
    Some(format!(
        "not {} (--input-format {}): {looks}",
        forced.describe(),
        forced.name()
    ))
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

/// Keys whose top-level string values name a trace or a session: a lone
/// surrogate in them is kept as its escape (`t\udc00`), not folded into
/// U+FFFD, so ids that differ only there stay apart.
pub const EXACT_ID_KEYS: [&str; 9] = [
    "trace_id",
    "session",
    "id",
    "task_id",
    "instance_id",
    "sample_id",
    "session_id",
    "sessionId",
    "traceId",
];

/// Parses JSON text as Python's `json.loads` would accept it: serde_json
/// first, then Python's rules (`NaN`, duplicate keys, lone surrogates), so
/// that nothing upstream could write is lost. The error is serde_json's.
pub fn parse_json(text: &str) -> Result<Json, serde_json::Error> {
    match serde_json::from_str::<Json>(text) {
        Ok(v) => Ok(v),
        Err(first) => match pyjson::loads(text) {
            Ok(v) => Ok(v.to_serde_keeping_ids(&EXACT_ID_KEYS)),
            Err(_) => Err(first),
        },
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
        // An attempt's own field makes a record native, message list or not.
        assert_eq!(
            kind(json!({"trace_id": "t", "content": "x", "messages": []})),
            Some(Kind::Native)
        );
        assert_eq!(
            kind(json!({"trace_id": "t", "messages": [{"role": "user"}]})),
            Some(Kind::Chat)
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

    #[test]
    fn format_names_round_trip() {
        for f in InputFormat::ALL {
            assert_eq!(InputFormat::from_name(f.name()), Some(f));
        }
    }
}
