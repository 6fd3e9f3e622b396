//! `parse_string`: quoted, half-quoted and unquoted strings.
//!
//! Nearly every repair heuristic of json_repair lives here: missing or
//! doubled quotes, quotes inside values, stray escapes, strings that run
//! into the next key. The control flow follows the Python function block by
//! block; the bigger look-ahead checks are split into helper methods.

use super::context::Ctx;
use super::fixes::JsonFix;
use super::parser::{empty_str, is_delimiter, is_empty_str, is_in, Parser, R};
use super::text::Targets;
use super::unicode::{is_alnum, is_alpha, is_space};
use super::RepairError;
use crate::pyjson::{PyStr, Value};

const BACKSLASH: u32 = '\\' as u32;

/// `string_acc`, as code points (an escape can produce a lone surrogate).
/// Keeps a count of `{` so "is there a `{` in the string so far" is O(1).
#[derive(Default)]
struct Acc {
    cps: Vec<u32>,
    braces: usize,
}

impl Acc {
    fn push(&mut self, cp: u32) {
        self.braces += usize::from(cp == '{' as u32);
        self.cps.push(cp);
    }

    fn pop(&mut self) {
        if self.cps.pop() == Some('{' as u32) {
            self.braces -= 1;
        }
    }

    /// `string_acc = string_acc[:-1] + c`.
    fn replace_last(&mut self, cp: u32) {
        self.pop();
        self.push(cp);
    }

    fn last(&self) -> Option<u32> {
        self.cps.last().copied()
    }

    /// `string_acc[-1]`, which raises `IndexError` on an empty string.
    fn last_or_index_error(&self) -> R<u32> {
        self.last().ok_or(RepairError::IndexError)
    }

    fn ends_with(&self, c: char) -> bool {
        self.last() == Some(c as u32)
    }

    /// `str.rstrip()`.
    fn rstrip(&mut self) {
        while self.last().and_then(char::from_u32).is_some_and(is_space) {
            self.pop();
        }
    }
}

/// The delimiters and flags of the string being read.
struct Quotes {
    left: char,
    right: char,
    missing: bool,
    doubled: bool,
    unmatched: bool,
}

impl Parser {
    pub(super) fn parse_string(&mut self) -> R<Value> {
        self.call2(Parser::parse_string_body, 1)
    }

