//! The figure registry: every ratio figure `analyze` and `diff` report,
//! defined once. A [`Figure`] names its id, unit, numerator and
//! denominator (each a [`Count`]: an additive per-trace count read from a
//! [`Tally`]), which direction is worse and what it means. `diff` compares
//! exactly these (`diff --list-metrics`, its gates' metric names), the
//! reports label rates with [`Figure::label`], and docs/metrics.md's figure
//! table is [`markdown_table`] (`tests/suite/figures/registry.rs` checks it).
//!
//! Adding a figure: one entry in [`FIGURES`]; when it needs a count no
//! figure uses yet, one [`Count`] variant, its arm in [`Count::read`] and
//! its place at the end of [`Count::slots`] (docs/metrics.md, "Adding a
//! figure").

use std::sync::LazyLock;

use super::Tally;
use crate::detect::Reason;
use crate::parse::JsonPath;
use crate::repair::Repair;
use crate::replay::Outcome;

/// One additive count of a trace (or of a sum of traces): a figure's
/// numerator or denominator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Always 1 per trace.
    Traces,
    /// Every attempt, reached or not.
    Attempts,
    /// Attempts the loops reached (every outcome but `unreachable`).
    Reached,
    /// Attempts with outcome `rollback`.
    Rollbacks,
    /// Rollbacks with one reason.
    Reason(Reason),
    /// Attempts that met at least one exact duplicate query.
    DuplicateAttempts,
    /// Attempts with outcome `llm_failed`.
    LlmFailed,
    /// Parsed tool calls.
    Calls,
    /// Calls with at least one in-place fix (a repair kind, or JSON repair
    /// / the lenient fallback): the one meaning of "repaired".
    CallsRepaired,
    /// Calls with one repair kind.
    Repair(Repair),
    /// Calls whose arguments needed json_repair or the lenient fallback.
    JsonRepaired,
    /// Calls whose arguments failed to parse.
    JsonFailed,
    /// `end` outcomes plus `allowed_duplicate` and `tool_error_passed` flags.
    LimitEvents,
    Streaks,
    /// Σ streak lengths (rollbacks in streaks).
    StreakLengths,
    /// Streaks the model recovered from.
    Recovered,
    /// The trace's longest streak (summed: Σ per-trace longest).
    Longest,
    /// 1 when the trace has a streak.
    TracesWithStreak,
    /// 1 when the trace has a crash in any session.
    TracesCrashed,
    /// 1 when the trace's main loop stopped early.
    TracesEndedEarly,
    /// 1 when the trace recorded output tokens (issue 25's cost figures).
    TracesWithUsage,
    /// Input tokens of the attempts made.
    InputTokens,
    /// Output tokens of the attempts made.
    OutputTokens,
    /// Output tokens of discarded attempts (outcome rollback or end).
    DiscardedOutputTokens,
    /// 1 when the trace recorded durations.
    TracesWithSeconds,
    /// Milliseconds of the LLM calls made.
    LlmMillis,
    /// 1 when the trace has a pass/fail result.
    TracesWithResult,
    /// 1 when the trace passed.
    TracesPassed,
    /// Verdicts of one mistake kind ([`super::kinds::SHARE_KINDS`] index).
    Kind(usize),
    /// Verdicts of every kind of one family ([`super::kinds::SHARE_FAMILIES`] index).
    KindFamily(usize),
    /// Calls whose arguments json_repair repaired (the `repaired` path
    /// only: what `json_fixes` are counted over).
    JsonRepairCalls,
    /// Those of them with one fix (a [`crate::parse::json_repair::JsonFix::ALL`] index).
    Fix(usize),
    /// Tool results that read like errors but no rule could judge
    /// ([`super::attribution::BlindSpots::tool_errors_unmatched`]).
    ToolErrorsUnmatched,
    /// Attempts whose text the input does not hold.
    TextUnknown,
    /// `tool_error` rollbacks and ends and `llm_failed` attempts of one owner.
    Owned(crate::detect::cause::Owner),
}

