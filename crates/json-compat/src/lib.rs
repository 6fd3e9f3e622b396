//! JSON as Python reads and writes it, and a port of the `json_repair`
//! library: what a Rust program needs to parse LLM tool-call arguments
//! exactly as a Python agent harness does.
//!
//! - [`pyjson`]: values with Python's semantics (integers of any size,
//!   `NaN`/`Infinity`, strings holding lone UTF-16 surrogates), parsed
//!   strictly like `json.loads` and written like `json.dumps`.
//! - [`json_repair`]: `repair_json(s, ensure_ascii=False)` of json_repair
//!   0.50.0 (Stefano Baccianella, MIT licence), ported function by function,
//!   with the [`JsonFix`](json_repair::JsonFix) kinds each repair made.
//!
//! Python's strict parse keeps what serde_json would lose:
//!
//! ```
//! use json_compat::pyjson::{self, Int, Value};
//!
//! let v = pyjson::loads(r#"[12345678901234567890123, NaN, "\ud83d"]"#).unwrap();
//! let Value::List(items) = &v else { unreachable!() };
//! assert_eq!(items[0], Value::Int(Int::Big("12345678901234567890123".into())));
//! assert!(matches!(items[1], Value::Float(f) if f.is_nan()));
//! assert!(items[2].as_pystr().unwrap().has_surrogates());
//! // Written back as `json.dumps` writes it.
//! assert_eq!(pyjson::dump(&v), r#"[12345678901234567890123, NaN, "\ud83d"]"#);
//! ```
//!
//! What `json.loads` rejects, json_repair mends, and says how:
//!
//! ```
//! use json_compat::json_repair::{repair_and_load_fixed, repair_json, JsonFix};
//!
//! assert_eq!(repair_json("{'a': 1, b: [1, 2,").unwrap(), r#"{"a": 1, "b": [1, 2]}"#);
//!
//! let (_value, fixes) = repair_and_load_fixed("{'a': 1}").unwrap();
//! assert!(fixes.contains(JsonFix::SingleQuotes));
//! ```
//!
//! MiroThinker's `safe_json_loads` (strict first, then the repair) is
//! [`pyjson::loads`] falling back to [`json_repair::repair_and_load`] on a
//! decode error. The crate's tests hold that to a corpus of 2,158 inputs
//! recorded from the Python functions (`tests/json_repair_corpus.rs`).

#![deny(clippy::print_stderr)]

pub mod json_repair;
pub mod pyjson;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
