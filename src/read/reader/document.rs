//! Whole JSON documents: a task log, an ATIF trajectory, a message list,
//! a list of records, or several documents one after another.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Read;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::units::{convert_object, Unit};
use super::{BadLine, Grouper, Record};
use crate::model::Origin;
use crate::read::chat::ID_KEYS;
use crate::read::sniff::{
    classify, describe_value, forced_mismatch, is_event_stream, is_message_list, parse_json,
    InputFormat, Kind,
};
use crate::read::{anthropic, openhands, otel, tasklog};

/// Reads a whole JSON document (a task log, an ATIF trajectory, a chat
/// message list or a list of records) and yields its traces. The document
/// is held in memory once, capped like a line.
pub struct DocumentReader<R> {
    source: Option<(R, Arc<str>, usize, InputFormat)>,
    out: VecDeque<Record>,
}

impl<R: Read> DocumentReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_bytes: usize, format: InputFormat) -> Self {
        DocumentReader {
            source: Some((inner, file, max_bytes, format)),
            out: VecDeque::new(),
        }
    }
}

impl<R: Read> Iterator for DocumentReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if let Some((inner, file, max, format)) = self.source.take() {
            self.out = read_document(inner, file, max, format);
        }
        self.out.pop_front()
    }
}

fn read_document<R: Read>(
    inner: R,
    file: Arc<str>,
    max: usize,
    format: InputFormat,
) -> VecDeque<Record> {
    let mut out = VecDeque::new();
    let mut buf = Vec::new();
    if let Err(e) = inner.take(max as u64 + 1).read_to_end(&mut buf) {
        let lines = buf.iter().filter(|&&b| b == b'\n').count();
        out.push_back(Record::Failed {
            file,
            reason: format!("read error after line {lines}: {e}"),
        });
        return out;
    }
    let body = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf);
    let first_line = 1 + body
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .filter(|&&b| b == b'\n')
        .count() as u64;
    let origin = |line: u64| Origin {
        file: file.clone(),
        line,
    };
    let bad = |line: u64, reason: String| {
        Record::Bad(BadLine {
            origin: origin(line),
            reason,
        })
    };
    if buf.len() > max {
        out.push_back(bad(
            first_line,
            format!("document longer than {max} bytes (raise it with --max-line-bytes)"),
        ));
        return out;
    }
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => {
            let line = 1 + body[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64;
            out.push_back(bad(
                line,
                format!("invalid UTF-8 at byte {}", e.valid_up_to()),
            ));
            return out;
        }
    };
    let mut cut_short = false;
    let documents = match parse_json(text) {
        Ok(v) => vec![(first_line, v)],
        Err(e) => match concatenated(text) {
            Some(docs) => docs,
            None => {
                let line = e.line().max(1) as u64;
                let mut reason = format!("document is not JSON: {e}");
                // A task log cut off mid-write is read up to the cut.
                let salvaged = cut_task_log(text, format);
                if let Some((cut, _)) = &salvaged {
                    reason.push_str(&format!("; read as a task log cut off after line {cut}"));
                }
                out.push_back(bad(line, reason));
                match salvaged {
                    Some((_, doc)) => {
                        cut_short = true;
                        vec![(first_line, doc)]
                    }
                    None => return out,
                }
            }
        },
    };
    let mut units = Vec::new();
    for (line, value) in documents {
        let at = origin(line);
        units.extend(
            document_units(value, &at, &file, format)
                .into_iter()
                .map(|u| (line, u)),
        );
    }
    let mut group = Grouper::default();
    for (line, unit) in units {
        match unit {
            Ok(Unit::One(a)) => {
                if group.current_id().is_some_and(|id| *id != *a.trace_id) {
                    out.extend(group.take().map(Record::Trace));
                }
                group.current.push(a);
            }
            Ok(Unit::Many(id, attempts)) => {
                if group.current_id().is_some_and(|c| c != id) {
                    out.extend(group.take().map(Record::Trace));
                }
                group.current.extend(attempts);
            }
            Ok(Unit::Whole(traces, problems)) => {
                out.extend(group.take().map(Record::Trace));
                // What was cut before its first attempt holds nothing to report.
                out.extend(
                    traces
                        .into_iter()
                        .filter(|t| !(cut_short && t.attempts.is_empty()))
                        .map(Record::Trace),
                );
                out.extend(problems.into_iter().map(|reason| bad(line, reason)));
            }
            Err((line, reason)) => {
                out.extend(group.take().map(Record::Trace));
                out.push_back(bad(line, reason));
            }
        }
    }
    out.extend(group.take().map(Record::Trace));
    out
}

/// A task log whose text stops mid-document: its complete part, and the
/// line of the cut.
fn cut_task_log(text: &str, format: InputFormat) -> Option<(u64, Json)> {
    let (doc, cut) = tasklog::salvage::complete_prefix(text)?;
    let kind = match &doc {
        Json::Object(obj) => format.forced_kind().or_else(|| classify(obj)),
        _ => None,
    };
    (kind == Some(Kind::TaskLog)).then_some((cut, doc))
}

