//! Every LLM call a task log shows, in step order: the loop turns, the
//! final summary and final answer calls, each with the retries upstream's
//! client made inside it. This is what a recording of the same run is
//! paired against (`read::join`): one call there per try here.
//!
//! Upstream's client (`OpenAIClient._create_message`) logs a warning for
//! each try it makes again (`LLM | Length Limit Reached`, `LLM | Repeat
//! Detected`, `LLM | Timeout Error` or `LLM | API Error` ending in
//! `retrying...`) before the orchestrator logs the call's own step (`… |
//! LLM Call`, `LLM Call Failed`, `LLM Call ERROR`). Its other steps
//! (`LLM | Token Usage`, `LLM | Response Status`, `LLM | Message
//! Retention`, the last try's error) say nothing about how many calls went out.

use serde_json::{Map, Value as Json};

use super::steps::{self, Agent, StepKind};
use crate::model::{CallLog, CallPurpose, LoggedLlmCall, SessionOpening};

/// The client's warnings that announce one more try of the same call.
const RETRY_STEPS: [&str; 4] = [
    "Length Limit Reached",
    "Repeat Detected",
    "Timeout Error",
    "API Error",
];

/// The calls of `step_logs` and the openings of the saved histories.
pub fn call_log(doc: &Map<String, Json>) -> CallLog {
    let steps = match doc.get("step_logs") {
        Some(Json::Array(steps)) => steps.as_slice(),
        _ => &[],
    };
    CallLog {
        calls: calls(steps),
        sessions: openings(doc),
        start_time: text(doc.get("start_time")),
        end_time: text(doc.get("end_time")),
    }
}

