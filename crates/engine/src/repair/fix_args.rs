//! Argument aliases and defaults applied before a call runs (upstream's
//! `fix_tool_call_arguments`), including the inputs on which it raises.
//!
//! The tables come from the policy ([`Policy::arg_aliases`],
//! [`Policy::arg_defaults`]); with the default tables this is upstream's
//! function exactly, exception texts included.

use crate::policy::{ArgAlias, ArgDefault, Policy};
use crate::pyjson::{PyStr, Value};

/// What the fix changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArgFixes {
    /// A mistaken argument name was renamed (`code` → `code_block`, …).
    pub alias: bool,
    /// A missing argument got its default (`sandbox_id: "default"`).
    pub sandbox_id: bool,
}

/// The fix raised: upstream's exception text, e.g.
/// `AttributeError: 'NoneType' object has no attribute 'copy'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FixRaised(pub String);

/// `list.pop("name")`: Python wants an integer index.
const POP_ON_LIST: &str = "TypeError: 'str' object cannot be interpreted as an integer";
/// `list["name"] = value`.
const INDEX_LIST_BY_STR: &str = "TypeError: list indices must be integers or slices, not str";

/// The policy's alias and default tables by tool, so a call finds its
/// tool's rules with one lookup instead of a scan of every table (a policy
/// may hold tens of thousands). Within a tool the rules keep the policy's order.
#[derive(Debug, Clone, Default)]
pub struct ArgTables {
    by_tool: foldhash::HashMap<String, ToolRules>,
}

#[derive(Debug, Clone, Default)]
struct ToolRules {
    aliases: Vec<ArgAlias>,
    defaults: Vec<ArgDefault>,
}

impl ArgTables {
    pub fn new(policy: &Policy) -> ArgTables {
        let mut by_tool: foldhash::HashMap<String, ToolRules> = Default::default();
        for a in &policy.arg_aliases {
            by_tool
                .entry(a.tool.clone())
                .or_default()
                .aliases
                .push(a.clone());
        }
        for d in &policy.arg_defaults {
            by_tool
                .entry(d.tool.clone())
                .or_default()
                .defaults
                .push(d.clone());
        }
        ArgTables { by_tool }
    }

    fn rules(&self, tool: &str) -> (&[ArgAlias], &[ArgDefault]) {
        self.by_tool
            .get(tool)
            .map_or((&[], &[]), |r| (&r.aliases, &r.defaults))
    }
}

/// [`fix_arguments`] with the policy's tables (indexed on every call: a
/// replay keeps an [`ArgTables`]).
pub fn fix_tool_call_arguments(
    tool_name: &str,
    arguments: Value,
    policy: &Policy,
) -> Result<(Value, ArgFixes), (Value, FixRaised)> {
    fix_arguments(tool_name, arguments, &ArgTables::new(policy))
}

/// Applies the policy's fixes for `tool_name` to a copy of `arguments`:
/// `args = arguments.copy()`, then each alias rule of the tool in order
/// (`if target not in args: first alias in args → args[target] = args.pop(alias)`),
/// then each default (`if key not in args: args[key] = value`).
pub fn fix_arguments(
    tool_name: &str,
    arguments: Value,
    tables: &ArgTables,
) -> Result<(Value, ArgFixes), (Value, FixRaised)> {
    let mut fixes = ArgFixes::default();
    let (aliases, defaults) = tables.rules(tool_name);
    match arguments {
        Value::Dict(mut d) => {
            for rule in aliases {
                if d.contains_key(&key(&rule.target)) {
                    continue;
                }
                if let Some(v) = rule.aliases.iter().find_map(|m| d.shift_remove(&key(m))) {
                    d.insert(key(&rule.target), v);
                    fixes.alias = true;
                }
            }
            for default in defaults {
                if !d.contains_key(&key(&default.key)) {
                    d.insert(key(&default.key), Value::str(&default.value));
                    fixes.sandbox_id = true;
                }
            }
            Ok((Value::Dict(d), fixes))
        }
        // `in` tests list elements; `pop`/item assignment by name raise.
        Value::List(ref items) => {
            let has = |name: &str| {
                items
                    .iter()
                    .any(|v| matches!(v, Value::Str(s) if *s == *name))
            };
            for rule in aliases {
                if !has(&rule.target) && rule.aliases.iter().any(|m| has(m)) {
                    return Err((arguments, FixRaised(POP_ON_LIST.into())));
                }
            }
            for default in defaults {
                if !has(&default.key) {
                    return Err((arguments, FixRaised(INDEX_LIST_BY_STR.into())));
                }
            }
            // A list that needs no fix passes untouched.
            Ok((arguments, fixes))
        }
        other => {
            let error = FixRaised(format!(
                "AttributeError: '{}' object has no attribute 'copy'",
                other.type_name()
            ));
            Err((other, error))
        }
    }
}

