//! `--group-by`: one [`Aggregate`] per file, model or agent, so the key
//! rates can be compared side by side. What belongs to which group is
//! [`GroupBy`]'s to say.

use std::collections::HashMap;

use super::aggregate::{Aggregate, MAX_NAMES, OTHER};
use crate::metrics::GroupBy;
use crate::model::TracePos;
use crate::replay::Verdict;

/// Aggregates per group. A trace whose lines fall into several groups
/// (a main agent and its sub-agents, say) counts as a trace in each.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Groups {
    pub by: GroupBy,
    top: usize,
    groups: HashMap<String, Aggregate>,
}

impl Groups {
    /// Bounds each group's mistake kinds (a partial's, as read).
    pub fn bound_kinds(&mut self) {
        for aggregate in self.groups.values_mut() {
            aggregate.mistakes.bound_all();
        }
    }

    pub fn new(by: GroupBy, top: usize) -> Groups {
        Groups {
            by,
            top,
            groups: HashMap::new(),
        }
    }

    pub fn add_trace(&mut self, verdicts: &[Verdict], at: &TracePos) {
        for (key, part) in self.by.split(verdicts) {
            self.slot(key).add_verdicts(&part, at);
        }
    }

    /// Counts an opened input (only files have one to attribute it to).
    pub fn add_file(&mut self, label: &str) {
        if self.by == GroupBy::File {
            self.slot(label).add_file();
        }
    }

    /// Counts records of `file` that are not traces (only file groups
    /// can place them).
    pub fn add_not_traces(&mut self, file: &str, kind: &str, n: u64) {
        if self.by == GroupBy::File {
            self.slot(file).add_not_traces(kind, n);
        }
    }

    /// Counts a skipped line of `file` (only file groups can place it).
    pub fn add_bad_line(&mut self, file: &str) {
        if self.by == GroupBy::File {
            self.slot(file).add_bad_line();
        }
    }

    /// Each group's key and aggregate, in no particular order.
    pub fn aggregates(&self) -> impl Iterator<Item = (&str, &Aggregate)> {
        self.groups.iter().map(|(k, a)| (k.as_str(), a))
    }

    pub fn merge(&mut self, other: Groups) {
        for (key, agg) in other.groups {
            self.slot(&key).merge(agg);
        }
    }

    /// The groups in order of first appearance in the input (groups without
    /// traces last, by name).
    pub fn into_sorted(self) -> Vec<(String, Aggregate)> {
        let mut all: Vec<(String, Aggregate)> = self.groups.into_iter().collect();
        all.sort_by(|(ka, a), (kb, b)| {
            // Groups without traces last.
            let order = |agg: &Aggregate| (agg.first_trace.is_none(), agg.first_trace.clone());
            order(a).cmp(&order(b)).then_with(|| ka.cmp(kb))
        });
        all
    }

    fn slot(&mut self, key: &str) -> &mut Aggregate {
        let key = if self.groups.contains_key(key) || self.groups.len() < MAX_NAMES {
            key
        } else {
            OTHER
        };
        if !self.groups.contains_key(key) {
            self.groups
                .insert(key.to_string(), Aggregate::new(self.top));
        }
        self.groups.get_mut(key).expect("inserted above")
    }
}
