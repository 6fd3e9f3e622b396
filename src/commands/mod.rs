//! The commands behind the CLI. Each takes parsed options and returns a
//! [`Status`] or an [`Error`] (which knows its exit code); argument parsing
//! and the process exit live in `main.rs`/`cli.rs`.
//!
//! Every reading command goes through [`reading::Reading::run`], which owns
//! progress, skipped-input reporting, `--strict` and the reading's status;
//! each command brings its per-trace work as an [`crate::engine::Job`].

pub mod analyze;
pub mod diff;
pub mod error;
pub mod exit_codes;
pub mod export;
pub mod keywords;
pub mod merge;
pub mod policy;
pub mod progress;
pub mod reading;
#[cfg(feature = "record")]
pub mod record;
pub mod replay;
pub mod stderr;

use std::io::Write;
use std::path::{Path, PathBuf};

pub use error::Error;
pub use exit_codes::Status;
pub use reading::{Inputs, Ran, Reading};

use crate::output::{Output, OutputError};

/// What a finished report is drawn as, whichever command made it. Each
/// report command's `Format` is its own CLI choice; those that are
/// drawings name one of these (a partial is data for `merge`, not a
/// drawing), so `merge` draws an analysis or a diff without translating
/// one command's `Format` into another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawing {
    /// Tables for a terminal.
    Table,
    /// The machine interface.
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained page.
    Html,
}

/// Opens where a report goes; an HTML page (`page`) bound for a terminal
/// is refused (use `-o FILE`), as ripgrep refuses binary output there.
pub fn open_report_output(path: Option<&Path>, page: bool) -> Result<Output, Error> {
    let out = Output::open(path)?;
    if page && out.is_terminal() {
        return Err(Error::PageOnTerminal);
    }
    Ok(out)
}

/// Writes a finished report and commits the output, ending the command
/// with `status` (also when the reader of stdout went away).
pub fn write_report(mut out: Output, text: &str, status: Status) -> Result<Status, Error> {
    out.write_all(text.as_bytes())
        .map_err(OutputError::Write)
        .and_then(|()| out.finish())
        .map_err(|e| Error::from_output(e, status))?;
    Ok(status)
}

/// Ends a command that `--strict` stopped: its `-o` file is not committed;
/// what already went to stdout is flushed, and a failed write outranks the
/// stop (an output error always wins the exit code).
pub fn stopped(out: Output, status: Status) -> Result<Status, Error> {
    out.abandon().map_err(|e| Error::from_output(e, status))?;
    Ok(status)
}

/// Refuses, before anything is read, an `-o` path that names one of the
/// other files the command reads: a partial, a policy, a price, list or
/// label file (however spelled; see [`crate::output::refuse_inputs`]).
/// Exit 2, the file untouched. The trace inputs are checked where they
/// are expanded, once ([`Inputs::expand`]), so a file found inside an
/// input folder is protected too.
pub fn refuse_output_over_reads(output: Option<&Path>, reads: &[PathBuf]) -> Result<(), Error> {
    let Some(output) = output else {
        return Ok(());
    };
    crate::output::refuse_inputs(output, reads.iter().map(PathBuf::as_path))?;
    Ok(())
}
