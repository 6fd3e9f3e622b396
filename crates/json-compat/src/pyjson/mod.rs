//! JSON values with Python's semantics.
//!
//! Upstream parses tool arguments with CPython's `json` module (and json_repair,
//! which builds Python objects). Python values differ from what serde_json can
//! hold in three ways that change verdicts: integers of any size, non-finite
//! floats (`NaN`, `Infinity`), and strings holding lone UTF-16 surrogate code
//! points (`"\ud83d"`). This module models exactly that value space, parses it
//! strictly like `json.loads` ([`loads`], [`raw_decode`]), and writes it like `json.dumps`
//! ([`dump`]).

mod dump;
mod parse;
mod pystr;

pub use dump::{dump, dump_to, float_repr};
pub use parse::{loads, raw_decode, StrictError, PY_RECURSION_BUDGET};
pub use pystr::PyStr;

use indexmap::IndexMap;

/// A Python `dict` from JSON: insertion-ordered, a repeated key keeps its
/// first position and takes the last value.
/// A dict; foldhash (randomly seeded, as Python's str hash) instead of SipHash: faster on the short keys JSON has.
pub type Dict = IndexMap<PyStr, Value, foldhash::fast::RandomState>;

/// A Python integer: machine-sized when it fits, else its canonical decimal text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Int {
    Small(i64),
    /// Canonical decimal digits with an optional leading `-`; never fits in i64.
    Big(Box<str>),
}

impl Int {
    /// Parses an integer literal made of an optional `-`/`+` and ASCII digits
    /// (leading zeros allowed, as Python's `int()` accepts them).
    pub fn from_decimal(text: &str) -> Option<Int> {
        let (neg, digits) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let trimmed = digits.trim_start_matches('0');
        if trimmed.is_empty() {
            return Some(Int::Small(0));
        }
        let canonical = if neg {
            format!("-{trimmed}")
        } else {
            trimmed.to_string()
        };
        Some(match canonical.parse::<i64>() {
            Ok(v) => Int::Small(v),
            Err(_) => Int::Big(canonical.into_boxed_str()),
        })
    }

    /// The value as a float, as Python's `float(int)` would give for sane sizes.
    pub fn to_f64(&self) -> f64 {
        match self {
            Int::Small(v) => *v as f64,
            Int::Big(s) => s.parse::<f64>().unwrap_or(f64::NAN),
        }
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Int::Small(v) => write!(f, "{v}"),
            Int::Big(s) => f.write_str(s),
        }
    }
}

