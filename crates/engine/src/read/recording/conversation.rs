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
//! and after a `length` answer the same messages with a larger
//! `max_tokens` (upstream's length retry). The same request after an
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
}

impl Retry {
    pub fn name(self) -> &'static str {
        match self {
            Retry::Sdk => "sdk_retry",
            Retry::AfterFailure => "retry_after_failure",
            Retry::Length => "length_retry",
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
    /// sub-agent call launched).
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

/// The `agent-*` servers an answer calls, in order: MCP tags
/// (`<server_name>agent-…</server_name>`) or native calls named `agent-…`.
pub fn launches(answer: &Answer) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = answer.text.as_str();
    while let Some(at) = rest.find("<server_name>") {
        rest = &rest[at + "<server_name>".len()..];
        let Some(end) = rest.find("</server_name>") else {
            break;
        };
        let name = rest[..end].trim();
        if name.starts_with("agent-") {
            out.push(name.to_string());
        }
        rest = &rest[end..];
    }
    for call in &answer.tool_calls {
        let name = call
            .get("function")
            .and_then(|f| f.get("name"))
            .and_then(Json::as_str)
            .unwrap_or("");
        if name.starts_with("agent-") {
            out.push(name.to_string());
        }
    }
    out
}

/// The calls of one group, in `call` order → its plan.
pub fn plan(calls: &[Slim]) -> Plan {
    let mut plan = Plan {
        runs: 1,
        ..Plan::default()
    };
    // The conversation each key last went to.
    let mut launched = 0usize;
    // The main attempt whose `agent-*` calls the next new conversations
    // are, and how many of them have started.
    let mut launcher: Option<(usize, usize)> = None;
    for (i, call) in calls.iter().enumerate() {
        let (key, opening) = (call.key, call.opening);
        // A sub-agent runs inside the main turn that launched it: once main
        // calls again, the sub-agents before are over (the same subtask
        // launched again is a new conversation). A fresh opening after the
        // conversation went on is a new launch too.
        let main_since = launcher.map(|(d, _)| plan.drafts[d].calls[0].0);
        let found = plan.conversations.iter().rposition(|c| {
            let open = c.session == "main"
                || main_since.is_none_or(|m| c.calls.last().is_some_and(|&l| l > m));
            c.run + 1 == plan.runs && c.key == key && open && !(opening && c.went_on)
        });
        let conversation = match found {
            Some(c) => c,
            None => {
                let main_exists = plan
                    .conversations
                    .iter()
                    .any(|c| c.run + 1 == plan.runs && c.session == "main");
                let session = match launch_for(&plan, calls, &mut launcher) {
                    Some(server) if main_exists => {
                        launched += 1;
                        format!("{server}_{launched}")
                    }
                    _ if !main_exists => "main".to_string(),
                    _ => {
                        plan.runs += 1;
                        launched = 0;
                        launcher = None;
                        "main".to_string()
                    }
                };
                plan.conversations.push(Conversation {
                    session,
                    run: plan.runs - 1,
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
        let retry = last.and_then(|d| retry_of(call, &calls[plan.drafts[d].last()]));
        match (last, retry) {
            (Some(d), Some(why)) => plan.drafts[d].calls.push((i, Some(why))),
            _ => {
                plan.drafts.push(Draft {
                    calls: vec![(i, None)],
                    conversation,
                });
                if plan.conversations[conversation].session == "main" {
                    launcher = Some((plan.drafts.len() - 1, 0));
                }
            }
        }
    }
    plan
}

/// The sub-agent a new conversation is: the next `agent-*` call of the
/// latest main attempt not yet matched by a conversation.
fn launch_for(
    plan: &Plan,
    calls: &[Slim],
    launcher: &mut Option<(usize, usize)>,
) -> Option<String> {
    let (draft, used) = launcher.as_mut()?;
    let CallResult::Answer(answer) = &calls[plan.drafts[*draft].last()].call.result else {
        return None;
    };
    let server = launches(answer).into_iter().nth(*used)?;
    *used += 1;
    Some(server)
}

/// Why `call` is a retry of the call before it in its conversation, if it is.
fn retry_of(call: &Slim, previous: &Slim) -> Option<Retry> {
    if call.call.sdk_retry >= 1 {
        return Some(Retry::Sdk);
    }
    let same = call.same_conversation(previous);
    if same && failed(&previous.call.result) {
        return Some(Retry::AfterFailure);
    }
    let length = matches!(&previous.call.result,
        CallResult::Answer(a) if a.finish.as_deref() == Some("length"));
    let larger = matches!(
        (call.call.request.max_tokens, previous.call.request.max_tokens),
        (Some(now), Some(before)) if now > before
    );
    (same && length && larger).then_some(Retry::Length)
}
