//! `JSONParser`: cursor, helpers, `parse_json` and the top-level `parse`.
//!
//! Positions follow Python: `index` counts code points, helper offsets are
//! relative to it, and a missing character (`get_char_at` returning `False`)
//! is `None`.
//!
//! Python frames are counted in `depth` so that inputs which make json_repair
//! raise `RecursionError` fail here too, at a bounded native stack depth.

use super::context::{Context, Ctx};
use super::fixes::{Fixes, JsonFix};
use super::text::{Targets, Text};
use super::unicode::{is_alnum, is_alpha, is_digit, is_space};
use super::RepairError;
use crate::pyjson::{PyStr, Value, PY_RECURSION_BUDGET};

pub(super) type R<T> = Result<T, RepairError>;

/// CPython's default recursion limit.
const PY_RECURSION_LIMIT: usize = 1000;

/// Loop iterations allowed per input byte, plus a floor: terminating inputs
/// use a few per character.
const STEPS_PER_CHAR: u64 = 64;
const STEPS_BASE: u64 = 100_000;

/// Frames already on the stack when upstream calls `repair_json` (the same
/// assumption the strict parser makes with [`PY_RECURSION_BUDGET`]).
const CALLER_FRAMES: usize = PY_RECURSION_LIMIT - PY_RECURSION_BUDGET;

/// `STRING_DELIMITERS`.
pub(super) fn is_delimiter(c: char) -> bool {
    matches!(c, '"' | '\'' | '“' | '”')
}

/// `c in [..]` for an optional character (`False` is in no list).
pub(super) fn is_in(c: Option<char>, set: &[char]) -> bool {
    c.is_some_and(|c| set.contains(&c))
}

pub(super) struct Parser {
    pub text: Text,
    pub index: usize,
    pub ctx: Context,
    depth: usize,
    /// Loop iterations left before the parse is declared non-terminating.
    steps_left: u64,
    /// What the repair changed so far (recorded where it changes it).
    pub fixes: Fixes,
    /// Skipping the word after a ``` fence (`json`), not prose.
    fence_word: bool,
    /// `{{` openings whose second `}` is still to come.
    pub open_doubles: usize,
    /// `{`/`[` skipped as junk whose closer is still to come.
    junk_opens: usize,
    /// Closers skipped as junk that belonged to a container still open.
    eaten_closers: usize,
    /// A quote was just taken as the separator between object members: the
    /// key that follows lost its opening quote to it.
    pub sep_quote: bool,
}

impl Parser {
    pub fn new(s: &str) -> Parser {
        Parser {
            text: Text::new(s),
            index: 0,
            ctx: Context::default(),
            // repair_json() and JSONParser.parse() frames on top of the caller.
            depth: CALLER_FRAMES + 2,
            steps_left: STEPS_PER_CHAR * (s.len() as u64 + 1) + STEPS_BASE,
            fixes: Fixes::default(),
            fence_word: false,
            open_doubles: 0,
            junk_opens: 0,
            eaten_closers: 0,
            sep_quote: false,
        }
    }

    /// Records a fix.
    pub fn fix(&mut self, fix: JsonFix) {
        self.fixes.insert(fix);
    }

    /// Records the end of the text reached inside a container: truncated,
    /// unless something inside was already found cut.
    pub fn fix_unclosed(&mut self) {
        if self.eaten_closers > 0 {
            // Its closer was there, skipped as junk (`{{}}`).
            self.eaten_closers -= 1;
        } else if !self.fixes.contains(JsonFix::Truncated) {
            self.fix(JsonFix::MissingClosing);
        }
    }

    /// A character outside any value that `parse_json` steps over.
    fn note_skipped(&mut self, c: char) {
        if c == '`' {
            self.fix(JsonFix::CodeFence);
            self.fence_word = true;
            return;
        }
        if self.fence_word && is_alnum(c) {
            return;
        }
        self.fence_word = false;
        if !self.note_junk_bracket(c) && !is_space(c) {
            self.fix(JsonFix::SurroundingText);
        }
    }

    /// A bracket skipped as junk: an opening is remembered; a closing
    /// balances one, or the second `}` of `{{ }}`, or is extra. Returns
    /// whether `c` was a bracket.
    pub fn note_junk_bracket(&mut self, c: char) -> bool {
        match c {
            '{' | '[' => self.junk_opens += 1,
            '}' | ']' if self.junk_opens > 0 => self.junk_opens -= 1,
            '}' if self.open_doubles > 0 => {
                self.open_doubles -= 1;
                self.eaten_closers += 1;
            }
            '}' | ']' => self.fix(JsonFix::ExtraClosing),
            _ => return false,
        }
        true
    }

    /// Counts one iteration of a parsing loop. json_repair 0.50.0 never
    /// terminates on some inputs (its cursor steps back and forth for ever,
    /// in Python too); past a budget far above what any terminating input
    /// needs, the parse gives up with [`RepairError::NoTermination`].
    pub fn tick(&mut self) -> R<()> {
        match self.steps_left.checked_sub(1) {
            Some(left) => {
                self.steps_left = left;
                Ok(())
            }
            None => Err(RepairError::NoTermination),
        }
    }

    /// Pushes `frames` Python frames. Fails like Python when the newest
    /// frame, or the builtin call it makes first, would pass the limit.
    pub fn enter(&mut self, frames: usize) -> R<()> {
        self.enter_reaching(frames, 1)
    }

