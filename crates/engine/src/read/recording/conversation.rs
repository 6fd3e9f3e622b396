//! The calls of one run → its conversations and their attempts.
//!
//! A call continues the conversation whose system prompt and first user
//! message it shares. The first conversation is `main`; a conversation
//! that starts after a `main` attempt calling an `agent-*` tool is that
//! sub-agent's, named as upstream's task logs name it (`agent-browsing_1`,
//! the launches numbered across the run); any other new conversation
//! starts another run ([`Plan::runs`]).
//!
//! The client's retries fold into their attempt: an SDK retry
//! (`x-stainless-retry-count` ≥ 1), the same request after a failed call,
//! after a `length` answer the same messages with a larger `max_tokens`
//! (upstream's length retry), and the same request after an answer
//! upstream's client calls a severe repeat; at most [`CLIENT_TRIES`] tries
//! an attempt, as upstream's client. Otherwise the same request after an
//! answer is the next attempt (upstream popped a rolled-back turn).
//! Final-answer and summary calls (upstream's summary prompts) are kept
//! apart: calls, not attempts.

use serde_json::Value as Json;

use super::call::{Answer, CallResult, Request};
use super::slim::Slim;
use crate::read::chat::{content_text, is_summary_prompt};

/// Opening of upstream's failure-summary prompt (`FAILURE_SUMMARY_PROMPT`,
/// asked after a failed run for a retry's experience): a call, not a turn.
pub const FAILURE_SUMMARY_OPENING: &str =
    "The task was not completed successfully. Do NOT call any tools.";

/// Why a call was folded into the attempt before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The OpenAI SDK's own retry (`x-stainless-retry-count` ≥ 1).
    Sdk,
    /// The same request again after a failed call.
    AfterFailure,
    /// The same messages with a larger `max_tokens` after a `length` answer.
    Length,
    /// The same request again after an answer upstream's client calls a
    /// severe repeat ([`severe_repeat`]).
    Repeat,
}

impl Retry {
    pub fn name(self) -> &'static str {
        match self {
            Retry::Sdk => "sdk_retry",
            Retry::AfterFailure => "retry_after_failure",
            Retry::Length => "length_retry",
            Retry::Repeat => "repeat_retry",
        }
    }
}

/// One attempt: its calls (the first, then its retries with why).
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub calls: Vec<(usize, Option<Retry>)>,
    /// The conversation it belongs to ([`Plan::conversations`]).
    pub conversation: usize,
}

impl Draft {
    /// The call whose answer the attempt ended with.
    pub fn last(&self) -> usize {
        self.calls.last().map_or(0, |c| c.0)
    }
}

/// A conversation of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// `main`, or the sub-agent's session (`agent-browsing_1`).
    pub session: String,
    /// Which run of the group it belongs to (0 first).
    pub run: usize,
    /// Every call of it, in order, attempts' and summaries' alike: what
    /// later requests show of an attempt is read from them.
    pub calls: Vec<usize>,
    /// Its system prompt and first user message, hashed ([`Slim::key`]).
    key: u64,
    /// A request of it went past the opening (holds an assistant message).
    went_on: bool,
}

/// What the calls of a group come to.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Plan {
    pub drafts: Vec<Draft>,
    pub conversations: Vec<Conversation>,
    /// Runs in the group (1 unless a conversation started that no
    /// sub-agent call launched; at least 1).
    pub runs: usize,
    /// Final-answer and summary calls.
    pub summaries: Vec<usize>,
}

/// Whether a request asks for upstream's final answer or a summary.
pub fn is_summary(request: &Request) -> bool {
    let last_user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Json::as_str) == Some("user"));
    last_user
        .and_then(|m| content_text(m.get("content"), 0).ok())
        .is_some_and(|t| {
            is_summary_prompt(&t) || t.trim_start().starts_with(FAILURE_SUMMARY_OPENING)
        })
}

/// Whether a call gave no usable answer (its request is then sent again).
pub fn failed(result: &CallResult) -> bool {
    match result {
        CallResult::Answer(a) => a.incomplete.is_some(),
        _ => true,
    }
}

/// One `agent-*` call of an answer: the server, and its `subtask`
/// argument where it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub server: String,
    pub subtask: Option<String>,
}

/// The `subtask` of a call's arguments (JSON text).
fn subtask_of(arguments: &str) -> Option<String> {
    let v: Json = serde_json::from_str(arguments.trim()).ok()?;
    Some(v.get("subtask")?.as_str()?.to_string())
}

/// The `agent-*` servers an answer calls, in order: MCP blocks
/// (`<server_name>agent-…</server_name>` … `<arguments>`) or native calls
/// named `agent-…`.
pub fn launches(answer: &Answer) -> Vec<Launch> {
    let mut out = Vec::new();
    for block in answer.text.split("<use_mcp_tool>").skip(1) {
        let block = block.split("</use_mcp_tool>").next().unwrap_or(block);
        let inner = |tag: &str| {
            let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
            let start = block.find(&open)? + open.len();
            let end = block[start..].find(&close)? + start;
            Some(block[start..end].trim())
        };
        if let Some(server) = inner("server_name").filter(|s| s.starts_with("agent-")) {
            out.push(Launch {
                server: server.to_string(),
                subtask: inner("arguments").and_then(subtask_of),
            });
        }
    }
    for call in &answer.tool_calls {
        let function = call.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Json::as_str)
            .unwrap_or("");
        if name.starts_with("agent-") {
            let arguments = function
                .and_then(|f| f.get("arguments"))
                .and_then(Json::as_str)
                .unwrap_or("");
            out.push(Launch {
                server: name.to_string(),
                subtask: subtask_of(arguments),
            });
        }
    }
    out
}