/// How many slots [`Count::slots`] has (the length of `diff`'s per-trace
/// rows); `tests` check it against the list.
pub const COUNT: usize =
    42 + super::kinds::KINDS + super::kinds::SHARE_FAMILIES.len() + super::kinds::FIXES;

static SLOTS: LazyLock<Vec<Count>> = LazyLock::new(|| {
    use Count::*;
    let mut all = vec![Traces, Attempts, Reached, Rollbacks];
    all.extend(crate::detect::Reason::ALL.map(Count::Reason));
    all.extend([DuplicateAttempts, LlmFailed, Calls, CallsRepaired]);
    all.extend(crate::repair::Repair::ALL.map(Count::Repair));
    all.extend([
        JsonRepaired,
        JsonFailed,
        LimitEvents,
        Streaks,
        StreakLengths,
        Recovered,
        Longest,
        TracesWithStreak,
        TracesCrashed,
        TracesEndedEarly,
        TracesWithUsage,
        InputTokens,
        OutputTokens,
        DiscardedOutputTokens,
        TracesWithSeconds,
        LlmMillis,
        TracesWithResult,
        TracesPassed,
    ]);
    all.extend((0..super::kinds::KINDS).map(Kind));
    all.extend((0..super::kinds::SHARE_FAMILIES.len()).map(KindFamily));
    all.push(JsonRepairCalls);
    all.extend((0..super::kinds::FIXES).map(Fix));
    all.extend([ToolErrorsUnmatched, TextUnknown]);
    all.extend(crate::detect::cause::Owner::ALL.map(Owned));
    all
});

