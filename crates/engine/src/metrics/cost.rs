//! What the layer costs: the tokens and seconds of the attempts upstream
//! made, of those it threw away, and of the calls that failed.
//!
//! An attempt upstream never made (`unreachable`) cost nothing and is left
//! out. An attempt is *discarded* when the layer threw its response away:
//! outcome `rollback` or `end`. Every sum says how many attempts it is over
//! and for how many of them each count was recorded (its coverage): a
//! format that records no usage gives "known for 0 of N", never a zero
//! passed off as a measurement.
//!
//! Seconds are summed as whole nanoseconds, so sums are exact and do not
//! depend on the order traces are added in (partial reports merge to the
//! same bytes as one pass).

use super::tally::REASONS;
use crate::detect::Reason;
use crate::replay::{Outcome, Verdict};

/// Nanoseconds in a second.
const NANOS: f64 = 1e9;

/// Tokens and seconds of a set of attempts, with their coverage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CostSums {
    /// Attempts in the set.
    pub attempts: u64,
    /// Attempts whose input tokens were recorded, and their sum.
    pub input_known: u64,
    pub input_tokens: u64,
    /// Attempts whose output tokens were recorded, and their sum.
    pub output_known: u64,
    pub output_tokens: u64,
    /// Attempts whose cached input tokens were recorded, and their sum.
    pub cached_known: u64,
    pub cached_input_tokens: u64,
    /// Attempts whose duration was recorded, and the sum in nanoseconds.
    pub seconds_known: u64,
    pub nanos: u64,
}

impl CostSums {
    /// Counts one attempt.
    pub fn count(&mut self, v: &Verdict) {
        self.attempts += 1;
        if let Some(u) = &v.usage {
            if let Some(n) = u.input_tokens {
                self.input_known += 1;
                self.input_tokens = self.input_tokens.saturating_add(n);
            }
            if let Some(n) = u.output_tokens {
                self.output_known += 1;
                self.output_tokens = self.output_tokens.saturating_add(n);
            }
            if let Some(n) = u.cached_input_tokens {
                self.cached_known += 1;
                self.cached_input_tokens = self.cached_input_tokens.saturating_add(n);
            }
        }
        if let Some(s) = v.duration_s {
            self.seconds_known += 1;
            self.nanos = self.nanos.saturating_add(to_nanos(s));
        }
    }

    pub fn add(&mut self, o: &CostSums) {
        self.attempts += o.attempts;
        self.input_known += o.input_known;
        self.input_tokens = self.input_tokens.saturating_add(o.input_tokens);
        self.output_known += o.output_known;
        self.output_tokens = self.output_tokens.saturating_add(o.output_tokens);
        self.cached_known += o.cached_known;
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(o.cached_input_tokens);
        self.seconds_known += o.seconds_known;
        self.nanos = self.nanos.saturating_add(o.nanos);
    }

    /// The summed duration in seconds.
    pub fn seconds(&self) -> f64 {
        self.nanos as f64 / NANOS
    }

    /// Whether any count or duration was recorded for the set.
    pub fn any_known(&self) -> bool {
        self.input_known + self.output_known + self.seconds_known > 0
    }
}

/// A duration in whole nanoseconds (rounded; readers give finite,
/// non-negative seconds).
pub fn to_nanos(seconds: f64) -> u64 {
    let n = (seconds * NANOS).round();
    if n.is_finite() && n >= 0.0 {
        // `as` saturates at u64::MAX.
        n as u64
    } else {
        0
    }
}

/// The cost figures of one trace or of a set of traces.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CostTally {
    /// Every attempt upstream made (outcome not `unreachable`).
    pub total: CostSums,
    /// Attempts whose response the layer threw away (`rollback`, `end`).
    pub discarded: CostSums,
    /// Failed LLM calls (`llm_failed`).
    pub failed: CostSums,
    /// Discarded attempts by reason.
    pub by_reason: [CostSums; REASONS],
    /// Attempts never made that carry a usage or duration anyway (left out
    /// of every sum; counted so a report can say so).
    pub unreachable_recorded: u64,
}

impl CostTally {
    /// Counts one attempt.
    pub fn count(&mut self, v: &Verdict) {
        if v.outcome == Outcome::Unreachable {
            self.unreachable_recorded += u64::from(v.usage.is_some() || v.duration_s.is_some());
            return;
        }
        self.total.count(v);
        match v.outcome {
            Outcome::Rollback | Outcome::End => {
                self.discarded.count(v);
                if let Some(r) = v.reason {
                    self.by_reason[r as usize].count(v);
                }
            }
            Outcome::LlmFailed => self.failed.count(v),
            _ => {}
        }
    }

    pub fn add(&mut self, o: &CostTally) {
        self.total.add(&o.total);
        self.discarded.add(&o.discarded);
        self.failed.add(&o.failed);
        for (a, b) in self.by_reason.iter_mut().zip(&o.by_reason) {
            a.add(b);
        }
        self.unreachable_recorded += o.unreachable_recorded;
    }

    pub fn reason(&self, r: Reason) -> &CostSums {
        &self.by_reason[r as usize]
    }
}

/// Whether an attempt was discarded or failed: what the per-tool,
/// per-agent and per-model breakdowns count beside their totals.
pub fn is_wasted(v: &Verdict) -> bool {
    matches!(
        v.outcome,
        Outcome::Rollback | Outcome::End | Outcome::LlmFailed
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testing::verdict;
    use crate::model::Usage;

    fn with_cost(mut v: Verdict, input: u64, output: u64, s: f64) -> Verdict {
        v.usage = Some(Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            cached_input_tokens: None,
        });
        v.duration_s = Some(s);
        v
    }

    #[test]
    fn unreachable_costs_nothing_and_ends_are_discarded() {
        use Outcome::*;
        let vs = [
            with_cost(verdict("main", 0, Ok, None, Some(0), &[]), 10, 1, 0.5),
            with_cost(
                verdict("main", 1, Rollback, Some(Reason::Refusal), Some(1), &[]),
                20,
                2,
                1.25,
            ),
            with_cost(
                verdict("main", 2, End, Some(Reason::FormatError), Some(1), &[]),
                30,
                3,
                2.0,
            ),
            verdict("main", 3, LlmFailed, None, Some(1), &[]),
            with_cost(verdict("main", 4, Unreachable, None, None, &[]), 99, 9, 9.0),
        ];
        let mut c = CostTally::default();
        for v in &vs {
            c.count(v);
        }
        assert_eq!(c.total.attempts, 4);
        assert_eq!((c.total.input_known, c.total.input_tokens), (3, 60));
        assert_eq!(c.total.seconds(), 3.75);
        assert_eq!((c.discarded.attempts, c.discarded.output_tokens), (2, 5));
        assert_eq!(c.reason(Reason::Refusal).input_tokens, 20);
        assert_eq!(c.reason(Reason::FormatError).seconds(), 2.0);
        assert_eq!((c.failed.attempts, c.failed.input_known), (1, 0));
        assert_eq!(c.unreachable_recorded, 1);
        let mut sum = CostTally::default();
        sum.add(&c);
        assert_eq!(sum, c, "add leaves no field out");
    }

    #[test]
    fn nanoseconds_round_and_saturate() {
        assert_eq!(to_nanos(1.5e-9), 2);
        assert_eq!(to_nanos(-1.0), 0);
        assert_eq!(to_nanos(f64::INFINITY), 0);
        assert_eq!(to_nanos(1e30), u64::MAX);
    }
}
