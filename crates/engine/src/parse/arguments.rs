//! Turning a tool call's `arguments` text into a value, as upstream does.

use serde::{Deserialize, Serialize};

use super::json_repair::{self, Fixes};
use crate::pyjson::{self, Dict, PyStr, StrictError, Value};

/// Which step of the argument parser produced the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JsonPath {
    /// `json.loads` accepted the text.
    Strict,
    /// json_repair's output was used.
    Repaired,
    /// The Chat Completions fallback (quotes, None/True/False replaced) parsed.
    Lenient,
    /// Nothing parsed: arguments are `{"error": …, "raw": …}`.
    Failed,
}

impl JsonPath {
    pub const ALL: [JsonPath; 4] = [
        JsonPath::Strict,
        JsonPath::Repaired,
        JsonPath::Lenient,
        JsonPath::Failed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JsonPath::Strict => "strict",
            JsonPath::Repaired => "repaired",
            JsonPath::Lenient => "lenient",
            JsonPath::Failed => "failed",
        }
    }
}

/// An exception that escapes the argument parser (and so the whole response
/// parser): upstream only catches `JSONDecodeError` around `json.loads`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParserRaised(pub String);

impl From<StrictError> for ParserRaised {
    fn from(e: StrictError) -> Self {
        ParserRaised(e.to_string())
    }
}

/// Parsed arguments: the value, the path that produced it and, for the
/// `repaired` path, what json_repair fixed (empty otherwise).
pub type ParsedArguments = (Value, JsonPath, Fixes);

/// `safe_json_loads`: strict, then json_repair, then the error object.
pub fn safe_json_loads(text: &str) -> Result<ParsedArguments, ParserRaised> {
    let none = Fixes::default();
    match pyjson::loads(text) {
        Ok(v) => Ok((v, JsonPath::Strict, none)),
        Err(StrictError::Decode { .. }) => Ok(match json_repair::repair_and_load_fixed(text) {
            Ok((v, fixes)) => (v, JsonPath::Repaired, fixes),
            Err(_) => (failed_arguments(text), JsonPath::Failed, none),
        }),
        Err(other) => Err(other.into()),
    }
}

/// The Chat Completions path: strict, then a blunt textual fix, then the error object.
pub fn lenient_json_loads(text: &str) -> Result<ParsedArguments, ParserRaised> {
    let none = Fixes::default();
    match pyjson::loads(text) {
        Ok(v) => return Ok((v, JsonPath::Strict, none)),
        Err(StrictError::Decode { .. }) => {}
        Err(other) => return Err(other.into()),
    }
    let fixed = text
        .replace('\'', "\"")
        .replace("None", "null")
        .replace("True", "true")
        .replace("False", "false");
    match pyjson::loads(&fixed) {
        Ok(v) => Ok((v, JsonPath::Lenient, none)),
        Err(StrictError::Decode { .. }) => Ok((failed_arguments(text), JsonPath::Failed, none)),
        Err(other) => Err(other.into()),
    }
}

/// `{"error": "Failed to parse arguments", "raw": text}`.
pub fn failed_arguments(text: &str) -> Value {
    let mut d = Dict::default();
    d.insert(
        PyStr::from("error"),
        Value::str("Failed to parse arguments"),
    );
    d.insert(PyStr::from("raw"), Value::str(text));
    Value::Dict(d)
}

/// `filter_none_values`: drops `None` values from a dict. Returns whether any was dropped.
pub fn filter_none_values(arguments: &mut Value) -> bool {
    match arguments {
        Value::Dict(d) => {
            let before = d.len();
            d.retain(|_, v| *v != Value::Null);
            d.len() != before
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_path_replaces_python_literals() {
        let (v, path, _) = lenient_json_loads("{'q': 'x', 'gl': None}").unwrap();
        assert_eq!(path, JsonPath::Lenient);
        assert_eq!(pyjson::dump(&v), r#"{"q": "x", "gl": null}"#);
        let (v, path, _) = lenient_json_loads("{'q': 'it's'}").unwrap();
        assert_eq!(path, JsonPath::Failed);
        assert_eq!(v.as_dict().map(|d| d.len()), Some(2));
    }

    #[test]
    fn strict_errors_other_than_decode_escape() {
        let deep = "[".repeat(5000);
        assert!(safe_json_loads(&deep).is_err());
        assert!(lenient_json_loads(&"1".repeat(5000)).is_err());
    }

    #[test]
    fn none_values_are_filtered_in_dicts_only() {
        let mut v = pyjson::loads(r#"{"a": null, "b": [null]}"#).unwrap();
        assert!(filter_none_values(&mut v));
        assert_eq!(pyjson::dump(&v), r#"{"b": [null]}"#);
        let mut l = pyjson::loads("[null]").unwrap();
        assert!(!filter_none_values(&mut l));
    }
}
