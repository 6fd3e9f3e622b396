//! Streaming reading: lines → attempts → traces, with bad lines reported,
//! not fatal. A JSONL file is read in the kind of its first record (native
//! attempts on the fast path); a line that does not fit is looked at again
//! as chat transcript, task log or ATIF trajectory. A pretty-printed JSON
//! document is read whole by [`DocumentReader`].

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::native::{parse_line, LineDecoder, LineError};
use super::sniff::{classify, is_message_list, parse_json, InputFormat, Kind};
use super::{atif, chat, tasklog};
use crate::model::{Attempt, Origin, Trace};

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
    Failed {
        file: Arc<str>,
        reason: String,
    },
}

/// Reads raw lines with a size cap, tracking line numbers.
pub struct LineReader<R> {
    inner: R,
    file: Arc<str>,
    line_no: u64,
    max_bytes: usize,
    buf: Vec<u8>,
    /// Bytes of `inner`'s buffer lent out as the last line, consumed when
    /// the next one is asked for.
    lent: usize,
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
            lent: 0,
        }
    }

    pub fn file(&self) -> &Arc<str> {
        &self.file
    }

    /// The next non-blank line; `Ok(None)` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        self.inner.consume(std::mem::take(&mut self.lent));
        // Most lines lie whole in the reader's buffer: lend them from there.
        let take = loop {
            let Some(take) = self.line_in_buffer()? else {
                return self.copy_line();
            };
            self.line_no += 1;
            let blank = {
                let chunk = self.inner.fill_buf()?;
                let (start, end) = trim_line(&chunk[..take], self.line_no);
                chunk[start..end].iter().all(|b| b.is_ascii_whitespace())
            };
            if !blank {
                break take;
            }
            self.inner.consume(take);
        };
        let origin = self.origin();
        // The buffer still holds what `line_in_buffer` saw (nothing was consumed).
        let line = self
            .inner
            .fill_buf()?
            .get(..take)
            .ok_or_else(|| io::Error::other("the input's buffer shrank"))?;
        self.lent = take;
        let (start, end) = trim_line(line, self.line_no);
        Ok(Some(text_or_bad(&line[start..end], origin)))
    }

    /// The length (newline included) of the next line when the reader's
    /// buffer holds all of it, and it is not too long.
    fn line_in_buffer(&mut self) -> io::Result<Option<usize>> {
        let chunk = loop {
            match self.inner.fill_buf() {
                Ok(c) => break c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        Ok(memchr_newline(chunk)
            .map(|i| i + 1)
            .filter(|&take| take <= self.max_bytes))
    }

    /// The next non-blank line, copied piece by piece (it straddles the
    /// reader's buffer, is too long, or ends the input without a newline).
    fn copy_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        let (start, end) = loop {
            self.buf.clear();
            let Some(too_long) = read_capped_line(&mut self.inner, &mut self.buf, self.max_bytes)?
            else {
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
            let (start, end) = trim_line(&self.buf, self.line_no);
            if !self.buf[start..end].iter().all(|b| b.is_ascii_whitespace()) {
                break (start, end);
            }
        };
        let origin = self.origin();
        Ok(Some(text_or_bad(&self.buf[start..end], origin)))
    }

    fn origin(&self) -> Origin {
        Origin {
            file: self.file.clone(),
            line: self.line_no,
        }
    }
}

/// The line without its newline (and, on line 1, without a byte-order mark).
fn trim_line(line: &[u8], line_no: u64) -> (usize, usize) {
    let start = if line_no == 1 && line.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut end = line.len();
    while end > start && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    (start, end)
}

fn text_or_bad(line: &[u8], origin: Origin) -> RawLine<'_> {
    match std::str::from_utf8(line) {
        Ok(text) => RawLine::Text(text, origin),
        Err(e) => RawLine::Bad(BadLine {
            origin,
            reason: format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
        }),
    }
}

