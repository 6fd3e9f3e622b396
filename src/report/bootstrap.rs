//! Confidence intervals for a ratio of sums (e.g. rollbacks / attempts) when
//! the units are clustered: the attempts of one trace share a model state, a
//! task and a session history, so they are not independent draws. Resampling
//! whole traces (a cluster bootstrap) keeps that dependence; treating each
//! attempt as independent would give intervals that are too narrow.
//!
//! Deterministic: the same data, iteration count and seed give the same
//! interval on any machine and with any number of threads. No RNG crate is
//! needed; [`SplitMix64`] is enough for resampling.

use foldhash::HashMap;

use rayon::prelude::*;

/// Default number of bootstrap resamples.
pub const DEFAULT_ITERATIONS: usize = 1000;
/// Default seed, so that reports are reproducible unless asked otherwise.
pub const DEFAULT_SEED: u64 = 42;
/// Coverage of the reported intervals.
pub const LEVEL: f64 = 0.95;

/// A small, fast, seedable generator (Steele, Lea & Flood's SplitMix64).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-40
    /// for any size that fits in memory).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The 95% percentile-bootstrap interval of `Σ numerator / Σ denominator`,
/// resampling the given clusters (one `(numerator, denominator)` pair per
/// trace) with replacement `iterations` times.
///
/// For a rollback rate pass `(rollbacks, attempts)` per trace. Returns
/// `None` when there is nothing to resample or every resample has a zero
/// denominator. Reusable by any command that compares rates (e.g. `diff`).
pub fn bootstrap_ci(per_trace: &[(f64, f64)], iterations: usize, seed: u64) -> Option<(f64, f64)> {
    let clusters: Vec<Cluster> = per_trace
        .iter()
        .map(|&(numerator, denominator)| Cluster {
            numerator,
            denominator,
            weight: 1,
        })
        .collect();
    ClusterSample::new(clusters).interval(iterations, seed, LEVEL)
}

/// Identical clusters, stored once with a multiplicity.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cluster {
    numerator: f64,
    denominator: f64,
    weight: u64,
}