/// Several JSON documents one after another (`cat logs/*.json | mirotrace …`),
/// each with the line it starts on; `None` unless all of them parse.
fn concatenated(text: &str) -> Option<Vec<(u64, Json)>> {
    let mut docs = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Json>();
    let mut start = 0;
    while let Some(next) = stream.next() {
        let value = next.ok()?;
        let skipped = text[start..].len() - text[start..].trim_start().len();
        let line = 1 + text[..start + skipped].matches('\n').count() as u64;
        docs.push((line, value));
        start = stream.byte_offset();
    }
    (docs.len() > 1).then_some(docs)
}

/// The records of one parsed document.
fn document_units(
    value: Json,
    at: &Origin,
    file: &Arc<str>,
    format: InputFormat,
) -> Vec<Result<Unit, (u64, String)>> {
    let forced = format.forced_kind();
    let first_kind = |items: &[Json]| items.first().and_then(Json::as_object).and_then(classify);
    let units: Vec<Result<Unit, String>> = match value {
        Json::Object(obj) => match forced.or_else(|| classify(&obj)) {
            Some(kind) => match forced.and_then(|k| forced_mismatch(k, &obj)) {
                Some(why) => vec![Err(why)],
                // Spans are taken apart: one big export is not copied.
                None if kind == Kind::Otel => {
                    vec![
                        otel::from_documents(vec![(at.line, Json::Object(obj))], file)
                            .map(|ts| Unit::Whole(ts, Vec::new()))
                            .map_err(|e| format!("OpenTelemetry spans: {e}")),
                    ]
                }
                None => vec![convert_object(kind, &obj, at)],
            },
            None => vec![Err(not_a_trace(&Json::Object(obj)))],
        },
        Json::Array(items)
            if forced == Some(Kind::OpenHands) || (forced.is_none() && is_event_stream(&items)) =>
        {
            vec![openhands::from_events(&items, &file_stem(file), at)
                .map(|t| Unit::Whole(vec![t], Vec::new()))
                .map_err(|e| format!("OpenHands events: {e}"))]
        }
        Json::Array(items)
            if forced == Some(Kind::ClaudeCode)
                || (forced.is_none() && first_kind(&items) == Some(Kind::ClaudeCode)) =>
        {
            let lines = items.into_iter().map(|v| (at.line, v)).collect();
            vec![anthropic::from_session_lines(lines, file)
                .map(|ts| Unit::Whole(ts, Vec::new()))
                .map_err(|e| format!("Claude Code session: {e}"))]
        }
        Json::Array(items)
            if matches!(forced, None | Some(Kind::Chat)) && is_message_list(&items) =>
        {
            let mut conversation = Map::new();
            conversation.insert("trace_id".into(), Json::from(file_stem(file)));
            conversation.insert("messages".into(), Json::Array(items));
            vec![convert_object(Kind::Chat, &conversation, at)]
        }
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Json::Object(obj) => match forced.or_else(|| classify(obj)) {
                    Some(kind) => match forced.and_then(|k| forced_mismatch(k, obj)) {
                        Some(why) => Err(format!("element {i}: {why}")),
                        None => convert_object(kind, &named_element(kind, obj, at, i), at)
                            .map_err(|e| format!("element {i}: {e}")),
                    },
                    None => Err(format!("element {i}: {}", not_a_trace(item))),
                },
                _ => Err(format!("element {i} is not an object")),
            })
            .collect(),
        other => vec![Err(not_a_trace(&other))],
    };
    units
        .into_iter()
        .map(|u| u.map_err(|reason| (at.line, reason)))
        .collect()
}

/// The message for a JSON value of no kind mirotrace reads.
fn not_a_trace(value: &Json) -> String {
    format!(
        "not a trace mirotrace reads (a native attempt, a chat transcript, a task log, ATIF, \
         Inspect, OpenHands, SWE-agent, Claude Code or OTLP JSON): it is {}",
        describe_value(value)
    )
}

/// An element of a list of records, given an id (`FILE:LINE#i`) when it has
/// none, so that the conversations of a merged file stay separate traces.
fn named_element<'a>(
    kind: Kind,
    obj: &'a Map<String, Json>,
    at: &Origin,
    i: usize,
) -> Cow<'a, Map<String, Json>> {
    let key = match kind {
        Kind::Chat | Kind::SweAgent | Kind::OpenHands => "trace_id",
        Kind::Atif => "session_id",
        _ => return Cow::Borrowed(obj),
    };
    if ID_KEYS.iter().any(|k| obj.contains_key(*k)) {
        return Cow::Borrowed(obj);
    }
    let mut named = obj.clone();
    named.insert(key.into(), Json::from(format!("{at}#{i}")));
    Cow::Owned(named)
}

/// A file's name without directories and known extensions (`.json`, `.gz`, …).
pub fn file_stem(label: &str) -> String {
    let mut name = std::path::Path::new(label)
        .file_name()
        .map_or_else(|| label.to_string(), |n| n.to_string_lossy().into_owned());
    while let Some(stripped) = [".gz", ".zst", ".jsonl", ".json"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
    {
        if stripped.is_empty() {
            break;
        }
        name = stripped.to_string();
    }
    name
}