/// Whether a conversation opening with `first_user` can be the sub-agent a
/// launch started: upstream opens it with the subtask (and a line of its
/// own after it). Either unknown, it can.
fn opens_with(first_user: Option<&str>, subtask: Option<&str>) -> bool {
    match (first_user, subtask) {
        (Some(text), Some(subtask)) => {
            let want: String = subtask.trim().chars().take(200).collect();
            text.trim_start().starts_with(&want)
        }
        _ => true,
    }
}

/// A run's launches: its latest main attempt, how many of its `agent-*`
/// calls have a conversation yet, and how many sub-agents it has had.
#[derive(Default, Clone, Copy)]
struct Launches {
    latest_main: Option<usize>,
    used: usize,
    count: usize,
}

/// The calls of one group, in `call` order → its plan. Runs without the
/// header share a group and may interleave: each run keeps its own
/// launches.
pub fn plan(calls: &[Slim]) -> Plan {
    let mut plan = Plan::default();
    let mut runs: Vec<Launches> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let (key, opening) = (call.key, call.opening);
        // A sub-agent runs inside the main turn that launched it: once its
        // run's main calls again, it is over (the same subtask launched
        // again is a new conversation). A fresh opening after the
        // conversation went on is a new launch too.
        let found = plan.conversations.iter().rposition(|c| {
            let main_since = runs[c.run].latest_main.map(|d| plan.drafts[d].calls[0].0);
            let open = c.session == "main"
                || main_since.is_none_or(|m| c.calls.last().is_some_and(|&l| l > m));
            c.key == key && open && !(opening && c.went_on)
        });
        let conversation = match found {
            Some(c) => c,
            None => {
                let opening_text = call.first_user.as_deref();
                let (run, session) = match launch_for(&plan, calls, &mut runs, opening_text) {
                    Some((run, server)) => {
                        runs[run].count += 1;
                        (run, format!("{server}_{}", runs[run].count))
                    }
                    None => {
                        runs.push(Launches::default());
                        (runs.len() - 1, "main".to_string())
                    }
                };
                plan.conversations.push(Conversation {
                    session,
                    run,
                    calls: Vec::new(),
                    key,
                    went_on: false,
                });
                plan.conversations.len() - 1
            }
        };
        plan.conversations[conversation].calls.push(i);
        plan.conversations[conversation].went_on |= !opening;
        if call.summary {
            plan.summaries.push(i);
            continue;
        }
        let last = plan
            .drafts
            .iter()
            .rposition(|d| d.conversation == conversation);
        let retry = last.and_then(|d| {
            let draft = &plan.drafts[d];
            // Upstream's client tries at most this often (SDK retries apart).
            let tries = draft
                .calls
                .iter()
                .filter(|c| c.1 != Some(Retry::Sdk))
                .count();
            retry_of(call, &calls[draft.last()], tries)
        });
        match (last, retry) {
            (Some(d), Some(why)) => plan.drafts[d].calls.push((i, Some(why))),
            _ => {
                plan.drafts.push(Draft {
                    calls: vec![(i, None)],
                    conversation,
                });
                let c = &plan.conversations[conversation];
                if c.session == "main" {
                    let run = &mut runs[c.run];
                    run.latest_main = Some(plan.drafts.len() - 1);
                    run.used = 0;
                }
            }
        }
    }
    plan.runs = runs.len().max(1);
    plan
}

/// The sub-agent a new conversation is, and its run: the next `agent-*`
/// call of a run's latest main attempt that has no conversation yet (the
/// run whose main called last, when several have one).
fn launch_for(
    plan: &Plan,
    calls: &[Slim],
    runs: &mut [Launches],
    first_user: Option<&str>,
) -> Option<(usize, String)> {
    let mut candidates: Vec<(usize, usize)> = runs
        .iter()
        .enumerate()
        .filter_map(|(run, l)| Some((l.latest_main?, run)))
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    for (draft, run) in candidates {
        let CallResult::Answer(answer) = &calls[plan.drafts[draft].last()].call.result else {
            continue;
        };
        let Some(launch) = launches(answer).into_iter().nth(runs[run].used) else {
            continue;
        };
        if opens_with(first_user, launch.subtask.as_deref()) {
            runs[run].used += 1;
            return Some((run, launch.server));
        }
    }
    None
}

/// The tries upstream's client makes of one call (`max_retries`): the
/// length, repeat and error retries share them; the SDK's retries are
/// inside each.
pub const CLIENT_TRIES: usize = 10;

/// Upstream's client's severe repeat: an answer of 50 characters or more
/// whose last 50 occur in it more than 5 times (counted apart, as
/// Python's `str.count`).
pub fn severe_repeat(text: &str) -> bool {
    let Some((at, _)) = text.char_indices().rev().nth(49) else {
        return false;
    };
    text.matches(&text[at..]).count() > 5
}

/// Why `call` is a retry of the call before it in its conversation (the
/// attempt has made `tries` of its client's tries), if it is.
fn retry_of(call: &Slim, previous: &Slim, tries: usize) -> Option<Retry> {
    if call.call.sdk_retry >= 1 {
        return Some(Retry::Sdk);
    }
    if tries >= CLIENT_TRIES || !call.same_conversation(previous) {
        return None;
    }
    let answer = match &previous.call.result {
        CallResult::Answer(a) if a.incomplete.is_none() => a,
        _ => return Some(Retry::AfterFailure),
    };
    let limit = (
        call.call.request.max_tokens,
        previous.call.request.max_tokens,
    );
    match answer.finish.as_deref() {
        Some("length") => {
            matches!(limit, (Some(now), Some(before)) if now > before).then_some(Retry::Length)
        }
        _ => (severe_repeat(&answer.text) && limit.0 == limit.1).then_some(Retry::Repeat),
    }
}
