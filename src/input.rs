//! Input paths: files and `-` (stdin), opened as streams of trace records.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;
use crate::trace::{Record, TraceReader};

/// Options that shape how inputs are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    pub max_line_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// One input as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSpec {
    Stdin,
    Path(PathBuf),
}

impl InputSpec {
    pub fn parse(arg: &str) -> InputSpec {
        if arg == "-" {
            InputSpec::Stdin
        } else {
            InputSpec::Path(PathBuf::from(arg))
        }
    }

    /// How the input is named in messages.
    pub fn label(&self) -> Arc<str> {
        match self {
            InputSpec::Stdin => "<stdin>".into(),
            InputSpec::Path(p) => p.display().to_string().into(),
        }
    }
}

/// An input that could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("{label}: {reason}")]
pub struct OpenError {
    pub label: Arc<str>,
    pub reason: String,
}

/// Expands the command-line inputs into the list of streams to read, in order.
pub fn expand(specs: &[InputSpec]) -> Vec<Result<InputSpec, OpenError>> {
    specs.iter().cloned().map(Ok).collect()
}

/// Opens one input as a stream of records.
pub fn open_records(
    spec: &InputSpec,
    opts: &ReadOptions,
) -> Result<Box<dyn Iterator<Item = Record> + Send>, OpenError> {
    let label = spec.label();
    let reader: Box<dyn BufRead + Send> = match spec {
        InputSpec::Stdin => Box::new(BufReader::with_capacity(1 << 16, io::stdin())),
        InputSpec::Path(path) => {
            Box::new(BufReader::with_capacity(1 << 16, open_file(path, &label)?))
        }
    };
    Ok(Box::new(TraceReader::new(
        reader,
        label,
        opts.max_line_bytes,
    )))
}

fn open_file(path: &Path, label: &Arc<str>) -> Result<File, OpenError> {
    let err = |reason: String| OpenError {
        label: label.clone(),
        reason,
    };
    if path.is_dir() {
        return Err(err("is a directory".into()));
    }
    File::open(path).map_err(|e| err(describe_io(&e)))
}

/// A short, actionable description of an I/O error.
pub fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => {
            "permission denied (check the file's read permission)".into()
        }
        _ => e.to_string(),
    }
}
