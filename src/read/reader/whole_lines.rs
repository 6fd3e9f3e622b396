//! JSONL files whose records only make traces all together: a Claude Code
//! session (one response spread over several lines, results in later
//! lines) and an OTLP file export (a trace's spans spread over lines). The
//! lines are read first, each parsed; then the file is converted whole.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;

use serde_json::Value as Json;

use super::lines::{LineReader, RawLine};
use super::{BadLine, Record};
use crate::model::Origin;
use crate::read::native::LineError;
use crate::read::sniff::{classify, parse_json, Kind};
use crate::read::{anthropic, otel};

/// Reads a whole JSONL file of one of the [`Kind::reads_whole_file`] kinds.
pub struct WholeLinesReader<R> {
    source: Option<(LineReader<R>, Kind)>,
    out: VecDeque<Record>,
}

impl<R: BufRead> WholeLinesReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_line_bytes: usize, kind: Kind) -> Self {
        WholeLinesReader {
            source: Some((LineReader::new(inner, file, max_line_bytes), kind)),
            out: VecDeque::new(),
        }
    }
}

impl<R: BufRead> Iterator for WholeLinesReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if let Some((lines, kind)) = self.source.take() {
            self.out = read_all(lines, kind);
        }
        self.out.pop_front()
    }
}

/// What the lines are gathered into until the file is read.
enum Gathered {
    Session(anthropic::SessionReader),
    Spans(otel::SpanReader),
}

fn read_all<R: BufRead>(mut lines: LineReader<R>, kind: Kind) -> VecDeque<Record> {
    let file = lines.file().clone();
    let mut out = VecDeque::new();
    let mut gathered = match kind {
        Kind::ClaudeCode => Gathered::Session(anthropic::SessionReader::new(file.clone())),
        _ => Gathered::Spans(otel::SpanReader::default()),
    };
    let mut first_line = None;
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
                if match &mut gathered {
                    Gathered::Session(s) => s.push_text(origin.line, text),
                    Gathered::Spans(s) => s.push_text(origin.line, text),
                } =>
            {
                first_line.get_or_insert(origin.line);
            }
            Ok(Some(RawLine::Text(text, origin))) => match parse_json(text) {
                // Claude Code's bookkeeping lines vary by version: the session
                // reader skips what it does not know.
                Ok(Json::Object(obj))
                    if kind == Kind::ClaudeCode || classify(&obj) == Some(kind) =>
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
    let converted = match gathered {
        Gathered::Session(s) => s.finish().map_err(|e| format!("Claude Code session: {e}")),
        Gathered::Spans(s) => s
            .finish(&file)
            .map_err(|e| format!("OpenTelemetry spans: {e}")),
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

fn bad(origin: Origin, reason: String) -> Record {
    Record::Bad(BadLine { origin, reason })
}
