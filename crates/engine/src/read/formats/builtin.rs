//! The formats mirotrace has read from the start, each declared over its
//! reader module's entry points. A new format declares its [`Format`] in
//! its own module instead (docs/input-formats.md, "Adding a format").

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::model::{Attempt, Origin, Trace};
use crate::read::attribution::file_stem;
use crate::read::format::{Format, Gather, List, Unit};
use crate::read::sniff::{is_event_stream, is_message_list, ATTEMPT_KEYS};
use crate::read::{
    atif, chat, claude_code, inspect, native, openhands, openhands_v1, otel, swe_agent, tasklog,
};

/// A format with nothing but a record reader (the common case).
const fn plain(
    name: &'static str,
    description: &'static str,
    recognised_by: &'static str,
    trace_per: &'static str,
    recognise: fn(&Map<String, Json>) -> bool,
    read: fn(Map<String, Json>, &Origin) -> Result<Unit, String>,
) -> Format {
    Format {
        name,
        description,
        recognised_by,
        trace_per,
        recognise,
        read,
        read_text: None,
        gather: None,
        list: None,
        element_id: None,
        extensions: &[],
    }
}

pub const NATIVE: &Format = &plain(
    "native",
    "a native attempt line",
    "a string `trace_id` with one of an attempt's fields (`content`, `tool_calls`, `output`, `finish_reason`, `llm_error`, `tool_results`; `null` or `\"\"` included): native wherever the line stands, whatever else it carries (a `messages` list included); a `trace_id` with a message list and none of them is a chat record; with neither, the line is reported",
    "run of lines with one `trace_id`",
    is_attempt,
    |obj, origin| {
        let text = serde_json::to_string(&obj).map_err(|e| e.to_string())?;
        native::parse_line(&text, origin.clone())
            .map(Unit::One)
            .map_err(|e| e.to_string())
    },
);

pub const CHAT: &Format = &Format {
    list: Some(List {
        recognise: is_message_list,
        forced_reads_any: false,
        read: |items, origin| {
            let mut conversation = Map::new();
            conversation.insert("trace_id".into(), Json::from(file_stem(&origin.file)));
            conversation.insert("messages".into(), Json::Array(items));
            read_chat(conversation, origin)
        },
    }),
    element_id: Some("trace_id"),
    ..plain(
        "chat",
        "a chat transcript",
        "a message list under `messages`, `message_history`, `history`, `traj` or `trajectory`, or a bare list of messages",
        "record (its `trace_id`, `id`, `task_id`, `instance_id`, `sample_id`, `session_id` or `sessionId`, with `#TRIAL` when it has a `trial` or `epoch`; else the file's stem, `STEM:LINE` after the first line, `STEM#i` in a list)",
        |obj| chat::find_messages(obj).is_some(),
        read_chat,
    )
};

fn read_chat(obj: Map<String, Json>, origin: &Origin) -> Result<Unit, String> {
    chat::from_record(&obj, origin)
        .map(conversation)
        .map_err(|e| format!("chat transcript: {e}"))
}

pub const TASKLOG: &Format = &plain(
    "tasklog",
    "a MiroThinker task log",
    "`step_logs`, `main_agent_message_history`",
    "task log",
    |obj| {
        obj.contains_key("step_logs")
            || obj.contains_key("main_agent_message_history")
            || obj.contains_key("sub_agent_message_history_sessions")
    },
    |obj, origin| {
        let read = tasklog::from_document(&obj, origin);
        let problems = read
            .problems
            .into_iter()
            .map(|p| format!("task log: {p}"))
            .collect();
        Ok(Unit::Whole(vec![read.trace], problems))
    },
);

pub const ATIF: &Format = &Format {
    element_id: Some("session_id"),
    ..plain(
        "atif",
        "an ATIF trajectory",
        "`schema_version` `ATIF-…`",
        "trajectory",
        |obj| {
            obj.get("schema_version")
                .and_then(Json::as_str)
                .is_some_and(|v| v.to_ascii_uppercase().starts_with("ATIF"))
                || (obj.get("steps").is_some_and(Json::is_array)
                    && obj.get("agent").is_some_and(Json::is_object))
        },
        |obj, origin| {
            atif::from_document(&obj, origin)
                .map(|t| Unit::traces(vec![t]))
                .map_err(|e| format!("ATIF trajectory: {e}"))
        },
    )
};

pub const INSPECT: &Format = &Format {
    extensions: &["eval"],
    ..plain(
        "inspect",
        "an Inspect AI log",
        "`eval` with `samples` or `version`; a ZIP with `header.json`",
        "sample and epoch (`<id>_epoch_<n>`)",
        is_inspect_log,
        |obj, origin| {
            inspect::from_log(&obj, origin)
                .map(Unit::traces)
                .map_err(|e| format!("Inspect log: {e}"))
        },
    )
};

pub const OPENHANDS: &Format = &Format {
    list: Some(List {
        recognise: is_event_stream,
        forced_reads_any: true,
        read: |items, origin| {
            openhands::from_events(&items, &file_stem(&origin.file), origin)
                .map(|t| Unit::traces(vec![t]))
                .map_err(|e| format!("OpenHands events: {e}"))
        },
    }),
    element_id: Some("trace_id"),
    ..plain(
        "openhands",
        "an OpenHands event stream",
        "a list of events with `source` and `action`/`observation` (bare, or under `history`)",
        "event list",
        |obj| {
            obj.get("history")
                .and_then(Json::as_array)
                .is_some_and(|events| {
                    is_event_stream(events) || openhands_v1::is_event_list(events)
                })
        },
        |obj, origin| {
            openhands::read_record(&obj, origin)
                .map(|(t, problems)| Unit::Whole(vec![t], problems))
                .map_err(|e| format!("OpenHands events: {e}"))
        },
    )
};

