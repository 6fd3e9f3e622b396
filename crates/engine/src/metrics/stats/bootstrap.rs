//! The cluster bootstrap over traces, the one resampling scheme behind every
//! interval and p-value.
//!
//! The attempts of one trace share a model state, a task and a session
//! history, so they are not independent draws. Resampling whole traces
//! keeps that dependence; treating each attempt as independent would give
//! intervals that are too narrow. A replicate draws as many traces as there
//! are, with replacement; replicate `b` draws from its own generator
//! ([`replicate_rng`]), so the result does not depend on scheduling.

use foldhash::HashMap;
use rayon::prelude::*;

use super::{percentile_interval, SplitMix64};

/// Default number of resamples of `analyze`'s rollback-rate interval.
pub const DEFAULT_ITERATIONS: usize = 1000;
/// Most bootstrap resamples a run may ask for (`--iterations`): each
/// replicate keeps a few figures in memory, and past this many the
/// reported digits no longer move (the smallest p-value is 2 / 100 001).
pub const MAX_ITERATIONS: usize = 100_000;
/// Default seed of `analyze`'s interval, so that reports are reproducible.
pub const DEFAULT_SEED: u64 = 42;
/// Coverage of `analyze`'s intervals.
pub const LEVEL: f64 = 0.95;

/// The generator of replicate `b` of a bootstrap seeded with `seed`.
pub fn replicate_rng(seed: u64, b: u64) -> SplitMix64 {
    SplitMix64::new(seed ^ SplitMix64::new(b).next_u64())
}

/// Clusters to draw from, each with a weight (how many identical traces it
/// stands for). A replicate draws the total weight's worth of clusters.
pub struct ClusterSample {
    /// Total weight: the number of draws per replicate.
    draws: u64,
    /// `None` when every weight is 1: the alias table of equal weights
    /// keeps every column (and costs 16 bytes a cluster, 40 more while it is
    /// built), so the column is drawn directly, the same way.
    alias: Option<AliasTable>,
}

impl ClusterSample {
    /// Weighted clusters; a cluster of weight 0 is never drawn.
    pub fn new(weights: &[u64]) -> ClusterSample {
        ClusterSample {
            draws: weights.iter().sum(),
            alias: Some(AliasTable::new(weights)),
        }
    }

    /// `n` clusters of weight 1: the same draws as `new(&[1; n])`.
    pub fn uniform(n: usize) -> ClusterSample {
        ClusterSample {
            draws: n as u64,
            alias: None,
        }
    }

    /// Draws per replicate.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// One cluster's index, with probability proportional to its weight.
    #[inline]
    pub fn draw(&self, rng: &mut SplitMix64) -> usize {
        match &self.alias {
            Some(alias) => alias.draw(rng),
            None => column(rng.next_u64(), self.draws),
        }
    }

    /// For each of `iterations` replicates (in parallel on the current rayon
    /// pool, returned in order): `add` applied to `start` for every cluster
    /// drawn. Resampled sums of additive per-trace figures. At most
    /// [`MAX_ITERATIONS`] replicates are drawn.
    pub fn replicate_sums<T, F>(&self, iterations: usize, seed: u64, start: &T, add: F) -> Vec<T>
    where
        T: Clone + Send + Sync,
        F: Fn(&mut T, usize) + Sync,
    {
        (0..iterations.min(MAX_ITERATIONS) as u64)
            .into_par_iter()
            .map(|b| {
                let mut rng = replicate_rng(seed, b);
                let mut total = start.clone();
                for _ in 0..self.draws {
                    add(&mut total, self.draw(&mut rng));
                }
                total
            })
            .collect()
    }
}

/// Per-trace `(numerator, denominator)` pairs, e.g. (rollbacks, reached
/// attempts), kept as a histogram so that memory depends on how varied
/// traces are, not on how many there are. Mergeable; resampling it is the
/// same as resampling the traces.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(into = "HistogramRows", from = "HistogramRows")]
pub struct RatioHistogram {
    counts: HashMap<(u64, u64), u64>,
}

/// A histogram as sorted `[numerator, denominator, traces]` rows (JSON
/// has no tuple keys; sorted, so equal histograms write equal bytes).
#[derive(serde::Serialize, serde::Deserialize)]
struct HistogramRows(Vec<[u64; 3]>);

