//! Streaming reading: lines → attempts → traces, with bad lines reported,
//! not fatal. A JSONL file is read in the kind of its first record (native
//! attempts on the fast path); a line that does not fit is looked at again
//! as a record of another kind. A pretty-printed JSON document is read
//! whole by [`DocumentReader`].
//!
//! [`lines`] takes raw lines, [`units`] turns one record into attempts,
//! this module groups them into traces, [`document`] reads whole documents.

mod document;
mod lines;
mod units;
mod whole_lines;

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;

pub use crate::read::attribution::file_stem;
pub use document::DocumentReader;
pub use lines::{LineReader, RawLine};
pub use whole_lines::WholeLinesReader;

use crate::model::{Attempt, Origin, Trace};
pub use crate::read::error::BadLine;
use crate::read::error::{NoAttempt, ReadError};
use crate::read::formats::{InputFormat, Kind};
use crate::read::native::LineDecoder;
use crate::read::ours::Output;
use units::{parse_unit, Unit};

/// Longest line read by default (bytes); longer lines are reported and skipped.
pub const DEFAULT_MAX_LINE_BYTES: usize = 512 * 1024 * 1024;

/// Most attempts one trace may have (docs/limits.md). A longer trace is
/// reported as too large and skipped whole, its remaining lines dropped
/// as they are read: a few kilobytes of compressed input can hold millions
/// of attempts, and every attempt of a trace is in memory at once.
pub const MAX_ATTEMPTS_PER_TRACE: usize = 200_000;

/// Most attempts one session of a trace may have; a trace with a longer
/// session is skipped the same way. Upstream's loop stops a session after
/// `max_turns` plus a few more attempts (hundreds).
pub const MAX_ATTEMPTS_PER_SESSION: usize = 100_000;

/// Why `trace` is too large to replay, if it is.
pub fn oversized(trace: &Trace) -> Option<String> {
    let n = trace.attempts.len();
    if n > MAX_ATTEMPTS_PER_TRACE {
        return Some(too_large(&trace.trace_id, MAX_ATTEMPTS_PER_TRACE, "trace"));
    }
    if n <= MAX_ATTEMPTS_PER_SESSION {
        return None;
    }
    let mut per_session: std::collections::HashMap<&str, usize> = Default::default();
    for a in &trace.attempts {
        let count = per_session.entry(&a.session).or_default();
        *count += 1;
        if *count > MAX_ATTEMPTS_PER_SESSION {
            let what = format!("session {:?} of the trace", &*a.session);
            return Some(too_large(&trace.trace_id, MAX_ATTEMPTS_PER_SESSION, &what));
        }
    }
    None
}

fn too_large(trace_id: &str, max: usize, what: &str) -> String {
    format!(
        "trace {trace_id:?} skipped: the {what} has more than {max} attempts, the limit (docs/limits.md)"
    )
}

/// Bad lines met inside a trace's run that wait for the trace to end
/// before they are reported; past this many they are reported at once,
/// ahead of the trace, so memory does not grow with the bad lines.
const DEFERRED_BAD_LINES: usize = 64;

/// Records of one of mirotrace's own outputs met in an input (verdicts,
/// a report, labels): not traces, counted per kind and reported once per
/// file and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotTraces {
    /// The first such record.
    pub origin: Origin,
    /// The line of the last one.
    pub last_line: u64,
    pub count: u64,
    pub output: &'static Output,
}

impl NotTraces {
    fn new(output: &'static Output, origin: Origin) -> NotTraces {
        NotTraces {
            last_line: origin.line,
            origin,
            count: 1,
            output,
        }
    }
}

impl std::fmt::Display for NotTraces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.origin)?;
        if self.last_line != self.origin.line {
            write!(f, "-{}", self.last_line)?;
        }
        write!(f, ": {}", self.output.message(self.count))
    }
}

/// Counts records of mirotrace's outputs, one tally per kind, to be
/// reported when the input ends (memory does not grow with them).
#[derive(Debug, Default)]
pub(crate) struct NotTraceTally(Vec<NotTraces>);

impl NotTraceTally {
    pub(crate) fn add(&mut self, output: &'static Output, origin: &Origin) {
        match self.0.iter_mut().find(|n| n.output == output) {
            Some(n) => {
                n.count += 1;
                n.last_line = origin.line;
            }
            None => self.0.push(NotTraces::new(output, origin.clone())),
        }
    }

    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Record> + '_ {
        self.0.drain(..).map(Record::NotTraces)
    }
}

/// What a reader yields, in input order.
#[derive(Debug)]
pub enum Record {
    Trace(Trace),
    Bad(BadLine),
    /// Records that are mirotrace's own output, not traces.
    NotTraces(NotTraces),
    /// The input could not be read any further (I/O error, truncated stream).
    Failed(ReadError),
    /// The input ended without an attempt or a problem (only from
    /// `source::open_records`).
    NoAttempt(NoAttempt),
}

