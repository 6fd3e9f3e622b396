//! `mirotrace analyze`'s library side: verdicts in, a report out.
//!
//! [`Collector`] folds traces' verdicts into an [`Aggregate`] (and one per
//! group with `--group-by`); collectors merge, so workers can fold shares
//! of the input in parallel. [`Analysis::finish`] adds what needs the whole
//! input (the bootstrap intervals), and the renderers turn an analysis into
//! a terminal table, Markdown or JSON. The table and Markdown share one
//! layout, [`view`], so they always say the same thing.

pub mod aggregate;
pub mod by_index;
pub mod cost;
pub mod cost_json;
pub mod groups;
pub mod hotspots;
pub mod partial;
mod partial_check;
pub mod rank;
pub mod recorded;
pub mod render_json;
mod trace_tools;
pub mod view;
pub mod worst_timeline;

pub use crate::metrics::stats::bootstrap::{DEFAULT_ITERATIONS, DEFAULT_SEED};
pub use crate::metrics::GroupBy;
pub use aggregate::Aggregate;
pub use groups::Groups;

use crate::model::{Attempt, TracePos};
use crate::replay::Verdict;

/// Rankings shown by default (`--top`).
pub const DEFAULT_TOP: usize = 10;

/// The policy a report was replayed with when it is not upstream's
/// defaults: a report must say so, or its rates read as upstream's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CustomPolicy {
    /// The file it was read from; `None` in a merged report, which knows
    /// only the fingerprint its partials carry.
    pub file: Option<String>,
    /// [`partial::policy_fingerprint`]: tells two custom policies apart.
    pub fingerprint: String,
}

impl CustomPolicy {
    /// `None` when `policy` is upstream's defaults (by content: a file that
    /// only restates them is the default).
    pub fn of(policy: &crate::policy::Policy, file: Option<String>) -> Option<CustomPolicy> {
        Self::from_fingerprint(partial::policy_fingerprint(policy), file)
    }

    /// As [`CustomPolicy::of`], from a fingerprint already computed.
    pub fn from_fingerprint(fingerprint: String, file: Option<String>) -> Option<CustomPolicy> {
        let default = partial::policy_fingerprint(&crate::policy::Policy::default());
        (fingerprint != default).then_some(CustomPolicy { file, fingerprint })
    }

    /// How a report names it: `policy.toml (custom, fingerprint …)`.
    pub fn describe(&self) -> String {
        match &self.file {
            Some(file) => format!("{file} (custom, fingerprint {})", self.fingerprint),
            None => format!("custom (fingerprint {})", self.fingerprint),
        }
    }
}

/// What the report is asked to show.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Entries in each ranking (hotspots, streaks, worst traces).
    pub top: usize,
    pub group_by: Option<GroupBy>,
    /// Seed of the bootstrap, so a report can be reproduced exactly.
    pub seed: u64,
    pub iterations: usize,
    /// MAX_CONSECUTIVE_ROLLBACKS of the policy replayed (streaks stop one below it).
    pub rollback_limit: u32,
    /// Keep the worst traces' timelines (for a report that opens them),
    /// gated by one [`worst_timeline::WorstGate`] per run.
    pub timelines: Option<std::sync::Arc<worst_timeline::WorstGate>>,
    /// The policy replayed, when not upstream's defaults (named in every format).
    pub policy: Option<CustomPolicy>,
    /// `--prices`: the cost figures in money too.
    pub prices: Option<std::sync::Arc<crate::metrics::prices::Prices>>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            top: DEFAULT_TOP,
            group_by: None,
            seed: DEFAULT_SEED,
            iterations: DEFAULT_ITERATIONS,
            rollback_limit: crate::policy::Policy::default().rollback_limit,
            timelines: None,
            policy: None,
            prices: None,
        }
    }
}

impl ReportOptions {
    /// These options for a replay under `policy` (read from `file`, if
    /// any): the streak limit and the policy every format names are taken
    /// from it here, the one place, so neither can disagree with the
    /// replay (`analyze` and the Python package both build them so).
    pub fn replaying(self, policy: &crate::policy::Policy, file: Option<String>) -> ReportOptions {
        ReportOptions {
            rollback_limit: policy.rollback_limit,
            policy: CustomPolicy::of(policy, file),
            ..self
        }
    }
}

/// Folds traces into the overall aggregate and, if asked, per group.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Collector {
    pub overall: Aggregate,
    pub groups: Option<Groups>,
}

impl Collector {
    /// Bounds the mistake kinds of every aggregate ([`Mistakes::bound_all`](crate::metrics::mistakes::Mistakes::bound_all)):
    /// for a collector read from a partial.
    pub fn bound_kinds(&mut self) {
        self.overall.mistakes.bound_all();
        if let Some(groups) = &mut self.groups {
            groups.bound_kinds();
        }
    }