fn key(s: &str) -> PyStr {
    PyStr::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::{dump, loads};

    fn fix_with(policy: &Policy, tool: &str, args: &str) -> Result<(String, ArgFixes), FixRaised> {
        fix_tool_call_arguments(tool, loads(args).unwrap(), policy)
            .map(|(v, f)| (dump(&v), f))
            .map_err(|(_, e)| e)
    }

    fn fix(tool: &str, args: &str) -> Result<(String, ArgFixes), FixRaised> {
        fix_with(&Policy::default(), tool, args)
    }

    #[test]
    fn python_code_gets_alias_and_sandbox() {
        let (v, f) = fix("run_python_code", r#"{"sandbox_id": "s", "code": "x"}"#).unwrap();
        assert_eq!(v, r#"{"sandbox_id": "s", "code_block": "x"}"#);
        assert_eq!(
            f,
            ArgFixes {
                alias: true,
                sandbox_id: false
            }
        );
        let (v, f) = fix("run_python_code", r#"{"code_block": "x", "code": "y"}"#).unwrap();
        assert_eq!(
            v,
            r#"{"code_block": "x", "code": "y", "sandbox_id": "default"}"#
        );
        assert_eq!(
            f,
            ArgFixes {
                alias: false,
                sandbox_id: true
            }
        );
    }

    #[test]
    fn scrape_alias_takes_first_mistake_only() {
        let (v, f) = fix(
            "scrape_and_extract_info",
            r#"{"introduction": "i", "description": "d", "url": "u"}"#,
        )
        .unwrap();
        assert_eq!(
            v,
            r#"{"introduction": "i", "url": "u", "info_to_extract": "d"}"#
        );
        assert!(f.alias);
        let (v, _) = fix(
            "scrape_and_extract_info",
            r#"{"info_to_extract": "a", "description": "d"}"#,
        )
        .unwrap();
        assert_eq!(v, r#"{"info_to_extract": "a", "description": "d"}"#);
    }

    #[test]
    fn raises_like_upstream() {
        assert_eq!(
            fix("google_search", "null").unwrap_err().0,
            "AttributeError: 'NoneType' object has no attribute 'copy'"
        );
        assert!(fix("x", "\"s\"").is_err());
        assert!(fix("x", "1.5").is_err());
        assert_eq!(
            fix("run_python_code", "[1]").unwrap_err().0,
            INDEX_LIST_BY_STR
        );
        assert_eq!(
            fix("run_python_code", r#"["code", "sandbox_id"]"#)
                .unwrap_err()
                .0,
            POP_ON_LIST
        );
        assert!(fix("run_python_code", r#"["sandbox_id"]"#).is_ok());
        assert_eq!(
            fix("scrape_and_extract_info", r#"["description"]"#)
                .unwrap_err()
                .0,
            POP_ON_LIST
        );
        assert!(fix("scrape_and_extract_info", r#"["url"]"#).is_ok());
        assert!(fix("google_search", "[1]").is_ok());
    }

    #[test]
    fn tables_come_from_the_policy() {
        let p = Policy {
            arg_aliases: vec![ArgAlias {
                tool: "google_search".into(),
                target: "q".into(),
                aliases: vec!["query".into()],
            }],
            arg_defaults: vec![ArgDefault {
                tool: "google_search".into(),
                key: "gl".into(),
                value: "us".into(),
            }],
            ..Policy::default()
        };
        let (v, f) = fix_with(&p, "google_search", r#"{"query": "x"}"#).unwrap();
        assert_eq!(v, r#"{"q": "x", "gl": "us"}"#);
        assert_eq!(
            f,
            ArgFixes {
                alias: true,
                sandbox_id: true
            }
        );
        // The upstream rules are gone: run_python_code passes untouched, even as a list.
        let (v, f) = fix_with(&p, "run_python_code", r#"{"code": "x"}"#).unwrap();
        assert_eq!(v, r#"{"code": "x"}"#);
        assert_eq!(f, ArgFixes::default());
        assert!(fix_with(&p, "run_python_code", "[1]").is_ok());
        // ...but a non-container still has no `.copy()`.
        assert!(fix_with(&p, "run_python_code", "null").is_err());
    }

    /// The index finds a tool's rules among many others, in the policy's order.
    #[test]
    fn indexed_tables_keep_each_tools_rules_in_order() {
        let mut p = Policy {
            arg_defaults: (0..1000)
                .map(|i| ArgDefault {
                    tool: format!("tool_{i}"),
                    key: "k".into(),
                    value: i.to_string(),
                })
                .collect(),
            ..Policy::default()
        };
        p.arg_defaults.push(ArgDefault {
            tool: "tool_7".into(),
            key: "other".into(),
            value: "x".into(),
        });
        let (v, f) = fix_with(&p, "tool_7", r#"{"a": 1}"#).unwrap();
        assert_eq!(v, r#"{"a": 1, "k": "7", "other": "x"}"#);
        assert!(f.sandbox_id);
        let (v, _) = fix_with(&p, "nope", r#"{"a": 1}"#).unwrap();
        assert_eq!(v, r#"{"a": 1}"#);
    }
}
