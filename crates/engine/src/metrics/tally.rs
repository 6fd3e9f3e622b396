//! [`Tally`]: the additive figures of one trace, and (summed) of any set of
//! traces; [`TraceWalk`] makes one trace's tally in one pass over its
//! verdicts.
//!
//! `analyze` sums tallies into its report, `diff` resamples per-trace
//! tallies, `keywords` tallies each list's replay: a figure with one name is
//! computed by this code only, so the commands cannot disagree on it.
//! Per-trace facts (traces with a rollback, with a crash, that ended early)
//! are 0 or 1 in one trace's tally, so they add up too.

use super::attempt::{call_repaired, end_reason, rollback_reason, LimitEvents};
use super::cost::CostTally;
use super::streak::{EarlyEnd, SessionSummary, SessionWalk, Streak, StreakEnd};
use super::task_results::ResultTally;
use crate::detect::Reason;
use crate::parse::JsonPath;
use crate::repair::Repair;
use crate::replay::{Flag, Outcome, Verdict};

pub const OUTCOMES: usize = Outcome::ALL.len();
pub const REASONS: usize = Reason::ALL.len();
pub const PATHS: usize = JsonPath::ALL.len();
pub const REPAIRS: usize = Repair::ALL.len();
pub const STREAK_ENDS: usize = StreakEnd::ALL.len();
pub const EARLY_ENDS: usize = EarlyEnd::ALL.len();

/// Parsed tool calls and the repairs applied to them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CallStats {
    /// Every call the parser returned (also on attempts whose calls did not
    /// all run, and on `llm_failed` lines whose response was parsed).
    pub parsed: u64,
    /// Calls the loop started on.
    pub executed: u64,
    /// Calls that needed an in-place fix ([`call_repaired`]).
    pub repaired: u64,
    pub json_paths: [u64; PATHS],
    pub repairs: [u64; REPAIRS],
}

impl CallStats {
    pub fn add(&mut self, o: &CallStats) {
        self.parsed += o.parsed;
        self.executed += o.executed;
        self.repaired += o.repaired;
        add_arrays(&mut self.json_paths, &o.json_paths);
        add_arrays(&mut self.repairs, &o.repairs);
    }

    pub fn path(&self, p: JsonPath) -> u64 {
        self.json_paths[p as usize]
    }

    pub fn repair(&self, r: Repair) -> u64 {
        self.repairs[r as usize]
    }

    fn count(&mut self, v: &Verdict) {
        for (i, call) in v.calls.iter().enumerate() {
            self.parsed += 1;
            self.executed += u64::from(i < v.executed);
            self.repaired += u64::from(call_repaired(call));
            self.json_paths[call.json as usize] += 1;
            for r in &call.repairs {
                self.repairs[*r as usize] += 1;
            }
        }
    }
}

/// Rollback streaks (see [`super::streak`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StreakTally {
    pub count: u64,
    /// Σ streak lengths: the rollbacks that were part of a streak (all of them).
    pub total_length: u64,
    /// The longest streak.
    pub longest: u32,
    /// Σ over traces of each trace's longest streak.
    pub longest_per_trace: u64,
    /// Traces with at least one streak.
    pub traces_with_streak: u64,
    /// How streaks ended, by [`StreakEnd`].
    pub ended_by: [u64; STREAK_ENDS],
}

impl StreakTally {
    pub fn add(&mut self, o: &StreakTally) {
        self.count += o.count;
        self.total_length += o.total_length;
        self.longest = self.longest.max(o.longest);
        self.longest_per_trace += o.longest_per_trace;
        self.traces_with_streak += o.traces_with_streak;
        add_arrays(&mut self.ended_by, &o.ended_by);
    }

    pub fn ended(&self, e: StreakEnd) -> u64 {
        self.ended_by[e as usize]
    }

    /// Streaks the model got out of by itself: closed by an `ok` attempt
    /// whose checks all passed (a let-through at the limit is not one).
    pub fn recovered(&self) -> u64 {
        self.ended(StreakEnd::Recovered)
    }

    fn count_streak(&mut self, s: &Streak) {
        self.count += 1;
        self.total_length += u64::from(s.length);
        self.longest = self.longest.max(s.length);
        self.ended_by[s.end as usize] += 1;
    }
}

