//! A strict parser with CPython `json.loads` semantics (the C scanner, `strict=True`).
//!
//! Accepts what Python accepts and nothing else: `NaN`/`Infinity`/`-Infinity`,
//! integers of any size (up to CPython 3.11's 4300-digit conversion limit),
//! lone surrogate escapes, duplicate keys (last value wins, first position
//! kept). Rejects control characters inside strings, trailing commas, and
//! whitespace other than space, tab, LF and CR.

use super::{Dict, Int, PyStr, Value};

/// Nesting depth at which CPython raises `RecursionError`. The exact point
/// depends on how deep the caller's stack already is (the recursion limit
/// is 1000 frames, shared with the interpreter); upstream calls `json.loads`
/// a few dozen frames deep.
pub const PY_RECURSION_BUDGET: usize = 960;

/// CPython 3.11 refuses to convert integer strings longer than this.
const INT_MAX_STR_DIGITS: usize = 4300;

/// Why `json.loads` did not return a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrictError {
    /// `json.JSONDecodeError`: the text is not JSON. Callers fall back to repair.
    #[error("JSONDecodeError: {msg} (char {pos})")]
    Decode { msg: &'static str, pos: usize },
    /// `RecursionError`: nested too deep. Not a JSONDecodeError, so it escapes
    /// upstream's `except json.JSONDecodeError`.
    #[error("RecursionError: maximum recursion depth exceeded while decoding a JSON document")]
    Recursion,
    /// `ValueError`: an integer literal over CPython's digit limit.
    #[error("ValueError: Exceeds the limit (4300 digits) for integer string conversion")]
    IntTooLong,
}

/// Parses `text` exactly as `json.loads(text)` would.
pub fn loads(text: &str) -> Result<Value, StrictError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        depth: 0,
    };
    p.skip_ws();
    let v = p.value()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(p.err("Extra data"));
    }
    Ok(v)
}

