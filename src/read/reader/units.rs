//! One record → its attempts: the native decoder on the fast path, else
//! the converter of the record's kind.

use serde_json::{Map, Value as Json};

use crate::model::{Attempt, Origin, Trace};
use crate::read::native::{parse_line, LineDecoder, LineError};
use crate::read::sniff::{classify, forced_mismatch, parse_json, InputFormat, Kind};
use crate::read::{
    anthropic, atif, chat, inspect, openhands, openhands_v1, otel, swe_agent, tasklog, tau2,
};

/// What one record holds.
// `One` is the native hot path: no allocation per line for a smaller enum.
#[allow(clippy::large_enum_variant)]
pub(super) enum Unit {
    /// One native attempt.
    One(Attempt),
    /// A conversation's attempts, all of one trace (never empty).
    Many(String, Vec<Attempt>),
    /// Complete traces (a task log, an ATIF trajectory, an empty
    /// conversation, the samples of an Inspect log, …), and the problems
    /// met reading them (each reported as a skipped line).
    Whole(Vec<Trace>, Vec<String>),
}

/// Reads one line: natively when the file is native (forced, or its first
/// record was), else by the kind of its JSON object. `mode` remembers the
/// kind of the file's first record.
pub(super) fn parse_unit(
    text: &str,
    origin: &Origin,
    format: InputFormat,
    mode: &mut Option<Kind>,
    decoder: &mut LineDecoder,
) -> Result<Unit, String> {
    let forced = format.forced_kind();
    if forced == Some(Kind::Native) || (forced.is_none() && *mode == Some(Kind::Native)) {
        return match decoder.decode(text, origin.clone()) {
            // Shaped as a chat record: read as `classify` reads it at the top.
            Ok(a) if forced.is_none() && decoder.last_was_message_list_only() => {
                match other_kind(text) {
                    Some((kind, obj)) => convert_object(kind, &obj, origin),
                    None => Ok(Unit::One(a)),
                }
            }
            Ok(a) => Ok(Unit::One(a)),
            // Not an attempt; perhaps a record of another kind (mixed file).
            Err(LineError::NoTraceId) if forced.is_none() => match other_kind(text) {
                Some((kind, obj)) => convert_object(kind, &obj, origin),
                None => Err(LineError::NoTraceId.to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
    }
    let value = parse_json(text).map_err(|e| LineError::NotJson(e.to_string()).to_string())?;
    let Json::Object(obj) = value else {
        return Err(LineError::NotObject.to_string());
    };
    if let Some(why) = forced.and_then(|k| forced_mismatch(k, &obj)) {
        return Err(why);
    }
    let kind = forced.or_else(|| classify(&obj)).unwrap_or(Kind::Native);
    mode.get_or_insert(kind);
    match kind {
        Kind::Native => decoder
            .decode(text, origin.clone())
            .map(Unit::One)
            .map_err(|e| e.to_string()),
        other => convert_object(other, &obj, origin),
    }
}

/// A line that failed the native reader, if it is a record of another kind.
fn other_kind(text: &str) -> Option<(Kind, Map<String, Json>)> {
    let Json::Object(obj) = parse_json(text).ok()? else {
        return None;
    };
    classify(&obj)
        .filter(|k| *k != Kind::Native)
        .map(|k| (k, obj))
}

/// Converts a JSON object of a known kind.
pub(super) fn convert_object(
    kind: Kind,
    obj: &Map<String, Json>,
    origin: &Origin,
) -> Result<Unit, String> {
    match kind {
        Kind::Native => {
            let text = serde_json::to_string(obj).map_err(|e| e.to_string())?;
            parse_line(&text, origin.clone())
                .map(Unit::One)
                .map_err(|e| e.to_string())
        }
        Kind::Chat => chat::from_record(obj, origin)
            .map(conversation)
            .map_err(|e| format!("chat transcript: {e}")),
        Kind::SweAgent => swe_agent::from_record(obj, origin)
            .map(conversation)
            .map_err(|e| format!("SWE-agent trajectory: {e}")),
        Kind::TaskLog => {
            let read = tasklog::from_document(obj, origin);
            let problems = read
                .problems
                .into_iter()
                .map(|p| format!("task log: {p}"))
                .collect();
            Ok(Unit::Whole(vec![read.trace], problems))
        }
        Kind::Atif => atif::from_document(obj, origin)
            .map(|t| Unit::Whole(vec![t], Vec::new()))
            .map_err(|e| format!("ATIF trajectory: {e}")),
        Kind::Inspect => inspect::from_log(obj, origin)
            .map(|ts| Unit::Whole(ts, Vec::new()))
            .map_err(|e| format!("Inspect log: {e}")),
        Kind::OpenHands => openhands::read_record(obj, origin)
            .map(|(t, problems)| Unit::Whole(vec![t], problems))
            .map_err(|e| format!("OpenHands events: {e}")),
        Kind::ClaudeCode => {
            let line = vec![(origin.line, Json::Object(obj.clone()))];
            anthropic::from_session_lines(line, &origin.file)
                .map(|ts| Unit::Whole(ts, Vec::new()))
                .map_err(|e| format!("Claude Code session: {e}"))
        }
        Kind::OpenHandsV1 => Err(
            "one OpenHands V1 event on its own: a conversation's events \
                                  are read together (events.jsonl, or a JSON list: \
                                  `jq -s . events/*.json`)"
                .to_string(),
        ),
        Kind::CompletionLog => openhands_v1::completion::from_log(obj, origin)
            .map(|t| Unit::Whole(vec![t], Vec::new()))
            .map_err(|e| format!("completion log: {e}")),
        Kind::Tau2 => tau2::from_results(obj, origin)
            .map(|(ts, problems)| Unit::Whole(ts, problems))
            .map_err(|e| format!("tau2-bench results: {e}")),
        Kind::Otel => {
            otel::from_documents(vec![(origin.line, Json::Object(obj.clone()))], &origin.file)
                .map(|ts| Unit::Whole(ts, Vec::new()))
                .map_err(|e| format!("OpenTelemetry spans: {e}"))
        }
    }
}

/// A conversation's attempts: grouped with its neighbours of the same id,
/// or a trace of its own when it has none.
fn conversation((id, attempts): (String, Vec<Attempt>)) -> Unit {
    if attempts.is_empty() {
        Unit::Whole(vec![Trace::new(id, attempts)], Vec::new())
    } else {
        Unit::Many(id, attempts)
    }
}
