//! Bad tool result: a call ran, but its result is one upstream rolls back
//! on: an unknown tool, a tool error, or an empty search. The layer rolls
//! the attempt back (or lets the result through at the limit, flagged).
//!
//! Upstream: `core/tool_executor.py` `should_rollback_result` (the two
//! prefixes, tested in that order) and `is_google_search_empty_result` (the
//! result parses to an object whose `organic` is missing or empty), for the
//! tools in [`Policy::empty_search_tools`]. The text tested is the result,
//! or the error when the call failed ([`ToolResult::effective_text`]).
//!
//! The tool-error prefixes are the policy's ([`Policy::tool_error_prefixes`],
//! upstream's `Error executing tool` by default), and a result its harness
//! marked as failed ([`ToolResult::failed`]) is a tool error whatever its
//! text: upstream's executor turns an exception in the tool into an
//! `Error executing tool` result. [`unmatched_error`] names the results
//! that look like errors yet are neither: a blind spot of the rules
//! (docs/metrics.md, "Blind spots").

use super::{CallRaised, Reason};
use crate::model::ToolResult;
use crate::policy::Policy;
use crate::pyjson::{self, PyStr, StrictError, Value};

/// The reasons this detector reports, in the order it tests them.
pub const REASONS: [Reason; 3] = [Reason::UnknownTool, Reason::ToolError, Reason::EmptySearch];

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
    if result.failed || error_prefix(text, policy) {
        return Ok(Some(Reason::ToolError));
    }
    if policy.empty_search_tools.iter().any(|t| t == tool_name) && empty_search(&result.result)? {
        return Ok(Some(Reason::EmptySearch));
    }
    Ok(None)
}

/// Whether `text` begins with one of the policy's tool-error prefixes.
pub fn error_prefix(text: &str, policy: &Policy) -> bool {
    policy
        .tool_error_prefixes
        .iter()
        .any(|p| text.starts_with(p.as_str()))
}

/// A result that reads like an error (it begins with `Error`, `ERROR` or
/// `error` followed by `:` or white space) that the rules do not judge a
/// tool error or an unknown tool: not marked as failed, and matching none
/// of the policy's prefixes. Counted as `tool_errors_unmatched`: with a
/// harness whose errors start otherwise (tau-bench's `Error: …`) the
/// tool-error rule cannot fire, and this says so.
pub fn unmatched_error(result: &ToolResult, policy: &Policy) -> bool {
    if result.failed {
        return false;
    }
    let text = result.effective_text();
    looks_like_error(text) && !text.starts_with("Unknown tool:") && !error_prefix(text, policy)
}

/// `Error`, `ERROR` or `error`, then `:` or white space.
fn looks_like_error(text: &str) -> bool {
    ["Error", "ERROR", "error"].iter().any(|w| {
        text.strip_prefix(w)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c == ':' || c.is_whitespace())
    })
}

