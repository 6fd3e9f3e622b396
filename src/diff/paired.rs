//! The paired view: when both sides ran the same task ids, compare each
//! task's rollback rate and test the per-task differences (Wilcoxon
//! signed-rank, with the sign test alongside).

use serde::Serialize;

use super::counts::Count;
use super::RowSet;
use crate::metrics::stats::{normal_sf, quantile};

/// Above this many non-zero differences the normal approximation is used.
const EXACT_MAX: usize = 60;

/// One task's rollbacks and attempts reached on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct TaskChange {
    pub trace_id: String,
    pub base_rollbacks: u64,
    pub base_reached: u64,
    pub new_rollbacks: u64,
    pub new_reached: u64,
    /// New rollback rate − base rollback rate.
    pub change: f64,
}

/// A Wilcoxon signed-rank test of per-task differences.
#[derive(Debug, Clone, Serialize)]
pub struct Wilcoxon {
    /// Non-zero differences (zeros are dropped).
    pub n: usize,
    /// Sum of the ranks of positive differences.
    pub w_plus: f64,
    /// Two-sided.
    pub p: f64,
    /// Exact null distribution (ties handled by mid-ranks) or normal
    /// approximation with tie and continuity correction.
    pub exact: bool,
}

/// What moved, task by task.
#[derive(Debug, Clone, Serialize)]
pub struct PairedView {
    /// Task ids present on both sides (with at least one attempt reached each).
    pub shared: usize,
    pub worse: usize,
    pub better: usize,
    pub unchanged: usize,
    pub mean_change: f64,
    pub median_change: f64,
    pub wilcoxon: Option<Wilcoxon>,
    /// Two-sided exact sign test on worse vs better.
    pub sign_p: f64,
    /// The Wilcoxon test is below alpha.
    pub significant: bool,
    /// Tasks whose rollback rate rose most, largest first.
    pub top_worse: Vec<TaskChange>,
    /// Tasks whose rollback rate fell most, largest first.
    pub top_better: Vec<TaskChange>,
}

/// Row indices of `rows` sorted by trace id: 4 bytes a row, where a map
/// of ids would cost tens (`diff` may hold millions of rows a side).
fn by_id(rows: &RowSet) -> Vec<u32> {
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| rows.id_bytes(a as usize).cmp(rows.id_bytes(b as usize)));
    order
}

/// The task starting at `order[at]`: (rollbacks, attempts reached) summed
/// over every row with its id, and where the next task starts.
fn task_at(rows: &RowSet, order: &[u32], at: usize) -> ((u64, u64), usize) {
    let id = rows.id_bytes(order[at] as usize);
    let mut sums = (0, 0);
    let mut next = at;
    while next < order.len() && rows.id_bytes(order[next] as usize) == id {
        let c = rows.counts(order[next] as usize);
        sums.0 += c.get(Count::Rollbacks.slot());
        sums.1 += c.get(Count::Reached.slot());
        next += 1;
    }
    (sums, next)
}

/// One shared task, compactly: its change and where its rows start in each
/// side's id order (sums are recomputed for the few tasks shown).
struct Shared {
    change: f64,
    base_at: u32,
    new_at: u32,
}

