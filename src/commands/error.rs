//! The one error type of the commands. Each variant knows the exit code it
//! ends the process with (jaq's habit), so `main` only prints and exits.

use crate::render::format::counted;
use std::io;

use super::exit_codes::Status;
use crate::diff::gate::GateError;
use crate::keywords::labels::LabelsError;
use crate::keywords::lists::ListError;
use crate::output::OutputError;
use crate::policy::PolicyError;

/// Why a command could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Options that do not fit together or are out of range.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Prices(#[from] crate::metrics::prices::PricesError),
    #[error(transparent)]
    KeywordList(#[from] ListError),
    #[error(transparent)]
    Labels(#[from] LabelsError),
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("cannot create the directory {path}: {source}")]
    CreateDir { path: String, source: io::Error },
    #[error("cannot serialise the output: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("cannot start threads: {0}")]
    Threads(String),
    /// `replay --trace ID` found no such trace: the id, and the closest
    /// ids the inputs hold (by edit distance), for "did you mean"; when
    /// none is close, the ids that exist, named.
    #[error("no trace with id {:?} in the inputs{}{}", .0, did_you_mean(.1), .2)]
    NoSuchTrace(String, Vec<String>, String),
    /// A named input is missing or unreadable (checked before reading).
    #[error("cannot read the input: {0}")]
    Unreadable(String),
    /// The inputs held no trace at all (an empty file, or only skipped
    /// lines): there is nothing to report.
    #[error("{}", no_traces(*problems))]
    NoTraces { problems: u64 },
    /// One side of `diff` held no readable trace.
    #[error("no trace could be read from {side}: nothing to compare")]
    NothingToCompare { side: &'static str },
    /// `--format html` with stdout a terminal: a page is for a file.
    #[error("--format html writes a page, not text for a terminal: write it to a file with -o FILE (or pipe it)")]
    PageOnTerminal,
    /// Whoever read our output went away (`| head`): not a failure. The
    /// run ends quietly with the status it had earned so far.
    #[error("the output was closed")]
    Closed(Status),
}

/// `; did you mean "a" or "b"?`, or nothing.
fn did_you_mean(closest: &[String]) -> String {
    let quoted: Vec<String> = closest.iter().map(|id| format!("{id:?}")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => format!("; did you mean {last}?"),
        Some((last, rest)) => format!("; did you mean {} or {last}?", rest.join(", ")),
    }
}

impl Error {
    /// The exit code this error ends the run with.
    pub fn status(&self) -> Status {
        match self {
            Error::NothingToCompare { .. } | Error::Unreadable(_) | Error::NoTraces { .. } => {
                Status::NothingReadable
            }
            Error::Closed(status) => *status,
            _ => Status::Usage,
        }
    }

    /// Whether the run should end without a message.
    pub fn is_quiet(&self) -> bool {
        matches!(self, Error::Closed(_))
    }

    /// An output error of a run whose status so far is `status`: a closed
    /// pipe becomes [`Error::Closed`], anything else stays an error. The
    /// one place that tells a closed pipe from a failed write.
    pub fn from_output(e: OutputError, status: Status) -> Error {
        match &e {
            OutputError::Write(io) if io.kind() == io::ErrorKind::BrokenPipe => {
                Error::Closed(status)
            }
            _ => Error::Output(e),
        }
    }

    /// [`Error::from_output`] for an error that may already be one.
    pub fn at_status(self, status: Status) -> Error {
        match self {
            Error::Output(e) => Error::from_output(e, status),
            other => other,
        }
    }
}

fn no_traces(problems: u64) -> String {
    match problems {
        0 => "the input holds no trace: nothing to report".into(),
        n => format!(
            "no trace could be read ({} above): nothing to report",
            counted(n, "problem")
        ),
    }
}

impl From<io::Error> for Error {
    /// A failed write to the command's output.
    fn from(e: io::Error) -> Error {
        Error::Output(OutputError::Write(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_keeps_the_status_and_other_write_errors_are_usage() {
        let pipe = Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        let closed = pipe.at_status(Status::InputSkipped);
        assert!(closed.is_quiet());
        assert_eq!(closed.status(), Status::InputSkipped);
        let full = Error::from(io::Error::other("disk full")).at_status(Status::Ok);
        assert!(!full.is_quiet());
        assert_eq!(full.status(), Status::Usage);
        let side = Error::NothingToCompare { side: "--new" };
        assert_eq!(side.status(), Status::NothingReadable);
    }

    #[test]
    fn the_count_of_problems_agrees_with_its_noun() {
        assert!(
            no_traces(1).contains("(1 problem above)"),
            "{}",
            no_traces(1)
        );
        assert!(
            no_traces(2).contains("(2 problems above)"),
            "{}",
            no_traces(2)
        );
        assert!(no_traces(0).contains("holds no trace"));
    }
}
