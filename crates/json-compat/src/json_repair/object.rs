//! `parse_object`.

use super::context::Ctx;
use super::fixes::JsonFix;
use super::parser::{empty_str, is_delimiter, is_in, Parser, R};
use super::unicode::is_alnum;
use crate::pyjson::{Dict, PyStr, Value};

impl Parser {
    /// `parse_object`, entered after the `{` (or at a quote, from
    /// `parse_array`).
    pub(super) fn parse_object(&mut self) -> R<Value> {
        self.call2(Parser::parse_object_body, 2)
    }

    fn parse_object_body(&mut self) -> R<Value> {
        let mut obj = Dict::default();
        let first = self.skip_ws_at(0);
        if self.char_at(first) == Some('{') {
            self.fix(JsonFix::DoubleBraces);
            self.open_doubles += 1;
        }
        while self.char_at(0).unwrap_or('}') != '}' {
            self.tick()?;
            self.skip_ws();
            // A ':' before the key is dropped.
            if self.char_at(0) == Some(':') {
                self.index += 1;
            }
            self.ctx.set(Ctx::ObjectKey);
            let mut rollback_index = self.index;
            let mut key = PyStr::new();
            while self.char_at(0).is_some() {
                self.tick()?;
                rollback_index = self.index;
                if self.char_at(0) == Some('[') && key.is_empty() && self.merge_array(&mut obj)? {
                    continue;
                }
                key = py_str(self.parse_string()?);
                if key.is_empty() {
                    self.skip_ws();
                }
                if !key.is_empty() || is_in(self.char_at(0), &[':', '}']) {
                    break;
                }
            }
            if self.ctx.contains(Ctx::Array) && obj.contains_key(&key) {
                // A repeated key inside an array starts a new object: insert a
                // '{' before the key and stop here (the context entry stays).
                self.index = rollback_index.saturating_sub(1);
                self.text.insert(self.index + 1, '{');
                break;
            }
            self.skip_ws();
            if self.char_at(0).unwrap_or('}') == '}' {
                if self.char_at(0).is_none() && !key.is_empty() {
                    self.fix(JsonFix::Truncated);
                }
                continue;
            }
            self.skip_ws();
            // The ':' (or whatever stands in its place) is skipped.
            if self.char_at(0) != Some(':') {
                self.fix(JsonFix::MissingColon);
            }
            self.index += 1;
            self.ctx.reset();
            self.ctx.set(Ctx::ObjectValue);
            self.skip_ws();
            if self.char_at(0).is_none() {
                self.fix(JsonFix::Truncated);
            }
            let value = if is_in(self.char_at(0), &[',', '}']) {
                empty_str()
            } else {
                self.parse_json()?
            };
            self.ctx.reset();
            obj.insert(key, value);
            let sep = self.char_at(0);
            if is_in(sep, &[',', '\'', '"']) {
                self.index += 1;
            }
            let after = self.skip_ws_at(0);
            let next = self.char_at(after);
            if sep == Some(',') {
                if is_in(next, &['}']) || next.is_none() {
                    self.fix(JsonFix::TrailingComma);
                }
            } else if sep.is_some_and(is_delimiter) {
                self.fix(JsonFix::MissingComma);
                self.sep_quote = true;
            } else if next.is_some_and(|c| is_delimiter(c) || is_alnum(c)) {
                self.fix(JsonFix::MissingComma);
            }
            self.skip_ws();
        }
        if self.char_at(0).is_none() {
            self.fix_unclosed();
        }
        self.index += 1;
        Ok(Value::Dict(obj))
    }

    /// A `[` where a key should be, after a list value: parse that array and
    /// append it to the previous list. Returns whether it did.
    fn merge_array(&mut self, obj: &mut Dict) -> R<bool> {
        let prev_is_list = obj
            .last()
            .is_some_and(|(k, v)| !k.is_empty() && matches!(v, Value::List(_)));
        if !prev_is_list {
            return Ok(false);
        }
        self.index += 1;
        let new_array = self.parse_array()?;
        let Value::List(mut items) = new_array else {
            return Ok(false);
        };
        if let Some((_, Value::List(prev))) = obj.last_mut() {
            if items.len() == 1 && matches!(items[0], Value::List(_)) {
                if let Some(Value::List(inner)) = items.pop() {
                    prev.extend(inner);
                }
            } else {
                prev.extend(items);
            }
        }
        self.skip_ws();
        if self.char_at(0) == Some(',') {
            self.index += 1;
        }
        self.skip_ws();
        Ok(true)
    }
}

/// Python's `str(value)` for what `parse_string` can return.
fn py_str(v: Value) -> PyStr {
    match v {
        Value::Str(s) => s,
        Value::Bool(true) => PyStr::from("True"),
        Value::Bool(false) => PyStr::from("False"),
        Value::Null => PyStr::from("None"),
        other => PyStr::from(crate::pyjson::dump(&other)),
    }
}
