//! The replay: each trace's sessions run through upstream's agent loops.
//!
//! A trace is replayed as upstream executes it: the main agent's loop runs
//! its lines in order; a main-agent call to an `agent-*` server launches the
//! next sub-agent session, whose loop runs to its end before the main agent
//! goes on. The tool→server mapping and the launch counter are per trace;
//! duplicate-query caches are per session.

pub mod attempt;
mod session;
pub mod verdict;

use foldhash::{HashMap, HashMapExt};
use std::sync::{Arc, Mutex};

use crate::detect::bad_tool_result::unmatched_error;
use crate::detect::refusal::RefusalMatcher;
use crate::policy::Policy;
use crate::read::Trace;
use crate::repair::{Repairs, ToolServerMapping};
pub use attempt::Response;
pub use verdict::{Flag, Outcome, QueryHit, Verdict};

/// Sees what the layer made of an attempt: its position in the trace and
/// its [`Response`] ([`Replayer::replay_observed`]).
pub type Observer<'a> = &'a mut dyn FnMut(usize, &Response);
/// What a reply without a tool call does to the session (`--plain-reply`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PlainReply {
    /// Upstream's rule: it is the final answer; the session ends.
    #[default]
    Final,
    /// It is judged (format error, refusal) but ends only the agent's turn
    /// of a conversation (customer-service dialogues, chat assistants): the
    /// next attempt, after the next user message, starts a fresh turn.
    Continue,
}

impl PlainReply {
    pub fn name(self) -> &'static str {
        match self {
            PlainReply::Final => "final",
            PlainReply::Continue => "continue",
        }
    }

    /// The rule named `name` ([`PlainReply::name`]).
    pub fn from_name(name: &str) -> Option<PlainReply> {
        [PlainReply::Final, PlainReply::Continue]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// The parts of a replay that do not change between traces.
pub struct Replayer {
    policy: Policy,
    plain_reply: PlainReply,
    repairs: Repairs,
    /// The refusal keywords, folded once for `normalized`.
    refusals: RefusalMatcher,
    /// Mappings of the prompts seen last: the same few prompts open
    /// every trace of a run.
    mappings: Mutex<Vec<(Arc<str>, Arc<ToolServerMapping>)>>,
}

/// Prompts whose mapping is kept.
const MAPPINGS_REMEMBERED: usize = 8;

impl Replayer {
    pub fn new(policy: Policy) -> Replayer {
        let repairs = Repairs::new(&policy);
        let refusals = RefusalMatcher::new(&policy);
        Replayer {
            refusals,
            policy,
            plain_reply: PlainReply::Final,
            repairs,
            mappings: Mutex::new(Vec::new()),
        }
    }

    /// The same replay with another rule for replies without a tool call.
    pub fn with_plain_reply(mut self, plain_reply: PlainReply) -> Replayer {
        self.plain_reply = plain_reply;
        self
    }

    /// The tool→server mapping a system prompt sets.
    fn mapping_for(&self, prompt: &Arc<str>) -> Arc<ToolServerMapping> {
        // Huge prompts are not kept alive for the whole run.
        let cacheable = prompt.len() <= crate::read::MAX_REMEMBERED_PROMPT_BYTES;
        let cache = if cacheable {
            self.mappings.lock().ok()
        } else {
            None
        };
        let Some(mut cache) = cache else {
            return Arc::new(self.repairs.server.mapping(prompt));
        };
        if let Some((_, m)) = cache
            .iter()
            .find(|(p, _)| Arc::ptr_eq(p, prompt) || **p == **prompt)
        {
            return m.clone();
        }
        let mapping = Arc::new(self.repairs.server.mapping(prompt));
        if cache.len() == MAPPINGS_REMEMBERED {
            cache.remove(0);
        }
        cache.push((prompt.clone(), mapping.clone()));
        mapping
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// One verdict per attempt of `trace`, in the trace's line order.
    pub fn replay(&self, trace: &Trace) -> Vec<Verdict> {
        self.run(trace, None, None).0
    }

    /// The part of a replay that needs no loop state, done ahead: each
    /// attempt's text parsed as written ([`attempt::response_as_written`]).
    /// With more than one thread the reader does it for the workers while
    /// they are busy ([`crate::engine`]); [`Replayer::replay_parsed`] then
    /// takes it wherever the server-name repair leaves a text unchanged.
    pub fn parse(&self, trace: &Trace) -> Parsed {
        Parsed(
            trace
                .attempts
                .iter()
                .map(|a| {
                    let logged = a.decided().is_some();
                    (!logged).then(|| attempt::response_as_written(a, &self.repairs))
                })
                .collect(),
        )
    }

    /// [`Replayer::replay`] of a trace [`Replayer::parse`] has parsed: the
    /// same verdicts.
    pub fn replay_parsed(&self, trace: &Trace, parsed: Parsed) -> Vec<Verdict> {
        self.run(trace, None, Some(parsed)).0
    }

    /// [`Replayer::replay`], also showing `observe` what the layer made of
    /// each attempt the loops reached ([`Response`]: the text after the
    /// server-name repair, the parsed calls), with the attempt's position in
    /// the trace, in execution order. Returns the verdicts and the
    /// tool→server mapping in force when the replay ended (what an attempt
    /// the loops never reached would have been read with).
    pub fn replay_observed(
        &self,
        trace: &Trace,
        observe: &mut dyn FnMut(usize, &Response),
    ) -> (Vec<Verdict>, Arc<ToolServerMapping>) {
        self.run(trace, Some(observe), None)
    }

    fn run<'a>(
        &'a self,
        trace: &'a Trace,
        observer: Option<Observer<'a>>,
        parsed: Option<Parsed>,
    ) -> (Vec<Verdict>, Arc<ToolServerMapping>) {
        let mut sessions: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, a) in trace.attempts.iter().enumerate() {
            sessions.entry(&*a.session).or_default().push(i);
        }
        let mut run = TraceRun {
            replayer: self,
            trace,
            sessions,
            verdicts: vec![None; trace.attempts.len()],
            mapping: Arc::new(ToolServerMapping::new()),
            mapping_prompt: None,
            launches: 0,
            observer,
            started: Default::default(),
            parsed: parsed.map(|p| p.0).unwrap_or_default(),
        };
        let max_turns = trace.attempts.first().and_then(|a| a.max_turns);
        run.run_session("main", max_turns);
        let mapping = run.mapping.clone();
        (run.into_verdicts(), mapping)
    }
}

