//! A port of Python's `json_repair.repair_json(s, ensure_ascii=False)`, the
//! fallback of MiroThinker's `safe_json_loads`.
//!
//! This module follows the algorithm of json_repair 0.50.0 by Stefano
//! Baccianella (MIT licence), function by function: `parser` (cursor and
//! `parse_json`), `object`, `array`, `string`, `number`, `comment`,
//! `literal` (`parse_boolean_or_null`), `context` and `compare`
//! (`ObjectComparer`). Python behaviour is kept where it shows in results:
//!
//! - the text is indexed by code point, and character classes are Python's
//!   Unicode-wide `str.isalpha`/`isalnum`/`isdigit`/`isspace` (`unicode`);
//! - `\uXXXX` escapes in repaired strings become one code point each, so
//!   surrogate pairs stay two code points ([`PyStr`](crate::pyjson::PyStr));
//! - numbers follow Python's `int()`/`float()` (big ints, `1e999` is
//!   infinity, more than 4300 digits stays text);
//! - the exceptions json_repair raises (`IndexError` on `['], 1`,
//!   `RecursionError` on deep nesting or on long runs of escaped quotes) are
//!   reported as [`RepairError`]. Python frames are counted (the caller is
//!   taken to be 40 frames deep, as for the strict parser; thresholds match
//!   CPython 3.11 to within a frame), so the native stack stays bounded
//!   whatever the input.
//!
//! Scans that Python repeats from the same place are cached (`text`), so
//! long runs of quotes, backslashes or braces take linear time.

mod array;
mod comment;
mod compare;
mod context;
mod fixes;
mod literal;
mod number;
mod object;
mod pairs;
mod parser;
mod string;
mod text;
mod unicode;

use crate::pyjson::{self, StrictError, Value};
pub use fixes::{Fixes, JsonFix};

/// Outcome of json_repair for one input string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RepairError {
    /// Python's `IndexError` (json_repair reads `string_acc[-1]` of an empty string).
    #[error("IndexError: string index out of range")]
    IndexError,
    /// Python's `RecursionError`: nesting or escaped-quote runs too deep.
    #[error("RecursionError: maximum recursion depth exceeded")]
    RecursionError,
    /// `ValueError` from the initial `json.loads` (an integer over 4300 digits).
    #[error("ValueError: Exceeds the limit (4300 digits) for integer string conversion")]
    ValueError,
    /// json_repair 0.50.0 loops for ever on this input (Python too): upstream
    /// would hang here. Treated as a failed parse.
    #[error("json_repair does not terminate on this input")]
    NoTermination,
    /// repair_json returned `""`, which `json.loads` rejects.
    #[error("JSONDecodeError: Expecting value: line 1 column 1 (char 0)")]
    JsonDecodeError,
}

/// `json.loads(repair_json(text, ensure_ascii=False))`: Ok(value) when that succeeds,
/// Err when repair_json raises or returns text json.loads rejects (e.g. "").
pub fn repair_and_load(text: &str) -> Result<Value, RepairError> {
    repair_and_load_fixed(text).map(|(value, _)| value)
}

/// [`repair_and_load`] with the fixes the repair made (none when
/// `json.loads` alone accepted the text).
pub fn repair_and_load_fixed(text: &str) -> Result<(Value, Fixes), RepairError> {
    match repair_value(text)? {
        (Value::Str(s), _) if s.is_empty() => Err(RepairError::JsonDecodeError),
        // `json.dumps` then `json.loads` gives back an equal value.
        repaired => Ok(repaired),
    }
}

/// `repair_json(text, ensure_ascii=False)`: exactly the text Python returns
/// (`""` when nothing was found).
pub fn repair_json(text: &str) -> Result<String, RepairError> {
    match repair_value(text)? {
        (Value::Str(s), _) if s.is_empty() => Ok(String::new()),
        (value, _) => Ok(pyjson::dump(&value)),
    }
}

/// The object repair_json would serialise: `json.loads(text)` when that
/// works, else the repairing parser's result.
fn repair_value(text: &str) -> Result<(Value, Fixes), RepairError> {
    match pyjson::loads(text) {
        Ok(value) => Ok((value, Fixes::default())),
        Err(StrictError::Decode { .. }) => {
            let mut parser = parser::Parser::new(text);
            let value = parser.parse()?;
            Ok((value, parser.fixes))
        }
        Err(StrictError::Recursion) => Err(RepairError::RecursionError),
        Err(StrictError::IntTooLong) => Err(RepairError::ValueError),
    }
}

#[cfg(test)]
mod tests;
