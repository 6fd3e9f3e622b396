//! The commands behind the CLI. Each takes parsed options and returns a
//! [`Status`]; argument parsing and process exit live in `main.rs`/`cli.rs`.

pub mod analyze;
pub mod diff;
pub mod export;
pub mod keywords;
pub mod policy;
pub mod replay;

use std::io::{self, Write};

use crate::engine::{Item, RunStats};
use crate::policy::Policy;
use crate::read::source::{InputSpec, ReadOptions};

/// The exit-code contract, the same for every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything was read and processed.
    Ok = 0,
    /// A `--fail-on` gate fired.
    GateFailed = 1,
    /// Bad arguments, an unreadable policy file, an unwritable output.
    Usage = 2,
    /// The run completed, but some input (lines or files) was skipped.
    InputSkipped = 3,
    /// No input could be read at all.
    NothingReadable = 4,
}

impl Status {
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The status a finished run earned from what it read.
    pub fn from_stats(stats: &RunStats) -> Status {
        if stats.traces == 0 && (stats.bad_lines > 0 || stats.failed_inputs > 0) {
            Status::NothingReadable
        } else if stats.bad_lines > 0 || stats.failed_inputs > 0 {
            Status::InputSkipped
        } else {
            Status::Ok
        }
    }
}

/// Stack size of worker and reader threads.
pub const WORKER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Options every command shares.
#[derive(Debug, Clone)]
pub struct Common {
    pub inputs: Vec<InputSpec>,
    pub threads: Option<usize>,
    pub policy: Policy,
    pub read: ReadOptions,
    pub quiet: bool,
    /// Stop at the first skipped input instead of carrying on.
    pub strict: bool,
}

impl Common {
    /// The threads of a run (`-j N` in total, default all cores).
    pub fn pool(&self) -> Result<crate::engine::Workers, String> {
        crate::engine::Workers::new(self.threads)
    }
}

/// Reports a skipped line or input on stderr; returns whether the run
/// should stop (`--strict`).
pub fn report_problem(item: &Item, strict: bool) -> bool {
    let msg = match item {
        Item::Bad(b) => format!("mirotrace: {b} (line skipped)"),
        Item::InputFailed { label, reason } => {
            format!("mirotrace: {label}: {reason} (input skipped)")
        }
        _ => return false,
    };
    let _ = writeln!(io::stderr().lock(), "{msg}");
    if strict {
        let _ = writeln!(io::stderr().lock(), "mirotrace: stopping here (--strict)");
    }
    strict
}