/// The paired view of two sides, or `None` when they share no task id.
pub fn paired_view(base: &RowSet, new: &RowSet, alpha: f64, top: usize) -> Option<PairedView> {
    let (b_order, n_order) = (by_id(base), by_id(new));
    let mut tasks: Vec<Shared> = Vec::new();
    let (mut bi, mut ni) = (0, 0);
    while bi < b_order.len() && ni < n_order.len() {
        let b_id = base.id_bytes(b_order[bi] as usize);
        let n_id = new.id_bytes(n_order[ni] as usize);
        match b_id.cmp(n_id) {
            std::cmp::Ordering::Less => bi = task_at(base, &b_order, bi).1,
            std::cmp::Ordering::Greater => ni = task_at(new, &n_order, ni).1,
            std::cmp::Ordering::Equal => {
                let ((br, ba), b_next) = task_at(base, &b_order, bi);
                let ((nr, na), n_next) = task_at(new, &n_order, ni);
                if ba > 0 && na > 0 {
                    tasks.push(Shared {
                        change: nr as f64 / na as f64 - br as f64 / ba as f64,
                        base_at: bi as u32,
                        new_at: ni as u32,
                    });
                }
                (bi, ni) = (b_next, n_next);
            }
        }
    }
    if tasks.is_empty() {
        return None;
    }
    let id_of = |t: &Shared| new.id_bytes(n_order[t.new_at as usize] as usize);
    // Biggest movers first; ties by id so the order is reproducible.
    tasks.sort_by(|x, y| {
        y.change
            .abs()
            .total_cmp(&x.change.abs())
            .then_with(|| id_of(x).cmp(id_of(y)))
    });
    let shown = |t: &Shared| {
        let ((br, ba), _) = task_at(base, &b_order, t.base_at as usize);
        let ((nr, na), _) = task_at(new, &n_order, t.new_at as usize);
        TaskChange {
            trace_id: new.id(n_order[t.new_at as usize] as usize),
            base_rollbacks: br,
            base_reached: ba,
            new_rollbacks: nr,
            new_reached: na,
            change: t.change,
        }
    };
    let top_worse = tasks
        .iter()
        .filter(|t| t.change > 0.0)
        .take(top)
        .map(shown)
        .collect();
    let top_better = tasks
        .iter()
        .filter(|t| t.change < 0.0)
        .take(top)
        .map(shown)
        .collect();
    let changes: Vec<f64> = tasks.iter().map(|t| t.change).collect();
    drop(tasks);
    let worse = changes.iter().filter(|d| **d > 0.0).count();
    let better = changes.iter().filter(|d| **d < 0.0).count();
    let wilcoxon = wilcoxon_signed_rank(&changes);
    let mut sorted = changes.clone();
    sorted.sort_by(f64::total_cmp);
    Some(PairedView {
        shared: changes.len(),
        worse,
        better,
        unchanged: changes.len() - worse - better,
        mean_change: changes.iter().sum::<f64>() / changes.len() as f64,
        median_change: quantile(&sorted, 0.5),
        significant: wilcoxon.as_ref().is_some_and(|w| w.p < alpha),
        wilcoxon,
        sign_p: sign_test(worse as u64, better as u64),
        top_worse,
        top_better,
    })
}

