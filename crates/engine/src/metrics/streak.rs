//! Walking one trace's verdicts session by session: rollback streaks and how
//! each session's loop ended.
//!
//! A *streak* is a run of consecutive rollbacks in one session: it opens at
//! a rollback and lasts while upstream's `consecutive_rollbacks` counter
//! stays above 0 (an `llm_failed` attempt leaves the counter alone). Its
//! *length* is the number of rollbacks in it, which is the highest value
//! the counter reaches. Upstream rolls back only while the counter is below
//! `limit − 1`, so with the default limit of 5 a streak is 1 to 4 long; the
//! next problem after 4 rollbacks (the fifth in a row) meets the limit: a
//! format error or refusal ends the loop (`end`), a duplicate query or bad
//! tool result is let through. That attempt is a limit event, not part of
//! the streak's length (docs/metrics.md).
//!
//! A trace's verdicts are in file order, which interleaves sessions (a
//! sub-agent's lines sit between the main agent's); within a session they
//! are in index order. So one pass with a little state per session suffices.

use crate::detect::Reason;
use crate::replay::{Flag, Outcome, Verdict};

/// How a rollback streak came to an end.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum StreakEnd {
    /// An attempt went through and reset the streak.
    Recovered,
    /// At the limit, a duplicate or a bad tool result was let through.
    LetThrough,
    /// At the limit, a format error or refusal ended the loop (`end`).
    LoopEnded,
    /// The model answered without a tool call.
    FinalAnswer,
    /// Upstream raised out of the loop.
    Crashed,
    /// The context ran out.
    ContextExceeded,
    /// The recording stops while the streak is still open.
    LinesRanOut,
}

impl StreakEnd {
    pub const ALL: [StreakEnd; 7] = [
        StreakEnd::Recovered,
        StreakEnd::LetThrough,
        StreakEnd::LoopEnded,
        StreakEnd::FinalAnswer,
        StreakEnd::Crashed,
        StreakEnd::ContextExceeded,
        StreakEnd::LinesRanOut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StreakEnd::Recovered => "recovered",
            StreakEnd::LetThrough => "let_through",
            StreakEnd::LoopEnded => "loop_ended",
            StreakEnd::FinalAnswer => "final_answer",
            StreakEnd::Crashed => "crash",
            StreakEnd::ContextExceeded => "context_exceeded",
            StreakEnd::LinesRanOut => "lines_ran_out",
        }
    }

    /// Whether the rollback limit decided this ending.
    pub fn at_limit(self) -> bool {
        matches!(self, StreakEnd::LetThrough | StreakEnd::LoopEnded)
    }

    /// How a session that stopped mid-streak stopped, from its last reached outcome.
    fn after(last: Option<Outcome>) -> StreakEnd {
        match last {
            Some(Outcome::End) => StreakEnd::LoopEnded,
            Some(Outcome::Final) => StreakEnd::FinalAnswer,
            Some(Outcome::Crash) => StreakEnd::Crashed,
            Some(Outcome::ContextExceeded) => StreakEnd::ContextExceeded,
            _ => StreakEnd::LinesRanOut,
        }
    }
}

/// One run of consecutive rollbacks within a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Streak<'a> {
    pub session: &'a str,
    /// Index (within the session) and origin line of its first attempt.
    pub start_index: usize,
    pub start_line: u64,
    /// Rollbacks in the streak: the highest `consecutive_rollbacks` reached.
    pub length: u32,
    /// The reasons of its rollbacks, in order (`length` of them).
    pub reasons: Vec<Reason>,
    pub end: StreakEnd,
    /// The problem that met the limit, when the limit ended the streak: the
    /// `end` attempt's reason, or `duplicate_query` for an allowed duplicate
    /// (a passed-on tool result does not say which check it failed).
    pub limit_reason: Option<Reason>,
}

/// How one session's loop went, once the whole trace has been seen.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary<'a> {
    pub session: &'a str,
    pub agent: &'a str,
    pub attempts: u64,
    /// Attempts with outcome `rollback`, by reason (in [`Reason::ALL`] order).
    pub rollbacks: [u64; Reason::ALL.len()],
    /// Attempts with outcome `end` (the loop ended at the rollback limit).
    pub ends: u64,
    /// The outcome of the last attempt the loop reached.
    pub last_outcome: Option<Outcome>,
    /// Lines the loop never reached.
    pub unreachable: u64,
}

impl SessionSummary<'_> {
    /// Attempts the loop reached.
    pub fn reached(&self) -> u64 {
        self.attempts - self.unreachable
    }

    /// Why the loop stopped before the recording did, if it did: the
    /// rollback limit, a crash, the context, or the turn limit.
    pub fn ended_early(&self) -> Option<EarlyEnd> {
        match self.last_outcome {
            Some(Outcome::End) => Some(EarlyEnd::Limit),
            Some(Outcome::Crash) => Some(EarlyEnd::Crash),
            Some(Outcome::ContextExceeded) => Some(EarlyEnd::Context),
            Some(Outcome::Final) | None => None,
            // Lines left over after an attempt that kept the loop going:
            // only the turn limit stops a loop there.
            Some(_) if self.unreachable > 0 => Some(EarlyEnd::TurnLimit),
            Some(_) => None,
        }
    }
}