    fn parse_string_body(&mut self) -> R<Value> {
        let after_sep_quote = std::mem::take(&mut self.sep_quote);
        let mut ch = self.char_at(0);
        if is_in(ch, &['#', '/']) {
            return self.parse_comment();
        }
        // A string starts with a quote or, unquoted, with a letter or digit.
        while let Some(c) = ch.filter(|&c| !is_delimiter(c) && !is_alnum(c)) {
            self.note_junk_bracket(c);
            self.index += 1;
            ch = self.char_at(0);
        }
        let Some(first) = ch else {
            return Ok(empty_str());
        };
        let mut q = Quotes {
            left: '"',
            right: '"',
            missing: false,
            doubled: false,
            unmatched: false,
        };
        if first == '\'' {
            self.fix(JsonFix::SingleQuotes);
            (q.left, q.right) = ('\'', '\'');
        } else if first == '“' || first == '”' {
            self.fix(JsonFix::SmartQuotes);
            if first == '“' {
                (q.left, q.right) = ('“', '”');
            }
        } else if is_alnum(first) {
            if matches!(first.to_ascii_lowercase(), 't' | 'f' | 'n')
                && !self.current_is(Ctx::ObjectKey)
            {
                let value = self.parse_boolean_or_null()?;
                if !is_empty_str(&value) {
                    return Ok(value);
                }
            }
            q.missing = true;
        }
        if !q.missing {
            self.index += 1;
        }
        if self.doubled_quote_start(&mut q)? {
            return Ok(empty_str());
        }

        let mut acc = Acc::default();
        let mut ch = self.char_at(0);
        while let Some(c) = ch.filter(|&c| c != q.right) {
            self.tick()?;
            if q.missing {
                if self.current_is(Ctx::ObjectKey) && (c == ':' || is_space(c)) {
                    break;
                }
                if self.current_is(Ctx::Array) && (c == ']' || c == ',') {
                    break;
                }
            }
            if self.current_is(Ctx::ObjectValue)
                && (c == ',' || c == '}')
                && !acc.ends_with(q.right)
                && self.value_ends_here(&q, &acc)?
            {
                break;
            }
            if c == ']'
                && self.ctx.contains(Ctx::Array)
                && acc.last_or_index_error()? != q.right as u32
            {
                // End of an array: stop unless a closing quote comes later.
                let i = self.skip_to_char(q.right, 0)?;
                if self.char_at(i).is_none() {
                    break;
                }
            }
            if !q.missing && (c as u32) < 0x20 {
                self.fix(JsonFix::ControlCharacters);
            }
            acc.push(c as u32);
            self.index += 1;
            ch = self.char_at(0);
            if let Some(next) = ch {
                if acc.last() == Some(BACKSLASH) {
                    if self.stray_escape(next, &q, &mut acc) {
                        ch = self.char_at(0);
                        continue;
                    }
                    if !matches!(next, '/' | 'f') {
                        // The backslash stays a character.
                        self.fix(JsonFix::InvalidEscape);
                    }
                }
            }
            if ch == Some(':')
                && !q.missing
                && self.current_is(Ctx::ObjectKey)
                && self.key_ends_here(&q)?
            {
                break;
            }
            if ch == Some(q.right) && !acc.ends_with('\\') {
                if q.doubled && self.char_at(1) == Some(q.right) {
                    self.index += 1;
                } else if q.missing && self.current_is(Ctx::ObjectValue) {
                    if self.quote_starts_next_key(&q) {
                        // The quote opens the next key: step back and stop.
                        self.index = self.index.saturating_sub(1);
                        ch = self.char_at(0);
                        break;
                    }
                } else if q.unmatched {
                    q.unmatched = false;
                    acc.push(q.right as u32);
                    self.index += 1;
                    ch = self.char_at(0);
                } else if self.quote_is_misplaced(&mut q)? {
                    self.fix(JsonFix::UnescapedQuote);
                    acc.push(q.right as u32);
                    self.index += 1;
                    ch = self.char_at(0);
                }
            }
        }
        if let Some(c) = ch {
            if q.missing && self.current_is(Ctx::ObjectKey) && is_space(c) {
                // An unquoted "key" followed by more words is a comment.
                self.skip_ws();
                if !is_in(self.char_at(0), &[':', ',']) {
                    return Ok(empty_str());
                }
            }
        }
        if ch == Some(q.right) {
            self.index += 1;
        } else {
            acc.rstrip();
        }
        if q.missing || acc.ends_with('\n') {
            acc.rstrip();
        }
        let s = acc.cps.into_iter().collect::<PyStr>();
        self.note_string(&q, ch, &s, after_sep_quote);
        Ok(Value::Str(s))
    }

    /// Records what a finished string says of the text: unquoted, cut at
    /// the end, or missing its closing quote.
    fn note_string(&mut self, q: &Quotes, end: Option<char>, s: &PyStr, after_sep_quote: bool) {
        if end.is_none() {
            self.fix(JsonFix::Truncated);
        }
        if q.missing {
            if *s == "None" {
                self.fix(JsonFix::PythonLiterals);
            } else if !self.current_is(Ctx::ObjectKey) {
                self.fix(JsonFix::UnquotedStrings);
            } else if !after_sep_quote {
                self.fix(JsonFix::UnquotedKeys);
            }
        } else if end.is_some() && end != Some(q.right) {
            self.fix(JsonFix::MissingQuote);
        }
    }

