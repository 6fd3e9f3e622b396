//! Argument aliases and defaults applied before a call runs (upstream's
//! `fix_tool_call_arguments`), including the inputs on which it raises.

use crate::pyjson::{PyStr, Value};

/// What the fix changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArgFixes {
    /// A mistaken argument name was renamed (`code` → `code_block`, …).
    pub alias: bool,
    /// `sandbox_id: "default"` was added.
    pub sandbox_id: bool,
}

/// The fix raised: upstream's exception text, e.g.
/// `AttributeError: 'NoneType' object has no attribute 'copy'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FixRaised(pub String);

const SCRAPE_ALIASES: [&str; 2] = ["description", "introduction"];

/// Applies the fixes for `tool_name` to a copy of `arguments`.
pub fn fix_tool_call_arguments(tool_name: &str, arguments: &Value) -> Result<(Value, ArgFixes), FixRaised> {
    let mut fixes = ArgFixes::default();
    match arguments {
        Value::Dict(d) => {
            let mut d = d.clone();
            if tool_name == "scrape_and_extract_info" && !d.contains_key(&key("info_to_extract")) {
                if let Some(v) = SCRAPE_ALIASES.iter().find_map(|m| d.shift_remove(&key(m))) {
                    d.insert(key("info_to_extract"), v);
                    fixes.alias = true;
                }
            }
            if tool_name == "run_python_code" {
                if !d.contains_key(&key("code_block")) {
                    if let Some(v) = d.shift_remove(&key("code")) {
                        d.insert(key("code_block"), v);
                        fixes.alias = true;
                    }
                }
                if !d.contains_key(&key("sandbox_id")) {
                    d.insert(key("sandbox_id"), Value::str("default"));
                    fixes.sandbox_id = true;
                }
            }
            Ok((Value::Dict(d), fixes))
        }
        Value::List(items) => {
            let has = |name: &str| items.iter().any(|v| matches!(v, Value::Str(s) if *s == *name));
            let pop_err = || FixRaised("TypeError: 'str' object cannot be interpreted as an integer".into());
            if tool_name == "scrape_and_extract_info" && !has("info_to_extract") && SCRAPE_ALIASES.iter().any(|m| has(m)) {
                return Err(pop_err());
            }
            if tool_name == "run_python_code" {
                if !has("code_block") && has("code") {
                    return Err(pop_err());
                }
                if !has("sandbox_id") {
                    return Err(FixRaised("TypeError: list indices must be integers or slices, not str".into()));
                }
                // A list already holding "sandbox_id" passes untouched.
            }
            Ok((arguments.clone(), fixes))
        }
        other => Err(FixRaised(format!(
            "AttributeError: '{}' object has no attribute 'copy'",
            other.type_name()
        ))),
    }
}

fn key(s: &str) -> PyStr {
    PyStr::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::{dump, loads};

    fn fix(tool: &str, args: &str) -> Result<(String, ArgFixes), FixRaised> {
        fix_tool_call_arguments(tool, &loads(args).unwrap()).map(|(v, f)| (dump(&v), f))
    }

    #[test]
    fn python_code_gets_alias_and_sandbox() {
        let (v, f) = fix("run_python_code", r#"{"sandbox_id": "s", "code": "x"}"#).unwrap();
        assert_eq!(v, r#"{"sandbox_id": "s", "code_block": "x"}"#);
        assert_eq!(f, ArgFixes { alias: true, sandbox_id: false });
        let (v, f) = fix("run_python_code", r#"{"code_block": "x", "code": "y"}"#).unwrap();
        assert_eq!(v, r#"{"code_block": "x", "code": "y", "sandbox_id": "default"}"#);
        assert_eq!(f, ArgFixes { alias: false, sandbox_id: true });
    }

    #[test]
    fn scrape_alias_takes_first_mistake_only() {
        let (v, f) = fix("scrape_and_extract_info", r#"{"introduction": "i", "description": "d", "url": "u"}"#).unwrap();
        assert_eq!(v, r#"{"introduction": "i", "url": "u", "info_to_extract": "d"}"#);
        assert!(f.alias);
        let (v, _) = fix("scrape_and_extract_info", r#"{"info_to_extract": "a", "description": "d"}"#).unwrap();
        assert_eq!(v, r#"{"info_to_extract": "a", "description": "d"}"#);
    }

    #[test]
    fn raises_like_upstream() {
        assert_eq!(fix("google_search", "null").unwrap_err().0, "AttributeError: 'NoneType' object has no attribute 'copy'");
        assert!(fix("x", "\"s\"").is_err());
        assert!(fix("x", "1.5").is_err());
        assert!(fix("run_python_code", "[1]").is_err());
        assert!(fix("run_python_code", r#"["sandbox_id"]"#).is_ok());
        assert!(fix("scrape_and_extract_info", r#"["description"]"#).is_err());
        assert!(fix("scrape_and_extract_info", r#"["url"]"#).is_ok());
        assert!(fix("google_search", "[1]").is_ok());
    }
}