impl From<RatioHistogram> for HistogramRows {
    fn from(h: RatioHistogram) -> HistogramRows {
        let mut rows: Vec<[u64; 3]> = h.counts.iter().map(|(&(n, d), &w)| [n, d, w]).collect();
        rows.sort_unstable();
        HistogramRows(rows)
    }
}

impl From<HistogramRows> for RatioHistogram {
    fn from(rows: HistogramRows) -> RatioHistogram {
        let mut h = RatioHistogram::default();
        for [n, d, w] in rows.0 {
            // Saturating: a forged file is refused later, not a panic here.
            let slot = h.counts.entry((n, d)).or_insert(0);
            *slot = slot.saturating_add(w);
        }
        h
    }
}

impl RatioHistogram {
    /// Records one trace with `numerator` events out of `denominator`.
    pub fn add(&mut self, numerator: u64, denominator: u64) {
        *self.counts.entry((numerator, denominator)).or_insert(0) += 1;
    }

    pub fn merge(&mut self, other: &RatioHistogram) {
        for (&key, &n) in &other.counts {
            *self.counts.entry(key).or_insert(0) += n;
        }
    }

    /// Number of traces recorded.
    pub fn clusters(&self) -> u64 {
        self.counts.values().sum()
    }

    /// (traces, Σ numerator, Σ denominator) over the recorded traces, or
    /// `None` when a sum passes `u64::MAX` (only a forged partial can).
    pub fn checked_totals(&self) -> Option<(u64, u64, u64)> {
        self.counts
            .iter()
            .try_fold((0u64, 0u64, 0u64), |(c, n, d), (&(a, b), &w)| {
                Some((
                    c.checked_add(w)?,
                    n.checked_add(a.checked_mul(w)?)?,
                    d.checked_add(b.checked_mul(w)?)?,
                ))
            })
    }

    /// The point estimate `Σ numerator / Σ denominator`.
    pub fn ratio(&self) -> Option<f64> {
        let (num, den) = self
            .counts
            .iter()
            .fold((0u64, 0u64), |(n, d), (&(a, b), &w)| (n + a * w, d + b * w));
        (den > 0).then(|| num as f64 / den as f64)
    }

    /// The [`LEVEL`] percentile interval of [`RatioHistogram::ratio`] over
    /// `iterations` replicates; `None` when there is nothing to resample or
    /// every replicate has a zero denominator. At most [`MAX_ITERATIONS`]
    /// replicates are drawn.
    pub fn interval(&self, iterations: usize, seed: u64) -> Option<(f64, f64)> {
        // A fixed order, so the result does not depend on hashing; zero
        // weights are left out so rounding in the alias table never picks one.
        let mut clusters: Vec<((u64, u64), u64)> = self
            .counts
            .iter()
            .filter(|(_, &w)| w > 0)
            .map(|(&pair, &w)| (pair, w))
            .collect();
        clusters.sort_unstable();
        let weights: Vec<u64> = clusters.iter().map(|c| c.1).collect();
        let draws: u64 = weights.iter().sum();
        if draws == 0 || iterations == 0 {
            return None;
        }
        let numerators: Vec<f64> = clusters.iter().map(|c| c.0 .0 as f64).collect();
        let denominators: Vec<f64> = clusters.iter().map(|c| c.0 .1 as f64).collect();
        let replicates = 0..iterations.min(MAX_ITERATIONS) as u64;
        let way = if by_counts(clusters.len(), draws) {
            Drawn::Counts(Shapes::new(&weights))
        } else {
            Drawn::Indices(ClusterSample::new(&weights))
        };
        let mut ratios: Vec<f64> = replicates
            .into_par_iter()
            .map(|b| match &way {
                Drawn::Counts(shapes) => {
                    counts_replicate(shapes, &numerators, &denominators, seed, b)
                }
                Drawn::Indices(sample) => {
                    ratio_replicate(sample, &numerators, &denominators, seed, b)
                }
            })
            .filter(|r| r.is_finite())
            .collect();
        if ratios.is_empty() {
            return None;
        }
        ratios.sort_by(f64::total_cmp);
        Some(percentile_interval(&ratios, LEVEL))
    }
}

/// How a histogram's replicates are drawn ([`by_counts`]).
enum Drawn {
    Counts(Shapes),
    Indices(ClusterSample),
}