impl Count {
    /// Every count a figure uses, in slot order. Partial diffs store rows
    /// in this order: a new count goes at the end.
    pub fn slots() -> &'static [Count] {
        &SLOTS
    }

    /// This count's index in [`Count::slots`].
    pub fn slot(self) -> usize {
        SLOTS.iter().position(|c| *c == self).unwrap_or(0)
    }

    /// The count in a tally: the computation behind every figure.
    pub fn read(self, t: &Tally) -> u64 {
        match self {
            Count::Traces => t.traces,
            Count::Attempts => t.attempts,
            Count::Reached => t.reached(),
            Count::Rollbacks => t.rollbacks(),
            Count::Reason(r) => t.rollback_reason(r),
            Count::DuplicateAttempts => t.attempts_with_duplicate,
            Count::LlmFailed => t.outcome(Outcome::LlmFailed),
            Count::Calls => t.calls.parsed,
            Count::CallsRepaired => t.calls.repaired,
            Count::Repair(r) => t.calls.repair(r),
            Count::JsonRepaired => {
                t.calls.path(JsonPath::Repaired) + t.calls.path(JsonPath::Lenient)
            }
            Count::JsonFailed => t.calls.path(JsonPath::Failed),
            Count::LimitEvents => t.limit_events.total(),
            Count::Streaks => t.streaks.count,
            Count::StreakLengths => t.streaks.total_length,
            Count::Recovered => t.streaks.recovered(),
            Count::Longest => t.streaks.longest_per_trace,
            Count::TracesWithStreak => t.streaks.traces_with_streak,
            Count::TracesCrashed => t.traces_with_crash,
            Count::TracesEndedEarly => t.traces_ended_early(),
            // Per trace (diff's rows): 1 when the trace recorded any.
            Count::TracesWithUsage => u64::from(t.cost.total.output_known > 0).min(t.traces),
            Count::InputTokens => t.cost.total.input_tokens,
            Count::OutputTokens => t.cost.total.output_tokens,
            Count::DiscardedOutputTokens => t.cost.discarded.output_tokens,
            Count::TracesWithSeconds => u64::from(t.cost.total.seconds_known > 0).min(t.traces),
            Count::LlmMillis => t.cost.total.nanos / 1_000_000,
            Count::TracesWithResult => t.results.tasks,
            Count::TracesPassed => t.results.success,
            Count::Kind(i) => t.kinds.kind(i),
            Count::KindFamily(f) => t.kinds.family(f),
            Count::JsonRepairCalls => t.calls.path(JsonPath::Repaired),
            Count::Fix(i) => t.fixes.fix(i),
            Count::ToolErrorsUnmatched => t.blind.tool_errors_unmatched,
            Count::TextUnknown => t.blind.text_unknown,
            Count::Owned(o) => t.owners.of(o),
        }
    }

    /// The count's name as a denominator is shown: "31.4% of 3 340
    /// attempts reached".
    pub fn name(self) -> String {
        match self {
            Count::Traces => "traces".into(),
            Count::Attempts => "attempts".into(),
            Count::Reached => "attempts reached".into(),
            Count::Rollbacks => "rollbacks".into(),
            Count::Reason(r) => format!("rollbacks with reason {}", r.name()),
            Count::DuplicateAttempts => "attempts that met a duplicate query".into(),
            Count::LlmFailed => "llm_failed attempts".into(),
            Count::Calls => "calls".into(),
            Count::CallsRepaired => "calls repaired".into(),
            Count::Repair(r) => format!("calls with a {} repair", r.name()),
            Count::JsonRepaired => "calls with repaired JSON".into(),
            Count::JsonFailed => "calls whose JSON failed".into(),
            Count::LimitEvents => "limit events".into(),
            Count::Streaks => "streaks".into(),
            Count::StreakLengths => "Σ streak lengths".into(),
            Count::Recovered => "recovered streaks".into(),
            Count::Longest => "Σ longest streak per trace".into(),
            Count::TracesWithStreak => "traces with a streak".into(),
            Count::TracesCrashed => "traces with a crash".into(),
            Count::TracesEndedEarly => "traces ended early".into(),
            Count::TracesWithUsage => "traces with usage".into(),
            Count::InputTokens => "input tokens".into(),
            Count::OutputTokens => "output tokens".into(),
            Count::DiscardedOutputTokens => "output tokens discarded".into(),
            Count::TracesWithSeconds => "traces with durations".into(),
            Count::LlmMillis => "LLM milliseconds".into(),
            Count::TracesWithResult => "tasks with a result".into(),
            Count::TracesPassed => "tasks passed".into(),
            Count::Kind(i) => match super::kinds::SHARE_KINDS.get(i) {
                Some((family, kind)) => format!("{family} verdicts of kind {kind}"),
                None => "?".into(),
            },
            Count::KindFamily(f) => match super::kinds::SHARE_FAMILIES.get(f) {
                Some(family) => format!("{family} verdicts"),
                None => "?".into(),
            },
            Count::JsonRepairCalls => "calls json_repair repaired".into(),
            Count::Fix(i) => match crate::parse::json_repair::JsonFix::ALL.get(i) {
                Some(fix) => format!("calls json_repair repaired with fix {}", fix.name()),
                None => "?".into(),
            },
            Count::ToolErrorsUnmatched => "tool results read as errors no rule judged".into(),
            Count::TextUnknown => "attempts whose text is not in the input".into(),
            Count::Owned(o) => format!("tool errors and LLM failures of the {}", o.name()),
        }
    }
}

/// How a figure's value and change are expressed, and which noise
/// threshold `diff` applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A share in [0, 1]; changes in percentage points.
    Rate,
    /// Events per trace.
    PerTrace,
    /// A streak length, in rollbacks.
    Rollbacks,
    /// Tokens per task: thousands of times larger than events, so a chart
    /// or table that shares an axis with events must not mix them.
    Tokens,
    /// Milliseconds of LLM calls per task.
    Millis,
}

impl Unit {
    /// The unit's name in `--list-metrics`, JSON and the docs' tables.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Rate => "rate",
            Unit::PerTrace => "per_trace",
            Unit::Rollbacks => "rollbacks",
            Unit::Tokens => "tokens_per_task",
            Unit::Millis => "ms_per_task",
        }
    }
}

/// Which way a figure gets worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worse {
    Higher,
    Lower,
}

