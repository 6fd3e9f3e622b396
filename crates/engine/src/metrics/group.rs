//! Groups: which traces' figures are compared side by side (`analyze
//! --group-by`, `diff --group-by`).
//!
//! Every verdict belongs to one group. A trace whose lines fall into several
//! groups (a main agent and its sub-agents, say, or a model switched
//! mid-run) has a part in each, and each part counts as a trace of its
//! group: in its tally and as one cluster of its group's bootstrap.

use crate::replay::Verdict;

/// The model name the per-model tables (mistakes, cost) give attempts
/// whose trace names no model.
pub const NO_MODEL: &str = "(model not recorded)";

/// What to group by (`--group-by`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
pub enum GroupBy {
    /// The input file.
    File,
    /// Each attempt's model (its own, else its trace's: `read::attribution`),
    /// or the file name where its trace names none.
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

    /// A trace's verdicts split into its groups' parts, each in file order,
    /// the groups in order of first appearance.
    pub fn split(self, verdicts: &[Verdict]) -> Vec<(&str, Vec<&Verdict>)> {
        let mut parts: Vec<(&str, Vec<&Verdict>)> = Vec::new();
        for v in verdicts {
            let key = self.key_of(v);
            match parts.iter_mut().find(|(k, _)| *k == key) {
                Some((_, part)) => part.push(v),
                None => parts.push((key, vec![v])),
            }
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testing::verdict;
    use crate::replay::Outcome;

    #[test]
    fn parts_keep_file_order_and_first_appearance() {
        let mut vs = vec![
            verdict("main", 0, Outcome::Ok, None, Some(0), &[]),
            verdict("agent-browsing_1", 0, Outcome::Ok, None, Some(0), &[]),
            verdict("main", 1, Outcome::Final, None, Some(0), &[]),
        ];
        vs[1].model = Some("m2".into());
        let by_agent = GroupBy::Agent.split(&vs);
        let keys: Vec<(&str, usize)> = by_agent.iter().map(|(k, p)| (*k, p.len())).collect();
        assert_eq!(keys, [("main", 2), ("agent-browsing", 1)]);
        let by_model = GroupBy::Model.split(&vs);
        let keys: Vec<&str> = by_model.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["f", "m2"], "the file stands in for a missing model");
    }
}