/// Collects units into traces: consecutive attempts with the same trace id
/// form one trace; whole traces stand alone.
#[derive(Default)]
struct Grouper {
    current: Vec<Attempt>,
}

impl Grouper {
    fn current_id(&self) -> Option<&str> {
        self.current.first().map(|a| &*a.trace_id)
    }

    /// The trace's id, its attempts freed.
    fn take_id(self) -> Option<Arc<str>> {
        self.current.first().map(|a| a.trace_id.clone())
    }

    /// The open trace, taken and reported, when it has grown past
    /// [`MAX_ATTEMPTS_PER_TRACE`].
    fn take_if_oversized(&mut self) -> Option<Record> {
        if self.current.len() <= MAX_ATTEMPTS_PER_TRACE {
            return None;
        }
        let attempts = std::mem::take(&mut self.current);
        let first = attempts.first()?;
        Some(Record::Bad(BadLine {
            origin: first.origin.clone(),
            reason: too_large(&first.trace_id, MAX_ATTEMPTS_PER_TRACE, "trace"),
        }))
    }

    fn take(&mut self) -> Option<Trace> {
        let attempts = std::mem::take(&mut self.current);
        let id = attempts.first()?.trace_id.clone();
        Some(Trace::new(id, attempts))
    }
}

/// Groups a file's attempts into traces: consecutive lines with the same
/// `trace_id` form one trace, so memory is bounded by the largest trace.
/// Bad lines inside a trace's run are reported right after that trace.
pub struct TraceReader<R> {
    lines: LineReader<R>,
    format: InputFormat,
    /// The kind of the file's first record.
    mode: Option<Kind>,
    decoder: LineDecoder,
    /// First attempts of the next trace, read while closing the previous one.
    pending: Vec<Attempt>,
    /// A trace found too large: its further lines are read and dropped.
    dropping: Option<Arc<str>>,
    /// mirotrace's own output met so far, reported at the end.
    not_traces: NotTraceTally,
    out: VecDeque<Record>,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// A reader that detects the kind of each record.
    pub fn new(inner: R, file: Arc<str>, max_line_bytes: usize) -> Self {
        Self::with_format(inner, file, max_line_bytes, InputFormat::Auto)
    }

    pub fn with_format(
        inner: R,
        file: Arc<str>,
        max_line_bytes: usize,
        format: InputFormat,
    ) -> Self {
        TraceReader {
            lines: LineReader::new(inner, file, max_line_bytes),
            format,
            mode: None,
            decoder: LineDecoder::new(true),
            pending: Vec::new(),
            dropping: None,
            not_traces: NotTraceTally::default(),
            out: VecDeque::new(),
            done: false,
        }
    }

    /// Numbers lines from `line` on (the input continues a file read so far
    /// another way).
    pub fn starting_at_line(mut self, line: u64) -> Self {
        self.lines.line_no = line.saturating_sub(1);
        self
    }

    /// Whether `meta` is kept whole (the default) or only the fields the
    /// replay reads (faster).
    pub fn keep_meta(mut self, keep: bool) -> Self {
        self.decoder = LineDecoder::new(keep);
        self
    }

    /// Reads until one trace is complete, queueing it and the bad lines met on the way.
    fn fill(&mut self) {
        let mut group = Grouper {
            current: std::mem::take(&mut self.pending),
        };
        let mut deferred: Vec<Record> = Vec::new();
        while !self.done {
            let bad = match self.lines.next_line() {
                Ok(None) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.done = true;
                    deferred.push(Record::Failed(ReadError::Cut {
                        file: self.lines.file().clone(),
                        lines: self.lines.line_no,
                        cause: e.to_string(),
                    }));
                    break;
                }
                Ok(Some(RawLine::Bad(bad))) => bad,
                Ok(Some(RawLine::Text(text, origin))) => {
                    match parse_unit(
                        text,
                        &origin,
                        self.format,
                        &mut self.mode,
                        &mut self.decoder,
                    ) {
                        Ok(Unit::One(attempt)) => {
                            if self.dropped(&attempt.trace_id) {
                                continue;
                            }
                            if group
                                .current_id()
                                .is_some_and(|id| *id != *attempt.trace_id)
                            {
                                self.pending.push(attempt);
                                break;
                            }
                            group.current.push(attempt);
                            if group.current.len() > MAX_ATTEMPTS_PER_TRACE {
                                return self.drop_group(group, deferred, origin);
                            }
                            continue;
                        }
                        Ok(Unit::Many(id, attempts)) => {
                            if self.dropped(&id) {
                                continue;
                            }
                            if group.current_id().is_some_and(|c| c != id) {
                                self.pending = attempts;
                                break;
                            }
                            group.current.extend(attempts);
                            if group.current.len() > MAX_ATTEMPTS_PER_TRACE {
                                return self.drop_group(group, deferred, origin);
                            }
                            continue;
                        }
                        Ok(Unit::Whole(traces, problems)) => {
                            self.out.extend(group.take().map(Record::Trace));
                            self.out.extend(deferred);
                            self.out.extend(traces.into_iter().map(Record::Trace));
                            self.out.extend(problems.into_iter().map(|reason| {
                                Record::Bad(BadLine {
                                    origin: origin.clone(),
                                    reason,
                                })
                            }));
                            return;
                        }
                        Ok(Unit::NotTrace(output)) => {
                            self.not_traces.add(output, &origin);
                            continue;
                        }
                        Err(reason) => BadLine { origin, reason },
                    }
                }
            };
            if group.current.is_empty() {
                self.out.push_back(Record::Bad(bad));
                return;
            }
            deferred.push(Record::Bad(bad));
            if deferred.len() >= DEFERRED_BAD_LINES {
                // The open trace is read on at the next call.
                self.pending = std::mem::take(&mut group.current);
                self.out.extend(deferred);
                return;
            }
        }
        self.out.extend(group.take().map(Record::Trace));
        self.out.extend(deferred);
        if self.done {
            self.out.extend(self.not_traces.drain());
        }
    }
}

