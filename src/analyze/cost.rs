//! `analyze`'s cost breakdowns: the [`CostTally`] of each agent and each
//! model, and the cost of the rollbacks blamed on each tool.
//!
//! The run's own figures (total, discarded, failed, by reason) are in the
//! shared [`crate::metrics::Tally`]; this adds what only `analyze` shows.
//! A trace's attempts are first summed per (agent, model) pair in a short
//! list (a trace has few of each), then added to the maps once per trace,
//! so the per-attempt work is a pointer comparison.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::aggregate::name_slot;
use crate::metrics::cost::{CostSums, CostTally};
use crate::replay::{Outcome, Verdict};

/// The key of attempts whose trace names no model.
pub use crate::metrics::group::NO_MODEL;

/// Cost per agent, per model, and of rollbacks per blamed tool.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CostBreakdown {
    pub by_agent: BTreeMap<String, CostTally>,
    pub by_model: BTreeMap<String, CostTally>,
    /// Discarded attempts by the tool they are blamed on (format errors,
    /// refusals and loop ends under the no-call name).
    pub by_tool: BTreeMap<String, CostSums>,
}

impl CostBreakdown {
    pub fn merge(&mut self, o: &CostBreakdown) {
        for (k, c) in &o.by_agent {
            name_slot(&mut self.by_agent, k).add(c);
        }
        for (k, c) in &o.by_model {
            name_slot(&mut self.by_model, k).add(c);
        }
        for (k, c) in &o.by_tool {
            name_slot(&mut self.by_tool, k).add(c);
        }
    }

    /// Adds one trace's per-agent and per-model sums.
    pub fn add_trace(&mut self, trace: TraceCost) {
        for (agent, _, c) in &trace.pairs {
            name_slot(&mut self.by_agent, agent).add(c);
        }
        for (_, model, c) in &trace.pairs {
            let key = model.as_deref().unwrap_or(NO_MODEL);
            name_slot(&mut self.by_model, key).add(c);
        }
    }

    /// Adds the discarded attempts blamed on `tool` in one trace.
    pub fn add_tool(&mut self, tool: &str, sums: &CostSums) {
        name_slot(&mut self.by_tool, tool).add(sums);
    }
}

/// One trace's cost per (agent, model) pair, before it joins the maps:
/// each attempt is counted once, under its pair, and the pairs are added
/// to the agent and model maps once per trace.
#[derive(Default)]
pub struct TraceCost {
    /// In the order the pairs first occur, so agents and models reach
    /// their maps in the order they first occur.
    pairs: Vec<(Arc<str>, Option<Arc<str>>, CostTally)>,
}

impl TraceCost {
    /// Counts one attempt under its agent and its model (which the reader
    /// decided for every attempt: `read::attribution`).
    pub fn count(&mut self, v: &Verdict) {
        if v.outcome == Outcome::Unreachable {
            return;
        }
        let current = &v.model;
        let at = self.pairs.iter().position(|(a, m, _)| {
            same(a, &v.agent)
                && match (m, current) {
                    (Some(a), Some(b)) => same(a, b),
                    (None, None) => true,
                    _ => false,
                }
        });
        let at = match at {
            Some(i) => i,
            None => {
                self.pairs
                    .push((v.agent.clone(), current.clone(), CostTally::default()));
                self.pairs.len() - 1
            }
        };
        self.pairs[at].2.count(v);
    }
}

fn same(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}
