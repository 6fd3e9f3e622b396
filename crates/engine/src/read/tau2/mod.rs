//! tau2-bench result files → traces. A run's results are one document
//! (`{"info", "tasks", "simulations": [...]}`, `tau2 run` writes it); each
//! simulation is one conversation between the agent (`assistant`), a
//! simulated user (`user`) and the tools (`tool`), one run (`trial`) of one
//! task (`task_id`): one trace, named `TASK#TRIAL`, with one attempt per
//! assistant message.
//!
//! tau2's own message shapes are rewritten for the chat reader: a tool call
//! is `{id, name, arguments}` (arguments an object), a tool message answers
//! the call named by its `id`. The simulated user also calls tools (the
//! telecom domain): its calls, and the tool messages that answer them
//! (`requestor: "user"`), are the environment, not the agent's turns.
//! Each assistant message's `usage` and `generation_time_seconds` fill the
//! attempt's; `reward_info.reward` is the task's result (success when it
//! is 1, as tau2 counts a pass).

use serde_json::{json, Map, Value as Json};

use super::calls::chat_call;
use super::chat::{self, ChatError, SessionTarget};
use super::format::{Format, Unit};
use super::usage::{self, seconds};
use crate::model::{Origin, TaskResult, Trace};

/// Why a simulation could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Tau2Error {
    #[error("\"simulations\" is not a list")]
    NoSimulations,
    #[error("simulation {index} is not an object")]
    NotAnObject { index: usize },
    #[error("simulation {index} has no \"messages\" list")]
    NoMessages { index: usize },
    #[error("simulation {index}: message {message} is not an object")]
    BadMessage { index: usize, message: usize },
    #[error("simulation {index}: {source}")]
    Chat { index: usize, source: ChatError },
}

/// Its entry in the registry of formats.
pub const FORMAT: &Format = &Format {
    name: "tau2",
    description: "tau2-bench results",
    recognised_by: "`simulations` beside `info` or `tasks`",
    trace_per: "simulation (`TASK#TRIAL`)",
    recognise: is_results,
    read: |obj, origin| {
        from_results(&obj, origin)
            .map(|(traces, problems)| Unit::Whole(traces, problems))
            .map_err(|e| format!("tau2-bench results: {e}"))
    },
    read_text: None,
    gather: None,
    list: None,
    element_id: None,
    extensions: &[],
};

/// Whether an object is a tau2-bench results document: `simulations`
/// beside the run's `info` or `tasks`.
pub fn is_results(obj: &Map<String, Json>) -> bool {
    obj.get("simulations").is_some_and(Json::is_array)
        && (obj.contains_key("info") || obj.contains_key("tasks"))
}

/// Every simulation of a results document, one trace each, and the
/// problems of those that could not be read (the others are still read).
pub fn from_results(
    obj: &Map<String, Json>,
    origin: &Origin,
) -> Result<(Vec<Trace>, Vec<String>), Tau2Error> {
    let sims = obj
        .get("simulations")
        .and_then(Json::as_array)
        .ok_or(Tau2Error::NoSimulations)?;
    let mut traces = Vec::with_capacity(sims.len());
    let mut problems = Vec::new();
    // The agent's model, as the run's `info.agent_info.llm` names it.
    let model: Option<std::sync::Arc<str>> = obj
        .get("info")
        .and_then(|i| i.get("agent_info"))
        .and_then(|a| a.get("llm"))
        .and_then(Json::as_str)
        .filter(|m| !m.is_empty())
        .map(Into::into);
    for (index, sim) in sims.iter().enumerate() {
        match simulation(sim, index, origin) {
            Ok(mut t) => {
                t.model.clone_from(&model);
                traces.push(t);
            }
            Err(e) => problems.push(format!("tau2-bench results: {e}")),
        }
    }
    Ok((traces, problems))
}

/// One simulation as one trace.
fn simulation(sim: &Json, index: usize, origin: &Origin) -> Result<Trace, Tau2Error> {
    let obj = sim.as_object().ok_or(Tau2Error::NotAnObject { index })?;
    let messages = obj
        .get("messages")
        .and_then(Json::as_array)
        .ok_or(Tau2Error::NoMessages { index })?;
    let id = trace_id(obj, index, origin);
    let mut rewritten = Vec::with_capacity(messages.len());
    // (usage, generation time) of each assistant message, in order.
    let mut per_call = Vec::new();
    // Results of the simulated user's own calls: read, not the agent's.
    let mut user_results = 0u64;
    for (message, m) in messages.iter().enumerate() {
        let m = m
            .as_object()
            .ok_or(Tau2Error::BadMessage { index, message })?;
        let role = m.get("role").and_then(Json::as_str).unwrap_or("");
        match role {
            "assistant" => {
                per_call.push((
                    m.get("usage").and_then(usage::of),
                    m.get("generation_time_seconds").and_then(seconds),
                ));
                rewritten.push(assistant(m));
            }
            "tool" if m.get("requestor").and_then(Json::as_str) == Some("user") => {
                user_results += 1;
            }
            // tau2 marks a call that raised with `error: true`.
            "tool" => rewritten.push(json!({
                "role": "tool",
                "tool_call_id": m.get("id").cloned().unwrap_or(Json::Null),
                "content": m.get("content").cloned().unwrap_or(Json::Null),
                "is_error": m.get("error").and_then(Json::as_bool) == Some(true),
            })),
            // The user's own tool calls are not the agent's.
            "user" => rewritten.push(json!({
                "role": "user",
                "content": m.get("content").cloned().unwrap_or(Json::Null),
            })),
            // `system`, and anything else, as recorded (the chat reader
            // reports a role it does not know).
            _ => rewritten.push(Json::Object(m.clone())),
        }
    }
    let mut attempts = chat::convert_messages(
        &rewritten,
        SessionTarget {
            trace_id: &id,
            session: "main",
            agent: "main",
            origin,
            system_prompt: None,
        },
    )
    .map_err(|source| Tau2Error::Chat { index, source })?;
    for (a, (usage, duration)) in attempts.iter_mut().zip(per_call) {
        a.native_tools = true;
        a.usage = usage;
        a.duration_s = duration;
    }
    if let Some(first) = attempts.first_mut() {
        first.task_result = task_result(obj);
    }
    let mut trace = Trace::new(id, attempts);
    if user_results > 0 {
        trace.not_attempts = vec![(USER_TOOL_RESULT.to_string(), user_results)];
    }
    Ok(trace)
}

