//! One comparison: a base side against a new side (or one group of it),
//! metric by metric, with bootstrap intervals, Holm-adjusted p-values and
//! the noise threshold.

use serde::Serialize;

use super::counts::{Count, Counts, Metric, Unit, KIND_METRICS, METRICS};
use super::paired::{self, PairedView};
use super::{CompareOptions, RowSet};
use crate::metrics::stats::{
    bootstrap_p, holm, min_bootstrap_p, normal_isf, percentile_interval, stream_seed, ClusterSample,
};
use crate::render::format::{counted, thousands};

/// One side, ready to compare: its traces, their totals, and its bootstrap
/// replicates.
pub struct Sample {
    pub label: String,
    pub rows: RowSet,
    pub totals: Counts,
    pub replicates: Vec<Counts>,
}

impl Sample {
    /// Sums and bootstraps `rows` on `pool`; `stream` names the draw stream
    /// (see [`stream_seed`]).
    pub fn new(
        label: String,
        rows: RowSet,
        opts: &CompareOptions,
        stream: &str,
        pool: &crate::engine::Workers,
    ) -> Sample {
        // A canonical order, so the resamples depend on which rows the
        // side holds, not on the order its inputs (or partials) came in.
        let rows = rows.sorted();
        let mut totals = Counts::default();
        for i in 0..rows.len() {
            rows.add_to(i, &mut totals);
        }
        let sample = ClusterSample::uniform(rows.len());
        let seed = stream_seed(opts.seed, stream);
        let replicates = pool.install(|| {
            sample.replicate_sums(opts.iterations, seed, &Counts::default(), |t, i| {
                rows.add_to(i, t)
            })
        });
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
            attempts: self.totals.count(Count::Attempts),
            reached: self.totals.count(Count::Reached),
            calls: self.totals.count(Count::Calls),
            max_streak: (0..self.rows.len())
                .map(|i| self.rows.counts(i).get(Count::Longest.slot()))
                .max()
                .unwrap_or(0),
        }
    }
}

/// Size of one side, for headers.
#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    pub label: String,
    pub traces: usize,
    /// Every attempt, reached or not (as analyze's `attempts`).
    pub attempts: u64,
    /// Attempts the loops reached: the denominator of the attempt rates.
    pub reached: u64,
    pub calls: u64,
    /// The longest streak on the side (as analyze's `streaks.max`).
    pub max_streak: u64,
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
    /// The bootstrap standard error of the change (the spread of the
    /// replicates' changes), for the power figure.
    #[serde(skip)]
    pub spread: Option<f64>,
    /// The smallest change the test detects at [`POWER`] (docs/diff.md, "Power").
    #[serde(skip)]
    pub detectable: Option<Detectable>,
    /// Said when that exceeds the noise band; a passing `sig:` gate repeats it.
    #[serde(skip)]
    pub power_note: Option<String>,
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
    /// Task results on both sides: flips and pass^k (absent without results).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<super::results::ResultsView>,
    /// The mistake kinds' shares, in [`KIND_METRICS`] order, Holm-adjusted
    /// among themselves (docs/metrics.md, "Kind shares").
    pub kind_shares: Vec<MetricChange>,
    /// What the sides' sizes let the test detect.
    pub power: Power,
}

/// The power the test has at these sizes (docs/diff.md, "Power"): the
/// smallest change of the rollback rate it detects at [`POWER`], from the
/// bootstrap's own standard error of the change, by the normal
/// approximation at the level the first Holm step asks for (alpha / the
/// number of tested metrics, two-sided).
#[derive(Debug, Clone, Serialize)]
pub struct Power {
    /// The probability of detecting a change of [`Power::min_detectable_pp`].
    pub power: f64,
    /// In percentage points; `None` when the rollback rate is untested
    /// (undefined on a side, or the same in every replicate).
    pub min_detectable_pp: Option<f64>,
    /// It exceeds the noise band: real changes between the two go unseen.
    pub underpowered: bool,
    /// The sentence the report shows when underpowered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The power [`Power::min_detectable_pp`] is computed for.
pub const POWER: f64 = 0.8;

impl Power {
    /// From the rollback rate's change.
    fn of(rollback: Option<&MetricChange>) -> Power {
        let detectable = rollback.and_then(|m| m.detectable);
        Power {
            power: POWER,
            min_detectable_pp: detectable.map(|d| d.min * 100.0),
            underpowered: detectable.is_some_and(|d| d.min > d.band),
            note: rollback.and_then(|m| m.power_note.clone()),
        }
    }
}

/// The smallest change of a metric the test detects at [`POWER`], and the
/// noise band it is set against, both in the metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detectable {
    pub min: f64,
    pub band: f64,
}

