//! Whether the layer's work goes with the task's result: rollback rates of
//! passed and failed tasks, the failure rate of tasks that met each reason,
//! and how tasks that hit the rollback limit or crashed ended.
//!
//! A task is a trace; its result is the one its reader found on its first
//! attempt that carries one ([`crate::model::TaskResult`]). A trace with
//! only a score (no pass/fail) is counted as such and left out of the rates:
//! mirotrace does not guess a pass mark.

use std::collections::BTreeMap;

use super::stats::RatioHistogram;
use super::tally::{Tally, REASONS};
use crate::detect::Reason;
use crate::model::TaskResult;

/// Per-trace result facts (0 or 1 in one trace's tally), additive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResultTally {
    /// Traces with a pass/fail result.
    pub tasks: u64,
    pub success: u64,
    pub failure: u64,
    /// Traces with a score but no pass/fail.
    pub score_only: u64,
}

impl ResultTally {
    /// The facts of one trace with `result`.
    pub fn of(result: Option<&TaskResult>) -> ResultTally {
        match result.map(|r| r.success) {
            Some(Some(passed)) => ResultTally {
                tasks: 1,
                success: u64::from(passed),
                failure: u64::from(!passed),
                score_only: 0,
            },
            Some(None) => ResultTally {
                score_only: 1,
                ..ResultTally::default()
            },
            None => ResultTally::default(),
        }
    }

    pub fn add(&mut self, o: &ResultTally) {
        self.tasks += o.tasks;
        self.success += o.success;
        self.failure += o.failure;
        self.score_only += o.score_only;
    }

    /// Successes / tasks with a result.
    pub fn success_rate(&self) -> Option<f64> {
        super::tally::ratio(self.success, self.tasks)
    }
}

/// Tasks of some kind split by result: `[successes, failures]`.
pub type Split = [u64; 2];

fn count_into(split: &mut Split, passed: bool) {
    split[usize::from(!passed)] += 1;
}

fn add_split(a: &mut Split, b: &Split) {
    a[0] += b[0];
    a[1] += b[1];
}

/// The cross-tabulations of results against what the layer did, for any
/// set of traces; mergeable.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskResults {
    /// Per task (rollbacks, reached attempts), passed tasks.
    pub rate_success: RatioHistogram,
    /// The same, failed tasks.
    pub rate_failure: RatioHistogram,
    /// Tasks with at least one rollback of each reason, by result.
    pub with_reason: [Split; REASONS],
    /// Tasks where the rollback limit fired (a loop ended, a duplicate let
    /// through, a bad result passed on), by result.
    pub hit_limit: Split,
    /// Tasks in which some session crashed, by result.
    pub crashed: Split,
    /// Where the results were read from (`meta.success`, `status`, …) → tasks.
    pub bases: BTreeMap<String, u64>,
}

impl TaskResults {
    /// Adds one trace: its result and its tally.
    pub fn add_trace(&mut self, result: Option<&TaskResult>, t: &Tally) {
        let Some(result) = result else {
            return;
        };
        *self.bases.entry(result.basis.to_string()).or_insert(0) += 1;
        let Some(passed) = result.success else {
            return;
        };
        let rate = if passed {
            &mut self.rate_success
        } else {
            &mut self.rate_failure
        };
        rate.add(t.rollbacks(), t.reached());
        for r in Reason::ALL {
            if t.traces_with(r) > 0 {
                count_into(&mut self.with_reason[r as usize], passed);
            }
        }
        if t.limit_events.total() > 0 {
            count_into(&mut self.hit_limit, passed);
        }
        if t.traces_with_crash > 0 {
            count_into(&mut self.crashed, passed);
        }
    }