/// The additive figures of one trace or of a set of traces.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    pub traces: u64,
    pub main_sessions: u64,
    pub sub_agent_sessions: u64,
    /// Every attempt (input line), reached or not.
    pub attempts: u64,
    /// Attempts by outcome; they sum to `attempts`.
    pub outcomes: [u64; OUTCOMES],
    /// Attempts with outcome `rollback`, by reason.
    pub rollbacks_by_reason: [u64; REASONS],
    /// Attempts with outcome `end`, by reason.
    pub ends_by_reason: [u64; REASONS],
    /// Traces with at least one rollback of each reason.
    pub traces_with_reason: [u64; REASONS],
    pub traces_with_rollback: u64,
    /// Traces in which some session crashed.
    pub traces_with_crash: u64,
    pub limit_events: LimitEvents,
    /// Attempts flagged `recovered`: upstream resets its counter after a
    /// rollback (a recovered streak, or one let through at the limit).
    pub recovered_flags: u64,
    /// Attempts that met at least one exact duplicate query (rolled back or
    /// let through).
    pub attempts_with_duplicate: u64,
    pub calls: CallStats,
    pub streaks: StreakTally,
    /// Traces whose main agent stopped early, by cause.
    pub main_ended_early: [u64; EARLY_ENDS],
    /// Sub-agent sessions that stopped early, by cause.
    pub sub_agent_ended_early: [u64; EARLY_ENDS],
    /// Tokens and seconds of the attempts upstream made ([`super::cost`]).
    pub cost: CostTally,
    /// The trace's task result, where recorded ([`super::task_results`]).
    pub results: ResultTally,
    /// Verdicts of each mistake kind `diff` compares ([`super::kinds`]).
    #[serde(default)]
    pub kinds: super::kinds::KindTally,
    /// Repaired calls by the fixes json_repair made ([`super::kinds::FixTally`]).
    #[serde(default)]
    pub fixes: super::kinds::FixTally,
    /// What the rules could not judge ([`super::attribution::BlindSpots`]).
    #[serde(default)]
    pub blind: super::attribution::BlindSpots,
    /// Tool errors and failed LLM calls by owner ([`super::attribution::OwnerTally`]).
    #[serde(default)]
    pub owners: super::attribution::OwnerTally,
}