/// Whether a replicate of `draws` traces of `shapes` distinct kinds is
/// drawn as one multinomial count per kind ([`counts_replicate`]) rather
/// than one index per trace ([`ratio_replicate`]). Both draw the same
/// distribution; a binomial draw costs about as much as
/// [`BINOMIAL_COST`] index draws, so counts win when traces repeat a few
/// shapes (a large run of similar traces), indices when every trace differs.
fn by_counts(shapes: usize, draws: u64) -> bool {
    (shapes as u64).saturating_mul(BINOMIAL_COST) < draws
}

/// Index draws one binomial draw costs, roughly (measured: BTPE against
/// an alias-table draw).
const BINOMIAL_COST: u64 = 16;

/// The kinds of a histogram, largest first, with what is left after each:
/// the multinomial's conditional binomials.
struct Shapes {
    /// `(index into the histogram's columns, weight)`, heaviest first.
    order: Vec<(usize, u64)>,
    /// Total weight from position `i` on.
    rest: Vec<u64>,
}

impl Shapes {
    fn new(weights: &[u64]) -> Shapes {
        let mut order: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
        // Heaviest first, ties by column: a fixed order, and the light tail
        // is often reached with no draws left.
        order.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut rest = vec![0u64; order.len()];
        let mut sum = 0u64;
        for (i, &(_, w)) in order.iter().enumerate().rev() {
            sum += w;
            rest[i] = sum;
        }
        Shapes { order, rest }
    }

    /// Calls `each(column, count)` for the kinds a replicate draws: kind
    /// `i` gets `Binomial(draws left, w_i / weight left)` of the draws,
    /// which is exactly how many of the weighted draws would pick it.
    fn draw_counts(&self, rng: &mut SplitMix64, mut each: impl FnMut(usize, u64)) {
        use rand_distr::{Binomial, Distribution};
        let mut left = self.rest.first().copied().unwrap_or(0);
        for (&(column, weight), &rest) in self.order.iter().zip(&self.rest) {
            if left == 0 {
                break;
            }
            let count = if weight == rest {
                left
            } else {
                // 0 < weight < rest: a valid probability.
                Binomial::new(left, weight as f64 / rest as f64)
                    .map(|binomial| binomial.sample(rng))
                    .unwrap_or(0)
            };
            if count > 0 {
                each(column, count);
            }
            left -= count;
        }
    }
}

/// One replicate's `Σ numerator / Σ denominator` from multinomial counts.
fn counts_replicate(shapes: &Shapes, num: &[f64], den: &[f64], seed: u64, b: u64) -> f64 {
    let mut rng = replicate_rng(seed, b);
    let (mut n, mut d) = (0.0f64, 0.0f64);
    shapes.draw_counts(&mut rng, |column, count| {
        n += count as f64 * num[column];
        d += count as f64 * den[column];
    });
    if d == 0.0 {
        f64::NAN
    } else {
        n / d
    }
}

/// One replicate's `Σ numerator / Σ denominator` (NaN for a zero
/// denominator), one index per trace. The sums run in four independent
/// lanes that do not wait on each other.
fn ratio_replicate(sample: &ClusterSample, num: &[f64], den: &[f64], seed: u64, b: u64) -> f64 {
    let mut rng = replicate_rng(seed, b);
    let (mut n, mut d) = ([0.0f64; 4], [0.0f64; 4]);
    for _ in 0..sample.draws / 4 {
        for lane in 0..4 {
            let i = sample.draw(&mut rng);
            n[lane] += num[i];
            d[lane] += den[i];
        }
    }
    for _ in 0..sample.draws % 4 {
        let i = sample.draw(&mut rng);
        n[0] += num[i];
        d[0] += den[i];
    }
    let (n, d): (f64, f64) = (n.iter().sum(), d.iter().sum());
    if d == 0.0 {
        f64::NAN
    } else {
        n / d
    }
}

/// The column of `n` that the high 32 bits of `r` pick.
#[inline]
fn column(r: u64, n: u64) -> usize {
    (((r >> 32) * n) >> 32) as usize
}

/// Vose's alias method: draws an index with probability proportional to
/// its weight in constant time.
struct AliasTable {
    /// Chance of keeping column `i` rather than its alias, in units of 2^-32.
    keep: Vec<u64>,
    /// Column `i`'s two outcomes: `[its alias, i]`.
    outcomes: Vec<[u32; 2]>,
}

