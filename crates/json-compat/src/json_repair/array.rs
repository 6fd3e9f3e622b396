//! `parse_array`.

use super::compare::is_strictly_empty;
use super::context::Ctx;
use super::fixes::JsonFix;
use super::parser::{is_delimiter, Parser, R};
use super::unicode::is_space;
use crate::pyjson::Value;

impl Parser {
    /// `parse_array`, entered after the `[`.
    pub(super) fn parse_array(&mut self) -> R<Value> {
        self.call2(Parser::parse_array_body, 2)
    }

    fn parse_array_body(&mut self) -> R<Value> {
        let mut arr = Vec::new();
        self.ctx.set(Ctx::Array);
        let mut ch = self.char_at(0);
        while let Some(c) = ch.filter(|&c| c != ']' && c != '}') {
            self.tick()?;
            self.skip_ws();
            // `c` is the character from before the whitespace skip, as in Python.
            let value = if is_delimiter(c) {
                // A quoted string followed by ':' is an object missing its '{'.
                let i = self.skip_to_char(c, 1)?;
                let i = self.skip_ws_at(i + 1);
                if self.char_at(i) == Some(':') {
                    self.parse_object()?
                } else {
                    self.parse_string()?
                }
            } else {
                self.parse_json()?
            };
            if is_strictly_empty(&value) {
                self.index += 1;
            } else if !(matches!(&value, Value::Str(s) if *s == "...")
                && self.char_at(-1) == Some('.'))
            {
                arr.push(value);
            }
            ch = self.char_at(0);
            let mut commas = 0;
            while let Some(c) = ch.filter(|&c| c != ']' && (is_space(c) || c == ',')) {
                commas += usize::from(c == ',');
                self.index += 1;
                ch = self.char_at(0);
            }
            match ch {
                None | Some(']') if commas > 0 => self.fix(JsonFix::TrailingComma),
                Some(c) if commas == 0 && c != ']' && c != '}' => self.fix(JsonFix::MissingComma),
                _ => {}
            }
        }
        if ch.is_none() {
            self.fix_unclosed();
        }
        self.index += 1;
        self.ctx.reset();
        Ok(Value::List(arr))
    }
}