/// Reads up to and including the next `\n` into `out`, keeping at most `max`
/// bytes. Returns `None` at end of input, else whether the line was too long
/// (its excess is consumed and dropped).
fn read_capped_line<R: BufRead>(
    r: &mut R,
    out: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<bool>> {
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
    memchr::memchr(b'\n', s)
}

/// What one record holds.
// `One` is the native hot path: no allocation per line for a smaller enum.
#[allow(clippy::large_enum_variant)]
enum Unit {
    /// One native attempt.
    One(Attempt),
    /// A conversation's attempts, all of one trace (never empty).
    Many(String, Vec<Attempt>),
    /// A complete trace (task log, ATIF trajectory, empty conversation),
    /// and the problems met reading it (each reported as a skipped line).
    Whole(Trace, Vec<String>),
}

/// Reads one line: natively when the file is native (forced, or its first
/// record was), else by the kind of its JSON object. `mode` remembers the
/// kind of the file's first record.
fn parse_unit(
    text: &str,
    origin: &Origin,
    format: InputFormat,
    mode: &mut Option<Kind>,
    decoder: &mut LineDecoder,
) -> Result<Unit, String> {
    let forced = format.forced_kind();
    if forced == Some(Kind::Native) || (forced.is_none() && *mode == Some(Kind::Native)) {
        return match decoder.decode(text, origin.clone()) {
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
fn convert_object(kind: Kind, obj: &Map<String, Json>, origin: &Origin) -> Result<Unit, String> {
    match kind {
        Kind::Native => {
            let text = serde_json::to_string(obj).map_err(|e| e.to_string())?;
            parse_line(&text, origin.clone())
                .map(Unit::One)
                .map_err(|e| e.to_string())
        }
        Kind::Chat => {
            let (id, attempts) =
                chat::from_record(obj, origin).map_err(|e| format!("chat transcript: {e}"))?;
            Ok(if attempts.is_empty() {
                Unit::Whole(Trace::new(id, attempts), Vec::new())
            } else {
                Unit::Many(id, attempts)
            })
        }
        Kind::TaskLog => {
            let read = tasklog::from_document(obj, origin);
            let problems = read
                .problems
                .into_iter()
                .map(|p| format!("task log: {p}"))
                .collect();
            Ok(Unit::Whole(read.trace, problems))
        }
        Kind::Atif => atif::from_document(obj, origin)
            .map(|t| Unit::Whole(t, Vec::new()))
            .map_err(|e| format!("ATIF trajectory: {e}")),
    }
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
            out: VecDeque::new(),
            done: false,
        }
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
                    deferred.push(Record::Failed {
                        file: self.lines.file().clone(),
                        reason: format!("read error after line {}: {e}", self.lines.line_no),
                    });
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
                            if group
                                .current_id()
                                .is_some_and(|id| *id != *attempt.trace_id)
                            {
                                self.pending.push(attempt);
                                break;
                            }
                            group.current.push(attempt);
                            continue;
                        }
                        Ok(Unit::Many(id, attempts)) => {
                            if group.current_id().is_some_and(|c| c != id) {
                                self.pending = attempts;
                                break;
                            }
                            group.current.extend(attempts);
                            continue;
                        }
                        Ok(Unit::Whole(trace, problems)) => {
                            self.out.extend(group.take().map(Record::Trace));
                            self.out.extend(deferred);
                            self.out.push_back(Record::Trace(trace));
                            self.out.extend(problems.into_iter().map(|reason| {
                                Record::Bad(BadLine {
                                    origin: origin.clone(),
                                    reason,
                                })
                            }));
                            return;
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
        }
        self.out.extend(group.take().map(Record::Trace));
        self.out.extend(deferred);
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
            Ok(Unit::Whole(trace, problems)) => {
                out.extend(group.take().map(Record::Trace));
                // What was cut before its first attempt holds nothing to report.
                if !(cut_short && trace.attempts.is_empty()) {
                    out.push_back(Record::Trace(trace));
                }
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
    let units: Vec<Result<Unit, String>> = match value {
        Json::Object(obj) => match forced.or_else(|| classify(&obj)) {
            Some(kind) => vec![convert_object(kind, &obj, at)],
            None => vec![Err("not a recognised record (expected a task log, an ATIF trajectory, a chat transcript or a native attempt)".to_string())],
        },
        Json::Array(items) if forced == Some(Kind::Chat) || (forced.is_none() && is_message_list(&items)) => {
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
                    Some(kind) => convert_object(kind, &named_element(kind, obj, at, i), at)
                        .map_err(|e| format!("element {i}: {e}")),
                    None => Err(format!("element {i} is not a recognised record")),
                },
                _ => Err(format!("element {i} is not an object")),
            })
            .collect(),
        _ => vec![Err("not a JSON object or array".to_string())],
    };
    units
        .into_iter()
        .map(|u| u.map_err(|reason| (at.line, reason)))
        .collect()
}

/// An element of a list of records, given an id (`FILE:LINE#i`) when it has
/// none, so that the conversations of a merged file stay separate traces.
fn named_element(kind: Kind, obj: &Map<String, Json>, at: &Origin, i: usize) -> Map<String, Json> {
    let key = match kind {
        Kind::Chat => "trace_id",
        Kind::Atif => "session_id",
        Kind::Native | Kind::TaskLog => return obj.clone(),
    };
    let mut named = obj.clone();
    if !["trace_id", "id", "session_id"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        named.insert(key.into(), Json::from(format!("{at}#{i}")));
    }
    named
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
        let long = format!(
            "{{\"trace_id\":\"{}\"}}\n{{\"trace_id\":\"b\"}}\n",
            "a".repeat(2000)
        );
        let recs = read(&long);
        assert!(matches!(&recs[0], Record::Bad(b) if b.reason.contains("longer than")));
        assert!(matches!(&recs[1], Record::Trace(t) if &*t.trace_id == "b"));
    }

    /// Every line, as the line reader yields it, with its number.
    fn lines_with_capacity(bytes: &[u8], capacity: usize, max: usize) -> Vec<String> {
        let inner = std::io::BufReader::with_capacity(capacity, bytes);
        let mut reader = LineReader::new(inner, "x".into(), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(match line {
                RawLine::Text(t, o) => format!("{}: {t}", o.line),
                RawLine::Bad(b) => format!("bad {b}"),
            });
        }
        out
    }

    #[test]
    fn lines_read_the_same_whatever_the_buffer_size() {
        let mut bytes = b"\xEF\xBB\xBF{\"a\": 1}\r\n\n  \n{\"b\": \"".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 40));
        bytes.extend(b"\"}\n\xFF\xFE\n\r\n");
        bytes.extend(std::iter::repeat_n(b'y', 90));
        bytes.extend(b"\n{\"last\": true}");
        let expected = lines_with_capacity(&bytes, 1 << 16, 64);
        assert_eq!(
            expected,
            [
                "1: {\"a\": 1}".to_string(),
                format!("4: {{\"b\": \"{}\"}}", "x".repeat(40)),
                "bad x:5: invalid UTF-8 at byte 0 of the line".to_string(),
                "bad x:7: line longer than 64 bytes (raise it with --max-line-bytes)".to_string(),
                "8: {\"last\": true}".to_string(),
            ]
        );
        for capacity in [1, 2, 3, 7, 16, 50, 63, 64, 65, 200] {
            assert_eq!(
                lines_with_capacity(&bytes, capacity, 64),
                expected,
                "capacity {capacity}"
            );
        }
    }
}