/// Why a session's loop stopped early.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum EarlyEnd {
    Limit,
    Crash,
    Context,
    TurnLimit,
}

impl EarlyEnd {
    pub const ALL: [EarlyEnd; 4] = [
        EarlyEnd::Limit,
        EarlyEnd::Crash,
        EarlyEnd::Context,
        EarlyEnd::TurnLimit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EarlyEnd::Limit => "limit",
            EarlyEnd::Crash => "crash",
            EarlyEnd::Context => "context",
            EarlyEnd::TurnLimit => "turn_limit",
        }
    }
}

struct OpenStreak {
    start_index: usize,
    start_line: u64,
    length: u32,
    reasons: Vec<Reason>,
    /// The reason of an `end` met while the streak was open.
    ended_on: Option<Reason>,
}

struct SessionState<'a> {
    summary: SessionSummary<'a>,
    open: Option<OpenStreak>,
}

/// Sessions a trace may have before they are found by hashing.
const SESSIONS_SEARCHED: usize = 16;

/// Follows the sessions of one trace, verdict by verdict.
#[derive(Default)]
pub struct SessionWalk<'a> {
    /// Few per trace as a rule: a linear search beats hashing.
    sessions: Vec<SessionState<'a>>,
    /// Where each session is in `sessions`, once there are more than
    /// [`SESSIONS_SEARCHED`] (a trace may have hundreds of thousands).
    index: foldhash::HashMap<&'a str, usize>,
}

impl<'a> SessionWalk<'a> {
    fn position(&self, session: &str) -> Option<usize> {
        if self.sessions.len() > SESSIONS_SEARCHED {
            return self.index.get(session).copied();
        }
        self.sessions
            .iter()
            .position(|s| *s.summary.session == *session)
    }

