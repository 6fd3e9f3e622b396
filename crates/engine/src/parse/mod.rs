//! Tolerant parsing of a response: the three tool-call formats
//! ([`toolcalls`]), tool arguments read as upstream's `safe_json_loads`
//! reads them ([`arguments`], with the [`json_repair`] port), and Python's
//! text semantics ([`pytext`]).

pub mod arguments;
pub use json_compat::json_repair;
pub mod pytext;
pub mod toolcalls;

pub use arguments::JsonPath;

/// Substring search; much faster than `str::contains` on long texts.
pub(crate) fn contains(haystack: &str, needle: &str) -> bool {
    memchr::memmem::find(haystack.as_bytes(), needle.as_bytes()).is_some()
}
