//! What `diff` compares. Each trace (or group part of one) is reduced to
//! the few additive figures its metrics need ([`Counts`]), taken from the
//! trace's [`Tally`], so every figure means what it means in `analyze`
//! (docs/metrics.md). Every metric is a ratio of two of those sums
//! (Σ numerator / Σ denominator over traces): that single shape is what lets
//! the cluster bootstrap resample whole traces and recompute every metric
//! from summed counts.

use std::sync::LazyLock;

pub use crate::metrics::figures::{Count, Unit, COUNT};
use crate::metrics::figures::{Figure, FIGURES, KIND_FIGURES};
use crate::metrics::Tally;

/// One trace's (or a sum of traces') additive counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts(pub [u64; COUNT]);

impl Default for Counts {
    fn default() -> Self {
        Counts([0; COUNT])
    }
}

impl Counts {
    /// The counts of a tally (of one trace, or summed), one per
    /// [`Count::slots`] entry.
    pub fn of(t: &Tally) -> Counts {
        let mut c = [0; COUNT];
        for (slot, count) in c.iter_mut().zip(Count::slots()) {
            *slot = count.read(t);
        }
        Counts(c)
    }

    /// The value of one count.
    pub fn count(&self, c: Count) -> u64 {
        self.0[c.slot()]
    }

    pub fn get(&self, f: usize) -> u64 {
        self.0[f]
    }

    pub fn add(&mut self, other: &Counts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }
}

/// One trace's [`Counts`], kept small: `diff` holds one per trace of
/// each side. 32-bit slots (120 bytes) where every count fits, as they
/// do in any trace within the attempt limit; the full 64-bit form boxed
/// otherwise, so the figures stay exact.
// Small is the common case and what the size test bounds; boxing it would
// cost an allocation per row.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowCounts {
    Small([u32; COUNT]),
    Large(Box<Counts>),
}

impl From<Counts> for RowCounts {
    fn from(c: Counts) -> RowCounts {
        let mut small = [0u32; COUNT];
        for (s, &v) in small.iter_mut().zip(c.0.iter()) {
            match u32::try_from(v) {
                Ok(v) => *s = v,
                Err(_) => return RowCounts::Large(Box::new(c)),
            }
        }
        RowCounts::Small(small)
    }
}

impl RowCounts {
    pub fn get(&self, f: usize) -> u64 {
        match self {
            RowCounts::Small(s) => u64::from(s[f]),
            RowCounts::Large(c) => c.get(f),
        }
    }

    /// Adds these counts to `sum`.
    #[inline]
    pub fn add_to(&self, sum: &mut Counts) {
        match self {
            RowCounts::Small(s) => {
                for (a, &b) in sum.0.iter_mut().zip(s.iter()) {
                    *a += u64::from(b);
                }
            }
            RowCounts::Large(c) => sum.add(c),
        }
    }
}

/// One compared metric: a registry [`Figure`] with its numerator's and
/// denominator's slots in [`Counts`] resolved.
#[derive(Debug, PartialEq)]
pub struct Metric {
    /// The name used in tables, JSON and `--fail-on`.
    pub id: &'static str,
    pub num: usize,
    pub den: usize,
    pub unit: Unit,
    /// Direction: whether a rise is a regression.
    pub higher_is_worse: bool,
    /// What it measures, in words (`--list-metrics`, docs/metrics.md).
    pub about: String,
    pub figure: &'static Figure,
}

impl Metric {
    /// The metric over `c`; `None` when its denominator is zero.
    pub fn value(&self, c: &Counts) -> Option<f64> {
        crate::metrics::tally::ratio(c.get(self.num), c.get(self.den))
    }
}

/// Every compared metric, in report order: the figure registry's.
pub static METRICS: LazyLock<Vec<Metric>> = LazyLock::new(|| FIGURES.iter().map(metric).collect());

/// The mistake kinds' shares (`<family>_share.<kind>`), compared in a Holm
/// family of their own so that they leave the main metrics' p-values be.
pub static KIND_METRICS: LazyLock<Vec<Metric>> =
    LazyLock::new(|| KIND_FIGURES.iter().map(metric).collect());

fn metric(f: &'static Figure) -> Metric {
    Metric {
        id: f.id,
        num: f.num.slot(),
        den: f.den.slot(),
        unit: f.unit,
        higher_is_worse: f.higher_is_worse(),
        about: f.meaning.clone(),
        figure: f,
    }
}

