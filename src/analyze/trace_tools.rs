//! One trace's per-tool figures, gathered before they join the run's
//! maps: a trace names few tools, so a name costs one map lookup per
//! trace instead of several per attempt (the maps are ordered by name,
//! and every lookup compares strings).
//!
//! Names are flushed in the order they were first seen, so the bound on
//! distinct names admits the same ones as counting attempt by attempt.

use std::collections::BTreeMap;

use super::aggregate::{name_slot, ToolStats};
use super::cost::CostBreakdown;
use crate::metrics::cost::CostSums;
use crate::replay::Verdict;

/// Distinct names held before a flush, so that a trace naming thousands
/// of tools does not search a long list.
const HELD: usize = 32;

#[derive(Default)]
pub(super) struct TraceTools<'v> {
    stats: Vec<(&'v str, ToolStats)>,
    cost: Vec<(&'v str, CostSums)>,
}

impl<'v> TraceTools<'v> {
    /// The counts of calls to or rollbacks blamed on `name`.
    pub fn stats(&mut self, name: &'v str) -> &mut ToolStats {
        slot(&mut self.stats, name)
    }

    /// Counts a discarded attempt against the tool it is blamed on.
    pub fn count_cost(&mut self, v: &Verdict, name: &'v str) {
        slot(&mut self.cost, name).count(v);
    }

    /// Whether enough names are held to flush before the next attempt.
    pub fn full(&self) -> bool {
        self.stats.len() >= HELD || self.cost.len() >= HELD
    }

    /// Adds the held figures to the run's maps and empties the lists.
    pub fn flush(&mut self, tools: &mut BTreeMap<String, ToolStats>, cost: &mut CostBreakdown) {
        for (name, s) in self.stats.drain(..) {
            name_slot(tools, name).merge(&s);
        }
        for (name, c) in self.cost.drain(..) {
            cost.add_tool(name, &c);
        }
    }
}

fn slot<'a, 'v, T: Default>(list: &'a mut Vec<(&'v str, T)>, name: &'v str) -> &'a mut T {
    let i = match list.iter().position(|(n, _)| *n == name) {
        Some(i) => i,
        None => {
            list.push((name, T::default()));
            list.len() - 1
        }
    };
    &mut list[i].1
}
