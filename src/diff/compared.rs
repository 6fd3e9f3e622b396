//! What `diff` compares. Each trace (or group part of one) is reduced to
//! the few additive figures its metrics need ([`Counts`]), taken from the
//! trace's [`Tally`], so every figure means what it means in `analyze`
//! (docs/metrics.md). Every metric is a ratio of two of those sums
//! (Σ numerator / Σ denominator over traces): that single shape is what lets
//! the cluster bootstrap resample whole traces and recompute every metric
//! from summed counts.

use std::sync::LazyLock;

use crate::detect::Reason;
use crate::metrics::Tally;
use crate::parse::JsonPath;
use crate::repair::Repair;
use crate::replay::Outcome;

/// Indices into [`Counts`].
pub mod field {
    use crate::detect::Reason;
    use crate::repair::Repair;

    /// Always 1: the denominator of per-trace metrics.
    pub const TRACES: usize = 0;
    /// Every attempt, reached or not.
    pub const ATTEMPTS: usize = 1;
    /// Attempts the loops reached: the denominator of attempt rates.
    pub const REACHED: usize = 2;
    /// Attempts with outcome `rollback`.
    pub const ROLLBACKS: usize = 3;
    /// Six slots, one per reason, in [`Reason::ALL`] order.
    const REASONS: usize = 4;
    /// Attempts that met at least one exact duplicate query.
    pub const DUP_ATTEMPTS: usize = 10;
    pub const LLM_FAILED: usize = 11;
    /// Parsed tool calls.
    pub const CALLS: usize = 12;
    /// Calls that needed an in-place fix.
    pub const CALLS_REPAIRED: usize = 13;
    /// Five slots, one per repair, in [`Repair::ALL`] order.
    const REPAIRS: usize = 14;
    /// Calls whose arguments needed json_repair or the lenient fallback.
    pub const JSON_REPAIRED: usize = 19;
    pub const JSON_FAILED: usize = 20;
    /// `end` outcomes plus `allowed_duplicate` and `tool_error_passed` flags.
    pub const LIMIT_EVENTS: usize = 21;
    pub const STREAKS: usize = 22;
    /// Σ streak lengths (rollbacks in streaks).
    pub const STREAK_LENGTHS: usize = 23;
    /// Streaks the model recovered from.
    pub const RECOVERED: usize = 24;
    /// The trace's longest streak (summed: Σ per-trace longest).
    pub const LONGEST: usize = 25;
    /// 1 when the trace has a streak.
    pub const WITH_STREAK: usize = 26;
    pub const CRASHED: usize = 27;
    pub const EARLY_END: usize = 28;
    /// Cost (issue 25): 1 when the trace recorded output tokens, and its
    /// attempts' input and output tokens, discarded output tokens.
    pub const WITH_USAGE: usize = 29;
    pub const INPUT_TOKENS: usize = 30;
    pub const OUTPUT_TOKENS: usize = 31;
    pub const DISCARDED_OUTPUT: usize = 32;
    /// 1 when the trace recorded durations, and its attempts' milliseconds.
    pub const WITH_SECONDS: usize = 33;
    pub const MILLIS: usize = 34;
    /// 1 when the trace has a pass/fail result, and 1 when it passed.
    pub const WITH_RESULT: usize = 35;
    pub const PASSED: usize = 36;
    pub const COUNT: usize = 37;

    /// The slot of a reason, in [`Reason::ALL`] order.
    pub fn reason(r: Reason) -> usize {
        REASONS + Reason::ALL.iter().position(|x| *x == r).unwrap_or(0)
    }

    /// The slot of a repair, in [`Repair::ALL`] order.
    pub fn repair(r: Repair) -> usize {
        REPAIRS + Repair::ALL.iter().position(|x| *x == r).unwrap_or(0)
    }
}

use field::*;

/// One trace's (or a sum of traces') additive counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts(pub [u64; field::COUNT]);

impl Default for Counts {
    fn default() -> Self {
        Counts([0; field::COUNT])
    }
}