    pub fn new(options: &ReportOptions) -> Collector {
        Collector {
            overall: Aggregate::new(options.top).keeping_timelines(options.timelines.clone()),
            groups: options.group_by.map(|by| Groups::new(by, options.top)),
        }
    }

    /// Adds one trace's verdicts; `at` is the trace's position (the origin
    /// of its first line; it orders ties in rankings).
    pub fn add_trace(&mut self, verdicts: &[Verdict], at: &TracePos) {
        self.add_trace_with_lines(verdicts, &[], at);
    }

    /// [`Collector::add_trace`] with the trace's lines (one per verdict, in
    /// order), which kept timelines quote from.
    pub fn add_trace_with_lines(&mut self, verdicts: &[Verdict], lines: &[Attempt], at: &TracePos) {
        self.overall.add_trace_with_lines(verdicts, lines, at);
        if let Some(g) = &mut self.groups {
            g.add_trace(verdicts, at);
        }
    }

    pub fn add_file(&mut self, label: &str) {
        self.overall.add_file();
        if let Some(g) = &mut self.groups {
            g.add_file(label);
        }
    }

    /// Counts `n` records of `file` that are mirotrace's own output.
    pub fn add_not_traces(&mut self, file: &str, kind: &str, n: u64) {
        self.overall.add_not_traces(kind, n);
        if let Some(g) = &mut self.groups {
            g.add_not_traces(file, kind, n);
        }
    }

    pub fn add_bad_line(&mut self, file: &str) {
        self.overall.add_bad_line();
        if let Some(g) = &mut self.groups {
            g.add_bad_line(file);
        }
    }

    pub fn merge(&mut self, other: Collector) {
        self.overall.merge(other.overall);
        if let (Some(ours), Some(theirs)) = (&mut self.groups, other.groups) {
            ours.merge(theirs);
        }
    }
}

/// An aggregate with its rollback rate's interval.
#[derive(Debug, Clone)]
pub struct Scored {
    pub aggregate: Aggregate,
    /// 95% cluster-bootstrap interval of the rollback rate
    /// ([`crate::metrics::stats::bootstrap`]).
    pub interval: Option<(f64, f64)>,
    /// The same for the rollback rate of passed and of failed tasks.
    pub result_intervals: [Option<(f64, f64)>; 2],
}

impl Scored {
    fn new(aggregate: Aggregate, options: &ReportOptions) -> Scored {
        // One trace has no spread to resample: an interval would pretend
        // to a certainty the data cannot give.
        let interval_of = |h: &crate::metrics::stats::RatioHistogram, seed| {
            if h.clusters() < 2 {
                None
            } else {
                h.interval(options.iterations, seed)
            }
        };
        let interval = interval_of(&aggregate.rate_by_trace, options.seed);
        let r = &aggregate.task_results;
        let stream = |name| crate::metrics::stats::stream_seed(options.seed, name);
        let result_intervals = [
            interval_of(&r.rate_success, stream("rate_success")),
            interval_of(&r.rate_failure, stream("rate_failure")),
        ];
        Scored {
            aggregate,
            interval,
            result_intervals,
        }
    }
}

/// The finished report, ready to render.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub overall: Scored,
    /// With `--group-by`: (group, its report), in order of first appearance.
    pub groups: Vec<(String, Scored)>,
    pub options: ReportOptions,
    /// Verdicts by source, and where task logs and the replay disagree.
    pub crosscheck: crate::crosscheck::Summary,
    /// Records the reading skipped as not traces (mirotrace's own
    /// outputs), per kind; set by the command that read them.
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// `--fail-on` rules on the run and each group; set by the command.
    pub gates: Vec<crate::render::gates::GateOutcome>,
}

impl Analysis {
    /// What its run skipped, as far as the analysis knows it: a partial
    /// keeps the counts of skipped lines and records, not their messages.
    pub fn skipped_counts(&self) -> crate::render::skipped::Skipped {
        let a = &self.overall.aggregate;
        crate::render::skipped::Skipped {
            without_messages: a.bad_lines + a.not_traces.values().sum::<u64>(),
            ..Default::default()
        }
    }

    /// Computes the intervals. The bootstrap runs on the current rayon pool.
    pub fn finish(collector: Collector, options: &ReportOptions) -> Analysis {
        let groups = match collector.groups {
            None => Vec::new(),
            Some(g) => g
                .into_sorted()
                .into_iter()
                .map(|(key, agg)| (key, Scored::new(agg, options)))
                .collect(),
        };
        Analysis {
            overall: Scored::new(collector.overall, options),
            groups,
            options: options.clone(),
            crosscheck: Default::default(),
            skipped: Default::default(),
            gates: Vec::new(),
        }
    }
}
