//! What a repair changed: the parser records a [`JsonFix`] in the branch
//! that makes it (never by comparing input and output), so a repaired call
//! can say why it needed repairing. Strict parses never reach the parser
//! and carry no fixes.

use serde::{Deserialize, Serialize};

/// One kind of change json_repair made. Declared in name order, so a
/// [`Fixes`] set lists its names sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonFix {
    /// A ``` fence around the value.
    CodeFence,
    /// A `#`, `//` or `/* */` comment skipped.
    Comment,
    /// Several values one after another (they become a list, or the last wins).
    Concatenated,
    /// A raw control character (newline, tab…) inside a string.
    ControlCharacters,
    /// `{{ … }}`.
    DoubleBraces,
    /// A `}` or `]` with nothing to close.
    ExtraClosing,
    /// A backslash escape JSON does not have (`\s`, `\'`, `\x41`, a short `\u`).
    InvalidEscape,
    /// A number with a dangling `e`, `-` or `/`, or one Python cannot read.
    InvalidNumber,
    /// The value is complete but closing brackets are missing.
    MissingClosing,
    MissingColon,
    MissingComma,
    /// A string that lost its closing quote before more text.
    MissingQuote,
    /// `True`/`False`/`None` (or another letter case of `true`/`false`/`null`).
    PythonLiterals,
    SingleQuotes,
    /// `“…”` quotes.
    SmartQuotes,
    /// Prose or tags before or after the value.
    SurroundingText,
    /// A `,` before a closing bracket (or before the end of the text).
    TrailingComma,
    /// The input ended inside a string, object or array.
    Truncated,
    /// A `"` inside a string kept as a character.
    UnescapedQuote,
    UnquotedKeys,
    /// A string value without quotes.
    UnquotedStrings,
}

impl JsonFix {
    /// In name order.
    pub const ALL: [JsonFix; 21] = [
        JsonFix::CodeFence,
        JsonFix::Comment,
        JsonFix::Concatenated,
        JsonFix::ControlCharacters,
        JsonFix::DoubleBraces,
        JsonFix::ExtraClosing,
        JsonFix::InvalidEscape,
        JsonFix::InvalidNumber,
        JsonFix::MissingClosing,
        JsonFix::MissingColon,
        JsonFix::MissingComma,
        JsonFix::MissingQuote,
        JsonFix::PythonLiterals,
        JsonFix::SingleQuotes,
        JsonFix::SmartQuotes,
        JsonFix::SurroundingText,
        JsonFix::TrailingComma,
        JsonFix::Truncated,
        JsonFix::UnescapedQuote,
        JsonFix::UnquotedKeys,
        JsonFix::UnquotedStrings,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JsonFix::CodeFence => "code_fence",
            JsonFix::Comment => "comment",
            JsonFix::Concatenated => "concatenated",
            JsonFix::ControlCharacters => "control_characters",
            JsonFix::DoubleBraces => "double_braces",
            JsonFix::ExtraClosing => "extra_closing",
            JsonFix::InvalidEscape => "invalid_escape",
            JsonFix::InvalidNumber => "invalid_number",
            JsonFix::MissingClosing => "missing_closing",
            JsonFix::MissingColon => "missing_colon",
            JsonFix::MissingComma => "missing_comma",
            JsonFix::MissingQuote => "missing_quote",
            JsonFix::PythonLiterals => "python_literals",
            JsonFix::SingleQuotes => "single_quotes",
            JsonFix::SmartQuotes => "smart_quotes",
            JsonFix::SurroundingText => "surrounding_text",
            JsonFix::TrailingComma => "trailing_comma",
            JsonFix::Truncated => "truncated",
            JsonFix::UnescapedQuote => "unescaped_quote",
            JsonFix::UnquotedKeys => "unquoted_keys",
            JsonFix::UnquotedStrings => "unquoted_strings",
        }
    }

    pub fn from_name(name: &str) -> Option<JsonFix> {
        JsonFix::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A set of fixes (a bit per [`JsonFix`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Fixes(u32);

impl Fixes {
    pub fn insert(&mut self, fix: JsonFix) {
        self.0 |= 1 << fix as u32;
    }

    pub fn contains(self, fix: JsonFix) -> bool {
        self.0 & (1 << fix as u32) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The fixes, sorted by name.
    pub fn iter(self) -> impl Iterator<Item = JsonFix> {
        JsonFix::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_name_order_and_names_round_trip() {
        let names: Vec<&str> = JsonFix::ALL.iter().map(|f| f.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        for f in JsonFix::ALL {
            assert_eq!(JsonFix::from_name(f.name()), Some(f));
            assert_eq!(
                serde_json::to_string(&f).unwrap(),
                format!("\"{}\"", f.name())
            );
        }
        let mut s = Fixes::default();
        s.insert(JsonFix::UnquotedKeys);
        s.insert(JsonFix::CodeFence);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [JsonFix::CodeFence, JsonFix::UnquotedKeys]
        );
    }
}
