//! The statistics every command shares: a seedable generator, quantiles,
//! the cluster bootstrap over traces ([`bootstrap`]), bootstrap p-values and
//! Holm–Bonferroni adjustment.
//!
//! Everything is deterministic for a given seed: each bootstrap replicate
//! draws from its own generator, derived from the seed and the replicate's
//! number, so results do not depend on the number of threads.

pub mod bootstrap;

pub use bootstrap::{ClusterSample, RatioHistogram};

/// A small, fast, seedable generator (Steele, Lea & Flood's SplitMix64):
/// enough for resampling. It is a `rand_core` generator so that
/// `rand_distr`'s binomial sampler can draw from it.
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

impl rand_core::TryRng for SplitMix64 {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok((self.next_u64() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }
}

/// A seed for one named stream of draws, so that e.g. the resamples of
/// group `m2` do not change when another group is added.
pub fn stream_seed(seed: u64, stream: &str) -> u64 {
    // FNV-1a over the name, then mixed with the seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in stream.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    SplitMix64::new(seed ^ h.rotate_left(17)).next_u64()
}

/// The `q` quantile of sorted values: linear interpolation between order
/// statistics (R's type 7, numpy's default). NaN for no values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The central `level` percentile interval of sorted values.
pub fn percentile_interval(sorted: &[f64], level: f64) -> (f64, f64) {
    let tail = (1.0 - level) / 2.0;
    (quantile(sorted, tail), quantile(sorted, 1.0 - tail))
}

/// Two-sided bootstrap p-value for "the change is zero": twice the smaller
/// tail of the bootstrap distribution of the change beyond 0 (the level at
/// which the percentile interval would just touch 0), with the +1
/// correction so it is never 0. All-zero changes give 1.
pub fn bootstrap_p(changes: &[f64]) -> f64 {
    let b = changes.len() as f64;
    let at_or_below = changes.iter().filter(|d| **d <= 0.0).count() as f64;
    let at_or_above = changes.iter().filter(|d| **d >= 0.0).count() as f64;
    (2.0 * (at_or_below + 1.0).min(at_or_above + 1.0) / (b + 1.0)).min(1.0)
}

/// The smallest p-value a bootstrap of `iterations` replicates can give.
pub fn min_bootstrap_p(iterations: usize) -> f64 {
    2.0 / (iterations as f64 + 1.0)
}

/// Holm–Bonferroni step-down adjusted p-values, in input order: the i-th
/// smallest p is multiplied by (m − i + 1), made monotone, capped at 1.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]).then(a.cmp(&b)));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * ps[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Standard normal upper tail P(Z > z), via the complementary error
/// function (Numerical Recipes' `erfcc`, relative error < 1.2e-7).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The z with P(Z > z) = `p` (the inverse of [`normal_sf`]), for `p` in
/// (0, 1); found by bisection, as precise as [`normal_sf`].
pub fn normal_isf(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0_f64, 40.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if normal_sf(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_reproducible_and_roughly_uniform() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut hist = [0u32; 4];
        let mut r = SplitMix64::new(1);
        for _ in 0..40_000 {
            hist[r.below(4)] += 1;
        }
        assert!(
            hist.iter().all(|&h| (9_500..10_500).contains(&h)),
            "{hist:?}"
        );
    }

    #[test]
    fn stream_seeds_differ_by_name_and_seed() {
        assert_ne!(stream_seed(1, "base"), stream_seed(1, "new"));
        assert_ne!(stream_seed(1, "base"), stream_seed(2, "base"));
        assert_eq!(stream_seed(3, "x"), stream_seed(3, "x"));
    }

    #[test]
    fn quantile_interpolates() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.125), 1.5);
        assert_eq!(quantile(&v, 1.0), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(percentile_interval(&v, 0.5), (2.0, 4.0));
    }

    #[test]
    fn bootstrap_p_is_two_sided_and_never_zero() {
        let all_positive: Vec<f64> = (1..=999).map(f64::from).collect();
        assert!((bootstrap_p(&all_positive) - 2.0 / 1000.0).abs() < 1e-12);
        let centred: Vec<f64> = (-500..=500).map(f64::from).collect();
        assert_eq!(bootstrap_p(&centred), 1.0);
        assert_eq!(bootstrap_p(&[0.0; 10]), 1.0);
        // 10% of the mass at or below zero → p ≈ 0.2.
        let mostly_up: Vec<f64> = (0..1000)
            .map(|i| if i < 100 { -1.0 } else { 1.0 })
            .collect();
        assert!((bootstrap_p(&mostly_up) - 2.0 * 101.0 / 1001.0).abs() < 1e-12);
    }

    #[test]
    fn holm_matches_a_worked_example() {
        // m = 4: sorted 0.01, 0.02, 0.03, 0.5 → 0.04, 0.06, 0.06 (monotone), 0.5.
        let adj = holm(&[0.03, 0.01, 0.5, 0.02]);
        let want = [0.06, 0.04, 0.5, 0.06];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn normal_tail_values() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_sf(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_sf(-1.0) - 0.841_344_7).abs() < 1e-6);
    }
}
