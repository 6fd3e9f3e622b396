//! Streaming JSONL reading: lines → attempts → traces, with bad lines reported, not fatal.

use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::sync::Arc;

use super::model::{Attempt, Origin, Trace};
use super::native::parse_line;

/// Longest line read by default (bytes); longer lines are reported and skipped.
pub const DEFAULT_MAX_LINE_BYTES: usize = 512 * 1024 * 1024;

/// An input line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub origin: Origin,
    pub reason: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.reason)
    }
}

/// What a reader yields, in input order.
#[derive(Debug)]
pub enum Record {
    Trace(Trace),
    Bad(BadLine),
    /// The input could not be read any further (I/O error, truncated stream).
    Failed { file: Arc<str>, reason: String },
}

/// Reads raw lines with a size cap, tracking line numbers.
pub struct LineReader<R> {
    inner: R,
    file: Arc<str>,
    line_no: u64,
    max_bytes: usize,
    buf: Vec<u8>,
}

/// One raw line, or why it could not be taken.
pub enum RawLine<'a> {
    Text(&'a str, Origin),
    Bad(BadLine),
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_bytes: usize) -> Self {
        LineReader {
            inner,
            file,
            line_no: 0,
            max_bytes,
            buf: Vec::new(),
        }
    }

    pub fn file(&self) -> &Arc<str> {
        &self.file
    }

    /// The next non-blank line; `Ok(None)` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        let (start, end) = loop {
            self.buf.clear();
            let Some(too_long) = read_capped_line(&mut self.inner, &mut self.buf, self.max_bytes)? else {
                return Ok(None);
            };
            self.line_no += 1;
            if too_long {
                return Ok(Some(RawLine::Bad(BadLine {
                    origin: self.origin(),
                    reason: format!(
                        "line longer than {} bytes (raise it with --max-line-bytes)",
                        self.max_bytes
                    ),
                })));
            }
            let start = if self.line_no == 1 && self.buf.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            let mut end = self.buf.len();
            while end > start && matches!(self.buf[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            if !self.buf[start..end].iter().all(|b| b.is_ascii_whitespace()) {
                break (start, end);
            }
        };
        let origin = self.origin();
        Ok(Some(match std::str::from_utf8(&self.buf[start..end]) {
            Ok(text) => RawLine::Text(text, origin),
            Err(e) => RawLine::Bad(BadLine {
                origin,
                reason: format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
            }),
        }))
    }

    fn origin(&self) -> Origin {
        Origin {
            file: self.file.clone(),
            line: self.line_no,
        }
    }
}

/// Reads up to and including the next `\n` into `out`, keeping at most `max`
/// bytes. Returns `None` at end of input, else whether the line was too long
/// (its excess is consumed and dropped).
fn read_capped_line<R: BufRead>(r: &mut R, out: &mut Vec<u8>, max: usize) -> io::Result<Option<bool>> {
    let mut seen_any = false;
    let mut too_long = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(seen_any.then_some(too_long));
        }
        seen_any = true;
        let (take, done) = match memchr_newline(chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if out.len() + take > max {
                too_long = true;
                out.clear();
            } else {
                out.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        if done {
            return Ok(Some(too_long));
        }
    }
}

fn memchr_newline(s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == b'\n')
}

/// Groups a file's attempts into traces: consecutive lines with the same
/// `trace_id` form one trace, so memory is bounded by the largest trace.
/// Bad lines inside a trace's run are reported right after that trace.
pub struct TraceReader<R> {
    lines: LineReader<R>,
    /// First attempt of the next trace, read while closing the previous one.
    pending: Option<Attempt>,
    out: VecDeque<Record>,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_line_bytes: usize) -> Self {
        TraceReader {
            lines: LineReader::new(inner, file, max_line_bytes),
            pending: None,
            out: VecDeque::new(),
            done: false,
        }
    }

    /// Reads until one trace is complete, queueing it and the bad lines met on the way.
    fn fill(&mut self) {
        let mut current: Vec<Attempt> = self.pending.take().into_iter().collect();
        let mut deferred: Vec<Record> = Vec::new();
        while !self.done {
            let bad = match self.lines.next_line() {
                Ok(None) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.done = true;
                    deferred.push(Record::Failed {
                        file: self.lines.file().clone(),
                        reason: format!("read error after line {}: {e}", self.lines.line_no),
                    });
                    break;
                }
                Ok(Some(RawLine::Bad(bad))) => bad,
                Ok(Some(RawLine::Text(text, origin))) => match parse_line(text, origin.clone()) {
                    Ok(attempt) => {
                        if current.first().is_some_and(|a| a.trace_id != attempt.trace_id) {
                            self.pending = Some(attempt);
                            break;
                        }
                        current.push(attempt);
                        continue;
                    }
                    Err(e) => BadLine {
                        origin,
                        reason: e.to_string(),
                    },
                },
            };
            if current.is_empty() {
                self.out.push_back(Record::Bad(bad));
                return;
            }
            deferred.push(Record::Bad(bad));
        }
        if let Some(first) = current.first() {
            self.out.push_back(Record::Trace(Trace {
                trace_id: first.trace_id.clone(),
                attempts: current,
            }));
        }
        self.out.extend(deferred);
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        while self.out.is_empty() && !(self.done && self.pending.is_none()) {
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
        let recs = read("{\"trace_id\":\"a\"}\n{\"trace_id\":\"a\"}\n{\"trace_id\":\"b\"}\n");
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
        let recs = read("\u{feff}{\"trace_id\":\"a\"}\r\n\n  \nnot json\n{\"trace_id\":\"a\"}\n");
        let mut bad = vec![];
        let mut lines = vec![];
        for r in recs {
            match r {
                Record::Bad(b) => bad.push(b.to_string()),
                Record::Trace(t) => lines.extend(t.attempts.iter().map(|a| a.origin.line)),
                Record::Failed { .. } => panic!(),
            }
        }
        assert_eq!(lines, vec![1, 5]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with("x.jsonl:4: not JSON"), "{}", bad[0]);
    }

    #[test]
    fn overlong_lines_are_skipped_not_fatal() {
        let long = format!("{{\"trace_id\":\"{}\"}}\n{{\"trace_id\":\"b\"}}\n", "a".repeat(2000));
        let recs = read(&long);
        assert!(matches!(&recs[0], Record::Bad(b) if b.reason.contains("longer than")));
        assert!(matches!(&recs[1], Record::Trace(t) if t.trace_id == "b"));
    }
}
