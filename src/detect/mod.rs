//! Detectors that decide rollbacks: duplicate-query fingerprints and bad tool results.

use serde::Serialize;

use crate::policy::{MatchMode, Policy};
use crate::pyjson::{self, PyStr, StrictError, Value};
use crate::read::ToolResult;

/// Why an attempt rolled back (or ended the loop at the limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    FormatError,
    Refusal,
    DuplicateQuery,
    UnknownTool,
    ToolError,
    EmptySearch,
}

impl Reason {
    pub const ALL: [Reason; 6] = [
        Reason::FormatError,
        Reason::Refusal,
        Reason::DuplicateQuery,
        Reason::UnknownTool,
        Reason::ToolError,
        Reason::EmptySearch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::FormatError => "format_error",
            Reason::Refusal => "refusal",
            Reason::DuplicateQuery => "duplicate_query",
            Reason::UnknownTool => "unknown_tool",
            Reason::ToolError => "tool_error",
            Reason::EmptySearch => "empty_search",
        }
    }

    pub fn from_name(name: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// An exception upstream raises inside its per-call `try`: the call fails,
/// nothing rolls back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallRaised(pub String);

/// Upstream's duplicate-query fingerprint (`get_query_str_from_tool_call`):
/// `None` for tools without one.
pub fn query_fingerprint(tool_name: &str, arguments: &Value) -> Result<Option<PyStr>, CallRaised> {
    let keys: &[&str] = match tool_name {
        "search_and_browse" => &["subtask"],
        "google_search" => &["q"],
        "sogou_search" => &["Query"],
        "scrape_website" => &["url"],
        "scrape_and_extract_info" => &["url", "info_to_extract"],
        _ => return Ok(None),
    };
    let Value::Dict(args) = arguments else {
        return Err(CallRaised(format!(
            "AttributeError: '{}' object has no attribute 'get'",
            arguments.type_name()
        )));
    };
    let mut q = PyStr::from(tool_name);
    for key in keys {
        q.push('_');
        match args.get(&PyStr::from(*key)) {
            None => {}
            Some(Value::Str(s)) => q.push_pystr(s),
            Some(other) => {
                return Err(CallRaised(format!(
                    "TypeError: can only concatenate str (not \"{}\") to str",
                    other.type_name()
                )))
            }
        }
    }
    Ok(Some(q))
}

/// The cache key for a fingerprint under the policy's duplicate mode.
pub fn cache_key(fingerprint: &PyStr, policy: &Policy) -> PyStr {
    match policy.duplicate_match {
        MatchMode::Exact => fingerprint.clone(),
        MatchMode::Normalized => PyStr::from(near_duplicate_key(fingerprint)),
    }
}

/// Case, whitespace and punctuation folded: two fingerprints with the same
/// key are the "same query" to a human, though upstream's exact match differs.
/// Punctuation (quotes of every style included) is dropped, whitespace runs
/// become one space, letters are lowercased; one pass, one allocation.
pub fn near_duplicate_key(fingerprint: &PyStr) -> String {
    let text = fingerprint.to_string_lossy();
    if text.is_ascii() {
        return fold_ascii(&text);
    }
    fold_chars(&text)
}

/// [`fold_chars`] for ASCII text, a byte at a time.
fn fold_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for b in text.bytes() {
        // `char::is_whitespace` on ASCII: tab, LF, VT, FF, CR, space.
        if matches!(b, b'\t'..=b'\r' | b' ') {
            pending_space = !out.is_empty();
            continue;
        }
        if b.is_ascii_punctuation() {
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(char::from(b.to_ascii_lowercase()));
    }
    out
}

fn fold_chars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if c.is_ascii_punctuation() || is_unicode_punct(c) {
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

fn is_unicode_punct(c: char) -> bool {
    matches!(
        c,
        '\u{00B4}' | '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{303F}' | '\u{FF01}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}'
    )
}

/// Classifies a tool result: `Some(reason)` when upstream would roll back on it.
pub fn bad_result(
    tool_name: &str,
    result: &ToolResult,
    policy: &Policy,
) -> Result<Option<Reason>, CallRaised> {
    let text = result.effective_text();
    if text.starts_with("Unknown tool:") {
        return Ok(Some(Reason::UnknownTool));
    }
    if text.starts_with("Error executing tool") {
        return Ok(Some(Reason::ToolError));
    }
    if policy.empty_search_tools.iter().any(|t| t == tool_name) && empty_search(&result.result)? {
        return Ok(Some(Reason::EmptySearch));
    }
    Ok(None)
}

/// `is_google_search_empty_result`: the result parses to an object whose
/// `organic` is missing or empty. Unparseable or odd results are not empty.
fn empty_search(result: &str) -> Result<bool, CallRaised> {
    if result.is_empty() {
        return Ok(false);
    }
    // Fast path: serde_json accepts a subset of what Python's json.loads
    // accepts and skips values without building them. Anything it rejects
    // (NaN, lone surrogates, duplicate keys, deep nesting, not JSON) is
    // decided by the Python-faithful parser.
    if let Ok(shape) = serde_json::from_str::<ResultShape>(result) {
        return Ok(shape.organic_empty());
    }
    let parsed = match pyjson::loads(result) {
        Ok(v) => v,
        Err(StrictError::Decode { .. }) => return Ok(false),
        Err(other) => return Err(CallRaised(other.to_string())),
    };
    let Value::Dict(d) = parsed else {
        return Ok(false);
    };
    Ok(match d.get(&PyStr::from("organic")) {
        None => true,
        Some(Value::List(l)) => l.is_empty(),
        Some(Value::Dict(m)) => m.is_empty(),
        Some(Value::Str(s)) => s.is_empty(),
        Some(_) => false,
    })
}

/// A tool result's top level, reduced to what the empty-search check reads.
enum ResultShape {
    NotAnObject,
    /// `organic`'s length when it has one (list, object, string); `Some(None)`
    /// for a value without a length; `None` when the key is missing.
    Object {
        organic: Option<Option<usize>>,
    },
}

impl ResultShape {
    fn organic_empty(&self) -> bool {
        match self {
            ResultShape::NotAnObject => false,
            ResultShape::Object { organic: None } => true,
            ResultShape::Object { organic: Some(len) } => *len == Some(0),
        }
    }
}

impl<'de> serde::Deserialize<'de> for ResultShape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> serde::de::Visitor<'de> for Top {
            type Value = ResultShape;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ResultShape, A::Error> {
                let mut organic = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "organic" {
                        if organic.is_some() {
                            // A repeated key: let the faithful parser decide.
                            return Err(serde::de::Error::custom("duplicate organic"));
                        }
                        organic = Some(map.next_value::<Length>()?.0);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(ResultShape::Object { organic })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ResultShape, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(ResultShape::NotAnObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<ResultShape, E> {
                Ok(ResultShape::NotAnObject)
            }
            fn visit_bool<E>(self, _: bool) -> Result<ResultShape, E> {
                Ok(ResultShape::NotAnObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<ResultShape, E> {
                Ok(ResultShape::NotAnObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<ResultShape, E> {
                Ok(ResultShape::NotAnObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<ResultShape, E> {
                Ok(ResultShape::NotAnObject)
            }
            fn visit_unit<E>(self) -> Result<ResultShape, E> {
                Ok(ResultShape::NotAnObject)
            }
        }
        d.deserialize_any(Top)
    }
}

/// The `len()` of a JSON value, when Python's `len` accepts it.
struct Length(Option<usize>);

impl<'de> serde::Deserialize<'de> for Length {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Length;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Length, A::Error> {
                let mut n = 0;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Length(Some(n)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Length, A::Error> {
                // Python counts distinct keys; repeated keys go to the slow path.
                let mut keys = std::collections::HashSet::new();
                while let Some(k) = map.next_key::<String>()? {
                    if !keys.insert(k) {
                        return Err(serde::de::Error::custom("duplicate key"));
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(Length(Some(keys.len())))
            }
            fn visit_str<E>(self, s: &str) -> Result<Length, E> {
                Ok(Length(Some(s.chars().count())))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Length, E> {
                Ok(Length(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Length, E> {
                Ok(Length(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Length, E> {
                Ok(Length(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Length, E> {
                Ok(Length(None))
            }
            fn visit_unit<E>(self) -> Result<Length, E> {
                Ok(Length(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::loads;

    fn fp(tool: &str, args: &str) -> Result<Option<String>, CallRaised> {
        query_fingerprint(tool, &loads(args).unwrap()).map(|q| q.map(|q| q.to_string()))
    }

    #[test]
    fn fingerprints_follow_upstream() {
        assert_eq!(
            fp("google_search", r#"{"q": "x"}"#).unwrap().as_deref(),
            Some("google_search_x")
        );
        assert_eq!(
            fp("google_search", r#"{}"#).unwrap().as_deref(),
            Some("google_search_")
        );
        assert_eq!(
            fp(
                "scrape_and_extract_info",
                r#"{"url": "u", "info_to_extract": "i"}"#
            )
            .unwrap()
            .as_deref(),
            Some("scrape_and_extract_info_u_i")
        );
        assert_eq!(
            fp("run_python_code", r#"{"code_block": "x"}"#).unwrap(),
            None
        );
        assert!(fp("google_search", r#"{"q": 42}"#).is_err());
        assert!(fp("google_search", "[1]").is_err());
    }

    #[test]
    fn results_classify_in_upstream_order() {
        let p = Policy::default();
        let r = |result: &str, error: Option<&str>| ToolResult {
            result: result.into(),
            error: error.map(Into::into),
        };
        assert_eq!(
            bad_result("x", &r("Unknown tool: y", None), &p).unwrap(),
            Some(Reason::UnknownTool)
        );
        assert_eq!(
            bad_result("x", &r("", Some("Error executing tool z")), &p).unwrap(),
            Some(Reason::ToolError)
        );
        assert_eq!(
            bad_result("google_search", &r(r#"{"organic": []}"#, None), &p).unwrap(),
            Some(Reason::EmptySearch)
        );
        assert_eq!(
            bad_result("google_search", &r(r#"{"x": 1}"#, None), &p).unwrap(),
            Some(Reason::EmptySearch)
        );
        assert_eq!(
            bad_result("google_search", &r(r#"{"organic": [1]}"#, None), &p).unwrap(),
            None
        );
        assert_eq!(
            bad_result("google_search", &r("[]", None), &p).unwrap(),
            None
        );
        assert_eq!(
            bad_result("google_search", &r("not json", None), &p).unwrap(),
            None
        );
        assert_eq!(
            bad_result("sogou_search", &r(r#"{"organic": []}"#, None), &p).unwrap(),
            None
        );
    }

    #[test]
    fn near_duplicates_fold_case_space_punctuation() {
        let a = PyStr::from("google_search_Capital of  France?");
        let b = PyStr::from("google_search_capital of france");
        assert_eq!(near_duplicate_key(&a), near_duplicate_key(&b));
        assert_eq!(
            near_duplicate_key(&PyStr::from(" Don\u{2019}t  , STOP ")),
            "dont stop"
        );
        assert_eq!(
            near_duplicate_key(&PyStr::from("上海 中心，大厦")),
            "上海 中心大厦"
        );
    }

    #[test]
    fn ascii_folding_equals_the_general_folding() {
        // Every ASCII byte, in runs and at the edges.
        let all: String = (0u8..128).map(char::from).collect();
        let samples = [
            all.clone(),
            format!("  {all}  {all}\t"),
            "google_search_\x0bA\x0cB\rC\nD".to_string(),
            "!!!".to_string(),
            String::new(),
        ];
        for text in samples {
            assert_eq!(fold_ascii(&text), fold_chars(&text), "{text:?}");
        }
    }
}