impl Tally {
    /// The tally of one trace's verdicts (or of a part of them, in file order).
    pub fn of<'a>(verdicts: impl IntoIterator<Item = &'a Verdict>) -> Tally {
        let mut walk = TraceWalk::default();
        for v in verdicts {
            walk.observe(v);
        }
        walk.finish().tally
    }

    pub fn add(&mut self, o: &Tally) {
        self.traces += o.traces;
        self.main_sessions += o.main_sessions;
        self.sub_agent_sessions += o.sub_agent_sessions;
        self.attempts += o.attempts;
        add_arrays(&mut self.outcomes, &o.outcomes);
        add_arrays(&mut self.rollbacks_by_reason, &o.rollbacks_by_reason);
        add_arrays(&mut self.ends_by_reason, &o.ends_by_reason);
        add_arrays(&mut self.traces_with_reason, &o.traces_with_reason);
        self.traces_with_rollback += o.traces_with_rollback;
        self.traces_with_crash += o.traces_with_crash;
        self.limit_events.add(&o.limit_events);
        self.recovered_flags += o.recovered_flags;
        self.attempts_with_duplicate += o.attempts_with_duplicate;
        self.calls.add(&o.calls);
        self.streaks.add(&o.streaks);
        add_arrays(&mut self.main_ended_early, &o.main_ended_early);
        add_arrays(&mut self.sub_agent_ended_early, &o.sub_agent_ended_early);
        self.cost.add(&o.cost);
        self.results.add(&o.results);
        self.kinds.add(&o.kinds);
        self.fixes.add(&o.fixes);
        self.blind.add(&o.blind);
        self.owners.add(&o.owners);
    }

    pub fn outcome(&self, o: Outcome) -> u64 {
        self.outcomes[o as usize]
    }

    /// Attempts upstream's loop got to.
    pub fn reached(&self) -> u64 {
        self.attempts - self.outcome(Outcome::Unreachable)
    }

    /// Attempts with outcome `rollback`.
    pub fn rollbacks(&self) -> u64 {
        self.outcome(Outcome::Rollback)
    }

    pub fn rollback_reason(&self, r: Reason) -> u64 {
        self.rollbacks_by_reason[r as usize]
    }

    pub fn end_reason(&self, r: Reason) -> u64 {
        self.ends_by_reason[r as usize]
    }

    pub fn traces_with(&self, r: Reason) -> u64 {
        self.traces_with_reason[r as usize]
    }

    /// Rollbacks / reached attempts; `None` when nothing was reached.
    pub fn rollback_rate(&self) -> Option<f64> {
        ratio(self.rollbacks(), self.reached())
    }

    /// The rollback reason with the most rollbacks (ties: first in [`Reason::ALL`]).
    pub fn top_reason(&self) -> Option<Reason> {
        top_reason(&self.rollbacks_by_reason)
    }

    /// Traces whose main agent stopped early, whatever the cause.
    pub fn traces_ended_early(&self) -> u64 {
        self.main_ended_early.iter().sum()
    }

    /// Counts one attempt (everything but its streak and session).
    fn count_attempt(&mut self, v: &Verdict) {
        self.attempts += 1;
        self.outcomes[v.outcome as usize] += 1;
        if let Some(r) = rollback_reason(v) {
            self.rollbacks_by_reason[r as usize] += 1;
        } else if let Some(r) = end_reason(v) {
            self.ends_by_reason[r as usize] += 1;
        }
        self.limit_events.add(&LimitEvents::of(v));
        self.recovered_flags += u64::from(v.flags.contains(&Flag::Recovered));
        self.attempts_with_duplicate += u64::from(!v.duplicates.is_empty());
        self.calls.count(v);
        self.cost.count(v);
        self.kinds.count(v);
        self.fixes.count(v);
        self.blind.count(v);
        self.owners.count(v);
        // The trace's result is the first one an attempt carries.
        if self.results == ResultTally::default() && v.task_result.is_some() {
            self.results = ResultTally::of(v.task_result.as_ref());
        }
    }

    /// The per-trace facts, once all of a trace's attempts are counted.
    fn close_trace(&mut self, sessions: &[SessionSummary]) -> Option<EarlyEnd> {
        self.traces = 1;
        for (into, &n) in self
            .traces_with_reason
            .iter_mut()
            .zip(&self.rollbacks_by_reason)
        {
            *into = u64::from(n > 0);
        }
        self.traces_with_rollback = u64::from(self.rollbacks() > 0);
        self.traces_with_crash = u64::from(self.outcome(Outcome::Crash) > 0);
        self.streaks.longest_per_trace = u64::from(self.streaks.longest);
        self.streaks.traces_with_streak = u64::from(self.streaks.count > 0);
        let mut main_end = None;
        for s in sessions {
            let early = s.ended_early();
            if s.session == "main" {
                self.main_sessions += 1;
                main_end = early;
                if let Some(e) = early {
                    self.main_ended_early[e as usize] += 1;
                }
            } else {
                self.sub_agent_sessions += 1;
                if let Some(e) = early {
                    self.sub_agent_ended_early[e as usize] += 1;
                }
            }
        }
        main_end
    }
}

/// Follows one trace verdict by verdict (in file order): its tally, its
/// streaks and its sessions.
#[derive(Default)]
pub struct TraceWalk<'a> {
    tally: Tally,
    sessions: SessionWalk<'a>,
}

/// One trace, walked.
pub struct WalkedTrace<'a> {
    /// The trace's tally (`traces` is 1, or 0 for no verdicts).
    pub tally: Tally,
    /// Streaks still open when the trace ended (now closed and counted).
    pub last_streaks: Vec<Streak<'a>>,
    /// Every session, in order of first appearance.
    pub sessions: Vec<SessionSummary<'a>>,
    /// Why the main agent stopped early, if it did.
    pub main_ended_early: Option<EarlyEnd>,
}

