//! What `diff` measures. Each trace is reduced to additive [`Counts`], and
//! every metric is a ratio of two of those sums (Σ numerator / Σ denominator
//! over traces). That single shape is what lets the cluster bootstrap
//! resample whole traces and recompute every metric from summed counts.

use crate::parse::JsonPath;
use crate::replay::{Flag, Outcome, Verdict};

/// Indices into [`Counts`].
pub mod field {
    use crate::detect::Reason;
    use crate::repair::Repair;

    /// Attempts that upstream made (every outcome but `unreachable`).
    pub const ATTEMPTS: usize = 0;
    /// Attempts whose outcome is `rollback` or `end` (a guard fired).
    pub const ROLLBACKS: usize = 1;
    /// Six slots, one per reason, in [`Reason::ALL`] order.
    const REASONS: usize = 2;
    /// Attempts that met at least one exact duplicate query.
    pub const DUP_ATTEMPTS: usize = 8;
    pub const LLM_FAILED: usize = 9;
    /// Parsed tool calls.
    pub const CALLS: usize = 10;
    /// Calls with at least one in-place repair.
    pub const CALLS_REPAIRED: usize = 11;
    /// Five slots, one per repair, in [`Repair::ALL`] order.
    const REPAIRS: usize = 12;
    /// Calls whose arguments needed json_repair or the lenient fallback.
    pub const JSON_REPAIRED: usize = 17;
    pub const JSON_FAILED: usize = 18;
    /// `end` outcomes plus `allowed_duplicate` and `tool_error_passed` flags.
    pub const LIMIT_EVENTS: usize = 19;
    pub const STREAKS: usize = 20;
    /// Problem attempts summed over streaks.
    pub const STREAK_ATTEMPTS: usize = 21;
    /// Streaks closed by an `ok` attempt.
    pub const RECOVERED: usize = 22;
    /// The trace's longest streak.
    pub const LONGEST: usize = 23;
    /// 1 when the trace has a streak.
    pub const WITH_STREAK: usize = 24;
    /// Always 1: the denominator of per-trace metrics.
    pub const TRACES: usize = 25;
    pub const CRASHED: usize = 26;
    pub const EARLY_END: usize = 27;
    pub const COUNT: usize = 28;

    pub fn reason(r: Reason) -> usize {
        REASONS + Reason::ALL.iter().position(|x| *x == r).unwrap_or(0)
    }

    pub fn repair(r: Repair) -> usize {
        REPAIRS + Repair::ALL.iter().position(|x| *x == r).unwrap_or(0)
    }
}

/// One trace's (or a sum of traces') additive counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts(pub [u64; field::COUNT]);

impl Default for Counts {
    fn default() -> Self {
        Counts([0; field::COUNT])
    }
}

impl Counts {
    pub fn get(&self, f: usize) -> u64 {
        self.0[f]
    }

    pub fn add(&mut self, other: &Counts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }

    fn bump(&mut self, f: usize) {
        self.0[f] += 1;
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
    /// A length in attempts.
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
    pub about: &'static str,
}

impl Metric {
    /// The metric over `c`; `None` when its denominator is zero.
    pub fn value(&self, c: &Counts) -> Option<f64> {
        let den = c.get(self.den);
        (den > 0).then(|| c.get(self.num) as f64 / den as f64)
    }
}

const fn rate(id: &'static str, num: usize, den: usize, about: &'static str) -> Metric {
    Metric {
        id,
        num,
        den,
        unit: Unit::Rate,
        higher_is_worse: true,
        about,
    }
}

use field::*;

/// Every compared metric, in report order. Per-reason and per-repair rows
/// use the reason or repair name from the verdict format.
pub static METRICS: [Metric; 23] = [
    rate("rollback_rate", ROLLBACKS, ATTEMPTS, "attempts rolled back or ended by a guard / attempts"),
    rate("format_error", 2, ATTEMPTS, "attempts with reason format_error / attempts"),
    rate("refusal", 3, ATTEMPTS, "attempts with reason refusal / attempts"),
    rate("duplicate_query", 4, ATTEMPTS, "attempts with reason duplicate_query / attempts"),
    rate("unknown_tool", 5, ATTEMPTS, "attempts with reason unknown_tool / attempts"),
    rate("tool_error", 6, ATTEMPTS, "attempts with reason tool_error / attempts"),
    rate("empty_search", 7, ATTEMPTS, "attempts with reason empty_search / attempts"),
    rate("duplicate_rate", DUP_ATTEMPTS, ATTEMPTS, "attempts that hit a duplicate query (rolled back or allowed) / attempts"),
    rate("llm_failure_rate", LLM_FAILED, ATTEMPTS, "llm_failed attempts / attempts"),
    rate("repair_rate", CALLS_REPAIRED, CALLS, "calls with any in-place repair / calls"),
    rate("repair_server_name", 12, CALLS, "calls with a server_name repair / calls"),
    rate("repair_tool_name", 13, CALLS, "calls with a tool_name repair / calls"),
    rate("repair_arg_alias", 14, CALLS, "calls with an arg_alias repair / calls"),
    rate("repair_sandbox_id", 15, CALLS, "calls with a sandbox_id repair / calls"),
    rate("repair_none_filtered", 16, CALLS, "calls with a none_filtered repair / calls"),
    rate("json_repaired_rate", JSON_REPAIRED, CALLS, "calls whose arguments needed json_repair or the lenient fallback / calls"),
    rate("json_failure_rate", JSON_FAILED, CALLS, "calls whose arguments failed to parse / calls"),
    Metric {
        id: "limit_events_per_trace",
        num: LIMIT_EVENTS,
        den: TRACES,
        unit: Unit::PerTrace,
        higher_is_worse: true,
        about: "rollback-limit events (end outcomes, allowed_duplicate and tool_error_passed flags) per trace",
    },
    Metric {
        id: "mean_streak",
        num: STREAK_ATTEMPTS,
        den: STREAKS,
        unit: Unit::Attempts,
        higher_is_worse: true,
        about: "mean length of a rollback streak, in problem attempts",
    },
    Metric {
        id: "max_streak",
        num: LONGEST,
        den: WITH_STREAK,
        unit: Unit::Attempts,
        higher_is_worse: true,
        about: "a trace's longest streak, averaged over traces that have one",
    },
    Metric {
        id: "recovery_rate",
        num: RECOVERED,
        den: STREAKS,
        unit: Unit::Rate,
        higher_is_worse: false,
        about: "streaks closed by an ok attempt / streaks",
    },
    rate("crash_rate", CRASHED, TRACES, "traces with a crash / traces"),
    rate("early_end_rate", EARLY_END, TRACES, "traces whose main loop ended by end, context_exceeded or crash / traces"),
];

/// The metric called `name`; a trailing `_rate` may be added or left off
/// (`refusal_rate` is `refusal`, `crash` is `crash_rate`).
pub fn find(name: &str) -> Option<&'static Metric> {
    let by_id = |n: &str| METRICS.iter().find(|m| m.id == n);
    by_id(name)
        .or_else(|| name.strip_suffix("_rate").and_then(by_id))
        .or_else(|| by_id(&format!("{name}_rate")))
}

/// A rollback streak being followed in one session.
struct OpenStreak<'a> {
    session: &'a str,
    len: u64,
}