impl Counts {
    /// The counts of a tally (of one trace, or summed).
    pub fn of(t: &Tally) -> Counts {
        let mut c = [0; COUNT];
        c[TRACES] = t.traces;
        c[ATTEMPTS] = t.attempts;
        c[REACHED] = t.reached();
        c[ROLLBACKS] = t.rollbacks();
        for r in Reason::ALL {
            c[field::reason(r)] = t.rollback_reason(r);
        }
        c[DUP_ATTEMPTS] = t.attempts_with_duplicate;
        c[LLM_FAILED] = t.outcome(Outcome::LlmFailed);
        c[CALLS] = t.calls.parsed;
        c[CALLS_REPAIRED] = t.calls.repaired;
        for r in Repair::ALL {
            c[field::repair(r)] = t.calls.repair(r);
        }
        c[JSON_REPAIRED] = t.calls.path(JsonPath::Repaired) + t.calls.path(JsonPath::Lenient);
        c[JSON_FAILED] = t.calls.path(JsonPath::Failed);
        c[LIMIT_EVENTS] = t.limit_events.total();
        c[STREAKS] = t.streaks.count;
        c[STREAK_LENGTHS] = t.streaks.total_length;
        c[RECOVERED] = t.streaks.recovered();
        c[LONGEST] = t.streaks.longest_per_trace;
        c[WITH_STREAK] = t.streaks.traces_with_streak;
        c[CRASHED] = t.traces_with_crash;
        c[EARLY_END] = t.traces_ended_early();
        let cost = &t.cost;
        c[WITH_USAGE] = u64::from(cost.total.output_known > 0).min(t.traces);
        c[INPUT_TOKENS] = cost.total.input_tokens;
        c[OUTPUT_TOKENS] = cost.total.output_tokens;
        c[DISCARDED_OUTPUT] = cost.discarded.output_tokens;
        c[WITH_SECONDS] = u64::from(cost.total.seconds_known > 0).min(t.traces);
        c[MILLIS] = cost.total.nanos / 1_000_000;
        c[WITH_RESULT] = t.results.tasks;
        c[PASSED] = t.results.success;
        Counts(c)
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
/// each side. 32-bit slots (148 bytes) where every count fits, as they
/// do in any trace within the attempt limit; the full 64-bit form boxed
/// otherwise, so the figures stay exact.
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

/// How a metric's value and change are expressed, and which noise
/// threshold applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A share in [0, 1]; changes in percentage points.
    Rate,
    /// Events per trace.
    PerTrace,
    /// A length in rollbacks.
    Attempts,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Rate => "rate",
            Unit::PerTrace => "per_trace",
            Unit::Attempts => "attempts",
        }
    }
}

/// One compared metric: Σ`num` / Σ`den` over traces.
#[derive(Debug, PartialEq)]
pub struct Metric {
    /// The name used in tables, JSON and `--fail-on`.
    pub id: &'static str,
    pub num: usize,
    pub den: usize,
    pub unit: Unit,
    /// Direction: whether a rise is a regression.
    pub higher_is_worse: bool,
    /// What it measures, in words (docs/diff.md lists the same).
    pub about: String,
}

impl Metric {
    /// The metric over `c`; `None` when its denominator is zero.
    pub fn value(&self, c: &Counts) -> Option<f64> {
        crate::metrics::tally::ratio(c.get(self.num), c.get(self.den))
    }
}

/// A metric in `unit` that is worse when higher.
fn worse_up(
    id: &'static str,
    num: usize,
    den: usize,
    unit: Unit,
    about: impl Into<String>,
) -> Metric {
    Metric {
        id,
        num,
        den,
        unit,
        higher_is_worse: true,
        about: about.into(),
    }
}

fn rate(id: &'static str, num: usize, den: usize, about: impl Into<String>) -> Metric {
    worse_up(id, num, den, Unit::Rate, about)
}

