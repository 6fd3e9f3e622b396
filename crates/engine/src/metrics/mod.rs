//! The figures every command reports, defined once (docs/metrics.md).
//!
//! [`attempt`] says what one verdict counts as, [`streak`] follows rollback
//! streaks and how each session's loop ended, [`tally`] adds it all up per
//! trace and over any set of traces, [`group`] splits traces into the groups
//! of `--group-by`, and [`stats`] holds the cluster bootstrap, quantiles and
//! the multiple-testing correction. `analyze`, `diff`, `keywords` and every
//! renderer read their numbers from here.

pub mod attempt;
pub mod attribution;
pub mod cost;
pub mod figures;
pub mod format;
pub mod group;
pub mod kinds;
pub mod mistakes;
pub mod prices;
pub mod stats;
pub mod streak;
pub mod tally;
pub mod task_results;

pub use attempt::LimitEvents;
pub use group::GroupBy;
pub use streak::{EarlyEnd, SessionSummary, Streak, StreakEnd};
pub use tally::{CallStats, StreakTally, Tally, TraceWalk, WalkedTrace};

/// Verdicts for tests, built field by field. The CLI crate's unit tests
/// use them too, through the `testing` feature (its dev-dependency).
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing {
    use crate::detect::Reason;
    use crate::model::{Attempt, Origin};
    use crate::replay::{Flag, Outcome, Verdict};

    /// The `index`-th verdict of `session` (line `index + 1` of file `f`),
    /// with `consecutive_rollbacks` = `streak`.
    pub fn verdict(
        session: &str,
        index: usize,
        outcome: Outcome,
        reason: Option<Reason>,
        streak: Option<u32>,
        flags: &[Flag],
    ) -> Verdict {
        let attempt = Attempt::blank(
            Origin {
                file: "f".into(),
                line: index as u64 + 1,
            },
            "t".into(),
            session.into(),
            crate::model::agent_of_session(session).into(),
        );
        let mut v = Verdict::blank(&attempt, index, outcome);
        v.reason = reason;
        v.turn = streak.map(|_| 1);
        v.consecutive_rollbacks = streak;
        v.flags = flags.to_vec();
        v
    }
}
