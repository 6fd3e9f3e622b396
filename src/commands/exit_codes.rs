//! The exit-code contract, the same for every command (README, "Exit
//! codes"). A command ends with a [`Status`]; an [`Error`](super::Error)
//! knows which status it ends with.

/// How a run ended, as the process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Everything was read and processed.
    Ok = 0,
    /// A `diff --fail-on` gate fired.
    GateFired = 1,
    /// Bad arguments, an unreadable policy or list file, an unwritable output.
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
}
