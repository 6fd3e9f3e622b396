//! The model's mistakes, counted: each format error by its kind
//! ([`FormatKind`]) and each repaired call's arguments by the fixes
//! json_repair made ([`JsonFix`]), overall, per agent and per model, with
//! the first example of each (docs/metrics.md, "Mistakes").
//!
//! A format error without a kind (a verdict a task log gave, with no text
//! to classify) is counted as `unclassified`, so the kinds always add up to
//! the format-error verdicts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::detect::format_error::FormatKind;
use crate::detect::Reason;
use crate::model::Outcome;
use crate::parse::json_repair::JsonFix;
use crate::parse::JsonPath;
use crate::replay::Verdict;

/// The kind of a format error the replay could not classify.
pub const UNCLASSIFIED: &str = "unclassified";

/// Where a mistake was first seen: its line and what it is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Example {
    pub file: String,
    pub line: u64,
    pub trace_id: String,
    /// The tag a format error is about, or the tool whose arguments were fixed.
    pub excerpt: String,
}

/// Mistake counts; keys are `format_error.<kind>` and `json_fixes.<fix>`
/// in the per-agent, per-model and example maps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mistakes {
    /// Kind → format-error verdicts (rollbacks and ends).
    pub format_error: BTreeMap<String, u64>,
    /// Fix → repaired calls it was made in.
    pub json_fixes: BTreeMap<String, u64>,
    /// Agent → key → count.
    pub by_agent: BTreeMap<String, BTreeMap<String, u64>>,
    /// Model (`meta.model`, `(unknown)` without one) → key → count.
    pub by_model: BTreeMap<String, BTreeMap<String, u64>>,
    /// Key → its first example (smallest file, then line).
    pub examples: BTreeMap<String, Example>,
}

/// The model name of verdicts without one.
const NO_MODEL: &str = "(unknown)";

impl Mistakes {
    /// Counts the mistakes of one verdict.
    pub fn add(&mut self, v: &Verdict) {
        let format_error = v.reason == Some(Reason::FormatError)
            && matches!(v.outcome, Outcome::Rollback | Outcome::End);
        if format_error {
            let (kind, excerpt) = match &v.format_why {
                Some(w) => (w.kind.name(), w.tag.clone()),
                None => (UNCLASSIFIED, v.leaked_tag.clone().unwrap_or_default()),
            };
            *self.format_error.entry(kind.to_string()).or_insert(0) += 1;
            self.count(v, format!("format_error.{kind}"), excerpt);
        }
        for call in v.calls.iter().filter(|c| c.json == JsonPath::Repaired) {
            for fix in call.fixes.iter() {
                *self.json_fixes.entry(fix.name().to_string()).or_insert(0) += 1;
                self.count(
                    v,
                    format!("json_fixes.{}", fix.name()),
                    call.tool_name.clone(),
                );
            }
        }
    }

    fn count(&mut self, v: &Verdict, key: String, excerpt: String) {
        let model = v.model.as_deref().unwrap_or(NO_MODEL);
        for (map, name) in [(&mut self.by_agent, &*v.agent), (&mut self.by_model, model)] {
            let inner = match map.get_mut(name) {
                Some(inner) => inner,
                None => map.entry(name.to_string()).or_default(),
            };
            *inner.entry(key.clone()).or_insert(0) += 1;
        }
        let example = Example {
            file: v.origin.file.to_string(),
            line: v.origin.line,
            trace_id: v.trace_id.to_string(),
            excerpt,
        };
        offer(&mut self.examples, key, example);
    }

    /// Adds another part's counts (the result does not depend on the order).
    pub fn merge(&mut self, o: &Mistakes) {
        add_counts(&mut self.format_error, &o.format_error);
        add_counts(&mut self.json_fixes, &o.json_fixes);
        for (mine, theirs) in [
            (&mut self.by_agent, &o.by_agent),
            (&mut self.by_model, &o.by_model),
        ] {
            for (name, counts) in theirs {
                add_counts(mine.entry(name.clone()).or_default(), counts);
            }
        }
        for (key, e) in &o.examples {
            offer(&mut self.examples, key.clone(), e.clone());
        }
    }

    /// Format errors counted (all kinds).
    pub fn format_errors(&self) -> u64 {
        self.format_error.values().sum()
    }

    /// The format-error kinds in rule order, `unclassified` last, with counts.
    pub fn format_kinds(&self) -> Vec<(&'static str, u64)> {
        FormatKind::ALL
            .iter()
            .map(|k| k.name())
            .chain([UNCLASSIFIED])
            .map(|k| (k, self.format_error.get(k).copied().unwrap_or(0)))
            .collect()
    }

    /// The fixes in name order, with counts.
    pub fn fixes(&self) -> Vec<(&'static str, u64)> {
        JsonFix::ALL
            .iter()
            .map(|f| {
                (
                    f.name(),
                    self.json_fixes.get(f.name()).copied().unwrap_or(0),
                )
            })
            .collect()
    }
}

fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_insert(0) += n;
    }
}

/// Keeps the earliest example of `key`.
fn offer(examples: &mut BTreeMap<String, Example>, key: String, e: Example) {
    match examples.get_mut(&key) {
        Some(kept) if (&e.file, e.line) < (&kept.file, kept.line) => *kept = e,
        Some(_) => {}
        None => {
            examples.insert(key, e);
        }
    }
}
