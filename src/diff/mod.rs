//! `mirotrace diff`: are two sets of runs (a base and a new model, prompt or
//! harness) different at staying on the rails, and is the difference real?
//!
//! Each side's traces are reduced to additive per-trace [`Counts`]
//! ([`metrics`]); every metric is a ratio of sums. Each side is
//! cluster-bootstrapped over traces ([`stats`]), the change of every metric
//! gets a percentile interval and a p-value, p-values are Holm-adjusted
//! across the metrics of one comparison, and a change is *significant* only
//! when the adjusted p is below alpha **and** the change exceeds a noise
//! threshold. Shared task ids get a paired view ([`paired`]); `--fail-on`
//! rules are in [`gate`]; [`render`] writes table, markdown and JSON.
//! [`synth`] generates corpora with known rates for tests and demos.

pub mod format;
pub mod gate;
pub mod metrics;
pub mod paired;
pub mod render;
pub mod stats;
pub mod synth;

use serde::Serialize;

pub use metrics::{Counts, Metric, Unit, METRICS};
use paired::PairedView;

/// One replayed trace, reduced to what `diff` needs.
#[derive(Debug, Clone)]
pub struct TraceRow {
    pub trace_id: String,
    /// The first `meta.model` recorded in the trace (a trace is one cluster,
    /// so it belongs to one group).
    pub model: Option<String>,
    /// The input the trace was read from.
    pub file: String,
    pub counts: Counts,
}

/// How the new side is split into groups, each compared with the whole base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    Model,
    File,
}

impl GroupBy {
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Model => "model",
            GroupBy::File => "file",
        }
    }

    fn key(self, row: &TraceRow) -> String {
        match self {
            // As `analyze` does: the file stands in where no model is recorded.
            GroupBy::Model => row.model.clone().unwrap_or_else(|| row.file.clone()),
            GroupBy::File => row.file.clone(),
        }
    }
}

/// Splits rows into groups by key, in key order (so output and per-group
/// bootstrap streams do not depend on input order).
pub fn split(rows: Vec<TraceRow>, by: GroupBy) -> Vec<(String, Vec<TraceRow>)> {
    let mut groups: std::collections::BTreeMap<String, Vec<TraceRow>> = Default::default();
    for r in rows {
        groups.entry(by.key(&r)).or_default().push(r);
    }
    groups.into_iter().collect()
}

/// The knobs of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
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

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 20_240_601,
            iterations: 2000,
            alpha: 0.05,
            noise_pp: 1.0,
            noise_relative_pct: 10.0,
            top: 5,
        }
    }
}

impl Config {
    /// Checks the knobs; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!(
                "--alpha must be between 0 and 1 (exclusive), not {}",
                self.alpha
            ));
        }
        if self.iterations == 0 {
            return Err("--iterations must be at least 1".into());
        }
        if !(self.noise_pp >= 0.0 && self.noise_pp.is_finite()) {
            return Err(format!(
                "--noise must be a non-negative number of percentage points, not {}",
                self.noise_pp
            ));
        }
        if !(self.noise_relative_pct >= 0.0 && self.noise_relative_pct.is_finite()) {
            return Err(format!(
                "--noise-relative must be a non-negative percentage, not {}",
                self.noise_relative_pct
            ));
        }
        Ok(())
    }

    /// Whether `change` (from `base`) is larger than the noise threshold.
    fn exceeds_noise(&self, m: &Metric, base: f64, change: f64) -> bool {
        match m.unit {
            Unit::Rate => change.abs() > self.noise_pp / 100.0,
            Unit::PerTrace | Unit::Attempts => {
                change.abs() > self.noise_relative_pct / 100.0 * base.abs()
            }
        }
    }
}

/// One side, ready to compare: its traces, their totals, and its bootstrap
/// replicates.
pub struct Sample {
    pub label: String,
    pub rows: Vec<TraceRow>,
    pub totals: Counts,
    pub replicates: Vec<Counts>,
}

impl Sample {
    /// Sums and bootstraps `rows`; `stream` names the draw stream (see
    /// [`stats::stream_seed`]).
    pub fn new(
        label: String,
        rows: Vec<TraceRow>,
        cfg: &Config,
        stream: &str,
        pool: &crate::engine::Workers,
    ) -> Sample {
        let mut totals = Counts::default();
        let counts: Vec<Counts> = rows.iter().map(|r| r.counts).collect();
        for c in &counts {
            totals.add(c);
        }
        let replicates = stats::bootstrap_totals(
            &counts,
            cfg.iterations,
            stats::stream_seed(cfg.seed, stream),
            pool,
        );
        Sample {
            label,
            rows,
            totals,
            replicates,
        }
    }

    fn summary(&self) -> SideSummary {
        SideSummary {
            label: self.label.clone(),
            traces: self.rows.len(),
            attempts: self.totals.get(metrics::field::ATTEMPTS),
            calls: self.totals.get(metrics::field::CALLS),
        }
    }
}

/// Size of one side, for headers.
#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    pub label: String,
    pub traces: usize,
    pub attempts: u64,
    pub calls: u64,
}