/// One figure: Σ`num` / Σ`den` over traces.
#[derive(Debug, PartialEq)]
pub struct Figure {
    /// The name used in tables, JSON and `--fail-on`.
    pub id: &'static str,
    pub unit: Unit,
    pub num: Count,
    pub den: Count,
    pub worse: Worse,
    /// What it measures, in one line (`--list-metrics`, docs/metrics.md).
    pub meaning: String,
}

impl Figure {
    pub fn higher_is_worse(&self) -> bool {
        self.worse == Worse::Higher
    }

    /// The figure's value over a tally; `None` when the denominator is 0.
    pub fn of(&self, t: &Tally) -> Option<f64> {
        super::tally::ratio(self.num.read(t), self.den.read(t))
    }

    /// `rollback rate (rollbacks / attempts reached)`: a label that names
    /// the denominator.
    pub fn label(&self) -> String {
        format!(
            "{} ({} / {})",
            self.id.replace('_', " "),
            self.num.name(),
            self.den.name()
        )
    }

    /// `31.4% of 3,340 attempts reached`: a rate with its denominator.
    pub fn shown(&self, t: &Tally) -> String {
        let den = self.den.read(t);
        format!(
            "{} of {} {}",
            crate::metrics::format::pct(self.num.read(t), den),
            crate::metrics::format::thousands(den),
            self.den.name()
        )
    }
}

fn figure(
    id: &'static str,
    unit: Unit,
    num: Count,
    den: Count,
    meaning: impl Into<String>,
) -> Figure {
    Figure {
        id,
        unit,
        num,
        den,
        worse: Worse::Higher,
        meaning: meaning.into(),
    }
}

fn rate(id: &'static str, num: Count, den: Count, meaning: impl Into<String>) -> Figure {
    figure(id, Unit::Rate, num, den, meaning)
}

/// `repair_<name>` for each repair, in [`Repair::ALL`] order (ids are
/// `&'static str`: they name metrics in gates and JSON).
const REPAIR_IDS: [&str; 5] = [
    "repair_server_name",
    "repair_tool_name",
    "repair_arg_alias",
    "repair_sandbox_id",
    "repair_none_filtered",
];

