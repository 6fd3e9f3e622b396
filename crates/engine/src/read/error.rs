//! Why an input was skipped or cut short, as a value: commands tell a cut
//! stream (its lines before the cut counted) from an input skipped whole by
//! matching the variant, never by reading the message back.

use std::sync::Arc;

use crate::model::Origin;

/// An input that could not be read to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The stream broke after `lines` whole lines (an I/O error, a
    /// truncated or corrupt compressed stream); those lines were read.
    #[error("{file}: read error after line {lines}: {cause}")]
    Cut {
        file: Arc<str>,
        lines: u64,
        cause: String,
    },
    /// The input was not read at all: it could not be opened, is binary, is
    /// an archive of another format, or is too long.
    #[error("{file}: {cause}")]
    Unreadable { file: Arc<str>, cause: String },
}

impl ReadError {
    /// The input's label.
    pub fn file(&self) -> &Arc<str> {
        match self {
            ReadError::Cut { file, .. } | ReadError::Unreadable { file, .. } => file,
        }
    }

    /// Why, without the input's label.
    pub fn cause(&self) -> &str {
        match self {
            ReadError::Cut { cause, .. } | ReadError::Unreadable { cause, .. } => cause,
        }
    }
}

/// An input that ended having yielded neither an attempt nor a problem (an
/// empty file, a conversation with no LLM response, a task log with no
/// step): said as a skipped line, never passed silently. Its own type, so a
/// command can say it once for the whole run when no input has an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoAttempt {
    pub file: Arc<str>,
    /// Traces read, none with an attempt.
    pub traces: u64,
}

impl NoAttempt {
    /// As the skipped line it is counted as (line 1 of the input).
    pub fn as_bad_line(&self) -> BadLine {
        let what = match self.traces {
            0 => "no record".to_string(),
            1 => "1 trace read, none with an LLM response".to_string(),
            n => format!("{n} traces read, none with an LLM response"),
        };
        BadLine {
            origin: Origin {
                file: self.file.clone(),
                line: 1,
            },
            reason: format!("{HOLDS_NO_ATTEMPT} ({what}): nothing in it to replay"),
        }
    }
}

impl std::fmt::Display for NoAttempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_bad_line().fmt(f)
    }
}

impl From<OpenError> for ReadError {
    fn from(e: OpenError) -> ReadError {
        ReadError::Unreadable {
            file: e.label,
            cause: e.reason,
        }
    }
}

/// An input that could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("{label}: {reason}")]
pub struct OpenError {
    pub label: Arc<str>,
    pub reason: String,
}

/// How the problem of an input without an attempt begins (commands tell
/// it from others: alone, it is the one line "the input holds no trace").
pub const HOLDS_NO_ATTEMPT: &str = "holds no attempt";

/// An input line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub origin: Origin,
    pub reason: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_file_and_the_line() {
        let cut = ReadError::Cut {
            file: "a.jsonl.gz".into(),
            lines: 192,
            cause: "incomplete deflate stream".into(),
        };
        assert_eq!(
            cut.to_string(),
            "a.jsonl.gz: read error after line 192: incomplete deflate stream"
        );
        let open: ReadError = OpenError {
            label: "b.jsonl".into(),
            reason: "permission denied".into(),
        }
        .into();
        assert_eq!(open.to_string(), "b.jsonl: permission denied");
        assert_eq!(&**open.file(), "b.jsonl");
    }

    #[test]
    fn an_input_without_an_attempt_says_what_it_held() {
        let none = |traces| NoAttempt {
            file: "c.jsonl".into(),
            traces,
        };
        assert_eq!(
            none(0).to_string(),
            "c.jsonl:1: holds no attempt (no record): nothing in it to replay"
        );
        assert!(none(2)
            .to_string()
            .contains("(2 traces read, none with an LLM response)"));
    }
}