/// A JSON value as CPython's `json` module (and json_repair) produce it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(Int),
    Float(f64),
    Str(PyStr),
    List(Vec<Value>),
    Dict(Dict),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(PyStr::from(s))
    }

    pub fn as_dict(&self) -> Option<&Dict> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    pub fn as_pystr(&self) -> Option<&PyStr> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python's type name, as it appears in exception messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
        }
    }

    /// Python truthiness (`bool(value)`).
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != Int::Small(0),
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.is_empty(),
        }
    }

    /// Equality as Python's `==` sees it: numbers compare by value across int
    /// and float (but a bool is never equal to a number here), NaN equals NaN
    /// (useful for tests; Python's identity shortcut often does the same).
    pub fn py_eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Int(a), Float(b)) | (Float(b), Int(a)) => a.to_f64() == *b,
            (List(a), List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y)),
            (Dict(a), Dict(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v.py_eq(w)))
            }
            _ => self == other,
        }
    }

    /// Converts a serde_json value (always representable).
    pub fn from_serde(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(Int::Small(i))
                } else if let Some(u) = n.as_u64() {
                    Value::Int(Int::Big(u.to_string().into_boxed_str()))
                } else {
                    Value::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Value::str(s),
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from_serde).collect()),
            serde_json::Value::Object(o) => Value::Dict(
                o.iter()
                    .map(|(k, v)| (PyStr::from(k.as_str()), Value::from_serde(v)))
                    .collect(),
            ),
        }
    }

    /// Converts to serde_json, lossily: lone surrogates become U+FFFD,
    /// non-finite floats become `null`, big integers become floats.
    /// [`Value::to_serde_lossy`], except that the top-level string values
    /// of `id_keys` keep their surrogates as escapes
    /// ([`PyStr::to_string_escaping_surrogates`]): records whose ids differ
    /// only in lone surrogates stay apart, as in Python; and that an
    /// integer too big for 64 bits under one of `id_keys`, at any depth
    /// (a 128-bit OpenTelemetry trace id), becomes its digits as a string
    /// rather than a float: ids keep every digit.
    pub fn to_serde_keeping_ids(&self, id_keys: &[&str]) -> serde_json::Value {
        let mut value = self.to_serde_lossy();
        self.keep_big_ids(&mut value, id_keys);
        if let (Value::Dict(d), serde_json::Value::Object(obj)) = (self, &mut value) {
            for (k, v) in d.iter() {
                let Value::Str(s) = v else { continue };
                let key = k.to_string_lossy();
                if s.has_surrogates() && id_keys.contains(&&*key) {
                    obj.insert(
                        key.into_owned(),
                        serde_json::Value::String(s.to_string_escaping_surrogates().into_owned()),
                    );
                }
            }
        }
        value
    }

    /// Writes the big integers under `id_keys` of `self` into `value` (its
    /// lossy conversion) as their digits.
    fn keep_big_ids(&self, value: &mut serde_json::Value, id_keys: &[&str]) {
        match (self, value) {
            (Value::Dict(d), serde_json::Value::Object(obj)) => {
                for (k, v) in d.iter() {
                    let key = k.to_string_lossy();
                    let Some(slot) = obj.get_mut(&*key) else {
                        continue;
                    };
                    match v {
                        Value::Int(Int::Big(digits))
                            if id_keys.contains(&&*key) && digits.parse::<u64>().is_err() =>
                        {
                            *slot = serde_json::Value::String(digits.to_string());
                        }
                        Value::Dict(_) | Value::List(_) => v.keep_big_ids(slot, id_keys),
                        _ => {}
                    }
                }
            }
            (Value::List(items), serde_json::Value::Array(slots)) => {
                for (v, slot) in items.iter().zip(slots) {
                    if matches!(v, Value::Dict(_) | Value::List(_)) {
                        v.keep_big_ids(slot, id_keys);
                    }
                }
            }
            _ => {}
        }
    }

    pub fn to_serde_lossy(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(Int::Small(i)) => serde_json::Value::from(*i),
            Value::Int(Int::Big(s)) => s
                .parse::<u64>()
                .map(serde_json::Value::from)
                .unwrap_or_else(|_| {
                    serde_json::Number::from_f64(self_to_f64(s))
                        .map(serde_json::Value::Number)
                        .unwrap_or(serde_json::Value::Null)
                }),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => serde_json::Value::String(s.to_string_lossy().into_owned()),
            Value::List(l) => {
                serde_json::Value::Array(l.iter().map(Value::to_serde_lossy).collect())
            }
            Value::Dict(d) => serde_json::Value::Object(
                d.iter()
                    .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_serde_lossy()))
                    .collect(),
            ),
        }
    }
}

fn self_to_f64(s: &str) -> f64 {
    s.parse::<f64>().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_canonical_forms() {
        assert_eq!(Int::from_decimal("007"), Some(Int::Small(7)));
        assert_eq!(Int::from_decimal("-0"), Some(Int::Small(0)));
        assert_eq!(Int::from_decimal("+12"), Some(Int::Small(12)));
        assert_eq!(
            Int::from_decimal("123456789012345678901234567890"),
            Some(Int::Big("123456789012345678901234567890".into()))
        );
        assert_eq!(Int::from_decimal("1_0"), None);
        assert_eq!(Int::from_decimal("-"), None);
    }

    #[test]
    fn big_integer_ids_keep_their_digits_at_any_depth() {
        let text = r#"{"trace_id": 122081058235536943924732489686782150775,
            "spans": [{"context": {"trace_id": 122081058235536943924732489686782150776, "span_id": 18446744073709551615}}],
            "count": 122081058235536943924732489686782150777}"#;
        let v = loads(text)
            .unwrap()
            .to_serde_keeping_ids(&["trace_id", "span_id"]);
        assert_eq!(v["trace_id"], "122081058235536943924732489686782150775");
        let context = &v["spans"][0]["context"];
        assert_eq!(
            context["trace_id"],
            "122081058235536943924732489686782150776"
        );
        // What fits in 64 bits stays a number; what is not an id, a float.
        assert_eq!(context["span_id"], serde_json::json!(u64::MAX));
        assert!(v["count"].is_f64());
    }

    #[test]
    fn truthiness_follows_python() {
        assert!(!Value::str("").truthy());
        assert!(Value::str("0").truthy());
        assert!(!Value::Int(Int::Small(0)).truthy());
        assert!(!Value::Float(0.0).truthy());
        assert!(Value::Float(f64::NAN).truthy());
        assert!(!Value::List(vec![]).truthy());
    }

    #[test]
    fn py_eq_crosses_int_and_float() {
        assert!(Value::Int(Int::Small(1)).py_eq(&Value::Float(1.0)));
        assert!(!Value::Bool(true).py_eq(&Value::Int(Int::Small(1))));
        assert!(Value::Float(f64::NAN).py_eq(&Value::Float(f64::NAN)));
    }
}