/// The metric called `name`; a trailing `_rate` may be added or left off
/// (`refusal_rate` is `refusal`, `crash` is `crash_rate`).
pub fn find(name: &str) -> Option<&'static Metric> {
    let f = crate::metrics::figures::find(name)?;
    METRICS
        .iter()
        .chain(KIND_METRICS.iter())
        .find(|m| m.id == f.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Reason;
    use crate::metrics::testing::verdict;
    use crate::repair::Repair;
    use crate::replay::Outcome;

    const ATTEMPTS: usize = 1;
    const CALLS: usize = 12;

    /// Row counts are exact whatever their size, and small when they can be.
    #[test]
    fn row_counts_are_compact_and_exact() {
        let mut small = Counts::default();
        small.0[ATTEMPTS] = 7;
        small.0[CALLS] = u64::from(u32::MAX);
        let mut large = small;
        large.0[CALLS] = u64::from(u32::MAX) + 1;
        assert!(matches!(RowCounts::from(small), RowCounts::Small(_)));
        assert!(matches!(RowCounts::from(large), RowCounts::Large(_)));
        assert!(std::mem::size_of::<RowCounts>() <= 4 * COUNT + 8);
        for c in [small, large] {
            let row = RowCounts::from(c);
            let mut sum = small;
            row.add_to(&mut sum);
            let mut want = small;
            want.add(&c);
            assert_eq!(sum, want);
            assert_eq!(row.get(CALLS), c.get(CALLS));
        }
    }

    /// Partial diffs store rows by slot: the order of the slots is the
    /// format's (docs/partial.md), so it may only grow at the end.
    #[test]
    fn slots_keep_the_partial_format_order() {
        assert_eq!(Count::Attempts.slot(), ATTEMPTS);
        assert_eq!(Count::Calls.slot(), CALLS);
        assert_eq!(Count::Reason(Reason::ALL[0]).slot(), 4);
        assert_eq!(Count::Repair(Repair::ALL[0]).slot(), 14);
        assert_eq!(Count::JsonRepaired.slot(), 19);
        assert_eq!(Count::TracesEndedEarly.slot(), 28);
        for r in Reason::ALL {
            let m = find(r.name()).expect("a metric per reason");
            assert_eq!(m.num, Count::Reason(r).slot(), "{}", r.name());
        }
        for r in Repair::ALL {
            let m = find(&format!("repair_{}", r.name())).expect("a metric per repair");
            assert_eq!(m.num, Count::Repair(r).slot(), "{}", r.name());
        }
    }

    #[test]
    fn names_accept_an_optional_rate_suffix() {
        assert_eq!(find("refusal_rate").map(|m| m.id), Some("refusal"));
        assert_eq!(find("crash").map(|m| m.id), Some("crash_rate"));
        assert!(find("nonsense").is_none());
        assert!(
            find("max_streak").is_none(),
            "analyze's name, another figure"
        );
    }

    #[test]
    fn counts_read_the_tally() {
        let rb = |i, r, k| verdict("main", i, Outcome::Rollback, Some(r), Some(k), &[]);
        let vs = vec![
            rb(0, Reason::Refusal, 1),
            rb(1, Reason::Refusal, 2),
            verdict("main", 2, Outcome::Ok, None, Some(0), &[]),
            rb(3, Reason::FormatError, 1),
            verdict(
                "main",
                4,
                Outcome::End,
                Some(Reason::FormatError),
                Some(1),
                &[],
            ),
            verdict("main", 5, Outcome::Unreachable, None, None, &[]),
        ];
        let c = Counts::of(&Tally::of(&vs));
        assert_eq!(
            (
                c.count(Count::Attempts),
                c.count(Count::Reached),
                c.count(Count::Rollbacks)
            ),
            (6, 5, 3)
        );
        let value = |id| find(id).and_then(|m| m.value(&c));
        assert_eq!(value("rollback_rate"), Some(3.0 / 5.0));
        assert_eq!(
            value("format_error"),
            Some(1.0 / 5.0),
            "the end is a limit event"
        );
        assert_eq!(value("limit_events_per_trace"), Some(1.0));
        assert_eq!(value("mean_streak"), Some(1.5));
        assert_eq!(value("mean_longest_streak"), Some(2.0));
        assert_eq!(value("recovery_rate"), Some(0.5));
        assert_eq!(value("early_end_rate"), Some(1.0));
    }
}
