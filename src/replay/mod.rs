//! The replay: each trace's sessions run through upstream's agent loops.
//!
//! A trace is replayed as upstream executes it: the main agent's loop runs
//! its lines in order; a main-agent call to an `agent-*` server launches the
//! next sub-agent session, whose loop runs to its end before the main agent
//! goes on. The tool→server mapping and the launch counter are per trace;
//! duplicate-query caches are per session.

mod session;
pub mod verdict;

use std::collections::HashMap;

use crate::pipeline::{ServerFixer, ToolServerMapping};
use crate::policy::Policy;
use crate::trace::Trace;
pub use verdict::{Flag, Outcome, QueryHit, Verdict};

/// The parts of a replay that do not change between traces.
pub struct Replayer {
    policy: Policy,
    fixer: ServerFixer,
}

impl Replayer {
    pub fn new(policy: Policy) -> Replayer {
        let fixer = ServerFixer::new(&policy);
        Replayer { policy, fixer }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// One verdict per attempt of `trace`, in the trace's line order.
    pub fn replay(&self, trace: &Trace) -> Vec<Verdict> {
        let mut sessions: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, a) in trace.attempts.iter().enumerate() {
            sessions.entry(&*a.session).or_default().push(i);
        }
        let mut run = TraceRun {
            replayer: self,
            trace,
            sessions,
            verdicts: vec![None; trace.attempts.len()],
            mapping: ToolServerMapping::new(),
            mapping_prompt: None,
            launches: 0,
        };
        let max_turns = trace.attempts.first().and_then(|a| a.max_turns);
        run.run_session("main", max_turns);
        run.into_verdicts()
    }
}

/// State shared by the sessions of one trace.
struct TraceRun<'a> {
    replayer: &'a Replayer,
    trace: &'a Trace,
    /// Line positions of each session, in order.
    sessions: HashMap<&'a str, Vec<usize>>,
    verdicts: Vec<Option<Verdict>>,
    /// Process-global upstream: the last system prompt seen sets it.
    mapping: ToolServerMapping,
    /// The system prompt `mapping` was read from.
    mapping_prompt: Option<std::sync::Arc<str>>,
    /// Sub-agent launches so far (the `N` of `<server>_<N>`).
    launches: u32,
}

impl TraceRun<'_> {
    /// Lines never reached by any loop are `unreachable`.
    fn into_verdicts(self) -> Vec<Verdict> {
        let trace = self.trace;
        let mut index_in_session: HashMap<&str, usize> = HashMap::new();
        self.verdicts
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let a = &trace.attempts[i];
                let idx = index_in_session.entry(&*a.session).or_insert(0);
                let index = *idx;
                *idx += 1;
                v.unwrap_or_else(|| Verdict::blank(a, index, Outcome::Unreachable))
            })
            .collect()
    }
}
