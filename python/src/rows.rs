//! Trace lines handed over as a table (`text`, and optionally `file` and
//! `line` columns) → trace records whose attempts carry those origins.
//!
//! Consecutive rows of one file are read as one stream by the library's
//! own reader, so a table reads exactly as the file it came from; each
//! attempt's origin is then set to the row's `file` and `line`. That is
//! what lets a distributed job (one group of rows per trace) produce the
//! same verdicts, and the same report, as one run over the files.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use mirotrace::model::Origin;
use mirotrace::read::{BadLine, InputFormat, Record, TraceReader};

use crate::BindingError;

/// The file label of rows without a `file` column.
pub const DEFAULT_FILE: &str = "<lines>";

/// One input line with where it came from.
struct Row<'a> {
    file: Arc<str>,
    line: u64,
    /// `None`: a line that was not valid UTF-8 (or is missing).
    text: Option<&'a str>,
}

/// Reads the rows of `batches` (an Arrow IPC stream's batches) into trace
/// records, in row order.
pub fn records(
    batches: &[RecordBatch],
    format: InputFormat,
    max_line_bytes: usize,
) -> Result<Vec<Record>, BindingError> {
    let mut rows: Vec<Row> = Vec::new();
    let mut numbered = 0u64;
    let mut last_file: Option<Arc<str>> = None;
    for batch in batches {
        let text = column(batch, "text")
            .ok_or_else(|| BindingError::Input("the table has no `text` column".into()))?;
        let text = strings(text, "text")?;
        let files = match column(batch, "file") {
            Some(c) => Some(strings(c, "file")?),
            None => None,
        };
        let lines = match column(batch, "line") {
            Some(c) if c.data_type() == &DataType::Int64 => Some(c.as_primitive::<Int64Type>()),
            Some(c) => {
                return Err(BindingError::Input(format!(
                    "column `line` must hold integers, not {}",
                    c.data_type()
                )))
            }
            None => None,
        };
        for i in 0..batch.num_rows() {
            numbered += 1;
            let file: Arc<str> = match files {
                Some(f) if !f.is_null(i) => {
                    let name = f.value(i);
                    match &last_file {
                        Some(last) if **last == *name => last.clone(),
                        _ => Arc::from(name),
                    }
                }
                _ => Arc::from(DEFAULT_FILE),
            };
            last_file = Some(file.clone());
            let line = match lines {
                Some(l) if !l.is_null(i) => u64::try_from(l.value(i)).map_err(|_| {
                    BindingError::Input(format!("row {numbered}: `line` is negative"))
                })?,
                _ => numbered,
            };
            rows.push(Row {
                file,
                line,
                text: (!text.is_null(i)).then(|| text.value(i)),
            });
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let end = start
            + rows[start..]
                .iter()
                .take_while(|r| r.file == rows[start].file)
                .count();
        read_run(&rows[start..end], format, max_line_bytes, &mut out)?;
        start = end;
    }
    Ok(out)
}

/// Reads rows of one file as one stream and restores their origins.
fn read_run(
    rows: &[Row],
    format: InputFormat,
    max_line_bytes: usize,
    out: &mut Vec<Record>,
) -> Result<(), BindingError> {
    let mut text =
        String::with_capacity(rows.iter().map(|r| r.text.map_or(1, |t| t.len() + 1)).sum());
    // A row without text is a skipped line, as an undecodable line of a file is.
    let mut unreadable = Vec::new();
    for r in rows {
        match r.text {
            Some(t) if t.contains('\n') => {
                return Err(BindingError::Input(format!(
                    "{}:{}: a row's text holds a newline; give one JSONL line per row",
                    r.file, r.line
                )))
            }
            Some(t) => text.push_str(t),
            None => unreadable.push(Record::Bad(BadLine {
                origin: Origin {
                    file: r.file.clone(),
                    line: r.line,
                },
                reason: "no text (not valid UTF-8)".into(),
            })),
        }
        text.push('\n');
    }
    let file = rows[0].file.clone();
    // Line k of the stream is row k - 1.
    let origin = |o: &mut Origin| {
        if let Some(r) = usize::try_from(o.line)
            .ok()
            .and_then(|k| k.checked_sub(1))
            .and_then(|k| rows.get(k))
        {
            o.line = r.line;
        }
    };
    let reader =
        TraceReader::with_format(Cursor::new(text.into_bytes()), file, max_line_bytes, format)
            .keep_meta(false);
    for mut record in reader {
        match &mut record {
            Record::Trace(t) => {
                // As every input read from a file: each attempt its model.
                mirotrace::read::attribution::settle(t);
                t.attempts.iter_mut().for_each(|a| origin(&mut a.origin));
            }
            Record::Bad(b) => origin(&mut b.origin),
            Record::NotTraces(n) => origin(&mut n.origin),
            Record::Failed(_) | Record::NoAttempt(_) => {}
        }
        out.push(record);
    }
    out.extend(unreadable);
    Ok(())
}

/// For each row of `batches` (the lines of one input), the ordinal of the
/// trace record the library's reader puts it in, reading the rows as one
/// stream; `None` for a row in no trace (a skipped line, a record that is
/// not an attempt). The rows of one ordinal, read alone and in order, are
/// that trace again: what a job that spreads one input's traces groups by.
pub fn trace_ordinals(
    batches: &[RecordBatch],
    format: InputFormat,
    max_line_bytes: usize,
) -> Result<Vec<Option<u64>>, BindingError> {
    let mut lines: Vec<u64> = Vec::new();
    let mut numbered = 0u64;
    for batch in batches {
        let given = match column(batch, "line") {
            Some(c) if c.data_type() == &DataType::Int64 => Some(c.as_primitive::<Int64Type>()),
            _ => None,
        };
        for i in 0..batch.num_rows() {
            numbered += 1;
            lines.push(match given {
                Some(l) if !l.is_null(i) => u64::try_from(l.value(i)).unwrap_or(numbered),
                _ => numbered,
            });
        }
    }
    let mut trace_of = std::collections::HashMap::new();
    let mut ordinal = 0u64;
    for record in records(batches, format, max_line_bytes)? {
        if let Record::Trace(t) = record {
            for a in &t.attempts {
                trace_of.entry(a.origin.line).or_insert(ordinal);
            }
            ordinal += 1;
        }
    }
    Ok(lines.iter().map(|l| trace_of.get(l).copied()).collect())
}

fn column<'b>(batch: &'b RecordBatch, name: &str) -> Option<&'b dyn Array> {
    batch.column_by_name(name).map(|c| c.as_ref())
}

/// A string column (`string` or `large_string` are cast in Python first).
fn strings<'b>(c: &'b dyn Array, name: &str) -> Result<&'b arrow_array::StringArray, BindingError> {
    c.as_string_opt::<i32>().ok_or_else(|| {
        BindingError::Input(format!(
            "column `{name}` must hold strings, not {}",
            c.data_type()
        ))
    })
}