/// How a result of the simulated user's call is counted (`input.skipped`).
pub const USER_TOOL_RESULT: &str = "tau2:user-tool-result";

/// `TASK#TRIAL`, as the chat reader names tau-bench's runs; the
/// simulation's `id` when it has no task id.
fn trace_id(obj: &Map<String, Json>, index: usize, origin: &Origin) -> String {
    let text = |k: &str| match obj.get(k) {
        Some(Json::String(s)) => Some(s.clone()),
        Some(Json::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    match (text("task_id"), text("trial")) {
        (Some(task), Some(trial)) => format!("{task}#{trial}"),
        (Some(task), None) => task,
        _ => {
            text("id").unwrap_or_else(|| format!("{}#{index}", super::attribution::unnamed(origin)))
        }
    }
}

/// An assistant message in chat form: tau2's calls as Chat Completions calls.
fn assistant(m: &Map<String, Json>) -> Json {
    let calls: Vec<Json> = m
        .get("tool_calls")
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|c| {
            let name = c.get("name").and_then(Json::as_str).unwrap_or("");
            chat_call(c.get("id"), name, c.get("arguments").unwrap_or(&Json::Null))
        })
        .collect();
    let mut out = json!({
        "role": "assistant",
        "content": m.get("content").cloned().unwrap_or(Json::Null),
    });
    if !calls.is_empty() {
        out["tool_calls"] = Json::Array(calls);
    }
    out
}

/// tau2 counts a simulation as passed when its reward is 1.
const PASS_REWARD: f64 = 1.0 - 1e-6;

fn task_result(obj: &Map<String, Json>) -> Option<TaskResult> {
    let reward = obj.get("reward_info")?.get("reward")?.as_f64()?;
    Some(TaskResult {
        success: Some(reward >= PASS_REWARD),
        score: Some(reward),
        basis: "reward_info.reward".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            file: "results.json".into(),
            line: 1,
        }
    }

    #[test]
    fn one_trace_per_simulation_and_the_users_calls_are_not_the_agents() {
        let doc = json!({"info": {}, "tasks": [], "simulations": [
            {"task_id": "7", "trial": 1, "reward_info": {"reward": 1.0}, "messages": [
                {"role": "assistant", "content": "Hi, how can I help?", "turn_idx": 0,
                 "usage": {"prompt_tokens": 100, "completion_tokens": 9}, "generation_time_seconds": 0.5},
                {"role": "user", "content": "Reboot my phone", "tool_calls": [
                    {"id": "u1", "name": "reboot_device", "arguments": {}, "requestor": "user"}]},
                {"role": "tool", "id": "u1", "content": "ok", "requestor": "user"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "name": "get_line", "arguments": {"phone": "555"}, "requestor": "assistant"}]},
                {"role": "tool", "id": "c1", "content": "{\"line\": 3}", "requestor": "assistant"},
                {"role": "assistant", "content": "Done."}
            ]},
            {"task_id": "7", "trial": 2, "reward_info": {"reward": 0.0}, "messages": [
                {"role": "assistant", "content": "Hello."}]},
            "not a simulation"
        ]});
        let (traces, problems) = from_results(doc.as_object().unwrap(), &origin()).unwrap();
        assert_eq!(traces.len(), 2);
        assert_eq!(
            problems,
            ["tau2-bench results: simulation 2 is not an object"]
        );
        let t = &traces[0];
        assert_eq!(&*t.trace_id, "7#1");
        assert_eq!(t.attempts.len(), 3);
        let call = &t.attempts[1].tool_calls.as_ref().unwrap()[0];
        assert_eq!(call["function"]["name"], "get_line");
        assert_eq!(t.attempts[1].tool_results[0].result, "{\"line\": 3}");
        assert_eq!(t.attempts[0].usage.unwrap().input_tokens, Some(100));
        assert_eq!(t.attempts[0].duration_s, Some(0.5));
        assert_eq!(t.attempts[1].duration_s, None);
        let result = t.attempts[0].task_result.as_ref().unwrap();
        assert_eq!((result.success, result.score), (Some(true), Some(1.0)));
        assert!(t.attempts[1].task_result.is_none());
        // Every message accounted for: 3 assistant turns, 1 user turn, 1
        // agent tool result read; the user's tool result counted.
        assert_eq!(t.not_attempts, [(USER_TOOL_RESULT.to_string(), 1)]);
        let failed = traces[1].attempts[0].task_result.as_ref().unwrap();
        assert_eq!(failed.success, Some(false));
    }

    #[test]
    fn results_are_recognised_by_their_keys() {
        assert!(is_results(
            json!({"info": {}, "simulations": []}).as_object().unwrap()
        ));
        assert!(!is_results(json!({"simulations": []}).as_object().unwrap()));
    }
}
