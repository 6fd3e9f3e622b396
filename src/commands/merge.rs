//! `mirotrace merge PART…`: partial reports (`analyze --format partial`)
//! of any split of the input, added up into the report `analyze` gives on
//! all of it (docs/partial.md). Partials made with different versions,
//! policies or report options are refused.

use std::path::PathBuf;

use super::analyze::{render, Format};
use super::{write_report, Error, Status};
use crate::engine::Workers;
use crate::output::{ColorChoice, Output};
use crate::report::partial::{merge_all, PartialError};

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
}

impl From<PartialError> for Error {
    fn from(e: PartialError) -> Error {
        Error::Usage(e.to_string())
    }
}

pub fn run(opts: &MergeOptions) -> Result<Status, Error> {
    let out = Output::open(opts.output.as_deref())?;
    let mut read = Vec::with_capacity(opts.parts.len());
    for path in &opts.parts {
        let label = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| Error::Usage(format!("cannot read {label}: {e}")))?;
        read.push((label, bytes));
    }
    let merged = merge_all(read)?;
    if opts.format == Format::Partial {
        return write_report(out, &merged.to_json()?, Status::Ok);
    }
    let workers = Workers::new(opts.threads).map_err(|e| Error::Threads(e.to_string()))?;
    let analysis = workers.install(|| merged.finish());
    let text = render(&analysis, opts.format, &out, opts.color);
    write_report(out, &text, Status::Ok)
}
