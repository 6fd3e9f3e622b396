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

use std::sync::LazyLock;

use serde_json::{Map, Value as Json};

pub use crate::read::format::{
    Classify, Format, Gather, GatherOptions, Kind, List, MakeGatherer, ReadText, Unit,
    COMMON_EXTENSIONS,
};
use crate::read::openhands_v1::{COMPLETION_LOG, OPENHANDS_V1};
pub use crate::read::ours;
use crate::read::recording::RECORDING;
use crate::read::sniff::describe_value;
use crate::read::tau2;

pub use builtin::{ATIF, CHAT, CLAUDE_CODE, INSPECT, NATIVE, OPENHANDS, OTEL, SWE_AGENT, TASKLOG};

/// Every extension a folder walk picks up: the common ones, then each
/// format's own.
pub fn extensions() -> impl Iterator<Item = &'static str> {
    COMMON_EXTENSIONS
        .into_iter()
        .chain(FORMATS.iter().flat_map(|f| f.extensions.iter().copied()))
}

/// Every format mirotrace reads, in the order records are recognised (the
/// first whose `recognise` says yes reads a record). One line per format.
pub static FORMATS: &[Kind] = &[
    NATIVE,
    RECORDING,
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

/// Why a record cannot be read as the forced kind, if it cannot: it is
/// recognisably another kind, or nothing mirotrace reads.
pub fn forced_mismatch(forced: Kind, obj: &Map<String, Json>) -> Option<String> {
    // The native decoder reports what it misses itself.
    if forced == NATIVE || (forced.recognise)(obj) {
        return None;
    }
    let looks = match classify(obj) {
        Some(kind) => format!("it looks like {}", kind.describe()),
        None => format!("it is {}", describe_value(&Json::Object(obj.clone()))),
    };
    Some(format!(
        "not {} (--input-format {}): {looks}",
        forced.describe(),
        forced.name
    ))
}

/// The message for a JSON value no format recognises: the formats tried,
/// what the value is, and how to name its format.
pub fn unknown_record(value: &Json) -> String {
    let tried: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    format!(
        "no known format matched (tried {}): it is {}; if it is one of them, name it with \
         --input-format FORMAT (docs/input-formats.md lists what each is recognised by)",
        tried.join(", "),
        describe_value(value)
    )
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
    pub const Recording: InputFormat = InputFormat(Some(RECORDING));

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