/// `is_google_search_empty_result`: the result parses to an object whose
/// `organic` is missing or empty. Unparseable or odd results are not empty.
fn empty_search(result: &str) -> Result<bool, CallRaised> {
    if result.is_empty() {
        return Ok(false);
    }
    // Fast path: serde_json accepts a subset of what Python's json.loads
    // accepts, and walks every value (`Checked`) without building it.
    // Anything it rejects (NaN, lone surrogates, duplicate keys, nesting
    // past its own limit of 128, numbers past f64's range, not JSON) is
    // decided by the Python-faithful parser, which raises where Python
    // would (nesting past its recursion budget, integers over 4300 digits).
    // So the fast path answers only where json.loads returns.
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
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(ResultShape::Object { organic })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ResultShape, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
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
                while seq.next_element::<Checked>()?.is_some() {
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
                    map.next_value::<Checked>()?;
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

/// A value walked, not kept. Unlike `IgnoredAny`, which serde_json skips
/// by scanning (no depth limit, numbers unchecked), every nested value is
/// visited, so serde_json's recursion limit and number range apply: what
/// could make Python's `json.loads` raise in a value the check does not
/// read (deep nesting, a 5000-digit integer) leaves the fast path.
struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Checked;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Checked, A::Error> {
                while map.next_key::<std::borrow::Cow<'de, str>>()?.is_some() {
                    map.next_value::<Checked>()?;
                }
                Ok(Checked)
            }
            fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }
            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(tool: &str, result: &str, error: Option<&str>) -> Option<Reason> {
        let r = ToolResult {
            result: result.into(),
            error: error.map(Into::into),
            failed: false,
        };
        bad_result(tool, &r, &Policy::default()).unwrap()
    }

    #[test]
    fn results_classify_in_upstream_order() {
        use Reason::{EmptySearch, ToolError, UnknownTool};
        // (tool, result, error, reason)
        let cases: &[(&str, &str, Option<&str>, Option<Reason>)] = &[
            ("x", "Unknown tool: y", None, Some(UnknownTool)),
            ("x", "", Some("Unknown tool: y"), Some(UnknownTool)),
            ("x", "", Some("Error executing tool z"), Some(ToolError)),
            ("x", "Error executing tool z: boom", None, Some(ToolError)),
            // Prefixes only, case-sensitive.
            ("x", " Unknown tool: y", None, None),
            ("x", "error executing tool z", None, None),
            ("x", "ok: Error executing tool", None, None),
            // A non-empty result hides the error.
            ("x", "fine", Some("Error executing tool z"), None),
            // The prefix tests come before the empty-search test.
            (
                "google_search",
                "Unknown tool: google_search",
                None,
                Some(UnknownTool),
            ),
            (
                "google_search",
                "",
                Some("Error executing tool g"),
                Some(ToolError),
            ),
            // Empty searches: `organic` missing or of length zero.
            (
                "google_search",
                r#"{"organic": []}"#,
                None,
                Some(EmptySearch),
            ),
            ("google_search", r#"{"x": 1}"#, None, Some(EmptySearch)),
            ("google_search", r#"{}"#, None, Some(EmptySearch)),
            (
                "google_search",
                r#"{"organic": {}}"#,
                None,
                Some(EmptySearch),
            ),
            (
                "google_search",
                r#"{"organic": ""}"#,
                None,
                Some(EmptySearch),
            ),
            (
                "google_search",
                r#" {"organic": []} "#,
                None,
                Some(EmptySearch),
            ),
            ("google_search", r#"{"organic": [1]}"#, None, None),
            ("google_search", r#"{"organic": {"a": 1}}"#, None, None),
            ("google_search", r#"{"organic": "x"}"#, None, None),
            // No length: not empty.
            ("google_search", r#"{"organic": null}"#, None, None),
            ("google_search", r#"{"organic": 0}"#, None, None),
            ("google_search", r#"{"organic": false}"#, None, None),
            // Not an object, not JSON, nothing: not empty.
            ("google_search", "[]", None, None),
            ("google_search", r#""{}""#, None, None),
            ("google_search", "not json", None, None),
            ("google_search", "", None, None),
            ("google_search", "", Some("timeout"), None),
            // Only the policy's tools can return an empty search.
            ("sogou_search", r#"{"organic": []}"#, None, None),
        ];
        for (tool, result, error, expected) in cases {
            assert_eq!(
                classify(tool, result, *error),
                *expected,
                "{tool} {result:?} {error:?}"
            );
        }
    }

    #[test]
    fn the_fast_path_defers_to_the_python_parser() {
        use Reason::EmptySearch;
        // What serde_json rejects or reads differently, Python's json decides.
        let cases: &[(&str, Option<Reason>)] = &[
            // Python keeps the last of repeated keys.
            (r#"{"organic": [1], "organic": []}"#, Some(EmptySearch)),
            (r#"{"organic": [], "organic": [1]}"#, None),
            // Python's len counts distinct keys.
            (r#"{"organic": {"a": 1, "a": 2}}"#, None),
            // NaN and Infinity are Python JSON.
            (r#"{"organic": [], "score": NaN}"#, Some(EmptySearch)),
            (r#"{"organic": [Infinity]}"#, None),
            // A lone surrogate is a Python str of length 1.
            (r#"{"organic": "\ud800"}"#, None),
            // Trailing garbage is a decode error: not empty.
            (r#"{"organic": []} x"#, None),
        ];
        for (result, expected) in cases {
            assert_eq!(
                classify("google_search", result, None),
                *expected,
                "{result}"
            );
        }
    }

    #[test]
    fn python_exceptions_other_than_decode_errors_escape() {
        // Upstream catches JSONDecodeError, TypeError and AttributeError only:
        // a RecursionError or ValueError from json.loads fails the call. (A
        // repeated `organic` sends the result to the Python-faithful parser.)
        let depth = pyjson::PY_RECURSION_BUDGET + 1;
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let long_int = "1".repeat(4301);
        for (value, exception) in [(deep, "RecursionError"), (long_int, "ValueError")] {
            let r = ToolResult {
                result: format!(r#"{{"organic": [], "organic": {value}}}"#),
                error: None,
                failed: false,
            };
            let raised = bad_result("google_search", &r, &Policy::default()).unwrap_err();
            assert!(raised.0.starts_with(exception), "{raised}");
            // Only a tool tested for empty searches parses its result.
            assert_eq!(bad_result("x", &r, &Policy::default()).unwrap(), None);
        }
    }

    #[test]
    fn the_fast_path_raises_where_python_raises_in_values_it_does_not_read() {
        // A sibling of `organic`, or an element of it, that makes json.loads
        // raise fails the call even though the check never reads it.
        let depth = pyjson::PY_RECURSION_BUDGET + 1;
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let long_int = "1".repeat(4301);
        for (value, exception) in [(&deep, "RecursionError"), (&long_int, "ValueError")] {
            for result in [
                format!(r#"{{"organic": [], "other": {value}}}"#),
                format!(r#"{{"other": {{"x": {value}}}}}"#),
                format!(r#"{{"organic": [{value}]}}"#),
                format!(r#"{{"organic": {{"a": {value}}}}}"#),
                format!("[{value}]"),
            ] {
                let r = ToolResult {
                    result: result.clone(),
                    error: None,
                    failed: false,
                };
                let raised = bad_result("google_search", &r, &Policy::default())
                    .expect_err(&result[..result.len().min(40)]);
                assert!(raised.0.starts_with(exception), "{raised}");
            }
        }
        // Deep, but within Python's budget, and long integers within its
        // limit: answered, as json.loads returns.
        let fine = format!(
            r#"{{"organic": [], "a": {}{}, "b": {}}}"#,
            "[".repeat(200),
            "]".repeat(200),
            "9".repeat(4300)
        );
        let r = ToolResult {
            result: fine,
            error: None,
            failed: false,
        };
        assert_eq!(
            bad_result("google_search", &r, &Policy::default()).unwrap(),
            Some(Reason::EmptySearch)
        );
    }

    #[test]
    fn failed_results_and_policy_prefixes_are_tool_errors() {
        let tau = Policy {
            tool_error_prefixes: vec!["Error executing tool".into(), "Error:".into()],
            ..Policy::default()
        };
        let text = |t: &str, failed: bool| ToolResult {
            result: t.into(),
            error: None,
            failed,
        };
        let upstream = Policy::default();
        // (result, failed, default verdict, tau verdict, unmatched by default)
        type Case = (&'static str, bool, Option<Reason>, Option<Reason>, bool);
        let cases: &[Case] = &[
            (
                "Error: not enough seats",
                false,
                None,
                Some(Reason::ToolError),
                true,
            ),
            ("error occurred\nx", false, None, None, true),
            ("ERROR\tgone", false, None, None, true),
            (
                "Error executing tool x: boom",
                false,
                Some(Reason::ToolError),
                Some(Reason::ToolError),
                false,
            ),
            // Not error-looking: no separator after the word, or not at the start.
            ("Errors: none", false, None, None, false),
            ("Error", false, None, None, false),
            ("an Error: x", false, None, None, false),
            ("fine", false, None, None, false),
            // Marked as failed: a tool error whatever the text, never unmatched.
            (
                "fine",
                true,
                Some(Reason::ToolError),
                Some(Reason::ToolError),
                false,
            ),
            (
                "Error: x",
                true,
                Some(Reason::ToolError),
                Some(Reason::ToolError),
                false,
            ),
            // An unknown tool is tested first, also when marked.
            (
                "Unknown tool: y",
                true,
                Some(Reason::UnknownTool),
                Some(Reason::UnknownTool),
                false,
            ),
        ];
        for &(t, failed, default, with_tau, unmatched) in cases {
            let r = text(t, failed);
            assert_eq!(
                bad_result("x", &r, &upstream).unwrap(),
                default,
                "{t:?} {failed}"
            );
            assert_eq!(
                bad_result("x", &r, &tau).unwrap(),
                with_tau,
                "{t:?} {failed}"
            );
            assert_eq!(unmatched_error(&r, &upstream), unmatched, "{t:?} {failed}");
            // Whatever the tau policy judges a tool error is not unmatched under it.
            if with_tau.is_some() {
                assert!(!unmatched_error(&r, &tau), "{t:?}");
            }
        }
        // The error text counts when the result is empty.
        let in_error = ToolResult {
            result: String::new(),
            error: Some("Error: boom".into()),
            failed: false,
        };
        assert!(unmatched_error(&in_error, &upstream));
        assert_eq!(
            bad_result("x", &in_error, &tau).unwrap(),
            Some(Reason::ToolError)
        );
    }

    #[test]
    fn the_policy_names_the_empty_search_tools() {
        let p = Policy {
            empty_search_tools: vec!["sogou_search".into()],
            ..Policy::default()
        };
        let empty = ToolResult {
            result: r#"{"organic": []}"#.into(),
            error: None,
            failed: false,
        };
        assert_eq!(
            bad_result("sogou_search", &empty, &p).unwrap(),
            Some(Reason::EmptySearch)
        );
        assert_eq!(bad_result("google_search", &empty, &p).unwrap(), None);
    }
}
