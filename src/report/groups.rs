//! `--group-by`: one [`Aggregate`] per file, model or agent, so the key
//! rates can be compared side by side.

use std::collections::HashMap;

use super::aggregate::{Aggregate, MAX_NAMES, OTHER};
use crate::replay::Verdict;

/// What to split the report by (`analyze --group-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// The input file.
    File,
    /// `meta.model` of each line, or the file name where it is not recorded.
    Model,
    /// `main` or the sub-agent name.
    Agent,
}

impl GroupBy {
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::File => "file",
            GroupBy::Model => "model",
            GroupBy::Agent => "agent",
        }
    }

    /// The group a verdict belongs to.
    pub fn key_of(self, v: &Verdict) -> &str {
        match self {
            GroupBy::File => &v.origin.file,
            GroupBy::Model => v.model.as_deref().unwrap_or(&v.origin.file),
            GroupBy::Agent => &v.agent,
        }
    }
}

/// Aggregates per group. A trace whose lines fall into several groups
/// (a main agent and its sub-agents, say) counts as a trace in each.
#[derive(Debug, Clone)]
pub struct Groups {
    pub by: GroupBy,
    top: usize,
    groups: HashMap<String, Aggregate>,
}

impl Groups {
    pub fn new(by: GroupBy, top: usize) -> Groups {
        Groups {
            by,
            top,
            groups: HashMap::new(),
        }
    }

    pub fn add_trace(&mut self, verdicts: &[Verdict], ordinal: u64) {
        // Split in file order, keeping each group's lines in order.
        let mut parts: Vec<(&str, Vec<&Verdict>)> = Vec::new();
        for v in verdicts {
            let key = self.by.key_of(v);
            match parts.iter_mut().find(|(k, _)| *k == key) {
                Some((_, part)) => part.push(v),
                None => parts.push((key, vec![v])),
            }
        }
        for (key, part) in parts {
            self.slot(key).add_verdicts(&part, ordinal);
        }
    }

    /// Counts an opened input (only files have one to attribute it to).
    pub fn add_file(&mut self, label: &str) {
        if self.by == GroupBy::File {
            self.slot(label).add_file();
        }
    }

    /// Counts a skipped line of `file` (only file groups can place it).
    pub fn add_bad_line(&mut self, file: &str) {
        if self.by == GroupBy::File {
            self.slot(file).add_bad_line();
        }
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
            let order = |agg: &Aggregate| agg.first_trace.unwrap_or(u64::MAX);
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