impl<R> TraceReader<R> {
    /// Whether a line of trace `id` belongs to a trace being dropped (and
    /// so is dropped too); a line of another trace ends the dropping.
    fn dropped(&mut self, id: &str) -> bool {
        match &self.dropping {
            Some(d) if **d == *id => true,
            Some(_) => {
                self.dropping = None;
                false
            }
            None => false,
        }
    }

    /// The open trace passed [`MAX_ATTEMPTS_PER_TRACE`]: it is reported
    /// (at the line that passed it) and freed, and its further lines are
    /// dropped as they come.
    fn drop_group(&mut self, group: Grouper, deferred: Vec<Record>, origin: Origin) {
        let Some(trace) = group.take_id() else {
            return;
        };
        self.out.extend(deferred);
        self.out.push_back(Record::Bad(BadLine {
            origin,
            reason: too_large(&trace, MAX_ATTEMPTS_PER_TRACE, "trace"),
        }));
        self.dropping = Some(trace);
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        while self.out.is_empty() && !(self.done && self.pending.is_empty()) {
            self.fill();
        }
        self.out.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Record> {
        TraceReader::new(text.as_bytes(), "x.jsonl".into(), 1000).collect()
    }

    #[test]
    fn groups_consecutive_lines() {
        let recs = read("{\"trace_id\":\"a\",\"content\":\"\"}\n{\"trace_id\":\"a\",\"content\":\"\"}\n{\"trace_id\":\"b\",\"content\":\"\"}\n");
        let sizes: Vec<_> = recs
            .iter()
            .map(|r| match r {
                Record::Trace(t) => (t.trace_id.clone(), t.attempts.len()),
                _ => panic!("unexpected {r:?}"),
            })
            .collect();
        assert_eq!(sizes, vec![("a".into(), 2), ("b".into(), 1)]);
    }

    #[test]
    fn bad_lines_are_reported_with_line_numbers() {
        let recs = read("\u{feff}{\"trace_id\":\"a\",\"content\":\"\"}\r\n\n  \nnot json\n{\"trace_id\":\"a\",\"content\":\"\"}\n");
        let mut bad = vec![];
        let mut lines = vec![];
        for r in recs {
            match r {
                Record::Bad(b) => bad.push(b.to_string()),
                Record::Trace(t) => lines.extend(t.attempts.iter().map(|a| a.origin.line)),
                Record::Failed(_) | Record::NotTraces(_) | Record::NoAttempt(_) => panic!(),
            }
        }
        assert_eq!(lines, vec![1, 5]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with("x.jsonl:4: not JSON"), "{}", bad[0]);
    }

    /// Endless `bad\n` lines after one good line.
    struct EndlessBadLines(usize);

    impl std::io::Read for EndlessBadLines {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            for b in buf.iter_mut() {
                *b = b"bad\n"[self.0 % 4];
                self.0 += 1;
            }
            Ok(buf.len())
        }
    }

    #[test]
    fn bad_lines_inside_a_trace_are_reported_without_waiting_for_its_end() {
        let input = std::io::BufReader::new(std::io::Read::chain(
            &b"{\"trace_id\":\"a\",\"content\":\"\"}\n"[..],
            EndlessBadLines(0),
        ));
        let mut reader = TraceReader::new(input, "x.jsonl".into(), 1000);
        // The input never ends: each record must come after a bounded read.
        for _ in 0..3 * DEFERRED_BAD_LINES {
            assert!(matches!(reader.next(), Some(Record::Bad(_))));
        }
        assert!(reader.out.len() <= DEFERRED_BAD_LINES);
    }

    #[test]
    fn overlong_lines_are_skipped_not_fatal() {
        let long = format!(
            "{{\"trace_id\":\"{}\"}}\n{{\"trace_id\":\"b\",\"content\":\"\"}}\n",
            "a".repeat(2000)
        );
        let recs = read(&long);
        assert!(matches!(&recs[0], Record::Bad(b) if b.reason.contains("longer than")));
        assert!(matches!(&recs[1], Record::Trace(t) if &*t.trace_id == "b"));
    }
}