/// Two-sided Wilcoxon signed-rank test; `None` when every difference is 0.
pub fn wilcoxon_signed_rank(diffs: &[f64]) -> Option<Wilcoxon> {
    let mut nz: Vec<f64> = diffs.iter().copied().filter(|d| *d != 0.0).collect();
    if nz.is_empty() {
        return None;
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let n = nz.len();
    // Mid-ranks, doubled so they stay integers: a tie group over positions
    // i..j (1-based i+1..=j) gets rank (i+1+j)/2, doubled i+1+j.
    let mut doubled = vec![0u64; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && nz[j].abs() == nz[i].abs() {
            j += 1;
        }
        for r in &mut doubled[i..j] {
            *r = (i + 1 + j) as u64;
        }
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let w2: u64 = nz
        .iter()
        .zip(&doubled)
        .filter(|(d, _)| **d > 0.0)
        .map(|(_, r)| *r)
        .sum();
    let w_plus = w2 as f64 / 2.0;
    let nf = n as f64;
    let p = if n <= EXACT_MAX {
        // Null: each rank carries its sign independently with probability ½.
        let total: u64 = doubled.iter().sum();
        let mut dist = vec![0.0f64; total as usize + 1];
        dist[0] = 1.0;
        let mut reach = 0usize;
        for &r in &doubled {
            let r = r as usize;
            for s in (0..=reach).rev() {
                let here = dist[s] * 0.5;
                dist[s] = here;
                dist[s + r] += here;
            }
            reach += r;
        }
        let lower: f64 = dist[..=w2 as usize].iter().sum();
        let upper: f64 = dist[w2 as usize..].iter().sum();
        (2.0 * lower.min(upper)).min(1.0)
    } else {
        let mean = nf * (nf + 1.0) / 4.0;
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
        if var <= 0.0 {
            1.0
        } else {
            let z = ((w_plus - mean).abs() - 0.5).max(0.0) / var.sqrt();
            (2.0 * normal_sf(z)).min(1.0)
        }
    };
    Some(Wilcoxon {
        n,
        w_plus,
        p,
        exact: n <= EXACT_MAX,
    })
}

/// Two-sided exact sign test: P(a split at least as uneven as `pos`:`neg`)
/// under Binomial(pos + neg, ½). 1 when there is nothing to test.
pub fn sign_test(pos: u64, neg: u64) -> f64 {
    let n = pos + neg;
    if n == 0 {
        return 1.0;
    }
    let k = pos.min(neg);
    // Sum C(n, i) / 2^n for i ≤ k in log space (n can be large).
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0f64;
    let mut terms = Vec::with_capacity(k as usize + 1);
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        terms.push(ln_c - ln2n);
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilcoxon_exact_small_sample() {
        // 1..=8 all positive: W+ = 36, the single most extreme of 2^8 sign
        // patterns on that side: p = 2/256.
        let d: Vec<f64> = (1..=8).map(f64::from).collect();
        let w = wilcoxon_signed_rank(&d).expect("test");
        assert_eq!(w.w_plus, 36.0);
        assert!((w.p - 2.0 / 256.0).abs() < 1e-12);
        assert!(w.exact);
        // Symmetric differences: no evidence.
        let w = wilcoxon_signed_rank(&[1.0, -1.0, 2.0, -2.0]).expect("test");
        assert_eq!(w.p, 1.0);
        assert!(wilcoxon_signed_rank(&[0.0, 0.0]).is_none());
    }

    #[test]
    fn wilcoxon_exact_with_tied_mid_ranks() {
        // Ranks 1, 2.5, 2.5, 4, 5, 6.5, 6.5, 8; only -3 (rank 4) is negative,
        // so W+ = 32. P(W+ >= 32) = P(W- <= 4): the negative set is one of {},
        // {1}, {2.5}, {2.5'}, {1, 2.5}, {1, 2.5'}, {4}: 7 of 256 patterns.
        let w = wilcoxon_signed_rank(&[1.0, 2.0, 2.0, -3.0, 4.0, 5.0, 5.0, 6.0]).expect("test");
        assert_eq!(w.w_plus, 32.0);
        assert!((w.p - 14.0 / 256.0).abs() < 1e-12, "{}", w.p);
    }

    #[test]
    fn wilcoxon_normal_approximation_for_large_samples() {
        // 1..=100, every `k`-th negated.
        let negating = |k: i32| -> Vec<f64> {
            (1..=100)
                .map(|i| f64::from(if i % k == 0 { -i } else { i }))
                .collect()
        };
        let w = wilcoxon_signed_rank(&negating(3)).expect("test");
        assert!(!w.exact);
        // W+ = 5050 − 3·561 = 3367, mean 2525, sd √84587.5 ≈ 290.84:
        // z = (842 − ½)/290.84 ≈ 2.894, two-sided p ≈ 0.00381.
        assert_eq!(w.w_plus, 3367.0);
        assert!((w.p - 0.003_81).abs() < 2e-5, "{}", w.p);
        assert!(wilcoxon_signed_rank(&negating(2)).expect("test").p > 0.5);
    }

    #[test]
    fn sign_test_values() {
        // 9 vs 1 of 10: 2 * (1 + 10) / 1024.
        assert!((sign_test(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test(5, 5), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        assert!(sign_test(5_000, 4_000) < 1e-10);
    }
}
