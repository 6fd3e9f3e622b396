//! Whole JSON documents: a task log, an ATIF trajectory, a message list,
//! a list of records, or several documents one after another.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::units::{read_object, Unit};
use super::{BadLine, Grouper, NotTraceTally, Record, TraceReader};
use crate::model::Origin;
use crate::read::attribution::unnamed;
use crate::read::chat::ID_KEYS;
use crate::read::error::ReadError;
use crate::read::formats::{
    self, classify, forced_mismatch, GatherOptions, InputFormat, Kind, FORMATS, TASKLOG,
};
use crate::read::native::LineError;
use crate::read::ours;
use crate::read::sniff::{has_float_id, parse_json, parse_python_prefix};
use crate::read::tasklog;

/// Reads a whole JSON document (a task log, an ATIF trajectory, a chat
/// message list or a list of records) and yields its traces. The document
/// is held in memory once, capped like a line. A "document" that turns out
/// to be JSONL whose first line is cut or garbled is read as lines instead,
/// so one bad first line costs that line, not the file.
pub struct DocumentReader<R> {
    source: Option<(R, Arc<str>, usize, InputFormat)>,
    gathering: GatherOptions,
    out: VecDeque<Record>,
    lines: Option<TraceReader<Box<dyn BufRead + Send>>>,
}

impl<R: Read + Send + 'static> DocumentReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_bytes: usize, format: InputFormat) -> Self {
        DocumentReader {
            source: Some((inner, file, max_bytes, format)),
            gathering: GatherOptions::default(),
            out: VecDeque::new(),
            lines: None,
        }
    }

    /// What the gatherers of documents are told (`--trace-header`).
    pub fn gathering(mut self, options: GatherOptions) -> Self {
        self.gathering = options;
        self
    }
}

impl<R: Read + Send + 'static> Iterator for DocumentReader<R> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if let Some((inner, file, max, format)) = self.source.take() {
            let (out, then) = match read_document(inner, file.clone(), max, format, &self.gathering)
            {
                Outcome::Records(out) => (out, None),
                Outcome::Lines(stream) => (VecDeque::new(), Some((stream, 1))),
                Outcome::RecordsThenLines(out, rest, line) => (
                    out,
                    Some((Box::new(Cursor::new(rest)) as Box<dyn BufRead + Send>, line)),
                ),
            };
            self.out = out;
            self.lines = then.map(|(stream, line)| {
                TraceReader::with_format(stream, file, max, format).starting_at_line(line)
            });
        }
        match self.out.pop_front() {
            Some(record) => Some(record),
            None => self.lines.as_mut()?.next(),
        }
    }
}

/// What reading a document came to: its records, or the input to read as
/// JSONL after all.
enum Outcome {
    Records(VecDeque<Record>),
    Lines(Box<dyn BufRead + Send>),
    /// Records, then JSONL that followed a cut document (its bytes, and
    /// the line it starts on).
    RecordsThenLines(VecDeque<Record>, Vec<u8>, u64),
}

