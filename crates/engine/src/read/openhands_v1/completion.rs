//! LLM completion logs → one attempt each. OpenHands (the V1 SDK's
//! `log_completions`, and V0 before it) writes one JSON file per LLM call:
//! the request (`messages`, `tools`, `kwargs`), the `response` LiteLLM
//! returned (Chat Completions `choices`, or Responses `output`), its
//! `usage`, `latency_sec` and `cost`; a failed call has an `error` instead.
//! The `response` is the call: it is the attempt. The `messages` are what
//! the call was sent (earlier calls have logs of their own); only their
//! system prompt is taken. In OpenHands' non-function-calling mode the
//! reply's calls are text (`<function=…>`, [`super::text_calls`]).

use serde_json::{json, Map, Value as Json};

use super::text_calls::split_text_calls;
use crate::model::{Attempt, Origin, Trace};
use crate::read::chat::{self, finish_of, ChatError, SessionTarget};
use crate::read::usage::{self, seconds};

/// Why a completion log could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompletionLogError {
    #[error("\"response\" has neither \"choices\" nor \"output\"")]
    NoResponse,
    #[error("\"response.choices\" is empty")]
    NoChoice,
    #[error("{0}")]
    Chat(#[from] ChatError),
}

/// Whether an object is a completion log: the request's `messages` beside
/// the `response` (with `choices` or `output`), or beside the `error` of
/// a failed call and its `latency_sec`.
pub fn is_completion_log(obj: &Map<String, Json>) -> bool {
    let response = obj
        .get("response")
        .is_some_and(|r| r.get("choices").is_some() || r.get("output").is_some());
    let failed = obj.get("error").is_some_and(Json::is_object) && obj.contains_key("latency_sec");
    obj.get("messages").is_some_and(Json::is_array) && (response || failed)
}

/// A completion log as a trace of its one attempt, named by the log's id
/// or its file's stem (`read::attribution::unnamed`).
pub fn from_log(obj: &Map<String, Json>, origin: &Origin) -> Result<Trace, CompletionLogError> {
    let id = chat::record_id(obj).unwrap_or_else(|| crate::read::attribution::unnamed(origin));
    let messages = obj
        .get("messages")
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice);
    let system = messages
        .iter()
        .find(|m| m.get("role").and_then(Json::as_str) == Some("system"))
        .map(|m| chat::content_text(m.get("content"), 0))
        .transpose()?;
    let target = SessionTarget {
        trace_id: &id,
        session: "main",
        agent: "main",
        origin,
        system_prompt: system,
    };
    let mut attempt = match obj.get("response") {
        Some(response) => attempt_of(response, target)?,
        None => failed_call(obj, target),
    };
    attempt.native_tools = true;
    attempt.duration_s = obj.get("latency_sec").and_then(seconds);
    attempt.usage = obj
        .get("response")
        .and_then(|r| r.get("usage"))
        .and_then(usage::of)
        .or_else(|| obj.get("usage_summary").and_then(usage::of));
    let model = obj
        .get("response")
        .and_then(|r| r.get("model"))
        .and_then(Json::as_str);
    if let Some(model) = model {
        attempt.set_meta(json!({ "model": model }));
    }
    Ok(Trace::new(id, vec![attempt]))
}

