//! `mirotrace merge PART…`: partial reports (`analyze --format partial`)
//! of any split of the input, added up into the report `analyze` gives on
//! all of it; or partial diffs (`diff --format partial`) of any split of
//! either side, added up into the report `diff` gives on all of both
//! (docs/partial.md). Partials made with different versions, policies or
//! options, or of the two kinds at once, are refused.

use std::path::PathBuf;

use super::analyze::render;
use super::progress::Progress;
use super::{diff, write_report, Drawing, Error, Status};
use crate::analyze::partial::{format_of, merge_all, PartialError};
use crate::diff::partial as diff_partial;
use crate::engine::Workers;
use crate::output::{ColorChoice, Output};
use crate::render::skipped::Skipped;

/// How the merged report is written: the drawings of `analyze` and
/// `diff`, or the merged partial itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables for a terminal.
    Table,
    /// The machine interface (docs/json.md).
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained page (docs/html.md); use with -o.
    Html,
    /// A partial report to merge with others (`mirotrace merge`, docs/partial.md).
    Partial,
}

impl Format {
    /// The drawing this format asks for; `None` for the merged partial,
    /// written as data to merge again.
    pub fn drawing(self) -> Option<Drawing> {
        match self {
            Format::Table => Some(Drawing::Table),
            Format::Json => Some(Drawing::Json),
            Format::Markdown => Some(Drawing::Markdown),
            Format::Html => Some(Drawing::Html),
            Format::Partial => None,
        }
    }
}

/// Options of `mirotrace merge`.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    pub parts: Vec<PathBuf>,
    /// `partial` writes the merged partial, to merge again later.
    pub format: Format,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
    /// Threads of the bootstrap (default: all cores).
    pub threads: Option<usize>,
    /// No progress line.
    pub quiet: bool,
}

impl From<PartialError> for Error {
    fn from(e: PartialError) -> Error {
        Error::Usage(e.to_string())
    }
}

pub fn run(opts: &MergeOptions) -> Result<Status, Error> {
    let out = super::open_report_output(opts.output.as_deref(), opts.format == Format::Html)?;
    let read = read_parts(&opts.parts, opts.quiet)?;
    let kinds = read
        .iter()
        .map(|(label, bytes)| format_of(bytes, label))
        .collect::<Result<Vec<_>, _>>()?;
    if kinds.iter().any(|k| k == diff_partial::FORMAT) {
        if let Some(at) = kinds.iter().position(|k| k != diff_partial::FORMAT) {
            return Err(mixed(&read[0].0, &kinds[0], &read[at].0, &kinds[at]));
        }
        return merge_diffs(read, opts, out);
    }
    let merged = merge_all(read)?;
    let Some(drawing) = opts.format.drawing() else {
        return write_report(out, &merged.to_json()?, Status::Ok);
    };
    let workers = Workers::new(opts.threads).map_err(|e| Error::Threads(e.to_string()))?;
    let analysis = workers.install(|| merged.finish());
    let skipped = analysis.skipped_counts();
    let text = render(&analysis, drawing, &out, opts.color, &skipped);
    write_report(out, &text, Status::Ok)
}

/// Largest part read: far more than an `analyze` partial holds (its size
/// follows the distinct figures, not the traces) and room for a partial
/// diff of some 4 M traces (~60 bytes a row); `/dev/zero` or a wrong file
/// is refused at this size instead of filling memory (docs/limits.md).
pub const MAX_PARTIAL_BYTES: u64 = 256 << 20;

/// Every part's bytes, labelled, with the progress line every reading
/// command shows. A missing or unreadable part ends the run before any
/// report, as a missing input does.
fn read_parts(parts: &[PathBuf], quiet: bool) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let total = parts
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len())
        })
        .sum::<Option<u64>>();
    let mut progress = Progress::new(quiet, total);
    let counter = progress.bytes_read();
    let mut read = Vec::with_capacity(parts.len());
    for path in parts {
        let label = path.display().to_string();
        progress.file_started(&label);
        progress.tick();
        let bytes = crate::policy::read_side_file(path, MAX_PARTIAL_BYTES).map_err(|e| {
            progress.finish();
            // Too large (`/dev/zero`) or not text: not a partial; usage.
            if e.kind() == std::io::ErrorKind::InvalidData {
                Error::Usage(format!("{label}: {e}"))
            } else {
                Error::Unreadable(format!("{label}: {e}"))
            }
        })?;
        let bytes = bytes.into_bytes();
        if let Some((first, _)) = read.iter().find(|(_, b): &&(String, Vec<u8>)| *b == bytes) {
            progress.finish();
            return Err(Error::Usage(format!(
                "{label}: the same partial as {first} (identical content): it would be counted twice; give each part once"
            )));
        }
        if let Some(c) = &counter {
            c.fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        progress.tick();
        read.push((label, bytes));
    }
    progress.finish();
    Ok(read)
}

/// Partials of both kinds cannot be added up.
fn mixed(first: &str, first_kind: &str, other: &str, other_kind: &str) -> Error {
    let (first, first_kind, other, other_kind) = if first_kind == diff_partial::FORMAT {
        (other, other_kind, first, first_kind)
    } else {
        (first, first_kind, other, other_kind)
    };
    Error::Usage(format!(
        "cannot merge a partial diff ({other}, {other_kind}) with an analyze partial or another file ({first}, {first_kind}): merge each kind on its own"
    ))
}

/// Merges partial diffs and compares their sides, as `diff` does.
fn merge_diffs(
    read: Vec<(String, Vec<u8>)>,
    opts: &MergeOptions,
    out: Output,
) -> Result<Status, Error> {
    let merged = diff_partial::merge_all(read)?;
    let Some(drawing) = opts.format.drawing() else {
        return write_report(out, &merged.to_json()?, Status::Ok);
    };
    let file = "the merged partial diffs";
    let options = &merged.header.options;
    let gates = diff::parse_gates(&options.fail_on)?;
    let sides = diff::Sides {
        base_label: diff::label(&merged.base.inputs),
        base: merged.base.trace_rows(file)?,
        new_label: diff::label(&merged.new.inputs),
        new: merged.new.trace_rows(file)?,
        skipped: merged.base.skipped || merged.new.skipped,
        // A partial diff says whether its run skipped input, not what.
        problems: Skipped::default(),
        policy_changes: None,
    };
    let how = diff::How {
        group_by: options.group_by,
        config: &options.compare,
        gates: &gates,
        drawing,
        color: opts.color,
    };
    let workers = Workers::new(opts.threads).map_err(|e| Error::Threads(e.to_string()))?;
    diff::report(sides, &how, out, &workers)
}