    /// A quote right after the opening one: `""`, `"" x ""`, and friends.
    /// Returns true when the string is the empty string.
    fn doubled_quote_start(&mut self, q: &mut Quotes) -> R<bool> {
        let c = self.char_at(0);
        if !(c.is_some_and(is_delimiter) && c == Some(q.left)) {
            return Ok(false);
        }
        if (self.current_is(Ctx::ObjectKey) && self.char_at(1) == Some(':'))
            || (self.current_is(Ctx::ObjectValue) && is_in(self.char_at(1), &[',', '}']))
        {
            self.index += 1;
            return Ok(true);
        }
        if self.char_at(1) == Some(q.left) {
            return Ok(true);
        }
        let i = self.skip_to_char(q.right, 1)?;
        if self.char_at(i).is_some() && self.char_at(i + 1) == Some(q.right) {
            // ""text"": a doubled-quoted string.
            q.doubled = true;
            self.index += 1;
            return Ok(false);
        }
        let i = self.skip_ws_at(1);
        let next = self.char_at(i);
        if next.is_some_and(|c| is_delimiter(c) || c == '{' || c == '[') {
            self.index += 1;
            return Ok(true);
        }
        if !is_in(next, &[',', ']', '}']) {
            // One quote too many: drop it.
            self.index += 1;
        }
        Ok(false)
    }

    /// A backslash was just added and `next` follows it. Normalises the
    /// escape and returns true when it consumed `next`.
    fn stray_escape(&mut self, next: char, q: &Quotes, acc: &mut Acc) -> bool {
        if next == q.right || matches!(next, 't' | 'n' | 'r' | 'b' | '\\') {
            let decoded = match next {
                't' => '\t',
                'n' => '\n',
                'r' => '\r',
                'b' => '\u{8}',
                other => other,
            };
            acc.replace_last(decoded as u32);
            self.index += 1;
            // Collapse runs so they neither close the string nor pile up.
            while let Some(c) = self.char_at(0) {
                if !(acc.last() == Some(BACKSLASH) && (c == q.right || c == '\\')) {
                    break;
                }
                acc.replace_last(c as u32);
                self.index += 1;
            }
            return true;
        }
        if next == 'u' || next == 'x' {
            let width: isize = if next == 'u' { 4 } else { 2 };
            let mut cp = 0u32;
            for k in 1..=width {
                match self.char_at(k).and_then(|h| h.to_digit(16)) {
                    Some(d) => cp = cp * 16 + d,
                    None => return false,
                }
            }
            if next == 'x' {
                self.fix(JsonFix::InvalidEscape);
            }
            acc.replace_last(cp);
            self.index += 1 + width as usize;
            return true;
        }
        if is_delimiter(next) && next != q.right {
            if next != '"' {
                self.fix(JsonFix::InvalidEscape);
            }
            acc.replace_last(next as u32);
            self.index += 1;
            return true;
        }
        false
    }

    /// In an object value, a `,` or `}` was reached: does the value end here
    /// (true), or is the character part of the string?
    fn value_ends_here(&mut self, q: &Quotes, acc: &Acc) -> R<bool> {
        let mut missing = true;
        self.skip_ws();
        if self.char_at(1) == Some('\\') {
            missing = false;
        }
        let mut i = self.skip_to_char(q.right, 1)?;
        if self.char_at(i).is_some() {
            // A closing quote comes later: is it followed by , or } or the end?
            i = self.skip_ws_at(i + 1);
            let next = self.char_at(i);
            if next.is_none() || is_in(next, &[',', '}']) {
                missing = false;
            } else {
                i = self.skip_to_char(q.left, i)?;
                if self.char_at(i).is_none() {
                    missing = false;
                } else {
                    i = self.skip_ws_at(i + 1);
                    let next = self.char_at(i);
                    if next.is_some() && next != Some(':') {
                        missing = false;
                    }
                }
            }
        } else {
            i = self.skip_to_char(':', 1)?;
            if self.char_at(i).is_some() {
                // The next key/value pair is unquoted too.
                return Ok(true);
            }
            i = self.skip_ws_at(1);
            let j = self.skip_to_char('}', i)?;
            // Not right before a '}', or a '{' opened inside the string.
            if j - i > 1 || (self.char_at(j).is_some() && acc.braces > 0) {
                missing = false;
            }
        }
        Ok(missing)
    }

