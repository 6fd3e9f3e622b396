//! The registry of input formats: one [`Format`] per format, and one
//! list, [`FORMATS`], that detection, `--input-format`, the readers, the
//! Python package, docs/input-formats.md's table (checked by a test) and
//! the error messages all read. Adding a format is one module that
//! declares a `Format` and one line in [`FORMATS`] (docs/input-formats.md,
//! "Adding a format").
//!
//! [`ours`] recognises what mirotrace itself writes (verdicts, reports,
//! partials, labels): records that are not traces, said to be so.

mod builtin;
pub mod ours;

use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value as Json};

use crate::model::{Attempt, Origin, Trace};
use crate::read::openhands_v1::{COMPLETION_LOG, OPENHANDS_V1};
use crate::read::tau2;

pub use builtin::{ATIF, CHAT, CLAUDE_CODE, INSPECT, NATIVE, OPENHANDS, OTEL, SWE_AGENT, TASKLOG};

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
    /// [`FORMATS`] order: the first that says yes reads the record.
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

/// Every extension a folder walk picks up: the common ones, then each
/// format's own.
pub fn extensions() -> impl Iterator<Item = &'static str> {
    COMMON_EXTENSIONS
        .into_iter()
        .chain(FORMATS.iter().flat_map(|f| f.extensions.iter().copied()))
}

/// See [`Format::read_text`].
pub type ReadText = fn(&str, &Origin) -> Option<Result<Unit, String>>;

/// Makes a file's gatherer (given the file's label).
pub type MakeGatherer = fn(Arc<str>) -> Box<dyn Gather>;

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

/// Every format mirotrace reads, in the order records are recognised (the
/// first whose `recognise` says yes reads a record). One line per format.
pub static FORMATS: &[Kind] = &[
    NATIVE,
    ATIF,
    TASKLOG,
    OTEL,
    tau2::FORMAT,
    COMPLETION_LOG,
    OPENHANDS_V1,
    INSPECT,
    OPENHANDS,
    SWE_AGENT,
    CLAUDE_CODE,
    CHAT,
];

/// The format of a JSON object, from its keys; `None` when it is none of
/// them.
pub fn classify(obj: &Map<String, Json>) -> Option<Kind> {
    FORMATS.iter().copied().find(|f| (f.recognise)(obj))
}

/// The format named `name` (its `--input-format` value).
pub fn by_name(name: &str) -> Option<Kind> {
    FORMATS.iter().copied().find(|f| f.name == name)
}

/// The formats' names, for messages: `native, chat, …`.
pub fn names() -> String {
    FORMATS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The input format, as forced with `--input-format` or detected (`auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputFormat(Option<Kind>);

#[allow(non_upper_case_globals)]
impl InputFormat {
    /// Detect per file (and per line where a JSONL file mixes kinds).
    pub const Auto: InputFormat = InputFormat(None);
    pub const Native: InputFormat = InputFormat(Some(NATIVE));
    pub const Chat: InputFormat = InputFormat(Some(CHAT));
    pub const TaskLog: InputFormat = InputFormat(Some(TASKLOG));
    pub const Atif: InputFormat = InputFormat(Some(ATIF));
    pub const Inspect: InputFormat = InputFormat(Some(INSPECT));
    pub const OpenHands: InputFormat = InputFormat(Some(OPENHANDS));
    pub const SweAgent: InputFormat = InputFormat(Some(SWE_AGENT));
    pub const ClaudeCode: InputFormat = InputFormat(Some(CLAUDE_CODE));
    pub const Otel: InputFormat = InputFormat(Some(OTEL));
    pub const OpenHandsV1: InputFormat = InputFormat(Some(OPENHANDS_V1));
    pub const CompletionLog: InputFormat = InputFormat(Some(COMPLETION_LOG));
    pub const Tau2: InputFormat = InputFormat(Some(tau2::FORMAT));

    /// `auto`, then every format of [`FORMATS`].
    pub fn all() -> &'static [InputFormat] {
        static ALL: LazyLock<Vec<InputFormat>> = LazyLock::new(|| {
            std::iter::once(InputFormat::Auto)
                .chain(FORMATS.iter().map(|f| InputFormat(Some(*f))))
                .collect()
        });
        &ALL
    }

    /// The format `kind`, forced.
    pub fn forced(kind: Kind) -> InputFormat {
        InputFormat(Some(kind))
    }

    pub fn name(self) -> &'static str {
        self.0.map_or("auto", |k| k.name)
    }

    pub fn from_name(name: &str) -> Option<InputFormat> {
        match name {
            "auto" => Some(InputFormat::Auto),
            _ => by_name(name).map(InputFormat::forced),
        }
    }

    /// The format a forced `--input-format` reads everything as.
    pub fn forced_kind(self) -> Option<Kind> {
        self.0
    }
}

impl clap::ValueEnum for InputFormat {
    fn value_variants<'a>() -> &'a [Self] {
        InputFormat::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self.0 {
            None => "detect each file's format (the default)",
            Some(kind) => kind.description,
        };
        Some(clap::builder::PossibleValue::new(self.name()).help(help))
    }
}

/// docs/input-formats.md's table of formats, as [`FORMATS`] defines it.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| `--input-format` | recognised by | one trace per |\n|---|---|---|\n");
    for f in FORMATS {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            f.name, f.recognised_by, f.trace_per
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for f in InputFormat::all() {
            assert!(seen.insert(f.name()), "{} twice", f.name());
            assert_eq!(InputFormat::from_name(f.name()), Some(*f));
        }
        assert_eq!(InputFormat::from_name("nope"), None);
    }

    #[test]
    fn the_docs_table_is_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/input-formats.md");
        let docs = std::fs::read_to_string(path).unwrap_or_default();
        let table = markdown_table();
        assert!(
            docs.contains(&table),
            "docs/input-formats.md's format table must be exactly:\n{table}"
        );
    }
}