/// Parses the JSON value at the start of `text` (after white space) as
/// Python's `JSONDecoder.raw_decode` would, and returns it with the byte
/// offset where it ends: a document among several one after another.
pub fn raw_decode(text: &str) -> Result<(Value, usize), StrictError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        depth: 0,
    };
    p.skip_ws();
    let v = p.value()?;
    Ok((v, p.i))
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, msg: &'static str) -> StrictError {
        StrictError::Decode { msg, pos: self.i }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Value, StrictError> {
        match self.peek() {
            Some(b'"') => {
                self.i += 1;
                Ok(Value::Str(self.string()?))
            }
            Some(b'{') => {
                self.enter()?;
                let r = self.object();
                self.depth -= 1;
                r
            }
            Some(b'[') => {
                self.enter()?;
                let r = self.array();
                self.depth -= 1;
                r
            }
            Some(b'n') if self.eat_word("null") => Ok(Value::Null),
            Some(b't') if self.eat_word("true") => Ok(Value::Bool(true)),
            Some(b'f') if self.eat_word("false") => Ok(Value::Bool(false)),
            Some(b'N') if self.eat_word("NaN") => Ok(Value::Float(f64::NAN)),
            Some(b'I') if self.eat_word("Infinity") => Ok(Value::Float(f64::INFINITY)),
            Some(b'-') if self.s[self.i..].starts_with(b"-Infinity") => {
                self.i += 9;
                Ok(Value::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("Expecting value")),
        }
    }

    fn enter(&mut self) -> Result<(), StrictError> {
        self.depth += 1;
        if self.depth > PY_RECURSION_BUDGET {
            return Err(StrictError::Recursion);
        }
        self.i += 1;
        Ok(())
    }

    fn number(&mut self) -> Result<Value, StrictError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.i += 1;
                }
            }
            _ => {
                self.i = start;
                return Err(self.err("Expecting value"));
            }
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') && matches!(self.s.get(self.i + 1), Some(b'0'..=b'9')) {
            is_float = true;
            self.i += 1;
            while let Some(b'0'..=b'9') = self.peek() {
                self.i += 1;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            let mut j = self.i + 1;
            if let Some(b'+' | b'-') = self.s.get(j) {
                j += 1;
            }
            if matches!(self.s.get(j), Some(b'0'..=b'9')) {
                while let Some(b'0'..=b'9') = self.s.get(j) {
                    j += 1;
                }
                is_float = true;
                self.i = j;
            }
        }
        let lit = &self.text[start..self.i];
        if is_float {
            // Rust's parser agrees with Python's float() on every JSON literal,
            // including overflow to infinity.
            Ok(Value::Float(lit.parse::<f64>().unwrap_or(f64::NAN)))
        } else {
            let digits = lit.len() - usize::from(lit.starts_with('-'));
            if digits > INT_MAX_STR_DIGITS {
                return Err(StrictError::IntTooLong);
            }
            Int::from_decimal(lit)
                .map(Value::Int)
                .ok_or_else(|| self.err("Expecting value"))
        }
    }

    /// Parses a string body; the opening quote is consumed.
    fn string(&mut self) -> Result<PyStr, StrictError> {
        let mut out = PyStr::new();
        loop {
            let run_start = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            let run = &self.text[run_start..self.i];
            match self.peek() {
                None => return Err(self.err("Unterminated string starting at")),
                Some(b'"') => {
                    self.i += 1;
                    // Most strings have no escape: one exact allocation.
                    if out.is_empty() {
                        return Ok(PyStr::from(run));
                    }
                    out.push_str(run);
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(run);
                    self.i += 1;
                    let esc = self
                        .peek()
                        .ok_or_else(|| self.err("Unterminated string starting at"))?;
                    self.i += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..=0xDBFF).contains(&cp)
                                && self.s.get(self.i) == Some(&b'\\')
                                && self.s.get(self.i + 1) == Some(&b'u')
                            {
                                let save = self.i;
                                self.i += 2;
                                let low = self.hex4()?;
                                if (0xDC00..=0xDFFF).contains(&low) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                                } else {
                                    self.i = save;
                                }
                            }
                            out.push_code_point(cp);
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("Invalid \\escape"));
                        }
                    }
                }
                Some(_) => return Err(self.err("Invalid control character at")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, StrictError> {
        let digits = self
            .s
            .get(self.i..self.i + 4)
            .ok_or_else(|| self.err("Invalid \\uXXXX escape"))?;
        let mut cp = 0u32;
        for &d in digits {
            let v = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.err("Invalid \\uXXXX escape"))?;
            cp = cp * 16 + v;
        }
        self.i += 4;
        Ok(cp)
    }

    fn object(&mut self) -> Result<Value, StrictError> {
        let mut dict = Dict::default();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Dict(dict));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("Expecting property name enclosed in double quotes"));
            }
            self.i += 1;
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.err("Expecting ':' delimiter"));
            }
            self.i += 1;
            self.skip_ws();
            let v = self.value()?;
            dict.insert(key, v);
            self.skip_ws();
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Dict(dict));
                }
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                _ => return Err(self.err("Expecting ',' delimiter")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, StrictError> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::List(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::List(items));
                }
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws();
                }
                _ => return Err(self.err("Expecting ',' delimiter")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Value {
        loads(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn decode_err(s: &str) -> bool {
        matches!(loads(s), Err(StrictError::Decode { .. }))
    }

    #[test]
    fn raw_decode_stops_after_one_value() {
        let (v, end) = raw_decode(" {\"x\": NaN} {\"y\": 1}").unwrap();
        assert!(v.as_dict().is_some());
        assert_eq!(end, 11);
        assert!(raw_decode("{\"x\": ").is_err());
    }

    #[test]
    fn accepts_python_extensions() {
        assert!(matches!(ok("NaN"), Value::Float(f) if f.is_nan()));
        assert_eq!(
            ok("[Infinity, -Infinity]"),
            Value::List(vec![
                Value::Float(f64::INFINITY),
                Value::Float(f64::NEG_INFINITY)
            ])
        );
        assert_eq!(ok("1e400"), Value::Float(f64::INFINITY));
        assert_eq!(
            ok("123456789012345678901234567890"),
            Value::Int(Int::Big("123456789012345678901234567890".into()))
        );
        let s = ok(r#""\ud83d x""#);
        assert_eq!(
            s.as_pystr().map(|s| s.code_points().collect::<Vec<_>>()),
            Some(vec![0xD83D, 0x20, 0x78])
        );
        let pair = ok(r#""\ud83d\ude00""#);
        assert_eq!(pair, Value::str("😀"));
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        let v = ok(r#"{"a": 1, "b": 2, "a": 3}"#);
        let d = v.as_dict().unwrap();
        assert_eq!(
            d.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        assert_eq!(d[&PyStr::from("a")], Value::Int(Int::Small(3)));
    }

    #[test]
    fn rejects_what_python_rejects() {
        for bad in [
            "",
            " ",
            "{'a': 1}",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "1e",
            "\"a\tb\"",
            "\"\\x41\"",
            "None",
            "True",
            "\u{feff}{}",
            "\u{a0}1",
            "-",
            "{\"a\" 1}",
            "[1 2]",
            "\"abc",
            "nul",
        ] {
            assert!(decode_err(bad), "{bad:?} should not parse");
        }
    }

    #[test]
    fn numbers_keep_int_and_float_apart() {
        assert_eq!(ok("-0"), Value::Int(Int::Small(0)));
        assert_eq!(ok("1.0"), Value::Float(1.0));
        assert_eq!(ok("1E2"), Value::Float(100.0));
        assert_eq!(ok(" \n42\r\t"), Value::Int(Int::Small(42)));
    }

    #[test]
    fn limits_raise_other_errors() {
        let deep = "[".repeat(PY_RECURSION_BUDGET + 1) + &"]".repeat(PY_RECURSION_BUDGET + 1);
        assert_eq!(loads(&deep), Err(StrictError::Recursion));
        let ok_depth = "[".repeat(100) + &"]".repeat(100);
        assert!(loads(&ok_depth).is_ok());
        assert_eq!(loads(&"9".repeat(4301)), Err(StrictError::IntTooLong));
        assert!(loads(&"9".repeat(4300)).is_ok());
    }
}