    pub fn merge(&mut self, o: &TaskResults) {
        self.rate_success.merge(&o.rate_success);
        self.rate_failure.merge(&o.rate_failure);
        for (a, b) in self.with_reason.iter_mut().zip(&o.with_reason) {
            add_split(a, b);
        }
        add_split(&mut self.hit_limit, &o.hit_limit);
        add_split(&mut self.crashed, &o.crashed);
        for (k, n) in &o.bases {
            *self.bases.entry(k.clone()).or_insert(0) += n;
        }
    }

    /// For reason `r`: the failure rate of tasks that had a rollback of it
    /// against that of the tasks that did not, given the totals.
    pub fn reason_risk(&self, r: Reason, totals: &ResultTally) -> RiskRatio {
        let with = self.with_reason[r as usize];
        let without = [totals.success - with[0], totals.failure - with[1]];
        RiskRatio::new(with, without)
    }
}

/// Failure rates of two groups of tasks and their ratio, with a 95%
/// interval for the ratio (Katz's log method: tasks are independent, so
/// the interval follows from the four counts; 0.5 is added to each cell
/// when one is empty, the usual continuity correction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiskRatio {
    /// Tasks in the group, and those that failed.
    pub with: Split,
    pub without: Split,
    pub rate_with: Option<f64>,
    pub rate_without: Option<f64>,
    /// `rate_with / rate_without` and its interval; `None` when either
    /// group is empty or no task without the reason failed (no ratio).
    pub ratio: Option<(f64, f64, f64)>,
}

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

impl RiskRatio {
    pub fn new(with: Split, without: Split) -> RiskRatio {
        let rate = |s: Split| super::tally::ratio(s[1], s[0] + s[1]);
        let (n1, n0) = ((with[0] + with[1]) as f64, (without[0] + without[1]) as f64);
        let ratio = (n1 > 0.0 && without[1] > 0).then(|| {
            let correction = if with.contains(&0) || without.contains(&0) {
                0.5
            } else {
                0.0
            };
            let (f1, f0) = (with[1] as f64 + correction, without[1] as f64 + correction);
            let (m1, m0) = (n1 + 2.0 * correction, n0 + 2.0 * correction);
            let point = (f1 / m1) / (f0 / m0);
            let se = (1.0 / f1 - 1.0 / m1 + 1.0 / f0 - 1.0 / m0).max(0.0).sqrt();
            let value = (with[1] as f64 / n1) / (without[1] as f64 / n0);
            (value, point * (-Z95 * se).exp(), point * (Z95 * se).exp())
        });
        RiskRatio {
            with,
            without,
            rate_with: rate(with),
            rate_without: rate(without),
            ratio,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn result(success: Option<bool>) -> TaskResult {
        TaskResult {
            success,
            score: None,
            basis: Arc::from("meta.success"),
        }
    }

    #[test]
    fn results_split_and_score_only_is_not_a_pass() {
        let mut t = ResultTally::of(Some(&result(Some(true))));
        t.add(&ResultTally::of(Some(&result(Some(false)))));
        t.add(&ResultTally::of(Some(&result(None))));
        t.add(&ResultTally::of(None));
        assert_eq!((t.tasks, t.success, t.failure, t.score_only), (2, 1, 1, 1));
        assert_eq!(t.success_rate(), Some(0.5));
    }

    #[test]
    fn risk_ratio_of_known_counts() {
        // 10 tasks with the reason, 6 failed; 20 without, 5 failed.
        let r = RiskRatio::new([4, 6], [15, 5]);
        let (value, lo, hi) = r.ratio.expect("both groups have tasks");
        assert!((value - 0.6 / 0.25).abs() < 1e-12);
        assert!(lo < value && value < hi);
        // Katz: se = sqrt(1/6 - 1/10 + 1/5 - 1/20)
        let se = (1.0f64 / 6.0 - 0.1 + 0.2 - 0.05).sqrt();
        assert!((lo - 2.4 * (-Z95 * se).exp()).abs() < 1e-12);
        assert_eq!(RiskRatio::new([0, 0], [3, 1]).ratio, None);
    }
}
