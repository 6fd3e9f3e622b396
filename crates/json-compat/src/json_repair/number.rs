//! `parse_number`, with Python's `int()` and `float()` rules.

use super::context::Ctx;
use super::fixes::JsonFix;
use super::parser::{Parser, R};
use super::unicode::is_alpha;
use crate::pyjson::{Int, PyStr, Value};

/// `NUMBER_CHARS`.
fn is_number_char(c: char) -> bool {
    matches!(c, '0'..='9' | '-' | '.' | 'e' | 'E' | '/' | ',')
}

/// CPython 3.11's limit on digits in `int(str)`.
const INT_MAX_STR_DIGITS: usize = 4300;

impl Parser {
    pub(super) fn parse_number(&mut self) -> R<Value> {
        self.call2(Parser::parse_number_body, 1)
    }

    fn parse_number_body(&mut self) -> R<Value> {
        let mut number = String::new();
        let is_array = self.current_is(Ctx::Array);
        while let Some(c) = self
            .char_at(0)
            .filter(|&c| is_number_char(c) && (!is_array || c != ','))
        {
            number.push(c);
            self.index += 1;
        }
        if number.ends_with(['-', 'e', 'E', '/', ',']) {
            // Not a valid last character for a number: give it back.
            // (A `,` is the separator after it, not part of the number.)
            if !number.ends_with(',') {
                self.fix(JsonFix::InvalidNumber);
            }
            number.pop();
            self.index = self.index.saturating_sub(1);
        } else if self.char_at(0).is_some_and(is_alpha) {
            // A word that starts with digits: read it as a string instead.
            self.index = self.index.saturating_sub(number.len());
            return self.parse_string();
        }
        if number.contains(',') {
            return Ok(Value::Str(PyStr::from(number)));
        }
        let digits = number.strip_prefix('-').unwrap_or(&number).as_bytes();
        if digits.len() > 1 && digits[0] == b'0' && digits[1].is_ascii_digit() {
            // A leading zero, which JSON forbids (Python's int() reads it).
            self.fix(JsonFix::InvalidNumber);
        }
        let parsed = if number.contains(['.', 'e', 'E']) {
            py_float(&number).map(Value::Float)
        } else {
            py_int(&number).map(Value::Int)
        };
        // Python's ValueError: keep the text.
        Ok(parsed.unwrap_or_else(|| {
            self.fix(JsonFix::InvalidNumber);
            Value::Str(PyStr::from(number))
        }))
    }
}

/// Python's `float(s)` for text made of `NUMBER_CHARS` (no `+`, no spaces).
fn py_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(k) => (&body[..k], Some(&body[k + 1..])),
        None => (body, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok =
        digits(int_part) && digits(frac_part) && !(int_part.is_empty() && frac_part.is_empty());
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix('-').unwrap_or(e);
            !e.is_empty() && digits(e)
        }
    };
    if !mantissa_ok || !exponent_ok {
        return None;
    }
    s.parse::<f64>().ok()
}

/// Python's `int(s)` for text made of `NUMBER_CHARS`.
fn py_int(s: &str) -> Option<Int> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.len() > INT_MAX_STR_DIGITS {
        return None;
    }
    Int::from_decimal(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_follows_python() {
        assert_eq!(py_float("5."), Some(5.0));
        assert_eq!(py_float(".5"), Some(0.5));
        assert_eq!(py_float("-.5e-1"), Some(-0.05));
        assert_eq!(py_float("1.e3"), Some(1000.0));
        assert_eq!(py_float("1e999"), Some(f64::INFINITY));
        assert_eq!(py_float("."), None);
        assert_eq!(py_float("1.2.3"), None);
        assert_eq!(py_float("1e5/2"), None);
        assert_eq!(py_float("e5"), None);
        assert_eq!(py_float("--1.0"), None);
    }

    #[test]
    fn int_follows_python() {
        assert_eq!(py_int("-007"), Some(Int::Small(-7)));
        assert_eq!(py_int(""), None);
        assert_eq!(py_int("1-2"), None);
        assert_eq!(py_int("2024/01"), None);
        assert!(py_int(&"9".repeat(4300)).is_some());
        assert_eq!(py_int(&"0".repeat(4301)), None);
        assert!(py_int(&format!("-{}", "1".repeat(4300))).is_some());
    }
}