/// Reduces one trace's verdicts (in line order) to its counts.
///
/// A streak is a run of `rollback`/`end` attempts within one session; an
/// `llm_failed` attempt neither extends nor breaks it (upstream keeps its
/// counter), an `ok` closes it as recovered, anything else (or the end of
/// the session's lines) closes it unrecovered.
pub fn trace_counts(verdicts: &[Verdict]) -> Counts {
    let mut c = Counts::default();
    c.bump(TRACES);
    let mut open: Vec<OpenStreak> = Vec::new();
    for v in verdicts {
        if v.outcome == Outcome::Unreachable {
            continue;
        }
        c.bump(ATTEMPTS);
        let at = match open.iter().position(|s| *s.session == *v.session) {
            Some(i) => i,
            None => {
                open.push(OpenStreak {
                    session: &v.session,
                    len: 0,
                });
                open.len() - 1
            }
        };
        let streak = &mut open[at].len;
        match v.outcome {
            Outcome::Rollback | Outcome::End => {
                c.bump(ROLLBACKS);
                if let Some(r) = v.reason {
                    c.bump(field::reason(r));
                }
                *streak += 1;
                if v.outcome == Outcome::End {
                    c.bump(LIMIT_EVENTS);
                    close(&mut c, std::mem::take(streak), false);
                }
            }
            Outcome::LlmFailed => c.bump(LLM_FAILED),
            Outcome::Ok => close(&mut c, std::mem::take(streak), true),
            Outcome::Final | Outcome::ContextExceeded | Outcome::Crash | Outcome::Unreachable => {
                close(&mut c, std::mem::take(streak), false)
            }
        }
        if &*v.session == "main"
            && matches!(
                v.outcome,
                Outcome::End | Outcome::ContextExceeded | Outcome::Crash
            )
        {
            c.0[EARLY_END] = 1;
        }
        if v.outcome == Outcome::Crash {
            c.0[CRASHED] = 1;
        }
        for f in &v.flags {
            if matches!(f, Flag::AllowedDuplicate | Flag::ToolErrorPassed) {
                c.bump(LIMIT_EVENTS);
            }
        }
        if !v.duplicates.is_empty() {
            c.bump(DUP_ATTEMPTS);
        }
        for call in &v.calls {
            c.bump(CALLS);
            if !call.repairs.is_empty() {
                c.bump(CALLS_REPAIRED);
            }
            for r in &call.repairs {
                c.bump(field::repair(*r));
            }
            match call.json {
                JsonPath::Strict => {}
                JsonPath::Repaired | JsonPath::Lenient => c.bump(JSON_REPAIRED),
                JsonPath::Failed => c.bump(JSON_FAILED),
            }
        }
    }
    for s in open {
        close(&mut c, s.len, false);
    }
    c
}

fn close(c: &mut Counts, len: u64, recovered: bool) {
    if len == 0 {
        return;
    }
    c.bump(STREAKS);
    c.0[STREAK_ATTEMPTS] += len;
    c.0[LONGEST] = c.0[LONGEST].max(len);
    c.0[WITH_STREAK] = 1;
    if recovered {
        c.bump(RECOVERED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Reason;
    use crate::read::Origin;
    use crate::repair::Repair;

    fn verdict(session: &str, outcome: Outcome, reason: Option<Reason>) -> Verdict {
        Verdict {
            trace_id: "t".into(),
            session: session.into(),
            agent: session.into(),
            index: 0,
            origin: Origin {
                file: "f".into(),
                line: 1,
            },
            outcome,
            reason,
            turn: Some(1),
            consecutive_rollbacks: Some(0),
            flags: vec![],
            calls: vec![],
            executed: 0,
            error: None,
            duplicates: vec![],
            near_duplicates: vec![],
            refusal_keyword: None,
            model: None,
            recorded: None,
        }
    }

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
    }

    #[test]
    fn names_accept_an_optional_rate_suffix() {
        assert_eq!(find("refusal_rate").map(|m| m.id), Some("refusal"));
        assert_eq!(find("crash").map(|m| m.id), Some("crash_rate"));
        assert!(find("nonsense").is_none());
    }

    #[test]
    fn streaks_follow_sessions_and_close_on_ok_or_end() {
        let rb = |s, r| verdict(s, Outcome::Rollback, Some(r));
        let vs = vec![
            rb("main", Reason::Refusal),
            verdict("main", Outcome::LlmFailed, None),
            rb("agent-browsing_1", Reason::EmptySearch),
            rb("main", Reason::DuplicateQuery),
            verdict("main", Outcome::Ok, None),
            rb("main", Reason::FormatError),
            verdict("main", Outcome::End, Some(Reason::FormatError)),
            verdict("main", Outcome::Unreachable, None),
        ];
        let c = trace_counts(&vs);
        assert_eq!(c.get(ATTEMPTS), 7);
        assert_eq!(c.get(ROLLBACKS), 5);
        assert_eq!(c.get(field::reason(Reason::FormatError)), 2);
        assert_eq!(c.get(LLM_FAILED), 1);
        // main: [refusal, dup] recovered, [format, end] not; sub-agent: [empty] open at the end.
        assert_eq!(c.get(STREAKS), 3);
        assert_eq!(c.get(STREAK_ATTEMPTS), 5);
        assert_eq!(c.get(RECOVERED), 1);
        assert_eq!(c.get(LONGEST), 2);
        assert_eq!(c.get(LIMIT_EVENTS), 1);
        assert_eq!(c.get(EARLY_END), 1);
        assert_eq!(c.get(CRASHED), 0);
        let m = find("mean_streak").map(|m| m.value(&c));
        assert_eq!(m, Some(Some(5.0 / 3.0)));
    }
}