impl<'a> TraceWalk<'a> {
    /// Counts the next verdict; returns the streak it closed, if any
    /// (already counted).
    pub fn observe(&mut self, v: &'a Verdict) -> Option<Streak<'a>> {
        self.tally.count_attempt(v);
        let closed = self.sessions.observe(v);
        if let Some(s) = &closed {
            self.tally.streaks.count_streak(s);
        }
        closed
    }

    pub fn finish(self) -> WalkedTrace<'a> {
        let mut tally = self.tally;
        let (last_streaks, sessions) = self.sessions.finish();
        for s in &last_streaks {
            tally.streaks.count_streak(s);
        }
        let main_ended_early = if tally.attempts > 0 {
            tally.close_trace(&sessions)
        } else {
            None
        };
        WalkedTrace {
            tally,
            last_streaks,
            sessions,
            main_ended_early,
        }
    }
}

/// `n / d`; `None` when `d` is 0.
pub fn ratio(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

/// The reason with the highest count (ties: the first in [`Reason::ALL`]).
pub fn top_reason(counts: &[u64; REASONS]) -> Option<Reason> {
    let mut best: Option<(Reason, u64)> = None;
    for r in Reason::ALL {
        let n = counts[r as usize];
        if n > 0 && best.is_none_or(|(_, m)| n > m) {
            best = Some((r, n));
        }
    }
    best.map(|(r, _)| r)
}

/// Adds counts slot by slot.
pub fn add_arrays<const N: usize>(into: &mut [u64; N], from: &[u64; N]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testing::verdict;

    #[test]
    fn one_trace_tallied() {
        use Outcome::*;
        let rb = |s: &str, i, r, k| verdict(s, i, Rollback, Some(r), Some(k), &[]);
        let vs = vec![
            rb("main", 0, Reason::Refusal, 1),
            verdict("main", 1, LlmFailed, None, Some(1), &[]),
            rb("agent-browsing_1", 0, Reason::EmptySearch, 1),
            rb("main", 2, Reason::DuplicateQuery, 2),
            verdict("main", 3, Ok, None, Some(0), &[Flag::Recovered]),
            rb("main", 4, Reason::FormatError, 1),
            verdict("main", 5, End, Some(Reason::FormatError), Some(1), &[]),
            verdict("main", 6, Unreachable, None, None, &[]),
        ];
        let t = Tally::of(&vs);
        assert_eq!((t.traces, t.attempts, t.reached()), (1, 8, 7));
        assert_eq!(t.rollbacks(), 4, "an end is not a rollback");
        assert_eq!(t.rollback_rate(), Some(4.0 / 7.0));
        assert_eq!(t.end_reason(Reason::FormatError), 1);
        assert_eq!(t.limit_events.loop_ended, 1);
        assert_eq!(t.outcome(LlmFailed), 1);
        // main: [refusal, dup] recovered, [format] ended at the limit;
        // the sub-agent's [empty] is still open when its lines run out.
        let s = &t.streaks;
        assert_eq!((s.count, s.total_length, s.longest), (3, 4, 2));
        assert_eq!(s.recovered(), 1);
        assert_eq!(s.ended(StreakEnd::LoopEnded), 1);
        assert_eq!(s.ended(StreakEnd::LinesRanOut), 1);
        assert_eq!(t.traces_ended_early(), 1);
        assert_eq!(t.main_ended_early[EarlyEnd::Limit as usize], 1);
        assert_eq!((t.main_sessions, t.sub_agent_sessions), (1, 1));
        assert_eq!(t.traces_with(Reason::Refusal), 1);
        let mut sum = Tally::default();
        sum.add(&t);
        assert_eq!(sum, t, "add leaves no field out");
    }

    #[test]
    fn sums_of_tallies_are_tallies_of_the_union() {
        use Outcome::*;
        let a = vec![
            verdict("main", 0, Rollback, Some(Reason::Refusal), Some(1), &[]),
            verdict("main", 1, Crash, None, Some(1), &[]),
        ];
        let b = vec![verdict("main", 0, Final, None, Some(0), &[])];
        let mut sum = Tally::of(&a);
        sum.add(&Tally::of(&b));
        assert_eq!((sum.traces, sum.attempts, sum.rollbacks()), (2, 3, 1));
        assert_eq!((sum.traces_with_crash, sum.traces_with_rollback), (1, 1));
        assert_eq!(sum.streaks.longest_per_trace, 1);
        assert_eq!(sum.streaks.traces_with_streak, 1);
        assert_eq!(Tally::of(&[]).traces, 0, "no verdicts, no trace");
    }
}