/// The outcome for one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Assessment {
    /// Significant, in the bad direction.
    Worse,
    /// Significant, in the good direction.
    Better,
    /// Tested, not significant (or below the noise threshold).
    NoChange,
    /// Not testable: undefined on a side, or constant on both.
    Untested,
}

/// One metric, base vs new.
#[derive(Debug, Clone, Serialize)]
pub struct MetricChange {
    pub metric: &'static str,
    pub unit: &'static str,
    pub higher_is_worse: bool,
    /// Rates are fractions (0.081 = 8.1%).
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// Numerator and denominator sums, for transparency.
    pub base_counts: [u64; 2],
    pub new_counts: [u64; 2],
    /// new − base.
    pub change: Option<f64>,
    /// (new − base) / base; `None` when base is 0 or undefined.
    pub relative_change: Option<f64>,
    /// Percentile interval of the change at confidence 1 − alpha.
    pub ci: Option<[f64; 2]>,
    pub p: Option<f64>,
    /// Holm-adjusted across the tested metrics of this comparison.
    pub p_adjusted: Option<f64>,
    /// `p` is the smallest the bootstrap can resolve (no replicate crossed
    /// zero): the true p-value may be smaller still.
    pub p_at_floor: bool,
    pub exceeds_noise: bool,
    pub significant: bool,
    pub assessment: Assessment,
    #[serde(skip)]
    pub def: &'static Metric,
}

impl MetricChange {
    /// Zero (or undefined) on both sides: nothing to show in a table.
    pub fn is_idle(&self) -> bool {
        self.base.unwrap_or(0.0) == 0.0 && self.new.unwrap_or(0.0) == 0.0
    }
}

/// Base vs one new side (or one group of it).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The group key under `--group-by`.
    pub group: Option<String>,
    pub base: SideSummary,
    pub new: SideSummary,
    /// In [`METRICS`] order.
    pub metrics: Vec<MetricChange>,
    /// Metrics in the Holm family.
    pub tested: usize,
    pub paired: Option<PairedView>,
}

impl Comparison {
    pub fn worse(&self) -> impl Iterator<Item = &MetricChange> {
        self.metrics
            .iter()
            .filter(|m| m.assessment == Assessment::Worse)
    }

    pub fn better(&self) -> impl Iterator<Item = &MetricChange> {
        self.metrics
            .iter()
            .filter(|m| m.assessment == Assessment::Better)
    }

    pub fn metric(&self, id: &str) -> Option<&MetricChange> {
        self.metrics.iter().find(|m| m.metric == id)
    }
}

/// Compares every metric of `new` against `base`.
pub fn compare(base: &Sample, new: &Sample, group: Option<String>, cfg: &Config) -> Comparison {
    let lo_q = cfg.alpha / 2.0;
    let mut out: Vec<MetricChange> = METRICS
        .iter()
        .map(|m| {
            let b = m.value(&base.totals);
            let n = m.value(&new.totals);
            let change = b.zip(n).map(|(b, n)| n - b);
            let relative_change = b.zip(change).and_then(|(b, d)| (b != 0.0).then(|| d / b));
            let mut diffs: Vec<f64> = base
                .replicates
                .iter()
                .zip(&new.replicates)
                .filter_map(|(rb, rn)| Some(m.value(rn)? - m.value(rb)?))
                .collect();
            diffs.sort_by(f64::total_cmp);
            let defined = change.is_some() && !diffs.is_empty();
            let varies = diffs.iter().any(|d| *d != 0.0);
            let ci = defined.then(|| {
                [
                    stats::quantile(&diffs, lo_q),
                    stats::quantile(&diffs, 1.0 - lo_q),
                ]
            });
            let p = (defined && varies).then(|| stats::bootstrap_p(&diffs));
            MetricChange {
                metric: m.id,
                unit: m.unit.name(),
                higher_is_worse: m.higher_is_worse,
                base: b,
                new: n,
                base_counts: [base.totals.get(m.num), base.totals.get(m.den)],
                new_counts: [new.totals.get(m.num), new.totals.get(m.den)],
                change,
                relative_change,
                ci,
                p,
                p_adjusted: None,
                p_at_floor: p.is_some_and(|p| p <= stats::min_bootstrap_p(diffs.len())),
                exceeds_noise: b
                    .zip(change)
                    .is_some_and(|(b, d)| cfg.exceeds_noise(m, b, d)),
                significant: false,
                assessment: Assessment::Untested,
                def: m,
            }
        })
        .collect();
    // Holm over the testable metrics only: a metric that is undefined on a
    // side or identical in every replicate can never be significant, and
    // counting it would only dilute the others.
    let tested: Vec<usize> = (0..out.len()).filter(|&i| out[i].p.is_some()).collect();
    let ps: Vec<f64> = tested.iter().filter_map(|&i| out[i].p).collect();
    for (&i, adj) in tested.iter().zip(stats::holm(&ps)) {
        let mc = &mut out[i];
        mc.p_adjusted = Some(adj);
        mc.significant = adj < cfg.alpha && mc.exceeds_noise;
        let up = mc.change.unwrap_or(0.0) > 0.0;
        mc.assessment = match (mc.significant, up == mc.higher_is_worse) {
            (false, _) => Assessment::NoChange,
            (true, true) => Assessment::Worse,
            (true, false) => Assessment::Better,
        };
    }
    Comparison {
        group,
        base: base.summary(),
        new: new.summary(),
        metrics: out,
        tested: tested.len(),
        paired: paired::paired_view(&base.rows, &new.rows, cfg.alpha, cfg.top),
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
    pub fn new(cfg: &Config, group_by: Option<GroupBy>) -> Method {
        Method {
            bootstrap: "cluster bootstrap over traces, each side resampled independently; percentile intervals",
            iterations: cfg.iterations,
            seed: cfg.seed,
            alpha: cfg.alpha,
            confidence: 1.0 - cfg.alpha,
            multiple_testing: "holm-bonferroni across the tested metrics of each comparison",
            noise_pp: cfg.noise_pp,
            noise_relative_pct: cfg.noise_relative_pct,
            paired_test: "wilcoxon signed-rank on per-task rollback-rate differences (sign test alongside)",
            group_by: group_by.map(GroupBy::name),
        }
    }
}

/// Everything `diff` found, as rendered in every format.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub method: Method,
    pub comparisons: Vec<Comparison>,
    pub gates: Vec<gate::GateOutcome>,
}

