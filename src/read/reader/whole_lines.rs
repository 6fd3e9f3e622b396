//! JSONL files whose records only make traces all together: a Claude Code
//! session (one response spread over several lines, results in later
//! lines) and an OTLP file export (a trace's spans spread over lines). The
//! lines are read first, each parsed; then the file is converted whole.
//!
//! Such a file is recognised by its first line, but that line does not
//! decide how every other line is read: a line that is a record of a kind
//! read line by line (a native attempt, a chat record, …) is read as such,
//! as the JSONL reader would, so no good line is lost in the session.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;

use serde_json::Value as Json;

use super::lines::{LineReader, RawLine};
use super::units::{convert_object, Unit};
use super::{oversized, BadLine, Grouper, Record};
use crate::model::Origin;
use crate::read::chat::MESSAGE_KEYS;
use crate::read::native::{LineDecoder, LineError};
use crate::read::sniff::{classify, parse_json, Kind};
use crate::read::{anthropic, openhands_v1, otel};

/// Reads a whole JSONL file of one of the [`Kind::reads_whole_file`] kinds.
pub struct WholeLinesReader<R> {
    source: Option<(LineReader<R>, Kind)>,
    /// The kind was forced (`--input-format`): lines of other kinds are
    /// reported, not read.
    forced: bool,
    out: VecDeque<Record>,
}

impl<R: BufRead> WholeLinesReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_line_bytes: usize, kind: Kind) -> Self {
        WholeLinesReader {
            source: Some((LineReader::new(inner, file, max_line_bytes), kind)),
            forced: false,
            out: VecDeque::new(),
        }
    }

    /// Whether the kind was forced with `--input-format`.
    pub fn forced(mut self, forced: bool) -> Self {
        self.forced = forced;
        self
    }
}

impl<R: BufRead> Iterator for WholeLinesReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if let Some((lines, kind)) = self.source.take() {
            self.out = read_all(lines, kind, self.forced);
        }
        self.out.pop_front()
    }
}

/// What the lines are gathered into until the file is read.
enum Gathered {
    Session(anthropic::SessionReader),
    Spans(otel::SpanReader),
    /// OpenHands V1 events, with their lines.
    Events(Vec<(u64, Json)>),
}

fn read_all<R: BufRead>(mut lines: LineReader<R>, kind: Kind, forced: bool) -> VecDeque<Record> {
    let file = lines.file().clone();
    let mut out = VecDeque::new();
    let mut gathered = match kind {
        Kind::ClaudeCode => Gathered::Session(anthropic::SessionReader::new(file.clone())),
        Kind::OpenHandsV1 => Gathered::Events(Vec::new()),
        _ => Gathered::Spans(otel::SpanReader::default()),
    };
    let mut first_line = None;
    let mut per_line = PerLine::default();
    loop {
        match lines.next_line() {
            Ok(None) => break,
            Err(e) => {
                out.push_back(Record::Failed {
                    file: file.clone(),
                    reason: format!("read error after line {}: {e}", lines.line_no),
                });
                break;
            }
            Ok(Some(RawLine::Bad(bad))) => out.push_back(Record::Bad(bad)),
            // The fast path: only what the conversion needs is decoded.
            Ok(Some(RawLine::Text(text, origin)))
                if !may_be_per_line_record(text)
                    && match &mut gathered {
                        Gathered::Session(s) => s.push_text(origin.line, text),
                        Gathered::Spans(s) => s.push_text(origin.line, text),
                        Gathered::Events(_) => false,
                    } =>
            {
                first_line.get_or_insert(origin.line);
            }
            Ok(Some(RawLine::Text(text, origin))) => match parse_json(text) {
                // A record read line by line, wherever it stands (unless
                // the format was forced: then it is reported below).
                Ok(Json::Object(obj))
                    if !forced
                        && classify(&obj).is_some_and(|k| k != kind && !k.reads_whole_file()) =>
                {
                    per_line.read(text, &obj, origin, &mut out);
                }
                // Claude Code's bookkeeping lines vary by version: the session
                // reader skips what it does not know.
                Ok(Json::Object(obj))
                    if classify(&obj) == Some(kind)
                        || (kind == Kind::ClaudeCode && classify(&obj).is_none()) =>
                {
                    first_line.get_or_insert(origin.line);
                    let value = Json::Object(obj);
                    match &mut gathered {
                        Gathered::Session(s) => s.push(origin.line, value),
                        Gathered::Spans(s) => {
                            if let Err(e) = s.push(origin.line, value) {
                                out.push_back(bad(origin, format!("OpenTelemetry spans: {e}")));
                            }
                        }
                        Gathered::Events(events) => events.push((origin.line, value)),
                    }
                }
                // Worded as in any other file: one message per problem.
                Ok(other) if !other.is_object() => {
                    out.push_back(bad(origin, LineError::NotObject.to_string()))
                }
                Ok(other) => out.push_back(bad(
                    origin,
                    format!(
                        "not a line of {} (format {}): it is {}",
                        kind.describe(),
                        kind.name(),
                        crate::read::sniff::describe_value(&other)
                    ),
                )),
                Err(e) => out.push_back(bad(origin, LineError::NotJson(e.to_string()).to_string())),
            },
        }
    }
    per_line.finish(&mut out);
    let converted = match gathered {
        Gathered::Session(s) => s.finish().map_err(|e| format!("Claude Code session: {e}")),
        Gathered::Spans(s) => s
            .finish(&file)
            .map_err(|e| format!("OpenTelemetry spans: {e}")),
        Gathered::Events(events) => v1_events(&events, &file, &mut out),
    };
    match converted {
        Ok(traces) => out.extend(traces.into_iter().map(Record::Trace)),
        Err(reason) => out.push_back(bad(
            Origin {
                file,
                line: first_line.unwrap_or(1),
            },
            reason,
        )),
    }
    out
}