/// The smallest detectable change of `mc` (in its unit) when it is tested
/// with `tested` others in its Holm family: (z of alpha/tested/2 + z of the
/// power) bootstrap standard errors.
fn detectable(mc: &MetricChange, tested: usize, opts: &CompareOptions) -> Option<Detectable> {
    let se = mc.spread.filter(|s| *s > 0.0 && mc.p.is_some())?;
    let level = opts.alpha / tested.max(1) as f64;
    Some(Detectable {
        min: (normal_isf(level / 2.0) + normal_isf(1.0 - POWER)) * se,
        band: noise_band(
            mc.def.unit,
            opts.noise_pp,
            opts.noise_relative_pct,
            mc.base.unwrap_or(0.0),
        ),
    })
}

/// `underpowered: with 12 traces a side, changes of the rollback rate
/// below 31 pp cannot be detected (…)`, when the smallest detectable
/// change exceeds the noise band.
fn power_note(mc: &MetricChange, base_traces: usize, new_traces: usize) -> Option<String> {
    let d = mc.detectable.filter(|d| d.min > d.band)?;
    let sizes = if base_traces == new_traces {
        format!("{} a side", counted(base_traces as u64, "trace"))
    } else {
        format!(
            "{} base and {} new traces",
            thousands(base_traces as u64),
            thousands(new_traces as u64)
        )
    };
    let name = if mc.metric == "rollback_rate" {
        "the rollback rate".to_string()
    } else {
        mc.metric.to_string()
    };
    let (min, band) = match mc.def.unit {
        Unit::Rate => (
            format!("{:.0} pp", d.min * 100.0),
            format!("{} pp", short(d.band * 100.0)),
        ),
        _ => (short(d.min), short(d.band)),
    };
    Some(format!(
        "underpowered: with {sizes}, changes of {name} below {min} cannot be detected \
         ({:.0}% power; the noise band is {band})",
        POWER * 100.0
    ))
}

fn short(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
        self.metrics
            .iter()
            .chain(self.kind_shares.iter())
            .find(|m| m.metric == id)
    }
}

/// Half-width of the noise band around a figure of `unit` whose base
/// value is `base`: `noise_pp` points for rates, `noise_relative_pct` of the
/// base for the rest. The one definition the test and the page's band use.
pub fn noise_band(unit: Unit, noise_pp: f64, noise_relative_pct: f64, base: f64) -> f64 {
    match unit {
        Unit::Rate => noise_pp / 100.0,
        Unit::PerTrace | Unit::Rollbacks | Unit::Tokens | Unit::Millis => {
            noise_relative_pct / 100.0 * base.abs()
        }
    }
}

/// Whether `change` (from `base`) is larger than the noise threshold.
fn exceeds_noise(opts: &CompareOptions, m: &Metric, base: f64, change: f64) -> bool {
    change.abs() > noise_band(m.unit, opts.noise_pp, opts.noise_relative_pct, base)
}

/// One metric's change, before the Holm adjustment.
fn change_of(
    m: &'static Metric,
    base: &Sample,
    new: &Sample,
    opts: &CompareOptions,
) -> MetricChange {
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
        let (lo, hi) = percentile_interval(&diffs, 1.0 - opts.alpha);
        [lo, hi]
    });
    let p = (defined && varies).then(|| bootstrap_p(&diffs));
    let spread = (diffs.len() > 1).then(|| {
        let n = diffs.len() as f64;
        let mean = diffs.iter().sum::<f64>() / n;
        (diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    });
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
        p_at_floor: p.is_some_and(|p| p <= min_bootstrap_p(diffs.len())),
        exceeds_noise: b
            .zip(change)
            .is_some_and(|(b, d)| exceeds_noise(opts, m, b, d)),
        significant: false,
        assessment: Assessment::Untested,
        def: m,
        spread,
        detectable: None,
        power_note: None,
    }
}