    /// Takes the next verdict of the trace (in file order); returns the
    /// streak it closed, if any.
    pub fn observe(&mut self, v: &'a Verdict) -> Option<Streak<'a>> {
        let state = match self.position(&v.session) {
            Some(i) => &mut self.sessions[i],
            None => {
                if self.sessions.len() == SESSIONS_SEARCHED {
                    let known = self.sessions.iter().enumerate();
                    self.index = known.map(|(i, s)| (s.summary.session, i)).collect();
                }
                if self.sessions.len() >= SESSIONS_SEARCHED {
                    self.index.insert(&v.session, self.sessions.len());
                }
                self.sessions.push(SessionState {
                    summary: SessionSummary {
                        session: &v.session,
                        agent: &v.agent,
                        attempts: 0,
                        rollbacks: [0; Reason::ALL.len()],
                        ends: 0,
                        last_outcome: None,
                        unreachable: 0,
                    },
                    open: None,
                });
                self.sessions.last_mut()?
            }
        };
        state.summary.attempts += 1;
        match (v.outcome, v.reason) {
            (Outcome::Rollback, Some(reason)) => state.summary.rollbacks[reason as usize] += 1,
            (Outcome::End, _) => state.summary.ends += 1,
            _ => {}
        }
        let closed = match v.consecutive_rollbacks {
            // Unreachable: the loop has ended; so has any open streak.
            None => {
                state.summary.unreachable += 1;
                let end = StreakEnd::after(state.summary.last_outcome);
                return state
                    .open
                    .take()
                    .map(|open| close(&v.session, open, end, None));
            }
            Some(0) => state.open.take().map(|open| {
                if v.flags.contains(&Flag::AllowedDuplicate) {
                    let reason = Some(Reason::DuplicateQuery);
                    close(&v.session, open, StreakEnd::LetThrough, reason)
                } else if v.flags.contains(&Flag::ToolErrorPassed) {
                    close(&v.session, open, StreakEnd::LetThrough, None)
                } else {
                    close(&v.session, open, StreakEnd::Recovered, None)
                }
            }),
            Some(value) => {
                let open = state.open.get_or_insert_with(|| OpenStreak {
                    start_index: v.index,
                    start_line: v.origin.line,
                    length: 0,
                    reasons: Vec::new(),
                    ended_on: None,
                });
                open.length = open.length.max(value);
                match (v.outcome, v.reason) {
                    (Outcome::Rollback, Some(reason)) => open.reasons.push(reason),
                    (Outcome::End, reason) => open.ended_on = reason,
                    _ => {}
                }
                None
            }
        };
        state.summary.last_outcome = Some(v.outcome);
        closed
    }

    /// Closes the streaks still open at the end of the trace and returns
    /// them with every session's summary, in order of first appearance.
    pub fn finish(self) -> (Vec<Streak<'a>>, Vec<SessionSummary<'a>>) {
        // Stays unallocated unless a streak is still open.
        let mut streaks = Vec::new();
        let mut summaries = Vec::with_capacity(self.sessions.len());
        for state in self.sessions {
            if let Some(open) = state.open {
                let end = StreakEnd::after(state.summary.last_outcome);
                streaks.push(close(state.summary.session, open, end, None));
            }
            summaries.push(state.summary);
        }
        (streaks, summaries)
    }
}

/// `limit_reason` is what met the limit on a let-through; an `end` brings
/// its own.
fn close(
    session: &str,
    open: OpenStreak,
    end: StreakEnd,
    limit_reason: Option<Reason>,
) -> Streak<'_> {
    Streak {
        session,
        start_index: open.start_index,
        start_line: open.start_line,
        length: open.length,
        reasons: open.reasons,
        end,
        limit_reason: match end {
            StreakEnd::LoopEnded => open.ended_on,
            _ => limit_reason,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::testing;

    /// A format error for `rollback` and `end`, nothing else.
    fn verdict(
        session: &str,
        index: usize,
        outcome: Outcome,
        streak: Option<u32>,
        flags: &[Flag],
    ) -> Verdict {
        let reason =
            matches!(outcome, Outcome::Rollback | Outcome::End).then_some(Reason::FormatError);
        testing::verdict(session, index, outcome, reason, streak, flags)
    }

    /// Past [`SESSIONS_SEARCHED`] sessions they are found by hashing: the
    /// same summaries, in the order the sessions first appeared.
    #[test]
    fn many_interleaved_sessions_are_each_followed() {
        let n = 3 * SESSIONS_SEARCHED;
        let names: Vec<String> = (0..n).map(|i| format!("agent-x_{i}")).collect();
        let mut vs = Vec::new();
        for round in 0..3 {
            for name in &names {
                let (outcome, streak) = if round < 2 {
                    (Outcome::Rollback, Some(round as u32 + 1))
                } else {
                    (Outcome::Ok, Some(0))
                };
                vs.push(verdict(name, round, outcome, streak, &[]));
            }
        }
        let mut walk = SessionWalk::default();
        let streaks: Vec<Streak> = vs.iter().filter_map(|v| walk.observe(v)).collect();
        let (rest, sessions) = walk.finish();
        assert!(rest.is_empty());
        assert_eq!(streaks.len(), n);
        assert!(streaks.iter().all(|s| s.length == 2));
        let got: Vec<(&str, u64)> = sessions.iter().map(|s| (s.session, s.attempts)).collect();
        let want: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 3)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn streaks_are_followed_per_session_through_interleaving() {
        use Outcome::*;
        let vs = vec![
            verdict("main", 0, Rollback, Some(1), &[]),
            // A sub-agent runs in between; main's streak stays open.
            verdict("agent-browsing_1", 0, Rollback, Some(1), &[]),
            verdict("agent-browsing_1", 1, Ok, Some(0), &[Flag::Recovered]),
            verdict("main", 1, Rollback, Some(2), &[]),
            verdict("main", 2, LlmFailed, Some(2), &[]),
            verdict("main", 3, Rollback, Some(3), &[]),
            verdict("main", 4, Rollback, Some(4), &[]),
            verdict(
                "main",
                5,
                Ok,
                Some(0),
                &[Flag::AllowedDuplicate, Flag::Recovered],
            ),
            verdict("main", 6, Rollback, Some(1), &[]),
            verdict("main", 7, End, Some(1), &[]),
            verdict("main", 8, Unreachable, None, &[]),
        ];
        let mut walk = SessionWalk::default();
        let mut streaks: Vec<Streak> = vs.iter().filter_map(|v| walk.observe(v)).collect();
        let (rest, sessions) = walk.finish();
        streaks.extend(rest);
        let got: Vec<(&str, usize, u32, StreakEnd)> = streaks
            .iter()
            .map(|s| (s.session, s.start_index, s.length, s.end))
            .collect();
        assert_eq!(
            got,
            vec![
                ("agent-browsing_1", 0, 1, StreakEnd::Recovered),
                ("main", 0, 4, StreakEnd::LetThrough),
                ("main", 6, 1, StreakEnd::LoopEnded),
            ]
        );
        for s in &streaks {
            assert_eq!(
                s.reasons.len(),
                s.length as usize,
                "one reason per rollback: the LLM failure and the end are not rollbacks"
            );
        }
        let limits: Vec<Option<Reason>> = streaks.iter().map(|s| s.limit_reason).collect();
        assert_eq!(
            limits,
            [
                None,
                Some(Reason::DuplicateQuery),
                Some(Reason::FormatError)
            ]
        );
        let main = sessions.iter().find(|s| s.session == "main").expect("main");
        assert_eq!((main.attempts, main.unreachable, main.reached()), (9, 1, 8));
        assert_eq!(main.ended_early(), Some(EarlyEnd::Limit));
        assert_eq!(sessions[1].ended_early(), None);
    }

    #[test]
    fn leftover_lines_after_a_running_loop_mean_the_turn_limit() {
        let vs = [
            verdict("main", 0, Outcome::Ok, Some(0), &[]),
            verdict("main", 1, Outcome::Unreachable, None, &[]),
        ];
        let mut walk = SessionWalk::default();
        vs.iter().for_each(|v| assert!(walk.observe(v).is_none()));
        let (_, sessions) = walk.finish();
        assert_eq!(sessions[0].ended_early(), Some(EarlyEnd::TurnLimit));
    }
}