/// A trace's attempts parsed as written, by line ([`Replayer::parse`]);
/// `None` for a line whose verdict the log gives.
#[derive(Debug)]
pub struct Parsed(Vec<Option<attempt::AsWritten>>);

/// State shared by the sessions of one trace.
struct TraceRun<'a> {
    replayer: &'a Replayer,
    trace: &'a Trace,
    /// Line positions of each session, in order.
    sessions: HashMap<&'a str, Vec<usize>>,
    verdicts: Vec<Option<Verdict>>,
    /// Process-global upstream: the last system prompt seen sets it.
    mapping: Arc<ToolServerMapping>,
    /// The system prompt `mapping` was read from.
    mapping_prompt: Option<Arc<str>>,
    /// Sub-agent launches so far (the `N` of `<server>_<N>`).
    launches: u32,
    /// Sees each reached attempt's [`Response`] ([`Replayer::replay_observed`]).
    observer: Option<Observer<'a>>,
    /// Sessions whose loop has run: each runs once, however a log names it.
    /// A set: a trace may launch hundreds of thousands of sub-agents.
    started: foldhash::HashSet<Arc<str>>,
    /// Each line's response if the server-name repair leaves its text as
    /// written ([`Replayer::parse`]), taken when the loop reaches the line;
    /// empty when the trace was not parsed ahead.
    parsed: Vec<Option<attempt::AsWritten>>,
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
                let mut v = v.unwrap_or_else(|| Verdict::blank(a, index, Outcome::Unreachable));
                v.unmatched_errors = a
                    .tool_results
                    .iter()
                    .filter(|r| unmatched_error(r, &self.replayer.policy))
                    .count()
                    .try_into()
                    .unwrap_or(u32::MAX);
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{Record, TraceReader};

    /// Main launches a sub-agent on its first line; the sub-agent's line
    /// (with its own system prompt) comes last in the file.
    const TRACE: &str = concat!(
        r###"{"trace_id": "t", "session": "main", "system_prompt": "## Server name: agent-browsing\n### Tool name: search_and_browse\n", "content": "<use_mcp_tool>\n<server_name>agent-browsing</server_name>\n<tool_name>search_and_browse</tool_name>\n<arguments>\n{\"subtask\": \"find it\"}\n</arguments>\n</use_mcp_tool>", "tool_results": [{"result": "found"}]}"###,
        "\n",
        r###"{"trace_id": "t", "session": "main", "content": "The answer is \\boxed{1}."}"###,
        "\n",
        r###"{"trace_id": "t", "session": "agent-browsing_1", "system_prompt": "## Server name: tool-python\n### Tool name: run_python_code\n", "content": "It is 1."}"###,
        "\n",
    );

    #[test]
    fn observed_in_execution_order_with_the_mapping_in_force() {
        let trace = TraceReader::new(TRACE.as_bytes(), "t.jsonl".into(), 1 << 20)
            .find_map(|r| match r {
                Record::Trace(t) => Some(t),
                _ => None,
            })
            .expect("a trace");
        let replayer = Replayer::new(Policy::default());
        let mut order = Vec::new();
        let (verdicts, mapping) = replayer.replay_observed(&trace, &mut |pos, _| order.push(pos));
        assert_eq!(
            order,
            [0, 2, 1],
            "the sub-agent runs inside main's first turn"
        );
        assert_eq!(
            verdicts,
            replayer.replay(&trace),
            "observing changes nothing"
        );
        // The sub-agent's prompt stays in force for main's last line, as upstream's
        // process-global mapping does.
        assert!(mapping.contains_key("run_python_code"), "{mapping:?}");
    }
}