    /// Like [`Parser::enter`], for a function whose helpers reach `reach`
    /// frames deeper than its own (a helper frame calling a builtin).
    pub fn enter_reaching(&mut self, frames: usize, reach: usize) -> R<()> {
        self.depth += frames;
        if self.depth + reach > PY_RECURSION_LIMIT {
            Err(RepairError::RecursionError)
        } else {
            Ok(())
        }
    }

    pub fn leave(&mut self, frames: usize) {
        self.depth -= frames;
    }

    /// `get_char_at(count)`.
    pub fn char_at(&self, count: isize) -> Option<char> {
        self.text.at(self.index as isize + count)
    }

    /// `skip_whitespaces_at()` moving the main index.
    pub fn skip_ws(&mut self) {
        self.index = self.text.skip_spaces(self.index);
    }

    /// `skip_whitespaces_at(idx, move_main_index=False)`.
    pub fn skip_ws_at(&mut self, idx: isize) -> isize {
        let start = self.index as isize + idx;
        if start < 0 {
            return idx;
        }
        self.text.skip_spaces(start as usize) as isize - self.index as isize
    }

    /// `skip_to_character(character, idx)`; each escaped hit it steps over is
    /// one more recursive Python call.
    pub fn skip_to(&mut self, targets: Targets, idx: isize) -> R<isize> {
        let start = self.index as isize + idx;
        if start < 0 {
            return Ok(idx);
        }
        let (pos, recursions) = self.text.find_unescaped(targets, start as usize);
        // The innermost call compares characters (a builtin call): one more.
        if self.depth + 2 + recursions > PY_RECURSION_LIMIT {
            return Err(RepairError::RecursionError);
        }
        Ok(pos as isize - self.index as isize)
    }

    /// From the quote at offset `idx`, skip `[quote, "]"]` hits two at a
    /// time while landing on a quote; true when that ends on a `]`.
    pub fn pair_walk(&mut self, right: char, idx: isize) -> R<bool> {
        let from = (self.index as isize + idx).max(0) as usize;
        let (lands_on_bracket, skipped) = self.text.pair_walk(right, from);
        if self.depth + 2 + skipped > PY_RECURSION_LIMIT {
            return Err(RepairError::RecursionError);
        }
        Ok(lands_on_bracket)
    }

    /// `skip_to_character` for a single character.
    pub fn skip_to_char(&mut self, c: char, idx: isize) -> R<isize> {
        self.skip_to(Targets(c, None), idx)
    }

    /// `JSONParser.parse`: parse values until the text is used up; several
    /// values become a list, and a value shaped like the previous one
    /// replaces it.
    pub fn parse(&mut self) -> R<Value> {
        let first = self.parse_json()?;
        if self.index >= self.text.len() {
            return Ok(first);
        }
        let mut values = vec![first];
        while self.index < self.text.len() {
            self.tick()?;
            let j = self.parse_json()?;
            if is_empty_str(&j) {
                self.index += 1;
                continue;
            }
            self.fix(JsonFix::Concatenated);
            if let Some(last) = values.last() {
                if self.is_same_object(last, &j)? {
                    values.pop();
                }
            }
            values.push(j);
        }
        if values.len() == 1 {
            Ok(values.pop().unwrap_or(Value::Null))
        } else {
            Ok(Value::List(values))
        }
    }

    /// `parse_json`: dispatch on the next meaningful character.
    pub fn parse_json(&mut self) -> R<Value> {
        self.enter(1)?;
        let result = self.parse_json_body();
        self.leave(1);
        result
    }

    fn parse_json_body(&mut self) -> R<Value> {
        loop {
            self.tick()?;
            let Some(c) = self.char_at(0) else {
                return Ok(empty_str());
            };
            let in_value = !self.ctx.is_empty();
            if c == '{' {
                self.index += 1;
                return self.parse_object();
            } else if c == '[' {
                self.index += 1;
                return self.parse_array();
            } else if in_value && (is_delimiter(c) || is_alpha(c)) {
                return self.parse_string();
            } else if in_value && (is_digit(c) || c == '-' || c == '.') {
                return self.parse_number();
            } else if c == '#' || c == '/' {
                return self.parse_comment();
            }
            if !in_value {
                self.note_skipped(c);
            } else if c == '+' && self.char_at(1).is_some_and(is_digit) {
                // JSON numbers have no `+`: it is dropped.
                self.fix(JsonFix::InvalidNumber);
            }
            self.index += 1;
        }
    }

    /// Runs a `parse_*` method reached through its `JSONParser` wrapper
    /// (two Python frames); see [`Parser::enter_reaching`] for `reach`.
    pub fn call2(&mut self, f: fn(&mut Parser) -> R<Value>, reach: usize) -> R<Value> {
        self.enter_reaching(2, reach)?;
        let result = f(self);
        self.leave(2);
        result
    }

    pub fn current_is(&self, c: Ctx) -> bool {
        self.ctx.current() == Some(c)
    }
}

pub(super) fn empty_str() -> Value {
    Value::Str(PyStr::new())
}

/// `value == ""`.
pub(super) fn is_empty_str(v: &Value) -> bool {
    matches!(v, Value::Str(s) if s.is_empty())
}