impl Report {
    /// Bootstraps the base once and compares it with every new group.
    pub fn build(
        base: Sample,
        new_groups: Vec<(Option<String>, String, Vec<TraceRow>)>,
        cfg: &Config,
        group_by: Option<GroupBy>,
        pool: &crate::engine::Workers,
    ) -> Report {
        let comparisons = new_groups
            .into_iter()
            .map(|(group, label, rows)| {
                let stream = format!("new:{}", group.as_deref().unwrap_or(""));
                let new = Sample::new(label, rows, cfg, &stream, pool);
                compare(&base, &new, group, cfg)
            })
            .collect();
        Report {
            method: Method::new(cfg, group_by),
            comparisons,
            gates: Vec::new(),
        }
    }

    /// Whether any gate fired.
    pub fn gate_fired(&self) -> bool {
        self.gates.iter().any(|g| g.fired)
    }
}

#[cfg(test)]
mod tests {
    use super::metrics::field;
    use super::*;
    use crate::detect::Reason;

    /// `n` traces of 10 attempts; every `every`-th trace has 3 refusals.
    fn rows(n: usize, every: usize) -> Vec<TraceRow> {
        (0..n)
            .map(|i| {
                let mut c = Counts::default();
                c.0[field::TRACES] = 1;
                c.0[field::ATTEMPTS] = 10;
                if i % every == 0 {
                    c.0[field::ROLLBACKS] = 3;
                    c.0[field::reason(Reason::Refusal)] = 3;
                }
                TraceRow {
                    trace_id: format!("t{i}"),
                    model: None,
                    file: "f".into(),
                    counts: c,
                }
            })
            .collect()
    }

    fn run(cfg: &Config, base_every: usize, new_every: usize) -> Comparison {
        let pool = crate::engine::Workers::new(Some(3)).expect("pool");
        let base = Sample::new("a".into(), rows(200, base_every), cfg, "base", &pool);
        let new = Sample::new("b".into(), rows(200, new_every), cfg, "new", &pool);
        compare(&base, &new, None, cfg)
    }

    #[test]
    fn a_real_rise_is_worse_and_the_noise_threshold_can_veto_it() {
        let cfg = Config::default();
        // 3% → 15% refusals.
        let c = run(&cfg, 10, 2);
        let refusal = c.metric("refusal").expect("row");
        assert_eq!(refusal.assessment, Assessment::Worse);
        assert!((refusal.change.unwrap_or(0.0) - 0.12).abs() < 1e-12);
        assert!(refusal.p_at_floor);
        let [lo, hi] = refusal.ci.expect("ci");
        assert!(lo > 0.0 && lo < 0.12 && 0.12 < hi, "{lo}..{hi}");
        // Only rollback_rate and refusal vary; the rest are untested and
        // stay out of the Holm family.
        assert_eq!(c.tested, 2);
        assert_eq!(
            c.metric("format_error").map(|m| m.assessment),
            Some(Assessment::Untested)
        );
        let strict = Config {
            noise_pp: 20.0,
            ..Config::default()
        };
        let c = run(&strict, 10, 2);
        let refusal = c.metric("refusal").expect("row");
        assert!(!refusal.significant && refusal.p_adjusted.is_some_and(|p| p < 0.05));
        assert_eq!(refusal.assessment, Assessment::NoChange);
    }

    #[test]
    fn a_fall_in_a_higher_is_worse_metric_is_better() {
        let c = run(&Config::default(), 2, 10);
        assert_eq!(
            c.metric("refusal").map(|m| m.assessment),
            Some(Assessment::Better)
        );
        assert_eq!(c.worse().count(), 0);
    }
}
