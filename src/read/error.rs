//! Why an input was skipped or cut short, as a value: commands tell a cut
//! stream (its lines before the cut counted) from an input skipped whole by
//! matching the variant, never by reading the message back.

use std::sync::Arc;

use super::source::OpenError;

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

impl From<OpenError> for ReadError {
    fn from(e: OpenError) -> ReadError {
        ReadError::Unreadable {
            file: e.label,
            cause: e.reason,
        }
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
}