/// The logged response as an attempt.
fn attempt_of(response: &Json, target: SessionTarget<'_>) -> Result<Attempt, CompletionLogError> {
    if let Some(output) = response.get("output").filter(|o| o.is_array()) {
        let mut a = blank(&target);
        a.output = Some(output.clone());
        return Ok(a);
    }
    let choice = response
        .get("choices")
        .and_then(Json::as_array)
        .ok_or(CompletionLogError::NoResponse)?
        .first()
        .ok_or(CompletionLogError::NoChoice)?;
    let mut message = choice
        .get("message")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    message.insert("role".into(), Json::from("assistant"));
    if let Some(reason) = choice.get("finish_reason") {
        message.insert("finish_reason".into(), reason.clone());
    }
    let has_calls = message
        .get("tool_calls")
        .and_then(Json::as_array)
        .is_some_and(|c| !c.is_empty());
    if !has_calls {
        let text = chat::content_text(message.get("content"), 0)?;
        if let Some((before, calls)) = split_text_calls(&text) {
            message.insert("content".into(), Json::from(before));
            message.insert("tool_calls".into(), Json::Array(calls));
        }
    }
    let system = target.system_prompt.clone();
    let mut attempts = chat::convert_messages(&[Json::Object(message)], target)?;
    let mut a = attempts.pop().ok_or(CompletionLogError::NoChoice)?;
    a.system_prompt = system.map(Into::into);
    Ok(a)
}

/// A call that failed: its error, no response.
fn failed_call(obj: &Map<String, Json>, target: SessionTarget<'_>) -> Attempt {
    let error = obj.get("error");
    let text = error
        .and_then(|e| e.get("message"))
        .and_then(Json::as_str)
        .map_or_else(
            || error.map_or_else(String::new, Json::to_string),
            str::to_string,
        );
    let mut a = blank(&target);
    a.llm_error = Some(text);
    a.finish = finish_of(None);
    a
}

fn blank(target: &SessionTarget<'_>) -> Attempt {
    let mut a = Attempt::blank(
        target.origin.clone(),
        target.trace_id.into(),
        target.session.into(),
        target.agent.into(),
    );
    a.system_prompt = target.system_prompt.clone().map(Into::into);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            file: "gpt-4o-1.json".into(),
            line: 1,
        }
    }

    #[test]
    fn the_response_is_the_attempt() {
        let log = json!({
            "messages": [{"role": "system", "content": [{"type": "text", "text": "You are OpenHands."}]},
                         {"role": "user", "content": "fix the bug"}],
            "response": {"id": "r1", "model": "gpt-4o", "choices": [{"finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": "Looking.", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"ls\"}"}}]}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 40}}},
            "latency_sec": 1.25, "cost": 0.001
        });
        let obj = log.as_object().unwrap();
        assert!(is_completion_log(obj));
        let t = from_log(obj, &origin()).unwrap();
        assert_eq!(t.attempts.len(), 1);
        let a = &t.attempts[0];
        assert_eq!(a.content, "Looking.");
        assert_eq!(
            a.tool_calls.as_ref().unwrap()[0]["function"]["name"],
            "terminal"
        );
        assert_eq!(a.duration_s, Some(1.25));
        assert_eq!(a.usage.unwrap().cached_input_tokens, Some(40));
        assert_eq!(a.system_prompt.as_deref(), Some("You are OpenHands."));
        assert_eq!(a.model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn text_calls_become_native_calls() {
        let log = json!({"messages": [], "response": {"choices": [{"finish_reason": "stop", "message": {
            "role": "assistant", "content": "I will list.\n<function=execute_bash>\n<parameter=command>\nls\n</parameter>\n"}}]}});
        let a = &from_log(log.as_object().unwrap(), &origin())
            .unwrap()
            .attempts[0];
        assert_eq!(a.content, "I will list.");
        let call = &a.tool_calls.as_ref().unwrap()[0];
        assert_eq!(call["function"]["arguments"], "{\"command\":\"ls\"}");
    }

    #[test]
    fn a_failed_call_is_an_llm_error() {
        let log = json!({"messages": [], "error": {"type": "RateLimitError", "message": "slow down"}, "latency_sec": 0.1});
        let obj = log.as_object().unwrap();
        assert!(is_completion_log(obj));
        let a = &from_log(obj, &origin()).unwrap().attempts[0];
        assert_eq!(a.llm_error.as_deref(), Some("slow down"));
        assert!(!is_completion_log(
            json!({"messages": []}).as_object().unwrap()
        ));
    }
}