fn read_document<R: Read + Send + 'static>(
    mut inner: R,
    file: Arc<str>,
    max: usize,
    format: InputFormat,
    gathering: &GatherOptions,
) -> Outcome {
    let mut out = VecDeque::new();
    let mut buf = Vec::new();
    if let Err(e) = (&mut inner).take(max as u64 + 1).read_to_end(&mut buf) {
        let lines = buf.iter().filter(|&&b| b == b'\n').count();
        out.push_back(Record::Failed(ReadError::Cut {
            file,
            lines: lines as u64,
            cause: e.to_string(),
        }));
        return Outcome::Records(out);
    }
    if looks_like_lines(&buf) {
        // The rest of an over-long input streams on behind what was read.
        let held: Box<dyn BufRead + Send> = if buf.len() > max {
            Box::new(Cursor::new(buf).chain(BufReader::new(inner)))
        } else {
            Box::new(Cursor::new(buf))
        };
        return Outcome::Lines(held);
    }
    let body = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf);
    let first_line = line_at(body, leading_space(body));
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
        return Outcome::Records(out);
    }
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => {
            out.push_back(bad(
                line_at(body, e.valid_up_to()),
                format!("invalid UTF-8 at byte {} of the document", e.valid_up_to()),
            ));
            // Records on their own lines after the bad bytes are still read.
            let after = body[e.valid_up_to()..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| e.valid_up_to() + i + 1);
            let resumes = after.and_then(|from| first_record_line(body, from));
            return match resumes {
                Some(at) => Outcome::RecordsThenLines(out, body[at..].to_vec(), line_at(body, at)),
                None => Outcome::Records(out),
            };
        }
    };
    // (line it starts on, document, whether it was cut short)
    let mut documents: Vec<(u64, Json, bool)> = Vec::new();
    // The report of a document that does not parse: the last one read.
    let mut cut_report = None;
    // JSONL after that document, and the line it starts on.
    let mut rest = None;
    match parse_json(text) {
        Ok(v) => documents.push((first_line, v, false)),
        Err(whole_error) => {
            let stream = documents_in(text);
            let failed = match stream.failed {
                Some(failed) => Some(failed),
                None if stream.complete.is_empty() => Some((0, Cut::at(&whole_error, text, 0))),
                None => None,
            };
            documents.extend(stream.complete.into_iter().map(|(l, v)| (l, v, false)));
            if let Some((start, error)) = failed {
                let starts = line_at(
                    text.as_bytes(),
                    start + leading_space(&text.as_bytes()[start..]),
                );
                // Lines of `cut_text` count from the one `start` is on.
                let base = line_at(text.as_bytes(), start);
                // Records on their own lines after the cut (`cat cut.json
                // more.jsonl`) are read as lines: the cut costs its document.
                let resumes = next_record_line(text, start);
                let cut_text = &text[start..resumes.unwrap_or(text.len())];
                // The error as met reading up to where records resume, so
                // that its line is the line in the whole text.
                let error = resumes
                    .and_then(|at| documents_in(&text[..at]).failed)
                    .map_or(error, |(_, e)| e);
                let line = error.line.max(starts);
                let mut reason = LineError::NotJson(error.message).to_string();
                // A task log cut off mid-write is read up to the cut.
                let salvaged = cut_task_log(cut_text, format);
                if let Some((cut, _)) = &salvaged {
                    let cut = base + cut - 1;
                    reason.push_str(&format!("; read as a task log cut off after line {cut}"));
                }
                cut_report = Some(bad(line, reason));
                if let Some((_, doc)) = salvaged {
                    documents.push((starts, doc, true));
                }
                rest = resumes
                    .map(|at| (text.as_bytes()[at..].to_vec(), line_at(text.as_bytes(), at)));
            }
        }
    }
    // Several documents one after another, all records of one format whose
    // records make traces only together (the OpenTelemetry console
    // exporter's spans): gathered, as the lines of a JSONL file are.
    // Documents of other kinds among them (a metrics dump in the same
    // captured output) are read on their own.
    if let Some((kind, gather)) = gathered_documents(&documents, format.forced_kind()) {
        let mut gatherer = gather(file.clone(), gathering);
        let (spans, others): (Vec<_>, Vec<_>) = documents
            .into_iter()
            .partition(|(_, v, _)| v.as_object().and_then(classify) == Some(kind));
        documents = others;
        for (line, value, _) in spans {
            if let Err(reason) = gatherer.push(line, value) {
                out.push_back(bad(line, reason));
            }
        }
        match gatherer.finish() {
            Ok((traces, problems)) => {
                out.extend(traces.into_iter().map(Record::Trace));
                out.extend(problems.into_iter().map(|p| bad(first_line, p)));
            }
            Err(reason) => out.push_back(bad(first_line, reason)),
        }
    }
    let mut group = Grouper::default();
    let mut not_traces = NotTraceTally::default();
    for (line, value, cut_short) in documents {
        if cut_short {
            out.extend(group.take().map(Record::Trace));
            out.extend(cut_report.take());
        }
        let at = origin(line);
        for unit in document_units(value, &at, format) {
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
                Ok(Unit::NotTrace(output)) => not_traces.add(output, &at),
                Err((line, reason)) => {
                    out.extend(group.take().map(Record::Trace));
                    out.push_back(bad(line, reason));
                }
            }
        }
    }
    out.extend(group.take().map(Record::Trace));
    out.extend(not_traces.drain());
    out.extend(cut_report);
    match rest {
        Some((bytes, line)) => Outcome::RecordsThenLines(out, bytes, line),
        None => Outcome::Records(out),
    }
}

/// Where records resume after a document that does not parse, starting at
/// byte `start`: the first later line that begins at its first column with
/// `{` and is, alone, a record of a kind mirotrace reads (a JSONL line).
/// A pretty-printed document's inner lines are indented, and its own
/// closing `}` is not an object.
fn next_record_line(text: &str, start: usize) -> Option<usize> {
    let first = start + leading_space(&text.as_bytes()[start..]);
    first_record_line(text.as_bytes(), first + text[first..].find('\n')? + 1)
}