impl AliasTable {
    fn new(weights: &[u64]) -> AliasTable {
        let n = weights.len();
        let total: u64 = weights.iter().sum();
        let mut probability = vec![1.0; n];
        let mut alias: Vec<usize> = (0..n).collect();
        if total == 0 {
            return AliasTable::from_parts(vec![1.0; n], alias);
        }
        let mut scaled: Vec<f64> = weights
            .iter()
            .map(|&w| w as f64 * n as f64 / total as f64)
            .collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            probability[s] = scaled[s];
            alias[s] = l;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left is 1 up to rounding.
        AliasTable::from_parts(probability, alias)
    }

    fn from_parts(probability: Vec<f64>, alias: Vec<usize>) -> AliasTable {
        AliasTable {
            keep: probability
                .iter()
                .map(|p| (p * 4_294_967_296.0) as u64)
                .collect(),
            outcomes: alias
                .iter()
                .enumerate()
                .map(|(i, &a)| [a as u32, i as u32])
                .collect(),
        }
    }

    /// The high 32 bits of one random number pick the column, the low 32
    /// bits decide between it and its alias.
    ///
    /// The choice indexes a pair instead of branching: with skewed weights
    /// a branch here is mispredicted about half the time, which made the
    /// whole bootstrap four times slower.
    #[inline]
    fn draw(&self, rng: &mut SplitMix64) -> usize {
        let r = rng.next_u64();
        let i = column(r, self.keep.len() as u64);
        let keep_i = usize::from((r & 0xFFFF_FFFF) < self.keep[i]);
        self.outcomes[i][keep_i] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(pairs: impl IntoIterator<Item = (u64, u64)>) -> RatioHistogram {
        let mut h = RatioHistogram::default();
        pairs.into_iter().for_each(|(n, d)| h.add(n, d));
        h
    }

    #[test]
    fn uniform_draws_are_the_alias_tables_draws() {
        for n in [1usize, 2, 3, 7, 1000] {
            let (fast, table) = (ClusterSample::uniform(n), ClusterSample::new(&vec![1; n]));
            assert_eq!(fast.draws(), table.draws());
            let (mut a, mut b) = (replicate_rng(5, n as u64), replicate_rng(5, n as u64));
            for _ in 0..10_000 {
                assert_eq!(fast.draw(&mut a), table.draw(&mut b), "n = {n}");
            }
        }
    }

    #[test]
    fn interval_brackets_the_point_estimate_and_is_reproducible() {
        let h = histogram((0..200).map(|i| (i % 7, 10 + i % 3)));
        let rate = h.ratio().expect("a rate");
        let (lo, hi) = h.interval(500, 7).expect("an interval");
        assert!(lo < rate && rate < hi, "{lo} < {rate} < {hi}");
        assert_eq!(h.interval(500, 7), Some((lo, hi)));
        assert_ne!(h.interval(500, 8), Some((lo, hi)));
    }

    #[test]
    fn clustering_widens_the_interval() {
        // Same 50% rate; in one sample every trace is all-or-nothing.
        let mixed = histogram((0..100).map(|_| (5, 10)));
        let clustered = histogram((0..100).map(|i| (if i % 2 == 0 { 10 } else { 0 }, 10)));
        let (a, b) = mixed.interval(300, 1).expect("interval");
        let (c, d) = clustered.interval(300, 1).expect("interval");
        assert!(b - a < 1e-12, "no between-trace variance: {a}..{b}");
        assert!(d - c > 0.1, "all-or-nothing traces: {c}..{d}");
    }

    #[test]
    fn replicate_sums_resample_whole_clusters() {
        // Three traces of (attempts, rollbacks): replicates keep the 10:3 shape.
        let traces = [(10u64, 3u64), (0, 0), (10, 3)];
        let sample = ClusterSample::uniform(traces.len());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("pool");
        let run = || {
            pool.install(|| {
                sample.replicate_sums(50, 9, &(0u64, 0u64), |t, i| {
                    t.0 += traces[i].0;
                    t.1 += traces[i].1;
                })
            })
        };
        let a = run();
        assert_eq!(a, run(), "reproducible");
        for t in &a {
            assert_eq!(t.0 % 10, 0);
            assert_eq!(t.1 * 10, t.0 * 3);
        }
        assert!(a.iter().any(|t| t.0 != a[0].0), "replicates vary");
    }

    /// The two ways of drawing a replicate (one count per trace shape, one
    /// index per trace) draw the same distribution: the replicates' mean
    /// and spread agree, and both centre on the point estimate.
    #[test]
    fn counts_and_indices_draw_the_same_distribution() {
        let weights = [500u64, 300, 120, 50, 20, 9, 1];
        let num: Vec<f64> = [0.0, 1.0, 3.0, 2.0, 8.0, 5.0, 9.0].to_vec();
        let den: Vec<f64> = [4.0, 4.0, 6.0, 3.0, 10.0, 5.0, 9.0].to_vec();
        let draws: u64 = weights.iter().sum();
        let point = weights
            .iter()
            .zip(&num)
            .map(|(&w, n)| w as f64 * n)
            .sum::<f64>()
            / weights
                .iter()
                .zip(&den)
                .map(|(&w, d)| w as f64 * d)
                .sum::<f64>();
        let (shapes, sample) = (Shapes::new(&weights), ClusterSample::new(&weights));
        let moments = |r: &[f64]| {
            let mean = r.iter().sum::<f64>() / r.len() as f64;
            let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / r.len() as f64;
            (mean, var.sqrt())
        };
        let drawn_by_counts: Vec<f64> = (0..4000)
            .map(|b| counts_replicate(&shapes, &num, &den, 3, b))
            .collect();
        let by_index: Vec<f64> = (0..4000)
            .map(|b| ratio_replicate(&sample, &num, &den, 3, b))
            .collect();
        let ((m1, s1), (m2, s2)) = (moments(&drawn_by_counts), moments(&by_index));
        assert!(s1 > 0.0 && s2 > 0.0);
        // Standard errors of the mean are s / sqrt(4000): 5 of them apart at most.
        assert!((m1 - point).abs() < 5.0 * s1 / 63.0, "{m1} vs {point}");
        assert!((m2 - point).abs() < 5.0 * s2 / 63.0, "{m2} vs {point}");
        assert!((s1 / s2 - 1.0).abs() < 0.1, "spreads {s1} and {s2}");
        assert!(drawn_by_counts.iter().all(|r| r.is_finite()));
        // Few shapes for many traces draw counts; one trace a shape, indices.
        assert!(by_counts(weights.len(), draws * 1000));
        assert!(!by_counts(weights.len(), weights.len() as u64));
    }

    /// A replicate's multinomial counts add up to the draws, and each kind's
    /// average count is its share of the draws.
    #[test]
    fn multinomial_counts_follow_the_weights() {
        let weights = [700u64, 200, 90, 10];
        let shapes = Shapes::new(&weights);
        // A numerator that counts kind k as 1 and others as 0, a denominator of 1:
        // the replicate's ratio is kind k's share of the draws.
        for k in 0..weights.len() {
            let num: Vec<f64> = (0..weights.len())
                .map(|i| f64::from(u8::from(i == k)))
                .collect();
            let den = vec![1.0; weights.len()];
            let mean = (0..2000)
                .map(|b| counts_replicate(&shapes, &num, &den, 11, b))
                .sum::<f64>()
                / 2000.0;
            let want = weights[k] as f64 / 1000.0;
            assert!((mean - want).abs() < 0.01, "kind {k}: {mean} vs {want}");
        }
        // Every replicate draws exactly as many traces as there are.
        for b in 0..200 {
            let mut total = 0;
            shapes.draw_counts(&mut replicate_rng(5, b), |_, c| total += c);
            assert_eq!(total, 1000);
        }
    }

    #[test]
    fn nothing_to_resample() {
        assert_eq!(RatioHistogram::default().interval(100, 1), None);
        assert_eq!(histogram([(0, 0)]).interval(100, 1), None);
        assert!(ClusterSample::uniform(0)
            .replicate_sums(3, 1, &0u64, |t, _| *t += 1)
            .iter()
            .all(|t| *t == 0));
    }

    #[test]
    fn alias_table_follows_the_weights() {
        let table = AliasTable::new(&[1, 0, 3]);
        let mut rng = SplitMix64::new(42);
        let mut seen = [0u32; 3];
        for _ in 0..40_000 {
            seen[table.draw(&mut rng)] += 1;
        }
        assert_eq!(seen[1], 0);
        let share = f64::from(seen[2]) / 40_000.0;
        assert!((share - 0.75).abs() < 0.02, "{share}");
    }
}