pub const SWE_AGENT: &Format = &Format {
    element_id: Some("trace_id"),
    extensions: &["traj"],
    ..plain(
        "swe-agent",
        "a SWE-agent trajectory",
        "`history` with `message_type`s or beside `trajectory` (SWE-agent); `trajectory_format` `mini-swe-agent…` or `info.mini_version` (mini-swe-agent)",
        "trajectory",
        is_swe_agent,
        |obj, origin| {
            swe_agent::from_record(&obj, origin)
                .map(conversation)
                .map_err(|e| format!("SWE-agent trajectory: {e}"))
        },
    )
};

pub const CLAUDE_CODE: &Format = &Format {
    gather: Some(|file, _| Box::new(claude_code::SessionReader::new(file))),
    list: Some(List {
        recognise: |items| {
            items
                .first()
                .and_then(Json::as_object)
                .is_some_and(is_claude_code_line)
        },
        forced_reads_any: true,
        read: |items, origin| {
            let lines = items.into_iter().map(|v| (origin.line, v)).collect();
            read_session(lines, &origin.file)
        },
    }),
    ..plain(
        "claude-code",
        "a Claude Code session",
        "lines with `type` `user`/`assistant`/`summary`/… and `sessionId`",
        "session (`sessionId`), and its side chain",
        is_claude_code_line,
        |obj, origin| read_session(vec![(origin.line, Json::Object(obj))], &origin.file),
    )
};

fn read_session(lines: Vec<(u64, Json)>, file: &Arc<str>) -> Result<Unit, String> {
    claude_code::from_session_lines(lines, file)
        .map(Unit::traces)
        .map_err(|e| format!("Claude Code session: {e}"))
}

impl Gather for claude_code::SessionReader {
    fn takes_unrecognised(&self) -> bool {
        true
    }
    fn push_text(&mut self, line: u64, text: &str) -> bool {
        claude_code::SessionReader::push_text(self, line, text)
    }
    fn push(&mut self, line: u64, record: Json) -> Result<(), String> {
        claude_code::SessionReader::push(self, line, record);
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(Vec<Trace>, Vec<String>), String> {
        claude_code::SessionReader::finish(*self)
            .map(|traces| (traces, Vec::new()))
            .map_err(|e| format!("Claude Code session: {e}"))
    }
}

pub const OTEL: &Format = &Format {
    gather: Some(|file, _| Box::new(Spans(otel::SpanReader::default(), file))),
    list: Some(List {
        recognise: |items| {
            items
                .first()
                .and_then(Json::as_object)
                .is_some_and(otel::plain::is_span)
        },
        forced_reads_any: false,
        read: |items, origin| {
            otel::from_documents(vec![(origin.line, Json::Array(items))], &origin.file)
                .map(|(traces, notes)| Unit::Whole(traces, notes))
                .map_err(|e| format!("OpenTelemetry spans: {e}"))
        },
    }),
    ..plain(
        "otel",
        "OpenTelemetry spans (OTLP or plain JSON)",
        "`resourceSpans`; plain-JSON spans (`{\"spans\": [...]}`, a list, one a line or one after another: `context` with `trace_id`/`span_id` beside `name`)",
        "OpenTelemetry trace (`traceId`, `context.trace_id`)",
        |obj| {
            obj.get("resourceSpans").is_some_and(Json::is_array)
                || obj.get("resource_spans").is_some_and(Json::is_array)
                || otel::plain::is_span(obj)
                || otel::plain::is_span_list(obj)
        },
        // Spans are taken apart: one big export is not copied.
        |obj, origin| {
            otel::from_documents(vec![(origin.line, Json::Object(obj))], &origin.file)
                .map(|(traces, notes)| Unit::Whole(traces, notes))
                .map_err(|e| format!("OpenTelemetry spans: {e}"))
        },
    )
};

/// A file's spans, gathered.
struct Spans(otel::SpanReader, Arc<str>);

impl Gather for Spans {
    fn push_text(&mut self, line: u64, text: &str) -> bool {
        self.0.push_text(line, text)
    }
    fn push(&mut self, line: u64, record: Json) -> Result<(), String> {
        self.0
            .push(line, record)
            .map_err(|e| format!("OpenTelemetry spans: {e}"))
    }
    fn finish(self: Box<Self>) -> Result<(Vec<Trace>, Vec<String>), String> {
        let Spans(spans, file) = *self;
        spans
            .finish(&file)
            .map_err(|e| format!("OpenTelemetry spans: {e}"))
    }
}

/// A conversation's attempts: grouped with its neighbours of the same id,
/// or a trace of its own when it has none.
fn conversation((id, attempts): (String, Vec<Attempt>)) -> Unit {
    if attempts.is_empty() {
        Unit::traces(vec![Trace::new(id, attempts)])
    } else {
        Unit::Many(id, attempts)
    }
}

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
