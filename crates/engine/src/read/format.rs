//! The type of the registry of input formats: what one [`Format`] is and
//! what its reader makes of a record ([`Unit`]). Each format's module
//! declares its `Format` with this type; the list of them, `FORMATS`, and
//! what reads it (detection, `--input-format`) live above the formats, in
//! `read::formats`, so that no format imports the list that imports it.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::model::{Attempt, Origin, Trace};
use crate::read::ours;

/// One input format: what it is called, how a record of it is recognised
/// and how one is read into attempts.
pub struct Format {
    /// Its `--input-format` value, and its name in messages.
    pub name: &'static str,
    /// What one record of it is, for messages ("a chat transcript").
    pub description: &'static str,
    /// How it is recognised, for docs/input-formats.md's table (Markdown).
    pub recognised_by: &'static str,
    /// What makes one trace, for the same table (Markdown).
    pub trace_per: &'static str,
    /// Whether a JSON object is a record of this format. Tried in
    /// `FORMATS` order: the first that says yes reads the record.
    pub recognise: fn(&Map<String, Json>) -> bool,
    /// Reads one record (a JSONL line or a document's object).
    pub read: fn(Map<String, Json>, &Origin) -> Result<Unit, String>,
    /// A faster read of one JSONL line, tried first on the lines of a file
    /// whose records are of this format: the line decoded once, straight
    /// into what [`Format::read`] uses. `None` when the line is not a
    /// record of this format (it is then parsed whole and classified).
    pub read_text: Option<ReadText>,
    /// For formats whose JSONL records make traces only all together (a
    /// session's lines, a trace's spans): what gathers them.
    pub gather: Option<MakeGatherer>,
    /// For formats that may be a bare top-level JSON array (an event
    /// list): whether an array is one, and how it is read.
    pub list: Option<List>,
    /// The key an element of a list of records is named by (`STEM#i`)
    /// when it has no id of its own, so the elements stay separate traces.
    pub element_id: Option<&'static str>,
    /// File name extensions of its own that a folder walk picks up, beside
    /// [`COMMON_EXTENSIONS`] (`eval`, `traj`).
    pub extensions: &'static [&'static str],
}

/// File name extensions every folder walk picks up: JSON, JSONL, compressed.
pub const COMMON_EXTENSIONS: [&str; 4] = ["jsonl", "json", "gz", "zst"];

/// See [`Format::read_text`]. It is given the registry's classifier, to
/// tell a record of its format from one an earlier format reads.
pub type ReadText = fn(&str, &Origin, Classify) -> Option<Result<Unit, String>>;

/// The format of a JSON object, from its keys (`formats::classify`, the
/// registry's, passed down to a format that must tell).
pub type Classify = fn(&Map<String, Json>) -> Option<Kind>;

/// Makes a file's gatherer (given the file's label and the read's options
/// that concern gatherers).
pub type MakeGatherer = fn(Arc<str>, &GatherOptions) -> Box<dyn Gather>;

/// What a gatherer is told of the read (`ReadOptions`' part that concerns
/// the formats whose records make traces only together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatherOptions {
    /// The request header whose value names a recorded call's run
    /// (`--trace-header`; a recording's calls are grouped by it).
    pub trace_header: Arc<str>,
}

impl Default for GatherOptions {
    fn default() -> Self {
        GatherOptions {
            trace_header: Arc::from(DEFAULT_TRACE_HEADER),
        }
    }
}

/// The header MiroThinker sends with every call of a run
/// (`x-upstream-session-id: {task_id}-{uuid4}`): `--trace-header`'s default.
pub const DEFAULT_TRACE_HEADER: &str = "x-upstream-session-id";

/// A top-level JSON array read as one record of a format.
pub struct List {
    /// Whether the array is one (also asked when the format is forced,
    /// unless `forced_reads_any`).
    pub recognise: fn(&[Json]) -> bool,
    /// Forced, any array is read as one (and reports what it misses).
    pub forced_reads_any: bool,
    pub read: fn(Vec<Json>, &Origin) -> Result<Unit, String>,
}

/// What a format reader makes of one record.
// `One` is the native hot path: no allocation per line for a smaller enum.
#[allow(clippy::large_enum_variant)]
pub enum Unit {
    /// One attempt, grouped with its neighbours of the same trace id.
    One(Attempt),
    /// A conversation's attempts, all of one trace (never empty), grouped
    /// with its neighbours of the same id.
    Many(String, Vec<Attempt>),
    /// Complete traces, and the problems met reading them (each reported
    /// as a skipped line).
    Whole(Vec<Trace>, Vec<String>),
    /// Not a trace but a record mirotrace knows (its own output): counted
    /// and reported as what it is.
    NotTrace(&'static ours::Output),
}

impl Unit {
    /// Complete traces, no problems.
    pub fn traces(traces: Vec<Trace>) -> Unit {
        Unit::Whole(traces, Vec::new())
    }
}

/// Gathers the records of a file whose records make traces only all
/// together, then reads them.
pub trait Gather: Send {
    /// Takes a line without a full parse when the gatherer can (the fast
    /// path); `false` when it did not take it.
    fn push_text(&mut self, _line: u64, _text: &str) -> bool {
        false
    }
    /// Whether it takes records no format recognises (and skips what it
    /// does not know itself), rather than have them reported.
    fn takes_unrecognised(&self) -> bool {
        false
    }
    /// Takes one parsed record.
    fn push(&mut self, line: u64, record: Json) -> Result<(), String>;
    /// The traces of everything pushed, and problems met putting them
    /// together (each reported at the file's first gathered line).
    fn finish(self: Box<Self>) -> Result<(Vec<Trace>, Vec<String>), String>;
}

/// A format, as the readers pass it around.
pub type Kind = &'static Format;

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name == other.name
    }
}

impl Eq for Format {}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Format {
    /// Whether its JSONL files are gathered whole (see [`Format::gather`]).
    pub fn reads_whole_file(&self) -> bool {
        self.gather.is_some()
    }

    /// What a record of it is, for messages.
    pub fn describe(&self) -> &'static str {
        self.description
    }
}