/// A file of OpenHands V1 events as one conversation, named by the file;
/// its problems (unknown kinds) are reported at their lines.
fn v1_events(
    events: &[(u64, Json)],
    file: &Arc<str>,
    out: &mut VecDeque<Record>,
) -> Result<Vec<crate::model::Trace>, String> {
    let first = events.first().map_or(1, |(line, _)| *line);
    let origin = Origin {
        file: file.clone(),
        line: first,
    };
    let id = super::document::file_stem(file);
    let read = openhands_v1::from_events(events.iter().map(|(l, e)| (*l, e)), &id, &origin)
        .map_err(|e| format!("OpenHands V1 events: {e}"))?;
    out.extend(
        read.problems
            .into_iter()
            .map(|p| bad(origin.clone(), format!("OpenHands V1 events: {p}"))),
    );
    Ok(vec![read.trace])
}

fn bad(origin: Origin, reason: String) -> Record {
    Record::Bad(BadLine { origin, reason })
}

/// Whether a line may be a record read line by line (its kind's keys are
/// in it), so the session's fast path, which takes any object, must not
/// swallow it; the line is then classified whole.
fn may_be_per_line_record(text: &str) -> bool {
    const OTHER_KEYS: [&str; 5] = [
        "trace_id",
        "step_logs",
        "main_agent_message_history",
        "schema_version",
        "eval",
    ];
    OTHER_KEYS
        .iter()
        .chain(MESSAGE_KEYS.iter())
        .any(|k| text.contains(&format!("\"{k}\"")))
}

/// Records of the kinds read line by line, met among a whole file's lines:
/// grouped into traces as the JSONL reader groups them (consecutive
/// attempts of one trace id).
struct PerLine {
    decoder: LineDecoder,
    group: Grouper,
}

impl Default for PerLine {
    fn default() -> Self {
        PerLine {
            decoder: LineDecoder::new(true),
            group: Grouper::default(),
        }
    }
}

impl PerLine {
    fn read(
        &mut self,
        text: &str,
        obj: &serde_json::Map<String, Json>,
        origin: Origin,
        out: &mut VecDeque<Record>,
    ) {
        let unit = match classify(obj) {
            Some(Kind::Native) => self
                .decoder
                .decode(text, origin.clone())
                .map(Unit::One)
                .map_err(|e| e.to_string()),
            Some(kind) => convert_object(kind, obj, &origin),
            None => return,
        };
        match unit {
            Ok(Unit::One(attempt)) => {
                if self
                    .group
                    .current_id()
                    .is_some_and(|id| *id != *attempt.trace_id)
                {
                    self.flush(out);
                }
                self.group.current.push(attempt);
            }
            Ok(Unit::Many(id, attempts)) => {
                if self.group.current_id().is_some_and(|c| c != id) {
                    self.flush(out);
                }
                self.group.current.extend(attempts);
            }
            Ok(Unit::Whole(traces, problems)) => {
                self.flush(out);
                out.extend(traces.into_iter().map(Record::Trace));
                out.extend(
                    problems
                        .into_iter()
                        .map(|reason| bad(origin.clone(), reason)),
                );
            }
            Err(reason) => out.push_back(bad(origin, reason)),
        }
    }

    /// The open trace, if any, is complete.
    fn flush(&mut self, out: &mut VecDeque<Record>) {
        let Some(trace) = self.group.take() else {
            return;
        };
        match oversized(&trace) {
            Some(reason) => out.push_back(bad(trace.attempts[0].origin.clone(), reason)),
            None => out.push_back(Record::Trace(trace)),
        }
    }

    fn finish(mut self, out: &mut VecDeque<Record>) {
        self.flush(out);
    }
}