/// Compares every metric of `new` against `base`.
pub fn compare(
    base: &Sample,
    new: &Sample,
    group: Option<String>,
    opts: &CompareOptions,
) -> Comparison {
    let mut out: Vec<MetricChange> = METRICS
        .iter()
        .map(|m| change_of(m, base, new, opts))
        .collect();
    let tested = adjust(&mut out, opts);
    let mut kind_shares: Vec<MetricChange> = KIND_METRICS
        .iter()
        .map(|m| change_of(m, base, new, opts))
        .collect();
    let kinds_tested = adjust(&mut kind_shares, opts);
    for (list, tested) in [(&mut out, tested), (&mut kind_shares, kinds_tested)] {
        for mc in list.iter_mut() {
            mc.detectable = detectable(mc, tested, opts);
            mc.power_note = power_note(mc, base.rows.len(), new.rows.len());
        }
    }
    let power = Power::of(out.iter().find(|m| m.metric == "rollback_rate"));
    Comparison {
        group,
        base: base.summary(),
        new: new.summary(),
        metrics: out,
        tested,
        paired: paired::paired_view(&base.rows, &new.rows, opts.alpha, opts.top),
        results: super::results::results_view(&base.rows, &new.rows),
        kind_shares,
        power,
    }
}

/// Holm over the testable metrics only: a metric that is undefined on a
/// side or identical in every replicate can never be significant, and
/// counting it would only dilute the others. Returns how many were tested.
fn adjust(out: &mut [MetricChange], opts: &CompareOptions) -> usize {
    let tested: Vec<usize> = (0..out.len()).filter(|&i| out[i].p.is_some()).collect();
    let ps: Vec<f64> = tested.iter().filter_map(|&i| out[i].p).collect();
    for (&i, adj) in tested.iter().zip(holm(&ps)) {
        let mc = &mut out[i];
        mc.p_adjusted = Some(adj);
        mc.significant = adj < opts.alpha && mc.exceeds_noise;
        let up = mc.change.unwrap_or(0.0) > 0.0;
        mc.assessment = match (mc.significant, up == mc.higher_is_worse) {
            (false, _) => Assessment::NoChange,
            (true, true) => Assessment::Worse,
            (true, false) => Assessment::Better,
        };
    }
    tested.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Reason;

    /// `n` traces of 10 attempts; every `every`-th trace has 3 refusals.
    fn rows(n: usize, every: usize) -> RowSet {
        let mut set = RowSet::default();
        for i in 0..n {
            let mut c = Counts::default();
            c.0[Count::Traces.slot()] = 1;
            c.0[Count::Attempts.slot()] = 10;
            c.0[Count::Reached.slot()] = 10;
            if i % every == 0 {
                c.0[Count::Rollbacks.slot()] = 3;
                c.0[Count::Reason(Reason::Refusal).slot()] = 3;
            }
            set.push(&format!("t{i}"), &c);
        }
        set
    }

    fn run(opts: &CompareOptions, base_every: usize, new_every: usize) -> Comparison {
        let pool = crate::engine::Workers::new(Some(3)).expect("pool");
        let base = Sample::new("a".into(), rows(200, base_every), opts, "base", &pool);
        let new = Sample::new("b".into(), rows(200, new_every), opts, "new", &pool);
        compare(&base, &new, None, opts)
    }

    #[test]
    fn a_real_rise_is_worse_and_the_noise_threshold_can_veto_it() {
        let opts = CompareOptions::default();
        // 3% → 15% refusals.
        let c = run(&opts, 10, 2);
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
        let strict = CompareOptions {
            noise_pp: 20.0,
            ..CompareOptions::default()
        };
        let c = run(&strict, 10, 2);
        let refusal = c.metric("refusal").expect("row");
        assert!(!refusal.significant && refusal.p_adjusted.is_some_and(|p| p < 0.05));
        assert_eq!(refusal.assessment, Assessment::NoChange);
    }

    #[test]
    fn a_fall_in_a_higher_is_worse_metric_is_better() {
        let c = run(&CompareOptions::default(), 2, 10);
        assert_eq!(
            c.metric("refusal").map(|m| m.assessment),
            Some(Assessment::Better)
        );
        assert_eq!(c.worse().count(), 0);
    }
}
