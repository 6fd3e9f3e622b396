//! `parse_boolean_or_null`.

use super::fixes::JsonFix;
use super::parser::{empty_str, Parser, R};
use crate::pyjson::Value;

impl Parser {
    /// `true`, `false` or `null` in any letter case; anything else resets
    /// the index and yields `""`.
    pub(super) fn parse_boolean_or_null(&mut self) -> R<Value> {
        self.call2(Parser::parse_boolean_or_null_body, 1)
    }

    fn parse_boolean_or_null_body(&mut self) -> R<Value> {
        let start = self.index;
        let (word, value) = match self.lower_char() {
            Some('t') => ("true", Value::Bool(true)),
            Some('f') => ("false", Value::Bool(false)),
            Some('n') => ("null", Value::Null),
            _ => return Ok(empty_str()),
        };
        let mut exact = true;
        for expected in word.chars() {
            if self.lower_char() != Some(expected) {
                self.index = start;
                return Ok(empty_str());
            }
            exact &= self.char_at(0) == Some(expected);
            self.index += 1;
        }
        if !exact {
            // `True`, `FALSE`…: not JSON's spelling.
            self.fix(JsonFix::PythonLiterals);
        }
        Ok(value)
    }

    /// `(get_char_at() or "").lower()`. Only ASCII letters lower-case to the
    /// ASCII letters compared against, so other characters stay as they are.
    fn lower_char(&self) -> Option<char> {
        self.char_at(0).map(|c| c.to_ascii_lowercase())
    }
}
