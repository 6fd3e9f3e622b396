//! `parse_comment`: `#` and `//` line comments, `/* */` block comments.

use super::context::Ctx;
use super::fixes::JsonFix;
use super::parser::{empty_str, Parser, R};
use crate::pyjson::Value;

impl Parser {
    /// Skips a comment. At top level parsing goes on (a recursive
    /// `parse_json`, as in Python); inside a value it yields `""`.
    pub(super) fn parse_comment(&mut self) -> R<Value> {
        self.call2(Parser::parse_comment_body, 1)
    }

    fn parse_comment_body(&mut self) -> R<Value> {
        let mut terminators = vec!['\n', '\r'];
        if self.ctx.contains(Ctx::Array) {
            terminators.push(']');
        }
        if self.ctx.contains(Ctx::ObjectValue) {
            terminators.push('}');
        }
        if self.ctx.contains(Ctx::ObjectKey) {
            terminators.push(':');
        }
        match self.char_at(0) {
            Some('#') => {
                self.fix(JsonFix::Comment);
                self.skip_line(&terminators);
            }
            Some('/') => match self.char_at(1) {
                Some('/') => {
                    self.fix(JsonFix::Comment);
                    self.index += 2;
                    self.skip_line(&terminators);
                }
                Some('*') => {
                    self.fix(JsonFix::Comment);
                    self.index += 2;
                    // The comment text starts as "/*", so "/*/" already ends it.
                    let mut prev = '*';
                    while let Some(c) = self.char_at(0) {
                        self.index += 1;
                        if prev == '*' && c == '/' {
                            break;
                        }
                        prev = c;
                    }
                }
                _ => self.index += 1,
            },
            _ => {}
        }
        if self.ctx.is_empty() {
            self.parse_json()
        } else {
            Ok(empty_str())
        }
    }

    fn skip_line(&mut self, terminators: &[char]) {
        while self.char_at(0).is_some_and(|c| !terminators.contains(&c)) {
            self.index += 1;
        }
    }
}
