//! OpenHands event streams → traces. A run is a list of events (bare, or
//! under `history` in an evaluation's output line), each an action or an
//! observation with a `source`. An agent action that came from an LLM
//! call carries `tool_call_metadata.model_response`, the whole Chat
//! Completions response: several actions can share one response (one per
//! tool call), so responses are taken once each, by id, in order. An
//! observation answers the call named by its `tool_call_metadata`. An
//! agent `message` action without metadata is a reply without a tool call;
//! user messages and the `system` action are the conversation around them.
//!
//! Before function calling (CodeAct), actions were parsed out of the
//! reply's text and carry no metadata: each such agent action (`run`,
//! `edit`, `browse`, `finish`, …) is one response whose call is that action
//! (its `args` without the `thought`, which is the text), answered by the
//! observation whose `cause` is the action's id.
//!
//! The events are rewritten as a Chat Completions message list and read as
//! a chat transcript ([`super::chat`]).

use std::collections::HashSet;

use serde_json::{json, Map, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use crate::model::{Origin, Trace};

/// Why an event stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenHandsError {
    #[error("\"history\" is not a list of events")]
    NoHistory,
    #[error("event {index} is not an object")]
    NotAnObject { index: usize },
    #[error("{0}")]
    Chat(#[from] ChatError),
    #[error("{0}")]
    V1(#[from] super::openhands_v1::OpenHandsV1Error),
}

/// A record holding its events under `history`, V0 (`action`/`observation`)
/// or V1 (`kind`, read by [`super::openhands_v1`]), and the problems met
/// (unknown V1 event kinds).
pub fn read_record(
    obj: &Map<String, Json>,
    origin: &Origin,
) -> Result<(Trace, Vec<String>), OpenHandsError> {
    let v1 = obj
        .get("history")
        .and_then(Json::as_array)
        .is_some_and(|h| super::openhands_v1::is_event_list(h));
    if v1 {
        let read = super::openhands_v1::from_record(obj, origin)?;
        let problems = read
            .problems
            .into_iter()
            .map(|p| format!("OpenHands V1 events: {p}"))
            .collect();
        return Ok((read.trace, problems));
    }
    from_record(obj, origin).map(|t| (t, Vec::new()))
}

/// A record holding its events under `history` (an evaluation output line).
pub fn from_record(obj: &Map<String, Json>, origin: &Origin) -> Result<Trace, OpenHandsError> {
    let events = obj
        .get("history")
        .and_then(Json::as_array)
        .ok_or(OpenHandsError::NoHistory)?;
    let id = chat::record_id(obj).unwrap_or_else(|| super::attribution::unnamed(origin));
    from_events(events, &id, origin)
}

/// One run's events, in order, as one trace.
pub fn from_events(
    events: &[Json],
    trace_id: &str,
    origin: &Origin,
) -> Result<Trace, OpenHandsError> {
    let messages = to_messages(events)?;
    let mut attempts = chat::convert_messages(
        &messages,
        SessionTarget {
            trace_id,
            session: "main",
            agent: "main",
            origin,
            system_prompt: None,
        },
    )?;
    for a in &mut attempts {
        a.native_tools = true;
    }
    // Each response names its model (carried with its message); an
    // action kept without its response takes its session's
    // (`read::attribution`).
    Ok(Trace::new(trace_id, attempts))
}

/// The events as the Chat Completions messages the agent exchanged.
fn to_messages(events: &[Json]) -> Result<Vec<Json>, OpenHandsError> {
    let mut messages = Vec::new();
    let mut responses_seen: HashSet<&str> = HashSet::new();
    let text_actions: HashSet<String> = events
        .iter()
        .filter(|e| is_text_action(e))
        .filter_map(|e| Some(e.get("id")?.to_string()))
        .collect();
    for (index, event) in events.iter().enumerate() {
        let e = event
            .as_object()
            .ok_or(OpenHandsError::NotAnObject { index })?;
        let source = e.get("source").and_then(Json::as_str).unwrap_or("");
        let metadata = e.get("tool_call_metadata").filter(|m| m.is_object());
        if let Some(observation) = e.get("observation").and_then(Json::as_str) {
            let text_action_cause = e
                .get("cause")
                .filter(|c| metadata.is_none() && text_actions.contains(&c.to_string()));
            if let Some(cause) = text_action_cause {
                let text = e.get("content").and_then(Json::as_str).unwrap_or("");
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": format!("event-{cause}"),
                    "content": text,
                }));
            } else if let Some(m) = metadata {
                let text = e
                    .get("content")
                    .and_then(Json::as_str)
                    .or_else(|| e.get("message").and_then(Json::as_str))
                    .unwrap_or("");
                // An `error` observation answering a call: the call failed.
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": m.get("tool_call_id").cloned().unwrap_or(Json::Null),
                    "content": text,
                    "is_error": observation == "error",
                }));
            } else if observation == "error" && source == "agent" {
                // An error the agent is shown as the next user turn.
                if let Some(text) = e.get("content").and_then(Json::as_str) {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
            continue;
        }
        let Some(action) = e.get("action").and_then(Json::as_str) else {
            continue;
        };
        let args = e.get("args");
        let arg_text = |key: &str| args.and_then(|a| a.get(key)).and_then(Json::as_str);
        match (source, action, metadata) {
            (_, "system", _) => {
                if let Some(text) = arg_text("content") {
                    messages.push(json!({"role": "system", "content": text}));
                }
            }
            ("user", "message", _) => {
                let text = arg_text("content")
                    .or_else(|| e.get("message").and_then(Json::as_str))
                    .unwrap_or("");
                messages.push(json!({"role": "user", "content": text}));
            }
            ("agent", _, Some(m)) => {
                let response = m.get("model_response");
                let id = response.and_then(|r| r.get("id")).and_then(Json::as_str);
                if let Some(id) = id {
                    if !responses_seen.insert(id) {
                        continue;
                    }
                }
                messages.push(assistant_of(response, m, args));
            }
            ("agent", "message", None) => {
                let text = arg_text("content")
                    .or_else(|| e.get("message").and_then(Json::as_str))
                    .unwrap_or("");
                messages.push(json!({"role": "assistant", "content": text}));
            }
            // Before function calling (CodeAct), the agent's action was parsed
            // out of the reply's text: that action is the call.
            ("agent", action, None) if TEXT_ACTIONS.contains(&action) => {
                let mut arguments = args.and_then(Json::as_object).cloned().unwrap_or_default();
                let thought = arguments
                    .remove("thought")
                    .and_then(|t| t.as_str().map(str::to_string))
                    .unwrap_or_default();
                let id = e.get("id").map(|id| Json::from(format!("event-{id}")));
                messages.push(json!({
                    "role": "assistant",
                    "content": thought,
                    "tool_calls": [super::calls::chat_call(id.as_ref(), action, &Json::Object(arguments))],
                }));
            }
            _ => {}
        }
    }
    Ok(messages)
}