/// The first line from byte `at` (a line start) on that is a record on its
/// own, as [`next_record_line`] looks for it.
fn first_record_line(bytes: &[u8], mut at: usize) -> Option<usize> {
    while at < bytes.len() {
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| at + i);
        let line = bytes[at..end].trim_ascii_end();
        if line.starts_with(b"{") {
            if let Ok(obj) = serde_json::from_slice::<Map<String, Json>>(line) {
                if classify(&obj).is_some() {
                    return Some(at);
                }
            }
        }
        at = end + 1;
    }
    None
}

/// Bytes of white space (and newlines) at the start of `bytes`.
fn leading_space(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_whitespace()).count()
}

/// The 1-based line of byte `offset`.
fn line_at(bytes: &[u8], offset: usize) -> u64 {
    1 + bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
}

/// Lines looked at to tell JSONL with a bad first line from a document.
const LINES_SAMPLED: usize = 64;

/// Whether an input that opens like a document is JSONL whose first line is
/// bad: after its first non-blank line, at least half of the next
/// non-blank lines (up to [`LINES_SAMPLED`]) are whole JSON objects. A
/// pretty-printed document's inner lines (`"key": value,`, `{...},`) are not.
fn looks_like_lines(bytes: &[u8]) -> bool {
    let mut lines = bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .skip(1)
        .take(LINES_SAMPLED)
        .peekable();
    // The last line of a capped read may be cut: only whole lines count.
    let (mut objects, mut seen) = (0usize, 0usize);
    while let Some(line) = lines.next() {
        if lines.peek().is_none() && !bytes.ends_with(b"\n") && seen > 0 {
            break;
        }
        seen += 1;
        if line.starts_with(b"{") && serde_json::from_slice::<Map<String, Json>>(line).is_ok() {
            objects += 1;
        }
    }
    objects > 0 && objects * 2 >= seen
}

/// A task log whose text stops mid-document: its complete part, and the
/// line of the cut.
fn cut_task_log(text: &str, format: InputFormat) -> Option<(u64, Json)> {
    let (doc, cut) = tasklog::salvage::complete_prefix(text)?;
    let kind = match &doc {
        Json::Object(obj) => format.forced_kind().or_else(|| classify(obj)),
        _ => None,
    };
    (kind == Some(TASKLOG)).then_some((cut, doc))
}

/// The JSON documents one after another in a text (`cat logs/*.json |
/// mirotrace …`): those that parse, each with the line it starts on, and
/// where the first one that does not starts, with its error. A document
/// only Python's rules accept (`NaN`, …) is read as the single-document
/// path reads it.
struct Documents {
    complete: Vec<(u64, Json)>,
    failed: Option<(usize, Cut)>,
}

/// Why a document does not parse, placed in the whole text.
struct Cut {
    line: u64,
    message: String,
}

impl Cut {
    /// serde_json's error met reading from byte `from` of `text` on,
    /// its line and column made the whole text's.
    fn at(error: &serde_json::Error, text: &str, from: usize) -> Cut {
        let before = &text.as_bytes()[..from];
        let lines_before = before.iter().filter(|&&b| b == b'\n').count();
        let column_before = before.iter().rev().take_while(|&&b| b != b'\n').count();
        let (line, column) = (error.line(), error.column());
        let place = format!(" at line {line} column {column}");
        let full = error.to_string();
        let Some(what) = full.strip_suffix(&place).filter(|_| line > 0) else {
            return Cut {
                line: line as u64,
                message: full,
            };
        };
        let column = if line == 1 {
            column + column_before
        } else {
            column
        };
        let line = line + lines_before;
        Cut {
            line: line as u64,
            message: format!("{what} at line {line} column {column}"),
        }
    }
}

