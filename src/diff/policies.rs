//! A policy diff (issue 39): the same traces replayed under two policies,
//! each trace paired with itself. The statistics are the ordinary diff's
//! (both sides' rows); this module adds what only a verdict-by-verdict
//! comparison can say: which verdicts change outcome or reason, in which
//! tasks (`policy_changes` in the JSON, docs/policy.md).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::replay::Verdict;

/// Tasks listed in the table and Markdown views (the JSON lists all).
pub const SHOWN_TASKS: usize = 100;

/// What changes between the two policies, verdict by verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PolicyChanges {
    /// How the base side's policy is named (its file, or upstream's default).
    pub base_policy: String,
    pub new_policy: String,
    /// Traces replayed under both.
    pub tasks: u64,
    /// Verdicts compared (one per line, under both policies).
    pub verdicts: u64,
    /// Verdicts whose outcome or reason differs.
    pub changed: u64,
    /// Each (base → new) pair of outcome and reason, most frequent first.
    pub transitions: Vec<Transition>,
    /// The tasks with a changed verdict, in input order.
    pub changed_tasks: Vec<TaskChanges>,
}

/// How many verdicts went from one outcome and reason to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// `outcome` or `outcome: reason`.
    pub base: String,
    pub new: String,
    pub verdicts: u64,
}

/// One task's changed verdicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskChanges {
    pub trace_id: String,
    pub changes: Vec<VerdictChange>,
}

/// One verdict that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerdictChange {
    pub session: String,
    pub index: usize,
    /// `outcome` or `outcome: reason`, under each policy.
    pub base: String,
    pub new: String,
    /// The new side's `why` kind, when it has one (what the verdict is now).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_why: Option<String>,
    /// The base side's `why` kind, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_why: Option<String>,
}

/// A worker's share: the traces it compared, in input order.
#[derive(Debug, Default)]
pub struct Part {
    tasks: u64,
    verdicts: u64,
    changed: Vec<TaskChanges>,
}

impl Part {
    /// Compares one trace's verdicts under the base and the new policy
    /// (one per line each, in line order).
    pub fn add(&mut self, trace_id: &str, base: &[Verdict], new: &[Verdict]) {
        self.tasks += 1;
        self.verdicts += base.len().max(new.len()) as u64;
        let changes: Vec<VerdictChange> = base
            .iter()
            .zip(new)
            .filter(|(b, n)| b.outcome != n.outcome || b.reason != n.reason)
            .map(|(b, n)| VerdictChange {
                session: b.session.to_string(),
                index: b.index,
                base: label(b),
                new: label(n),
                base_why: b.why_kind(),
                new_why: n.why_kind(),
            })
            .collect();
        if !changes.is_empty() {
            self.changed.push(TaskChanges {
                trace_id: trace_id.to_string(),
                changes,
            });
        }
    }

    /// Appends a later part (parts arrive in input order).
    pub fn append(&mut self, later: Part) {
        self.tasks += later.tasks;
        self.verdicts += later.verdicts;
        self.changed.extend(later.changed);
    }

    /// The changes, named by the policies that made them.
    pub fn finish(self, base_policy: String, new_policy: String) -> PolicyChanges {
        let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
        for c in self.changed.iter().flat_map(|t| &t.changes) {
            *counts.entry((c.base.clone(), c.new.clone())).or_insert(0) += 1;
        }
        let mut transitions: Vec<Transition> = counts
            .into_iter()
            .map(|((base, new), verdicts)| Transition {
                base,
                new,
                verdicts,
            })
            .collect();
        // Most frequent first; ties in name order (the map's).
        transitions.sort_by_key(|t| std::cmp::Reverse(t.verdicts));
        PolicyChanges {
            base_policy,
            new_policy,
            tasks: self.tasks,
            verdicts: self.verdicts,
            changed: transitions.iter().map(|t| t.verdicts).sum(),
            transitions,
            changed_tasks: self.changed,
        }
    }
}

/// `outcome` or `outcome: reason`.
fn label(v: &Verdict) -> String {
    match v.reason {
        Some(r) => format!("{}: {}", v.outcome.name(), r.name()),
        None => v.outcome.name().to_string(),
    }
}

impl PolicyChanges {
    /// One sentence: how many verdicts change, in how many tasks.
    pub fn summary(&self) -> String {
        use crate::render::format::{pct, plural, thousands};
        format!(
            "policy {} → {}: {} of {} verdict{} change outcome or reason ({}), in {} of {} task{}",
            self.base_policy,
            self.new_policy,
            thousands(self.changed),
            thousands(self.verdicts),
            plural(self.verdicts),
            pct(self.changed, self.verdicts),
            thousands(self.changed_tasks.len() as u64),
            thousands(self.tasks),
            plural(self.tasks),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Origin;
    use crate::read::native::parse_line;
    use crate::replay::Outcome;

    fn verdict(index: usize, outcome: Outcome, reason: Option<crate::detect::Reason>) -> Verdict {
        let a = parse_line(
            r#"{"trace_id": "t", "content": "x"}"#,
            Origin {
                file: "t".into(),
                line: 1,
            },
        )
        .expect("a line");
        let mut v = Verdict::blank(&a, index, outcome);
        v.reason = reason;
        v
    }

    #[test]
    fn only_changed_outcomes_or_reasons_are_listed_and_counted() {
        use crate::detect::Reason::{DuplicateQuery, ToolError};
        let base = [
            verdict(0, Outcome::Rollback, Some(ToolError)),
            verdict(1, Outcome::Rollback, Some(DuplicateQuery)),
            verdict(2, Outcome::Rollback, Some(DuplicateQuery)),
            verdict(3, Outcome::Final, None),
        ];
        let new = [
            verdict(0, Outcome::Rollback, Some(ToolError)),
            verdict(1, Outcome::Ok, None),
            verdict(2, Outcome::Rollback, Some(ToolError)),
            verdict(3, Outcome::Final, None),
        ];
        let mut part = Part::default();
        part.add("a", &base, &new);
        let mut later = Part::default();
        later.add("b", &base, &base);
        later.add("c", &base[1..2], &new[1..2]);
        part.append(later);
        let c = part.finish("upstream".into(), "p.toml".into());
        assert_eq!((c.tasks, c.verdicts, c.changed), (3, 9, 3));
        let ids: Vec<&str> = c
            .changed_tasks
            .iter()
            .map(|t| t.trace_id.as_str())
            .collect();
        assert_eq!(ids, ["a", "c"], "input order, unchanged tasks left out");
        assert_eq!(
            c.transitions[0],
            Transition {
                base: "rollback: duplicate_query".into(),
                new: "ok".into(),
                verdicts: 2
            }
        );
        assert_eq!(c.changed_tasks[0].changes[1].new, "rollback: tool_error");
        assert!(
            c.summary().contains("3 of 9 verdicts change"),
            "{}",
            c.summary()
        );
        assert!(c.summary().contains("in 2 of 3 tasks"), "{}", c.summary());
    }
}
