//! JSONL files whose records only make traces all together: a Claude Code
//! session (one response spread over several lines, results in later
//! lines) and an OTLP file export (a trace's spans spread over lines):
//! the formats with a [`Format::gather`](crate::read::formats::Format).
//! Only those records are held (by the format's gatherer) until the file
//! ends; everything else streams: a bad line is reported as it is read,
//! and a line that is a record of a kind read line by line (a native
//! attempt, a chat record, …) is read as the JSONL reader would read it,
//! its traces handed on as they complete, so no good line is lost in the
//! session and memory does not grow with the lines that are not gathered.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::{Arc, LazyLock};

use regex::Regex;

use serde_json::{Map, Value as Json};

use super::lines::{LineReader, RawLine};
use super::units::{read_object, Unit};
use super::{oversized, BadLine, Grouper, NotTraceTally, Record};
use crate::model::Origin;
use crate::read::chat::MESSAGE_KEYS;
use crate::read::error::ReadError;
use crate::read::formats::{classify, Gather, GatherOptions, Kind, NATIVE};
use crate::read::native::{LineDecoder, LineError};
use crate::read::ours;
use crate::read::sniff::{describe_value, parse_json};

/// Reads a JSONL file of one of the [`Kind::reads_whole_file`] kinds.
pub struct WholeLinesReader<R> {
    lines: LineReader<R>,
    kind: Kind,
    /// Where the gathered records go; `None` once the file is read.
    gather: Option<Box<dyn Gather>>,
    /// The kind was forced (`--input-format`): lines of other kinds are
    /// reported, not read.
    forced: bool,
    /// The first gathered line, where a failed conversion is reported.
    first_line: Option<u64>,
    per_line: PerLine,
    not_traces: NotTraceTally,
    out: VecDeque<Record>,
}

impl<R: BufRead> WholeLinesReader<R> {
    /// `kind` must have a gatherer; one without is read as if it had an
    /// empty one (nothing is gathered, every line is read on its own).
    pub fn new(
        inner: R,
        file: Arc<str>,
        max_line_bytes: usize,
        kind: Kind,
        options: &GatherOptions,
    ) -> Self {
        let gather = kind.gather.map(|make| make(file.clone(), options));
        WholeLinesReader {
            lines: LineReader::new(inner, file, max_line_bytes),
            kind,
            gather,
            forced: false,
            first_line: None,
            per_line: PerLine::default(),
            not_traces: NotTraceTally::default(),
            out: VecDeque::new(),
        }
    }

    /// Whether the kind was forced with `--input-format`.
    pub fn forced(mut self, forced: bool) -> Self {
        self.forced = forced;
        self
    }

    /// Reads one line (or the end of the file) into `out`; `false` at the end.
    fn step(&mut self) -> bool {
        let WholeLinesReader {
            lines,
            kind,
            gather: gathering,
            forced,
            first_line,
            per_line,
            not_traces,
            out,
        } = self;
        let (kind, forced) = (*kind, *forced);
        let Some(gather) = gathering.as_mut() else {
            return false;
        };
        let file = lines.file().clone();
        let line_no = lines.line_no;
        match lines.next_line() {
            Ok(None) => {}
            Err(e) => out.push_back(Record::Failed(ReadError::Cut {
                file: file.clone(),
                lines: line_no,
                cause: e.to_string(),
            })),
            Ok(Some(RawLine::Bad(b))) => {
                out.push_back(Record::Bad(b));
                return true;
            }
            // The fast path: only what the conversion needs is decoded.
            Ok(Some(RawLine::Text(text, origin)))
                if !may_be_per_line_record(text) && gather.push_text(origin.line, text) =>
            {
                first_line.get_or_insert(origin.line);
                return true;
            }
            Ok(Some(RawLine::Text(text, origin))) => {
                match parse_json(text) {
                    Ok(Json::Object(obj)) => {
                        let detected = classify(&obj);
                        let ours = detected.is_none().then(|| ours::recognise(&obj)).flatten();
                        match (detected, ours) {
                            (_, Some(output)) => not_traces.add(output, &origin),
                            // A record read line by line, wherever it stands
                            // (unless the format was forced: then it is
                            // reported below).
                            (Some(k), _) if !forced && k != kind && !k.reads_whole_file() => {
                                per_line.read(text, k, obj, origin, out);
                            }
                            // A gatherer may take lines of no format (Claude
                            // Code's bookkeeping lines vary by version: the
                            // session reader skips what it does not know).
                            (Some(k), _) if k == kind => {
                                first_line.get_or_insert(origin.line);
                                if let Err(reason) = gather.push(origin.line, Json::Object(obj)) {
                                    out.push_back(bad(origin, reason));
                                }
                            }
                            (None, _) if gather.takes_unrecognised() => {
                                first_line.get_or_insert(origin.line);
                                if let Err(reason) = gather.push(origin.line, Json::Object(obj)) {
                                    out.push_back(bad(origin, reason));
                                }
                            }
                            _ => out.push_back(bad(
                                origin,
                                format!(
                                    "not a line of {} (format {}): it is {}",
                                    kind.describe(),
                                    kind.name,
                                    describe_value(&Json::Object(obj))
                                ),
                            )),
                        }
                    }
                    // Worded as in any other file: one message per problem.
                    Ok(_) => out.push_back(bad(origin, LineError::NotObject.to_string())),
                    Err(e) => {
                        out.push_back(bad(origin, LineError::NotJson(e.to_string()).to_string()))
                    }
                }
                return true;
            }
        }
        // The end of the file: what was gathered is read.
        per_line.flush(out);
        out.extend(not_traces.drain());
        let Some(gather) = gathering.take() else {
            return false;
        };
        let at = Origin {
            file,
            line: first_line.unwrap_or(1),
        };
        match gather.finish() {
            Ok((traces, problems)) => {
                out.extend(traces.into_iter().map(Record::Trace));
                out.extend(problems.into_iter().map(|p| bad(at.clone(), p)));
            }
            Err(reason) => out.push_back(bad(at, reason)),
        }
        false
    }
}

