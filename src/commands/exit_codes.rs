//! The exit-code contract, the same for every command (README, "Exit
//! codes"). A command ends with a [`Status`]; an [`Error`](super::Error)
//! knows which status it ends with.
//!
//! `record` (docs/record.md) runs until a signal: the first SIGINT or
//! SIGTERM ends it with [`Status::Ok`] once the calls in flight are
//! recorded, a second with [`INTERRUPTED`] or [`TERMINATED`]; a bad
//! option, a port it cannot bind or a recording it cannot open or write
//! is [`Status::Usage`].

/// How a run ended, as the process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Everything was read and processed.
    Ok = 0,
    /// A `--fail-on` gate fired (`analyze` or `diff`).
    GateFired = 1,
    /// Bad arguments, an unreadable policy or list file, an unwritable
    /// output, a failed write (which outranks every input problem).
    Usage = 2,
    /// The run completed, but some input (lines or files) was skipped, or
    /// `--strict`/`--max-errors` stopped it.
    InputSkipped = 3,
    /// Nothing to report: a named input is missing or unreadable, or the
    /// input holds no trace at all.
    NothingReadable = 4,
}

/// SIGINT or SIGTERM ended the run (`main` exits with 128 + the signal's
/// number, the shell's convention, after removing `-o` temporaries).
pub const INTERRUPTED: u8 = 130;
/// See [`INTERRUPTED`].
pub const TERMINATED: u8 = 143;
/// SIGHUP (a closed terminal or SSH session); see [`INTERRUPTED`].
pub const HUNG_UP: u8 = 129;

impl Status {
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Status> for std::process::ExitCode {
    fn from(status: Status) -> Self {
        std::process::ExitCode::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones() {
        let codes = [
            Status::Ok,
            Status::GateFired,
            Status::Usage,
            Status::InputSkipped,
            Status::NothingReadable,
        ]
        .map(Status::code);
        assert_eq!(codes, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn signal_codes_are_128_plus_the_signal() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        assert_eq!(i32::from(HUNG_UP), 128 + SIGHUP);
        assert_eq!(i32::from(INTERRUPTED), 128 + SIGINT);
        assert_eq!(i32::from(TERMINATED), 128 + SIGTERM);
    }
}