/// Every compared metric, in report order. Per-reason and per-repair rows
/// use the reason or repair name from the verdict format.
pub static METRICS: LazyLock<Vec<Metric>> = LazyLock::new(|| {
    let mut all = vec![rate(
        "rollback_rate",
        ROLLBACKS,
        REACHED,
        "rollbacks / attempts reached (as analyze's rollback_rate)",
    )];
    all.extend(Reason::ALL.map(|r| {
        let about = format!("rollbacks with reason {} / attempts reached", r.name());
        rate(r.name(), field::reason(r), REACHED, about)
    }));
    all.extend([
        rate("duplicate_rate", DUP_ATTEMPTS, REACHED, "attempts that hit a duplicate query (rolled back or let through) / attempts reached"),
        rate("llm_failure_rate", LLM_FAILED, REACHED, "llm_failed attempts / attempts reached"),
        rate("repair_rate", CALLS_REPAIRED, CALLS, "calls that needed an in-place fix (a repair kind, or JSON repair) / calls (as analyze's calls_repaired)"),
    ]);
    all.extend(Repair::ALL.iter().zip(REPAIR_IDS).map(|(&r, id)| {
        let about = format!("calls with a {} repair / calls", r.name());
        rate(id, field::repair(r), CALLS, about)
    }));
    all.extend([
        rate("json_repaired_rate", JSON_REPAIRED, CALLS, "calls whose arguments needed json_repair or the lenient fallback / calls"),
        rate("json_failure_rate", JSON_FAILED, CALLS, "calls whose arguments failed to parse / calls"),
        worse_up("limit_events_per_trace", LIMIT_EVENTS, TRACES, Unit::PerTrace, "rollback-limit events (end outcomes, allowed_duplicate and tool_error_passed flags) per trace"),
        worse_up("mean_streak", STREAK_LENGTHS, STREAKS, Unit::Attempts, "mean streak length (rollbacks in a row)"),
        worse_up("mean_longest_streak", LONGEST, WITH_STREAK, Unit::Attempts, "a trace's longest streak, averaged over traces that have one"),
        Metric {
            higher_is_worse: false,
            ..rate("recovery_rate", RECOVERED, STREAKS, "streaks the model recovered from (ended by recovered, not let through at the limit) / streaks")
        },
        rate("crash_rate", CRASHED, TRACES, "traces with a crash / traces"),
        rate("early_end_rate", EARLY_END, TRACES, "traces whose main loop stopped early (limit, crash, context, turn limit) / traces"),
        worse_up("input_tokens_per_task", INPUT_TOKENS, WITH_USAGE, Unit::PerTrace, "input tokens of the attempts made, per trace that recorded usage"),
        worse_up("output_tokens_per_task", OUTPUT_TOKENS, WITH_USAGE, Unit::PerTrace, "output tokens of the attempts made, per trace that recorded usage"),
        worse_up("llm_ms_per_task", MILLIS, WITH_SECONDS, Unit::PerTrace, "milliseconds of LLM calls made, per trace that recorded durations"),
        rate("discarded_output_share", DISCARDED_OUTPUT, OUTPUT_TOKENS, "output tokens of discarded attempts (rollback, end) / output tokens of attempts made"),
        Metric {
            higher_is_worse: false,
            ..rate("success_rate", PASSED, WITH_RESULT, "tasks that passed / tasks with a pass/fail result")
        },
    ]);
    all
});

/// `repair_<name>` for each repair, in [`Repair::ALL`] order (ids are
/// `&'static str`: they name metrics in gates and JSON).
const REPAIR_IDS: [&str; 5] = [
    "repair_server_name",
    "repair_tool_name",
    "repair_arg_alias",
    "repair_sandbox_id",
    "repair_none_filtered",
];

/// The metric called `name`; a trailing `_rate` may be added or left off
/// (`refusal_rate` is `refusal`, `crash` is `crash_rate`).
pub fn find(name: &str) -> Option<&'static Metric> {
    let by_id = |n: &str| METRICS.iter().find(|m| m.id == n);
    by_id(name)
        .or_else(|| name.strip_suffix("_rate").and_then(by_id))
        .or_else(|| by_id(&format!("{name}_rate")))
}

#[cfg(test)]
mod tests {
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

    use super::*;
    use crate::metrics::testing::verdict;

    #[test]
    fn hard_coded_slots_match_reason_and_repair_order() {
        for r in Reason::ALL {
            let m = find(r.name()).expect("a metric per reason");
            assert_eq!(m.num, field::reason(r), "{}", r.name());
        }
        for r in Repair::ALL {
            let m = find(&format!("repair_{}", r.name())).expect("a metric per repair");
            assert_eq!(m.num, field::repair(r), "{}", r.name());
        }
        assert_eq!(
            field::repair(Repair::ALL[Repair::ALL.len() - 1]) + 1,
            JSON_REPAIRED
        );
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
            (c.get(ATTEMPTS), c.get(REACHED), c.get(ROLLBACKS)),
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