/// Every figure, in report order. Per-reason and per-repair figures use
/// the reason or repair name from the verdict format.
pub static FIGURES: LazyLock<Vec<Figure>> = LazyLock::new(|| {
    use Count::*;
    let mut all = vec![rate(
        "rollback_rate",
        Rollbacks,
        Reached,
        "rollbacks / attempts reached (analyze's rollback_rate)",
    )];
    all.extend(crate::detect::Reason::ALL.map(|r| {
        let meaning = format!("rollbacks with reason {} / attempts reached", r.name());
        rate(r.name(), Count::Reason(r), Reached, meaning)
    }));
    all.extend([
        rate("duplicate_rate", DuplicateAttempts, Reached, "attempts that hit a duplicate query (rolled back or let through) / attempts reached"),
        rate("llm_failure_rate", LlmFailed, Reached, "llm_failed attempts / attempts reached"),
        rate("repair_rate", CallsRepaired, Calls, "calls repaired (at least one in-place fix: a repair kind, or JSON repair) / calls (analyze's calls_repaired)"),
    ]);
    all.extend(
        crate::repair::Repair::ALL
            .iter()
            .zip(REPAIR_IDS)
            .map(|(&r, id)| {
                let meaning = format!("calls with a {} repair / calls", r.name());
                rate(id, Count::Repair(r), Calls, meaning)
            }),
    );
    all.extend([
        rate("json_repaired_rate", JsonRepaired, Calls, "calls whose arguments needed json_repair or the lenient fallback / calls"),
        rate("json_failure_rate", JsonFailed, Calls, "calls whose arguments failed to parse / calls"),
        figure("limit_events_per_trace", Unit::PerTrace, LimitEvents, Traces, "rollback-limit events (end outcomes, allowed_duplicate and tool_error_passed flags) per trace"),
        figure("mean_streak", Unit::Rollbacks, StreakLengths, Streaks, "mean streak length (rollbacks in a row)"),
        figure("mean_longest_streak", Unit::Rollbacks, Longest, TracesWithStreak, "a trace's longest streak, averaged over traces that have one"),
        Figure {
            worse: Worse::Lower,
            ..rate("recovery_rate", Recovered, Streaks, "streaks the model recovered from (ended by recovered, not let through at the limit) / streaks")
        },
        rate("crash_rate", TracesCrashed, Traces, "traces with a crash / traces"),
        rate("early_end_rate", TracesEndedEarly, Traces, "traces whose main loop stopped early (limit, crash, context, turn limit) / traces"),
        figure("input_tokens_per_task", Unit::Tokens, InputTokens, TracesWithUsage, "input tokens of the attempts made, per trace that recorded usage"),
        figure("output_tokens_per_task", Unit::Tokens, OutputTokens, TracesWithUsage, "output tokens of the attempts made, per trace that recorded usage"),
        figure("llm_ms_per_task", Unit::Millis, LlmMillis, TracesWithSeconds, "milliseconds of LLM calls made, per trace that recorded durations"),
        rate("discarded_output_share", DiscardedOutputTokens, OutputTokens, "output tokens of discarded attempts (rollback, end) / output tokens of attempts made"),
        Figure {
            worse: Worse::Lower,
            ..rate("success_rate", TracesPassed, TracesWithResult, "tasks that passed / tasks with a pass/fail result")
        },
        rate("model_error_rate", Owned(crate::detect::cause::Owner::Model), Reached, "tool_error rollbacks and ends and llm_failed attempts that are the model's (bad arguments, invented paths or ids, empty or unparseable replies) / attempts reached"),
        rate("environment_error_rate", Owned(crate::detect::cause::Owner::Environment), Reached, "tool_error rollbacks and ends and llm_failed attempts that are the environment's (time-outs, rate limits, 5xx, connections, DNS, sandboxes, credentials) / attempts reached"),
        rate("unmatched_error_rate", ToolErrorsUnmatched, Calls, "tool results that read like errors yet are neither marked as failed nor match a tool_error_prefixes entry (a blind spot) / calls"),
        rate("text_unknown_rate", TextUnknown, Attempts, "attempts whose text the input does not hold (a task log's rolled-back turns: their verdicts are the log's) / attempts"),
    ]);
    all
});

/// The parametrised figures `<family>_share.<kind>`: a mistake kind's
/// share of its family's verdicts, one per (family, kind) of
/// [`super::kinds::SHARE_KINDS`], then `json_fixes_share.<fix>`: the share
/// of the calls json_repair repaired that needed the fix, one per
/// [`JsonFix`](crate::parse::json_repair::JsonFix). Compared by `diff` in a
/// Holm family of their own and usable in `--fail-on`; listed as one line
/// per family.
pub static KIND_FIGURES: LazyLock<Vec<Figure>> = LazyLock::new(|| {
    use super::kinds::{FIX_FAMILY, SHARE_FAMILIES, SHARE_KINDS};
    // Built once, for the life of the process: ids name metrics in gates
    // and JSON as `&'static str`.
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let mut all: Vec<Figure> = SHARE_KINDS
        .iter()
        .enumerate()
        .map(|(i, &(family, kind))| {
            let f = SHARE_FAMILIES
                .iter()
                .position(|x| *x == family)
                .unwrap_or(0);
            let meaning = format!("{family} verdicts of kind {kind} / {family} verdicts");
            rate(
                leak(format!("{family}_share.{kind}")),
                Count::Kind(i),
                Count::KindFamily(f),
                meaning,
            )
        })
        .collect();
    all.extend(
        crate::parse::json_repair::JsonFix::ALL
            .iter()
            .enumerate()
            .map(|(i, fix)| {
                let meaning = format!(
                    "calls json_repair repaired with fix {} / calls json_repair repaired",
                    fix.name()
                );
                rate(
                    leak(format!("{FIX_FAMILY}_share.{}", fix.name())),
                    Count::Fix(i),
                    Count::JsonRepairCalls,
                    meaning,
                )
            }),
    );
    all
});