impl<R: BufRead> Iterator for WholeLinesReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        while self.out.is_empty() && self.step() {}
        self.out.pop_front()
    }
}

fn bad(origin: Origin, reason: String) -> Record {
    Record::Bad(BadLine { origin, reason })
}

/// Whether a line may be a record read line by line (its kind's keys are
/// in it) or one of mirotrace's outputs, so the session's fast path, which
/// takes any object, must not swallow it; the line is then classified whole.
fn may_be_per_line_record(text: &str) -> bool {
    const OTHER_KEYS: [&str; 7] = [
        "trace_id",
        "step_logs",
        "main_agent_message_history",
        "schema_version",
        "eval",
        "schema",
        "format",
    ];
    // One pass over the line for all the keys (a line was scanned once per
    // key, which cost more than decoding it).
    static KEYS: LazyLock<Regex> = LazyLock::new(|| {
        let keys: Vec<String> = OTHER_KEYS
            .iter()
            .chain(MESSAGE_KEYS.iter())
            .map(|k| regex::escape(&format!("\"{k}\"")))
            .collect();
        Regex::new(&keys.join("|")).expect("literal keys")
    });
    KEYS.is_match(text)
}

/// Records of the kinds read line by line, met among a whole file's lines:
/// grouped into traces as the JSONL reader groups them (consecutive
/// attempts of one trace id), each trace handed on once the next begins.
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
        kind: Kind,
        obj: Map<String, Json>,
        origin: Origin,
        out: &mut VecDeque<Record>,
    ) {
        let unit = if kind == NATIVE {
            self.decoder
                .decode(text, origin.clone())
                .map(Unit::One)
                .map_err(|e| e.to_string())
        } else {
            read_object(kind, obj, &origin)
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
            // Recognised before a format was looked for: not met here.
            Ok(Unit::NotTrace(_)) => {}
            Err(reason) => out.push_back(bad(origin, reason)),
        }
        // A trace that grows past the limit is reported, not held on to.
        if let Some(reason) = self.group.take_if_oversized() {
            out.push_back(reason);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::formats::{CLAUDE_CODE, OTEL};

    /// Endless copies of `line` after the first line.
    struct Endless(&'static [u8], usize);

    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            for b in buf.iter_mut() {
                *b = self.0[self.1 % self.0.len()];
                self.1 += 1;
            }
            Ok(buf.len())
        }
    }

    fn endless(
        first: &'static [u8],
        then: &'static [u8],
        kind: Kind,
    ) -> WholeLinesReader<impl BufRead> {
        let input = std::io::BufReader::new(std::io::Read::chain(first, Endless(then, 0)));
        WholeLinesReader::new(
            input,
            "x.jsonl".into(),
            1 << 16,
            kind,
            &GatherOptions::default(),
        )
    }

    const SESSION_LINE: &[u8] =
        b"{\"type\": \"user\", \"sessionId\": \"s\", \"uuid\": \"u\", \"message\": {\"role\": \"user\", \"content\": \"hi\"}}\n";
    const SPANS_LINE: &[u8] = b"{\"resourceSpans\": []}\n";

    #[test]
    fn bad_lines_after_a_session_line_stream_out() {
        for (first, kind) in [(SESSION_LINE, CLAUDE_CODE), (SPANS_LINE, OTEL)] {
            let mut reader = endless(first, b"bad\n", kind);
            // The input never ends: each record must come after a bounded read.
            for _ in 0..1000 {
                assert!(matches!(reader.next(), Some(Record::Bad(_))));
            }
            assert!(reader.out.len() <= 1);
        }
    }

    #[test]
    fn native_traces_among_session_lines_stream_out() {
        let mut reader = endless(
            SESSION_LINE,
            b"{\"trace_id\": \"a\", \"content\": \"x\"}\n{\"trace_id\": \"b\", \"content\": \"y\"}\n",
            CLAUDE_CODE,
        );
        for _ in 0..1000 {
            match reader.next() {
                Some(Record::Trace(t)) => assert_eq!(t.attempts.len(), 1),
                other => panic!("{other:?}"),
            }
        }
    }
}
