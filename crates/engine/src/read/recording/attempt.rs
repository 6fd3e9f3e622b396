//! One attempt of a recording ([`Draft`]: a call and its retries) → an
//! [`Attempt`]: the answer of its last call, the tokens and seconds of all
//! its calls, and its tool results as a later request of its conversation
//! shows them (or, when none does, that they are unseen).

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::call::{Answer, CallResult};
use super::conversation::{Draft, Retry};
use super::slim::Slim;
use crate::model::{agent_of_session, Attempt, ToolResult, UnseenResults, Usage};
use crate::read::chat::{convert_messages, finish_of, SessionTarget};

/// What the input shows of an attempt's turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// A later request carries on from it: the messages after its answer
    /// (its tool results, up to the next answer).
    Kept(Vec<Json>),
    Unseen(UnseenResults),
}

fn role(m: &Json) -> Option<&str> {
    m.get("role").and_then(Json::as_str)
}

/// The fate of the turn `asked` asked for, from the calls of its
/// conversation that came after it: the first that carries on from it
/// shows its results (when it kept them: the turn right after), the first
/// that repeats it shows it rolled back.
pub fn fate<'a>(asked: &Slim, later: impl IntoIterator<Item = &'a Slim>) -> Fate {
    let n = asked.len;
    for next in later {
        if next.len > n {
            if next.message(n).and_then(role) != Some("assistant") {
                // Not the turn after (or a history rewritten): unseen.
                break;
            }
            let mut results = Vec::new();
            for i in n + 1..next.len {
                match next.message(i) {
                    Some(m) if role(m) != Some("assistant") => results.push(m.clone()),
                    _ => break,
                }
            }
            return Fate::Kept(results);
        }
        if next.same_conversation(asked) {
            return Fate::Unseen(UnseenResults::RolledBack);
        }
    }
    Fate::Unseen(UnseenResults::Unknown)
}

/// Where an attempt goes.
pub struct Place<'a> {
    pub trace_id: &'a Arc<str>,
    pub session: &'a str,
    /// The session's system prompt, on its first attempt only.
    pub system_prompt: Option<Arc<str>>,
}

/// The attempt `draft` makes, or why it cannot be read.
pub fn build(
    draft: &Draft,
    calls: &[Slim],
    fate: Fate,
    place: Place<'_>,
) -> Result<Attempt, String> {
    let last = &calls[draft.last()].call;
    let first = &calls[draft.calls[0].0].call;
    let mut attempt = Attempt::blank(
        first.origin.clone(),
        place.trace_id.clone(),
        place.session.into(),
        agent_of_session(place.session).into(),
    );
    attempt.system_prompt = place.system_prompt;
    attempt.native_tools = last.request.tools;
    attempt.model = last.request.model.clone();
    match &last.result {
        CallResult::Answer(answer) => {
            answer_into(&mut attempt, answer);
            if let Some(why) = &answer.incomplete {
                attempt.llm_error = Some(format!("incomplete answer: {why}"));
            }
        }
        CallResult::Failed { status, message } => {
            attempt.llm_error = Some(format!("HTTP {status}: {message}"));
        }
        CallResult::NoResponse { kind, message } => {
            attempt.llm_error = Some(format!("no response ({kind}): {message}"));
        }
        CallResult::Unreadable(why) => {
            return Err(format!(
                "call {} (line {}): {why}: not replayed",
                last.call, last.origin.line
            ))
        }
    }
    match fate {
        Fate::Kept(results) => attempt.tool_results = results_of(&attempt, results),
        Fate::Unseen(unseen) => attempt.unseen_results = Some(unseen),
    }
    attempt.usage = total_usage(draft.calls.iter().map(|&(i, _)| &calls[i].call));
    attempt.duration_s = draft
        .calls
        .iter()
        .map(|&(i, _)| calls[i].call.seconds)
        .sum::<Option<f64>>();
    attempt.meta = Some(meta(draft, calls, attempt.model.as_deref()));
    Ok(attempt)
}

fn answer_into(attempt: &mut Attempt, answer: &Answer) {
    attempt.content = answer.text.clone();
    if !answer.tool_calls.is_empty() {
        attempt.tool_calls = Some(Json::Array(answer.tool_calls.clone()));
    }
    attempt.finish = finish_of(
        answer
            .finish
            .as_ref()
            .map(|f| Json::String(f.clone()))
            .as_ref(),
    );
    if let Some(model) = &answer.model {
        attempt.model = Some(model.clone());
    }
}

/// The tool results in the messages after the attempt's answer, read as
/// `read::chat` reads a conversation (tool messages by call id, Anthropic
/// result blocks, or the next user message).
fn results_of(attempt: &Attempt, results: Vec<Json>) -> Vec<ToolResult> {
    let mut messages = vec![json!({
        "role": "assistant",
        "content": attempt.content,
        "tool_calls": attempt.tool_calls.clone().unwrap_or(Json::Null),
    })];
    messages.extend(results);
    let target = SessionTarget {
        trace_id: &attempt.trace_id,
        session: &attempt.session,
        agent: &attempt.agent,
        origin: &attempt.origin,
        system_prompt: None,
    };
    convert_messages(&messages, target)
        .ok()
        .and_then(|mut a| a.drain(..).next())
        .map(|a| a.tool_results)
        .unwrap_or_default()
}

/// The tokens of all the calls, each count summed where some call has it.
fn total_usage<'a>(calls: impl Iterator<Item = &'a super::call::RecordedCall>) -> Option<Usage> {
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    calls
        .filter_map(|c| match &c.result {
            CallResult::Answer(a) => a.usage,
            _ => None,
        })
        .reduce(|a, b| Usage {
            input_tokens: add(a.input_tokens, b.input_tokens),
            output_tokens: add(a.output_tokens, b.output_tokens),
            cached_input_tokens: add(a.cached_input_tokens, b.cached_input_tokens),
        })
}

/// The attempt's calls, as `meta.recording` (export keeps it).
fn meta(draft: &Draft, calls: &[Slim], model: Option<&str>) -> Json {
    let call = |&(i, why): &(usize, Option<Retry>)| {
        let c = &calls[i].call;
        let usage = match &c.result {
            CallResult::Answer(a) => a.usage,
            _ => None,
        };
        json!({
            "call": c.call,
            "line": c.origin.line,
            "retry": why.map(Retry::name),
            "seconds": c.seconds,
            "input_tokens": usage.and_then(|u| u.input_tokens),
            "output_tokens": usage.and_then(|u| u.output_tokens),
        })
    };
    json!({
        "model": model,
        "recording": {
            "calls": draft.calls.iter().map(call).collect::<Vec<_>>(),
            "retries": draft.calls.len() - 1,
        },
    })
}
