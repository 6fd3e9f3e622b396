//! `analyze`'s cost breakdowns: the [`CostTally`] of each agent and each
//! model, and the cost of the rollbacks blamed on each tool.
//!
//! The run's own figures (total, discarded, failed, by reason) are in the
//! shared [`crate::metrics::Tally`]; this adds what only `analyze` shows.
//! A trace's attempts are first summed per agent and per model in a short
//! list (a trace has few of each), then added to the maps once per trace,
//! so the per-attempt work is a pointer comparison.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::aggregate::name_slot;
use crate::metrics::cost::{CostSums, CostTally};
use crate::replay::{Outcome, Verdict};

/// The key of attempts whose line names no model.
pub const NO_MODEL: &str = "(model not recorded)";

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
        for (k, c) in &trace.agents {
            name_slot(&mut self.by_agent, k).add(c);
        }
        for (k, c) in &trace.models {
            let key = k.as_deref().unwrap_or(NO_MODEL);
            name_slot(&mut self.by_model, key).add(c);
        }
    }

    /// Counts a discarded attempt against the tool it is blamed on.
    pub fn count_tool(&mut self, v: &Verdict, tool: &str) {
        name_slot(&mut self.by_tool, tool).count(v);
    }
}

/// One trace's cost per agent and per model, before it joins the maps.
#[derive(Default)]
pub struct TraceCost {
    agents: Vec<(Arc<str>, CostTally)>,
    models: Vec<(Option<Arc<str>>, CostTally)>,
    /// The model named last in the trace so far.
    model: Option<Arc<str>>,
}

impl TraceCost {
    /// Counts one attempt under its agent and model: the line's
    /// `meta.model`, else the last one an earlier line of the trace named
    /// (a model is usually named once, on a trace's first line).
    pub fn count(&mut self, v: &Verdict) {
        if v.outcome == Outcome::Unreachable {
            return;
        }
        if v.model.is_some() {
            self.model.clone_from(&v.model);
        }
        let agent = match self.agents.iter().position(|(a, _)| same(a, &v.agent)) {
            Some(i) => i,
            None => {
                self.agents.push((v.agent.clone(), CostTally::default()));
                self.agents.len() - 1
            }
        };
        self.agents[agent].1.count(v);
        let current = &self.model;
        let model = match self.models.iter().position(|(m, _)| match (m, current) {
            (Some(a), Some(b)) => same(a, b),
            (None, None) => true,
            _ => false,
        }) {
            Some(i) => i,
            None => {
                self.models.push((current.clone(), CostTally::default()));
                self.models.len() - 1
            }
        };
        self.models[model].1.count(v);
    }
}

/// Equal names: the same shared string, or the same text.
fn same(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}
