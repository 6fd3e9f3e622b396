//! `mirotrace diff`: are two sets of runs (a base and a new model, prompt or
//! harness) different at staying on the rails, and is the difference real?
//!
//! Each side's traces are reduced to additive per-trace [`Counts`]
//! ([`counts`], read from the shared [`crate::metrics::Tally`], so a figure
//! named as in `analyze` equals `analyze`'s). Every metric is a ratio of
//! sums. Each side is cluster-bootstrapped over traces
//! ([`crate::metrics::stats`]), the change of every metric gets a percentile
//! interval and a p-value, p-values are Holm-adjusted across the metrics of
//! one comparison ([`comparison`](mod@comparison)), and a change is *significant* only when
//! the adjusted p is below alpha **and** the change exceeds a noise
//! threshold. Shared task ids get a paired view ([`paired`]); `--fail-on`
//! rules are in [`gate`]; [`view`] lays the report out for the table and
//! Markdown back ends (its mistakes block, the kind shares, chosen by
//! [`mistakes`] for every back end), [`render`] picks the format. [`synth`] generates
//! corpora with known rates for tests and demos.

pub mod comparison;
pub mod counts;
pub mod format;
pub mod gate;
pub mod mistakes;
pub mod paired;
pub mod partial;
pub mod policies;
pub mod render;
pub mod results;
pub mod rows;
pub mod synth;
pub mod view;

use serde::{Deserialize, Serialize};

pub use crate::metrics::GroupBy;
use crate::metrics::Tally;
use crate::replay::Verdict;
pub use comparison::{compare, Assessment, Comparison, MetricChange, Power, Sample, SideSummary};
pub use counts::{Counts, Metric, Unit, METRICS};
pub use rows::RowSet;

use std::collections::BTreeMap;

/// One side's rows by group key (`""` when not split), in key order, so
/// output and per-group bootstrap streams do not depend on input order.
pub type SideRows = BTreeMap<String, RowSet>;

/// Adds a trace's rows to `side`: the whole trace, or one row per group it
/// has lines in (split as `analyze --group-by` splits it, see [`GroupBy`]).
pub fn add_trace(side: &mut SideRows, trace_id: &str, verdicts: &[Verdict], by: Option<GroupBy>) {
    let mut row = |group: &str, tally: Tally| {
        let counts = Counts::of(&tally);
        match side.get_mut(group) {
            Some(set) => set.push(trace_id, &counts),
            None => side
                .entry(group.to_string())
                .or_default()
                .push(trace_id, &counts),
        }
    };
    match by {
        None => row("", Tally::of(verdicts)),
        Some(by) => {
            for (key, part) in by.split(verdicts) {
                row(key, Tally::of(part));
            }
        }
    }
}

/// Appends `part`'s rows to `side`, group by group, keeping arrival order.
pub fn append(side: &mut SideRows, part: SideRows) {
    for (key, set) in part {
        match side.get_mut(&key) {
            Some(rows) => rows.append(&set),
            None => {
                side.insert(key, set);
            }
        }
    }
}

/// The settings of a comparison: the bootstrap, the test and what is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    pub seed: u64,
    /// Bootstrap replicates per side.
    pub iterations: usize,
    /// Family-wise error rate (Holm) and 1 − confidence of the intervals.
    pub alpha: f64,
    /// Noise threshold for rate metrics, in percentage points.
    pub noise_pp: f64,
    /// Noise threshold for count metrics (per-trace events, streak lengths),
    /// in percent of the base value.
    pub noise_relative_pct: f64,
    /// Top movers shown per direction in the paired view.
    pub top: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            seed: 20_240_601,
            iterations: 2000,
            alpha: 0.05,
            noise_pp: 1.0,
            noise_relative_pct: 10.0,
            top: 5,
        }
    }
}

impl CompareOptions {
    /// Checks the settings; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(|(_, why)| why)
    }

    /// [`CompareOptions::validate`] naming the field at fault too: the one
    /// check for the CLI's flags and for the options a partial diff carries.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err((
                "alpha",
                format!(
                    "--alpha must be between 0 and 1 (exclusive), not {}",
                    self.alpha
                ),
            ));
        }
        if self.iterations == 0 {
            return Err(("iterations", "--iterations must be at least 1".into()));
        }
        let most = crate::metrics::stats::bootstrap::MAX_ITERATIONS;
        if self.iterations > most {
            return Err((
                "iterations",
                format!("--iterations {} is not in 1..={most}", self.iterations),
            ));
        }
        if !(self.noise_pp >= 0.0 && self.noise_pp.is_finite()) {
            return Err((
                "noise_pp",
                format!(
                    "--noise must be a non-negative number of percentage points, not {}",
                    self.noise_pp
                ),
            ));
        }
        if !(self.noise_relative_pct >= 0.0 && self.noise_relative_pct.is_finite()) {
            return Err((
                "noise_relative_pct",
                format!(
                    "--noise-relative must be a non-negative percentage, not {}",
                    self.noise_relative_pct
                ),
            ));
        }
        Ok(())
    }
}

/// How the numbers were made, for every output format.
#[derive(Debug, Clone, Serialize)]
pub struct Method {
    pub bootstrap: &'static str,
    pub iterations: usize,
    pub seed: u64,
    pub alpha: f64,
    pub confidence: f64,
    pub multiple_testing: &'static str,
    pub noise_pp: f64,
    pub noise_relative_pct: f64,
    pub paired_test: &'static str,
    pub group_by: Option<&'static str>,
}

impl Method {
    pub fn new(opts: &CompareOptions, group_by: Option<GroupBy>) -> Method {
        Method {
            bootstrap: "cluster bootstrap over traces, each side resampled independently; percentile intervals",
            iterations: opts.iterations,
            seed: opts.seed,
            alpha: opts.alpha,
            confidence: 1.0 - opts.alpha,
            multiple_testing: "holm-bonferroni across the tested metrics of each comparison",
            noise_pp: opts.noise_pp,
            noise_relative_pct: opts.noise_relative_pct,
            paired_test: "wilcoxon signed-rank on per-task rollback-rate differences (sign test alongside)",
            group_by: group_by.map(GroupBy::name),
        }
    }
}

/// Everything `diff` found, as rendered in every format.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub method: Method,
    pub comparisons: Vec<Comparison>,
    pub gates: Vec<gate::GateOutcome>,
    /// A policy diff's verdict-by-verdict changes (`diff --base-policy`
    /// / `--new-policy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_changes: Option<policies::PolicyChanges>,
}

impl DiffReport {
    /// Bootstraps the base once and compares it with every new group
    /// (`(group key, label, rows)`).
    pub fn build(
        base: Sample,
        new_groups: Vec<(Option<String>, String, RowSet)>,
        opts: &CompareOptions,
        group_by: Option<GroupBy>,
        pool: &crate::engine::Workers,
    ) -> DiffReport {
        let comparisons = new_groups
            .into_iter()
            .map(|(group, label, rows)| {
                let stream = format!("new:{}", group.as_deref().unwrap_or(""));
                let new = Sample::new(label, rows, opts, &stream, pool);
                compare(&base, &new, group, opts)
            })
            .collect();
        DiffReport {
            method: Method::new(opts, group_by),
            comparisons,
            gates: Vec::new(),
            policy_changes: None,
        }
    }

    /// Whether any gate fired.
    pub fn gate_fired(&self) -> bool {
        self.gates.iter().any(|g| g.fired)
    }
}