fn documents_in(text: &str) -> Documents {
    let mut complete = Vec::new();
    // Where the current serde_json stream started reading.
    let mut from = 0;
    let mut start = 0;
    'streams: loop {
        let mut stream = serde_json::Deserializer::from_str(&text[from..]).into_iter::<Json>();
        while let Some(next) = stream.next() {
            let at = start + leading_space(&text.as_bytes()[start..]);
            match next {
                Ok(value) => {
                    let end = from + stream.byte_offset();
                    // Ids of more than 64 bits are read again, exactly.
                    let value = match has_float_id(&value) {
                        true => parse_python_prefix(&text[at..end]).map_or(value, |(v, _)| v),
                        false => value,
                    };
                    complete.push((line_at(text.as_bytes(), at), value));
                    start = end;
                }
                Err(e) => match parse_python_prefix(&text[start..]) {
                    Some((value, len)) => {
                        complete.push((line_at(text.as_bytes(), at), value));
                        start += len;
                        from = start;
                        continue 'streams;
                    }
                    None => {
                        return Documents {
                            complete,
                            failed: Some((start, Cut::at(&e, text, from))),
                        }
                    }
                },
            }
        }
        return Documents {
            complete,
            failed: None,
        };
    }
}

/// The gatherer of several documents that are whole records of one
/// format with a [`formats::Format::gather`] (the forced one, if forced):
/// the first such kind met, when at least two documents are of it. The
/// other documents are read on their own.
fn gathered_documents(
    documents: &[(u64, Json, bool)],
    forced: Option<Kind>,
) -> Option<(Kind, formats::MakeGatherer)> {
    if documents.len() < 2 || documents.iter().any(|(_, _, cut)| *cut) {
        return None;
    }
    let kinds: Vec<Option<Kind>> = documents
        .iter()
        .map(|(_, v, _)| v.as_object().and_then(classify))
        .collect();
    let kind = kinds
        .iter()
        .flatten()
        .copied()
        .find(|k| k.gather.is_some())?;
    if forced.is_some_and(|f| f != kind) || kinds.iter().filter(|k| **k == Some(kind)).count() < 2 {
        return None;
    }
    Some((kind, kind.gather?))
}

/// The records of one parsed document.
fn document_units(
    value: Json,
    at: &Origin,
    format: InputFormat,
) -> Vec<Result<Unit, (u64, String)>> {
    let forced = format.forced_kind();
    let units: Vec<Result<Unit, String>> = match value {
        Json::Object(obj) => vec![object_unit(obj, at, forced, None)],
        Json::Array(items) => match list_format(&items, forced) {
            Some(list) => vec![(list.read)(items, at)],
            None => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Json::Object(obj) => object_unit(obj, at, forced, Some(i))
                        .map_err(|e| format!("element {i}: {e}")),
                    _ => Err(format!("element {i} is not an object")),
                })
                .collect(),
        },
        other => vec![Err(not_a_trace(&other))],
    };
    units
        .into_iter()
        .map(|u| u.map_err(|reason| (at.line, reason)))
        .collect()
}

/// The format that reads a top-level array as one record, if one does:
/// the forced format's, else the first whose list recogniser says yes.
fn list_format(items: &[Json], forced: Option<Kind>) -> Option<&'static formats::List> {
    match forced {
        Some(kind) => kind
            .list
            .as_ref()
            .filter(|l| l.forced_reads_any || (l.recognise)(items)),
        None => FORMATS
            .iter()
            .filter_map(|f| f.list.as_ref())
            .find(|l| (l.recognise)(items)),
    }
}

/// One object of a document (`element` its place in a list of records).
fn object_unit(
    obj: Map<String, Json>,
    at: &Origin,
    forced: Option<Kind>,
    element: Option<usize>,
) -> Result<Unit, String> {
    let detected = classify(&obj);
    if detected.is_none() {
        if let Some(output) = ours::recognise(&obj) {
            return Ok(Unit::NotTrace(output));
        }
    }
    let Some(kind) = forced.or(detected) else {
        return Err(not_a_trace(&Json::Object(obj)));
    };
    if let Some(why) = forced.and_then(|k| forced_mismatch(k, &obj)) {
        return Err(why);
    }
    let obj = match element {
        Some(i) => named_element(kind, obj, at, i),
        None => obj,
    };
    read_object(kind, obj, at)
}

/// The message for a JSON value of no kind mirotrace reads.
fn not_a_trace(value: &Json) -> String {
    formats::unknown_record(value)
}

/// An element of a list of records, given an id (`STEM#i`) when it has
/// none, so that the conversations of a merged file stay separate traces.
fn named_element(
    kind: Kind,
    mut obj: Map<String, Json>,
    at: &Origin,
    i: usize,
) -> Map<String, Json> {
    let Some(key) = kind.element_id else {
        return obj;
    };
    if !ID_KEYS.iter().any(|k| obj.contains_key(*k)) {
        obj.insert(key.into(), Json::from(format!("{}#{i}", unnamed(at))));
    }
    obj
}