/// Agent actions that, without tool-call metadata, were parsed out of the
/// reply's text (`openhands/events/action/`): each is one LLM response.
const TEXT_ACTIONS: [&str; 12] = [
    "run",
    "run_ipython",
    "edit",
    "read",
    "write",
    "browse",
    "browse_interactive",
    "delegate",
    "think",
    "finish",
    "reject",
    "call_tool_mcp",
];

/// Whether an event is an agent action parsed out of a reply's text.
fn is_text_action(e: &Json) -> bool {
    e.get("source").and_then(Json::as_str) == Some("agent")
        && e.get("tool_call_metadata").is_none_or(Json::is_null)
        && e.get("action")
            .and_then(Json::as_str)
            .is_some_and(|a| TEXT_ACTIONS.contains(&a))
}

/// The assistant message of one LLM response: its first choice's message,
/// or, when the response was not kept, the one call the action records.
fn assistant_of(response: Option<&Json>, metadata: &Json, args: Option<&Json>) -> Json {
    let choice = response
        .and_then(|r| r.get("choices"))
        .and_then(|c| c.get(0));
    if let Some(message) = choice
        .and_then(|c| c.get("message"))
        .and_then(Json::as_object)
    {
        let mut m = message.clone();
        m.insert("role".into(), Json::from("assistant"));
        if let Some(reason) = choice.and_then(|c| c.get("finish_reason")) {
            m.insert("finish_reason".into(), reason.clone());
        }
        // The response's tokens and model travel with its message to the
        // chat reader.
        if let Some(usage) = response.and_then(|r| r.get("usage")) {
            m.insert("usage".into(), usage.clone());
        }
        if let Some(model) = response
            .and_then(|r| r.get("model"))
            .filter(|m| m.is_string())
        {
            m.insert("model".into(), model.clone());
        }
        return Json::Object(m);
    }
    let name = metadata
        .get("function_name")
        .and_then(Json::as_str)
        .unwrap_or("");
    let thought = args
        .and_then(|a| a.get("thought"))
        .and_then(Json::as_str)
        .unwrap_or("");
    let arguments = args.cloned().unwrap_or(Json::Null);
    let mut m = json!({
        "role": "assistant",
        "content": thought,
        "tool_calls": [super::calls::chat_call(metadata.get("tool_call_id"), name, &arguments)],
    });
    if let Some(model) = response
        .and_then(|r| r.get("model"))
        .filter(|m| m.is_string())
    {
        m["model"] = model.clone();
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            file: "run.json".into(),
            line: 1,
        }
    }

    fn response(id: &str, calls: &[&str]) -> Json {
        let calls: Vec<Json> = calls
            .iter()
            .map(|c| json!({"id": c, "type": "function", "function": {"name": "execute_bash", "arguments": "{\"command\": \"ls\"}"}}))
            .collect();
        json!({"id": id, "model": "claude", "choices": [{"finish_reason": "tool_calls",
               "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
    }

    #[test]
    fn actions_sharing_a_response_are_one_attempt() {
        let r = response("r1", &["a", "b"]);
        let events = json!([
            {"id": 0, "source": "user", "action": "message", "args": {"content": "fix it"}},
            {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"},
             "tool_call_metadata": {"tool_call_id": "a", "function_name": "execute_bash", "model_response": r}},
            {"id": 2, "source": "agent", "action": "run", "args": {"command": "ls"},
             "tool_call_metadata": {"tool_call_id": "b", "function_name": "execute_bash", "model_response": r}},
            {"id": 3, "source": "agent", "observation": "run", "content": "B", "cause": 2,
             "tool_call_metadata": {"tool_call_id": "b"}},
            {"id": 4, "source": "agent", "observation": "run", "content": "A", "cause": 1,
             "tool_call_metadata": {"tool_call_id": "a"}},
            {"id": 5, "source": "agent", "action": "message", "args": {"content": "Done."}},
            {"id": 6, "source": "environment", "observation": "agent_state_changed", "content": ""}
        ]);
        let t = from_events(events.as_array().unwrap(), "run", &origin()).unwrap();
        assert_eq!(t.attempts.len(), 2);
        let results: Vec<&str> = t.attempts[0]
            .tool_results
            .iter()
            .map(|r| r.result.as_str())
            .collect();
        assert_eq!(results, ["A", "B"]);
        assert_eq!(t.attempts[1].content, "Done.");
        assert!(t.attempts[0].native_tools);
        assert_eq!(t.attempts[0].model.as_deref(), Some("claude"));
    }

    #[test]
    fn text_parsed_actions_are_calls() {
        let events = json!([
            {"id": 1, "source": "user", "action": "message", "args": {"content": "list files"}},
            {"id": 2, "source": "agent", "action": "run", "args": {"command": "ls", "thought": "Let me look."}},
            {"id": 3, "source": "agent", "observation": "run", "content": "a.py", "cause": 2},
            {"id": 4, "source": "agent", "action": "finish", "args": {"outputs": {}, "thought": ""}}
        ]);
        let t = from_events(events.as_array().unwrap(), "run", &origin()).unwrap();
        assert_eq!(t.attempts.len(), 2);
        assert_eq!(t.attempts[0].content, "Let me look.");
        let call = &t.attempts[0].tool_calls.as_ref().unwrap()[0];
        assert_eq!(call["function"]["name"], "run");
        assert_eq!(call["function"]["arguments"], "{\"command\":\"ls\"}");
        assert_eq!(t.attempts[0].tool_results[0].result, "a.py");
    }
}