/// Per-trace `(rollbacks, attempts)` pairs kept as a histogram, so that
/// memory depends on how varied traces are, not on how many there are.
/// Mergeable; resampling it is the same as resampling the traces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RatioHistogram {
    counts: HashMap<(u64, u64), u64>,
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

    /// The point estimate `Σ numerator / Σ denominator`.
    pub fn ratio(&self) -> Option<f64> {
        let (num, den) = self
            .counts
            .iter()
            .fold((0u64, 0u64), |(n, d), (&(a, b), &w)| (n + a * w, d + b * w));
        (den > 0).then(|| num as f64 / den as f64)
    }

    /// The 95% cluster-bootstrap interval of [`RatioHistogram::ratio`].
    pub fn interval(&self, iterations: usize, seed: u64) -> Option<(f64, f64)> {
        let mut clusters: Vec<Cluster> = self
            .counts
            .iter()
            .map(|(&(numerator, denominator), &weight)| Cluster {
                numerator: numerator as f64,
                denominator: denominator as f64,
                weight,
            })
            .collect();
        // A fixed order, so the result does not depend on hashing.
        clusters.sort_by(|a, b| {
            (a.numerator, a.denominator)
                .partial_cmp(&(b.numerator, b.denominator))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        ClusterSample::new(clusters).interval(iterations, seed, LEVEL)
    }
}

/// Weighted clusters with an alias table for O(1) draws.
struct ClusterSample {
    numerators: Vec<f64>,
    denominators: Vec<f64>,
    /// Total weight: the number of draws per resample.
    draws: u64,
    alias: AliasTable,
}

impl ClusterSample {
    fn new(mut clusters: Vec<Cluster>) -> ClusterSample {
        // Zero-weight clusters can never be drawn; leaving them out keeps
        // rounding in the alias table from ever picking one.
        clusters.retain(|c| c.weight > 0);
        let weights: Vec<u64> = clusters.iter().map(|c| c.weight).collect();
        ClusterSample {
            draws: weights.iter().sum(),
            alias: AliasTable::new(&weights),
            numerators: clusters.iter().map(|c| c.numerator).collect(),
            denominators: clusters.iter().map(|c| c.denominator).collect(),
        }
    }

    /// Percentile interval at `level`. Resamples run in parallel, each with
    /// its own generator derived from `seed` and its number, so the answer
    /// does not depend on scheduling.
    fn interval(&self, iterations: usize, seed: u64, level: f64) -> Option<(f64, f64)> {
        if self.draws == 0 || iterations == 0 {
            return None;
        }
        let mut ratios: Vec<f64> = (0..iterations as u64)
            .into_par_iter()
            .map(|i| {
                let mut rng = SplitMix64::new(seed ^ SplitMix64::new(i).next_u64());
                self.resample(&mut rng)
            })
            .filter(|r| r.is_finite())
            .collect();
        if ratios.is_empty() {
            return None;
        }
        ratios.sort_by(f64::total_cmp);
        let tail = (1.0 - level) / 2.0;
        Some((quantile(&ratios, tail), quantile(&ratios, 1.0 - tail)))
    }

    /// One resample: `draws` clusters drawn with replacement. This loop is
    /// the bootstrap's whole cost (iterations × traces draws), so each draw
    /// takes a single random number.
    fn resample(&self, rng: &mut SplitMix64) -> f64 {
        // Four independent sums, so the additions do not wait on each other.
        let (mut num, mut den) = ([0.0f64; 4], [0.0f64; 4]);
        for _ in 0..self.draws / 4 {
            for lane in 0..4 {
                let i = self.alias.draw(rng);
                num[lane] += self.numerators[i];
                den[lane] += self.denominators[i];
            }
        }
        for _ in 0..self.draws % 4 {
            let i = self.alias.draw(rng);
            num[0] += self.numerators[i];
            den[0] += self.denominators[i];
        }
        let (num, den): (f64, f64) = (num.iter().sum(), den.iter().sum());
        if den == 0.0 {
            f64::NAN
        } else {
            num / den
        }
    }
}

/// Linear interpolation between order statistics (R's type 7).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
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
        let i = (((r >> 32) * self.keep.len() as u64) >> 32) as usize;
        let keep_i = usize::from((r & 0xFFFF_FFFF) < self.keep[i]);
        self.outcomes[i][keep_i] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_brackets_the_point_estimate_and_is_reproducible() {
        let traces: Vec<(f64, f64)> = (0..200)
            .map(|i| ((i % 7) as f64, 10.0 + (i % 3) as f64))
            .collect();
        let rate =
            traces.iter().map(|t| t.0).sum::<f64>() / traces.iter().map(|t| t.1).sum::<f64>();
        let (lo, hi) = bootstrap_ci(&traces, 500, 7).expect("an interval");
        assert!(lo < rate && rate < hi, "{lo} < {rate} < {hi}");
        assert_eq!(bootstrap_ci(&traces, 500, 7), Some((lo, hi)));
        assert_ne!(bootstrap_ci(&traces, 500, 8), Some((lo, hi)));
    }

    #[test]
    fn clustering_widens_the_interval() {
        // Same 50% rate; in one sample every trace is all-or-nothing.
        let mixed: Vec<(f64, f64)> = (0..100).map(|_| (5.0, 10.0)).collect();
        let clustered: Vec<(f64, f64)> = (0..100)
            .map(|i| (if i % 2 == 0 { 10.0 } else { 0.0 }, 10.0))
            .collect();
        let (a, b) = bootstrap_ci(&mixed, 300, 1).expect("interval");
        let (c, d) = bootstrap_ci(&clustered, 300, 1).expect("interval");
        assert!(b - a < 1e-12, "no between-trace variance: {a}..{b}");
        assert!(d - c > 0.1, "all-or-nothing traces: {c}..{d}");
    }

    #[test]
    fn histogram_matches_the_list_it_summarises() {
        let mut h = RatioHistogram::default();
        let mut list = Vec::new();
        for i in 0..300u64 {
            h.add(i % 4, 8);
            list.push(((i % 4) as f64, 8.0));
        }
        assert_eq!(h.clusters(), 300);
        assert_eq!(
            h.ratio(),
            Some(list.iter().map(|t| t.0).sum::<f64>() / 2400.0)
        );
        let (lo, hi) = h.interval(400, 3).expect("interval");
        let (lo2, hi2) = bootstrap_ci(&list, 400, 3).expect("interval");
        // Different draws, same distribution: the intervals nearly agree.
        assert!(
            (lo - lo2).abs() < 0.02 && (hi - hi2).abs() < 0.02,
            "{lo}..{hi} vs {lo2}..{hi2}"
        );
    }

    #[test]
    fn nothing_to_resample() {
        assert_eq!(bootstrap_ci(&[], 100, 1), None);
        assert_eq!(bootstrap_ci(&[(0.0, 0.0)], 100, 1), None);
        assert_eq!(RatioHistogram::default().interval(100, 1), None);
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