    /// In an object key, a `:` follows: is it the end of a key missing its
    /// closing quote?
    fn key_ends_here(&mut self, q: &Quotes) -> R<bool> {
        let mut i = self.skip_to_char(q.left, 1)?;
        if self.char_at(i).is_none() {
            return Ok(true);
        }
        i = self.skip_to_char(q.right, i + 1)?;
        if self.char_at(i).is_none() {
            return Ok(false);
        }
        i = self.skip_ws_at(i + 1);
        Ok(is_in(self.char_at(i), &[',', '}']))
    }

    /// Unquoted value, at a quote: is a `:` after the next quote?
    fn quote_starts_next_key(&mut self, q: &Quotes) -> bool {
        let mut i = 1;
        let mut next = self.char_at(i);
        while next.is_some_and(|c| c != q.right && c != q.left) {
            i += 1;
            next = self.char_at(i);
        }
        if next.is_none() {
            return false;
        }
        i = self.skip_ws_at(i + 1);
        self.char_at(i) == Some(':')
    }

    /// At a closing quote that may belong inside the string (`"a "b" c"`).
    /// Returns true when the quote is kept as a character.
    fn quote_is_misplaced(&mut self, q: &mut Quotes) -> R<bool> {
        let (left, right) = (q.left, q.right);
        let mut i: isize = 1;
        let mut next = self.char_at(i);
        let mut check_comma = true;
        while let Some(c) = next.filter(|&c| c != right && c != left) {
            if check_comma && is_alpha(c) {
                check_comma = false;
            }
            if (self.ctx.contains(Ctx::ObjectKey) && (c == ':' || c == '}'))
                || (self.ctx.contains(Ctx::ObjectValue) && c == '}')
                || (self.ctx.contains(Ctx::Array) && (c == ']' || c == ','))
                || (check_comma && self.current_is(Ctx::ObjectValue) && c == ',')
            {
                break;
            }
            i += 1;
            next = self.char_at(i);
        }
        if next == Some(',') && self.current_is(Ctx::ObjectValue) {
            i = self.skip_to_char(right, i + 1)?;
            i = self.skip_ws_at(i + 1);
            return Ok(is_in(self.char_at(i), &['}', ',']));
        }
        if !(next == Some(right) && self.char_at(i - 1) != Some('\\')) {
            return Ok(false);
        }
        // Only whitespace up to the next quote: this one closes the string.
        if (1..i).all(|j| none_or_space(self.char_at(j))) {
            return Ok(false);
        }
        if self.current_is(Ctx::ObjectValue) {
            i = self.skip_ws_at(i + 1);
            if self.char_at(i) == Some(',') {
                // "va"lue", "key": ... — the quote is part of the value.
                i = self.skip_to_char(left, i + 1)?;
                i = self.skip_to_char(right, i + 2)?;
                i = self.skip_ws_at(i + 1);
                if self.char_at(i) == Some(':') {
                    return Ok(true);
                }
            }
            i = self.skip_to_char(right, i + 1)?;
            i += 1;
            let mut next = self.char_at(i);
            while let Some(c) = next.filter(|&c| c != ':') {
                if matches!(c, ',' | ']' | '}') || (c == right && self.char_at(i - 1) != Some('\\'))
                {
                    break;
                }
                i += 1;
                next = self.char_at(i);
            }
            if next != Some(':') {
                q.unmatched = !q.unmatched;
                return Ok(true);
            }
            Ok(false)
        } else if self.current_is(Ctx::Array) {
            // ["bla "puppy" bla"]: an even number of quotes before the ']'.
            i = self.skip_to(Targets(right, Some(']')), i + 1)?;
            if self.char_at(i) != Some(right) {
                return Ok(false);
            }
            if self.pair_walk(right, i)? {
                return Ok(false);
            }
            q.unmatched = !q.unmatched;
            Ok(true)
        } else {
            Ok(self.current_is(Ctx::ObjectKey))
        }
    }
}

/// `not c or c.isspace()`.
fn none_or_space(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => is_space(c),
    }
}