fn text(v: Option<&Json>) -> Option<String> {
    v.and_then(Json::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Whether a step is a retry warning of the client: `LLM | <label>` with a
/// message that says it tries again.
pub fn is_retry(name: &str, message: &str) -> bool {
    let name = name.trim_start_matches(|c: char| !c.is_alphanumeric());
    let Some(label) = name.strip_prefix("LLM | ") else {
        return false;
    };
    RETRY_STEPS.contains(&label.trim()) && message.trim_end().ends_with("retrying...")
}

/// The LLM calls of a step log, in order.
fn calls(steps: &[Json]) -> Vec<LoggedLlmCall> {
    let mut out = Vec::new();
    let mut retries = Vec::new();
    let mut open_sub: Option<String> = None;
    for (i, step) in steps.iter().enumerate() {
        let Some(name) = step.get("step_name").and_then(Json::as_str) else {
            continue;
        };
        let message = step
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if is_retry(name, message) {
            retries.push(
                name.trim_start_matches(|c: char| !c.is_alphanumeric())
                    .to_string(),
            );
            continue;
        }
        let read = steps::read(name, message);
        let session = |agent: Agent<'_>, open: &Option<String>| match agent {
            Agent::Main => "main".to_string(),
            Agent::Sub(name) => open
                .clone()
                .filter(|s| steps_agent(s) == name)
                .unwrap_or_else(|| name.to_string()),
        };
        let (purpose, failed) = match (&read.kind, read.agent) {
            (StepKind::SessionStart { session }, Some(Agent::Sub(name))) => {
                let sid = step
                    .pointer("/metadata/session_id")
                    .and_then(Json::as_str)
                    .or(*session)
                    .unwrap_or(name);
                open_sub = Some(sid.to_string());
                continue;
            }
            (StepKind::SessionEnd { .. }, _) => {
                open_sub = None;
                continue;
            }
            (StepKind::LlmResponded, Some(_)) => (CallPurpose::Turn, false),
            (StepKind::LlmFailed { .. }, Some(_)) => (CallPurpose::Turn, true),
            (StepKind::Other, Some(_)) => match summary_call(name, message) {
                Some(failed) => (CallPurpose::Summary, failed),
                None => continue,
            },
            _ => continue,
        };
        let Some(agent) = read.agent else { continue };
        out.push(LoggedLlmCall {
            step: i,
            session: session(agent, &open_sub),
            purpose,
            failed,
            retries: std::mem::take(&mut retries),
        });
    }
    out
}

/// `agent-browsing_2` → `agent-browsing`.
fn steps_agent(session: &str) -> &str {
    match session.rsplit_once('_') {
        Some((agent, n)) if n.bytes().all(|b| b.is_ascii_digit()) => agent,
        _ => session,
    }
}

/// A call for another purpose than a loop turn (`… | Final Summary
/// (attempt 1/3) | LLM Call`): `Some(failed)`, else `None`.
fn summary_call(name: &str, message: &str) -> Option<bool> {
    let label = name.rsplit(" | ").next()?.trim();
    match label {
        "LLM Call" if message == "completed successfully" => Some(false),
        "LLM Call Failed" | "LLM Call ERROR" => Some(true),
        _ => None,
    }
}

/// How each saved session opens, main first.
fn openings(doc: &Map<String, Json>) -> Vec<SessionOpening> {
    let mut out = Vec::new();
    if let Some(main) = doc.get("main_agent_message_history") {
        out.push(opening("main", main));
    }
    if let Some(Json::Object(subs)) = doc.get("sub_agent_message_history_sessions") {
        for (id, value) in subs {
            out.push(opening(id, value));
        }
    }
    out
}

fn opening(session: &str, value: &Json) -> SessionOpening {
    let (prompt, messages) = match value {
        Json::Array(list) => (None, list.as_slice()),
        Json::Object(obj) => (
            obj.get("system_prompt")
                .and_then(Json::as_str)
                .map(str::to_string),
            obj.get("message_history")
                .and_then(Json::as_array)
                .map_or(&[][..], Vec::as_slice),
        ),
        _ => (None, &[][..]),
    };
    let role = |m: &Json| m.get("role").and_then(Json::as_str).map(str::to_string);
    let system_prompt = prompt.or_else(|| {
        messages
            .iter()
            .find(|m| role(m).as_deref() == Some("system"))
            .map(|m| message_text(m.get("content")))
    });
    SessionOpening {
        session: session.to_string(),
        system_prompt,
        first_user: messages
            .iter()
            .find(|m| role(m).as_deref() == Some("user"))
            .map(|m| message_text(m.get("content"))),
        kept: messages
            .iter()
            .filter(|m| role(m).as_deref() == Some("assistant"))
            .map(|m| message_text(m.get("content")))
            .collect(),
    }
}

/// A message's text: a string, or its text parts joined.
pub fn message_text(content: Option<&Json>) -> String {
    match content {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Json::String(s) => Some(s.as_str()),
                _ => p.get("text").and_then(Json::as_str),
            })
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn turns_summaries_and_retries_are_calls_in_order() {
        let doc = json!({
            "start_time": "2025-06-01 09:00:01",
            "main_agent_message_history": {"system_prompt": "S", "message_history": [
                {"role": "user", "content": [{"type": "text", "text": "task"}]},
                {"role": "assistant", "content": "a1"}]},
            "step_logs": [
                {"step_name": "🧠 LLM | Token Usage", "message": "x"},
                {"step_name": "🧠 LLM | Length Limit Reached", "message": "Response was truncated due to length limit (attempt 1/10). Increasing max_tokens to 1100 and retrying..."},
                {"step_name": "🧠 LLM | API Error", "message": "Error (attempt 2/10): boom, retrying..."},
                {"step_name": "🧠 Main agent | Turn: 1 | LLM Call", "message": "completed successfully"},
                {"step_name": "🤖 agent-browsing | Session Start", "message": "Starting agent-browsing_1 for subtask: s", "metadata": {"session_id": "agent-browsing_1"}},
                {"step_name": "🧠 LLM | API Error", "message": "Error after 10 attempts: boom"},
                {"step_name": "🤖 agent-browsing | Turn: 1 | LLM Call Failed", "message": "failed"},
                {"step_name": "🤖 agent-browsing | Final summary | LLM Call", "message": "completed successfully"},
                {"step_name": "🤖 agent-browsing | Session End", "message": "Ending agent-browsing_1"},
                {"step_name": "🧠 Main agent | Turn: 2 | LLM Call", "message": "No valid response from LLM, retrying"},
                {"step_name": "🧠 Main agent | Final Summary (attempt 1/3) | LLM Call", "message": "completed successfully"}
            ]
        });
        let log = call_log(doc.as_object().unwrap());
        let got: Vec<_> = log
            .calls
            .iter()
            .map(|c| {
                (
                    c.step,
                    c.session.as_str(),
                    c.purpose,
                    c.failed,
                    c.retries.len(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (3, "main", CallPurpose::Turn, false, 2),
                (6, "agent-browsing_1", CallPurpose::Turn, true, 0),
                (7, "agent-browsing_1", CallPurpose::Summary, false, 0),
                (10, "main", CallPurpose::Summary, false, 0),
            ]
        );
        assert_eq!(log.sessions[0].first_user.as_deref(), Some("task"));
        assert_eq!(log.sessions[0].kept, ["a1"]);
        assert_eq!(log.start_time.as_deref(), Some("2025-06-01 09:00:01"));
    }
}