/// The parametrised families of [`KIND_FIGURES`]: `(id prefix, kinds)`,
/// in [`KIND_FIGURES`] order.
pub fn kind_families() -> Vec<(String, Vec<&'static str>)> {
    let mut out: Vec<(String, Vec<&'static str>)> = Vec::new();
    for f in KIND_FIGURES.iter() {
        let Some((prefix, kind)) = f.id.split_once('.') else {
            continue;
        };
        match out.last_mut() {
            Some((p, kinds)) if p == prefix => kinds.push(kind),
            _ => out.push((prefix.to_string(), vec![kind])),
        }
    }
    out
}

/// The figure called `id` exactly (a kind share included).
pub fn get(id: &str) -> Option<&'static Figure> {
    FIGURES
        .iter()
        .find(|f| f.id == id)
        .or_else(|| KIND_FIGURES.iter().find(|f| f.id == id))
}

/// The figure called `name`; a trailing `_rate` may be added or left off
/// (`refusal_rate` is `refusal`, `crash` is `crash_rate`).
pub fn find(name: &str) -> Option<&'static Figure> {
    get(name)
        .or_else(|| name.strip_suffix("_rate").and_then(get))
        .or_else(|| get(&format!("{name}_rate")))
}

/// docs/metrics.md's table of the parametrised kind shares, generated
/// from [`KIND_FIGURES`].
pub fn kind_markdown_table() -> String {
    let mut out = String::from(
        "| figure | unit | numerator | denominator | worse when | kinds |\n|---|---|---|---|---|---|\n",
    );
    for (prefix, kinds) in kind_families() {
        let family = prefix.trim_end_matches("_share");
        let (num, den) = if family == super::kinds::FIX_FAMILY {
            (
                "calls json_repair repaired with the fix".to_string(),
                "calls json_repair repaired".to_string(),
            )
        } else {
            (
                format!("{family} verdicts of the kind"),
                format!("{family} verdicts"),
            )
        };
        let kinds: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
        out.push_str(&format!(
            "| `{prefix}.<kind>` | rate | {num} | {den} | higher | {} |\n",
            kinds.join(", ")
        ));
    }
    out
}

/// docs/metrics.md's figure table, generated from [`FIGURES`].
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| figure | unit | numerator | denominator | worse when | meaning |\n|---|---|---|---|---|---|\n",
    );
    for f in FIGURES.iter() {
        let worse = match f.worse {
            Worse::Higher => "higher",
            Worse::Lower => "lower",
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            f.id,
            f.unit.name(),
            f.num.name(),
            f.den.name(),
            worse,
            f.meaning.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_and_distinct() {
        assert_eq!(Count::slots().len(), COUNT);
        for (i, c) in Count::slots().iter().enumerate() {
            assert_eq!(c.slot(), i, "{c:?} listed twice");
        }
        for f in FIGURES.iter() {
            assert!(
                Count::slots().contains(&f.num),
                "{}: {:?} has no slot",
                f.id,
                f.num
            );
            assert!(
                Count::slots().contains(&f.den),
                "{}: {:?} has no slot",
                f.id,
                f.den
            );
        }
    }

    #[test]
    fn ids_are_unique_and_found_with_or_without_rate() {
        for (i, f) in FIGURES.iter().enumerate() {
            assert_eq!(
                get(f.id).map(|g| std::ptr::eq(g, f)),
                Some(true),
                "{} twice",
                f.id
            );
            assert!(i == 0 || f.id != FIGURES[0].id);
        }
        assert_eq!(find("refusal_rate").map(|f| f.id), Some("refusal"));
        assert_eq!(find("crash").map(|f| f.id), Some("crash_rate"));
        assert!(find("nonsense").is_none());
    }

    #[test]
    fn a_rate_is_shown_with_its_denominator() {
        let f = get("rollback_rate").expect("registered");
        assert_eq!(f.label(), "rollback rate (rollbacks / attempts reached)");
        let t = Tally::default();
        assert!(f.of(&t).is_none());
        let none = crate::metrics::format::pct(0, 0);
        assert_eq!(f.shown(&t), format!("{none} of 0 attempts reached"));
    }
}
