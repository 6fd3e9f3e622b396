//! ATIF (Harbor's Agent Trajectory Interchange Format, RFC 0001) ↔ attempts.
//!
//! Reading: each `agent` step is an attempt: its `message` is the content
//! (or, when a converter kept the raw, unparsed tool-call text in the step's
//! `extra`, that text), its `tool_calls` become Chat Completions calls with
//! the arguments object serialised, and `observation.results` matched by
//! `source_call_id` are its tool results. `system` steps set the next
//! attempt's system prompt; a `user` step right after an agent step without
//! an observation carries that step's results (the chat-transcript habit).
//!
//! Writing ([`to_document`]): standard ATIF a viewer can show (message, parsed
//! tool calls, observations, the replay's verdict), plus the exact recorded
//! attempt under `extra.mirotrace`, so that reading our own export back
//! replays to the same verdicts.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{json, Map, Value as Json};

use super::chat::content_text;
use super::native;
use super::tasklog::recorded::RecordedTrace;
use crate::model::{agent_of_session, Attempt, Finish, Origin, ToolResult, Trace};
use crate::pyjson;
use crate::replay::Verdict;

/// The ATIF version written.
pub const SCHEMA_VERSION: &str = "ATIF-v1.4";

/// Keys under a step's `extra` where converters keep the raw model output.
const RAW_CONTENT_KEYS: [&str; 6] = [
    "raw_content",
    "raw_response",
    "raw_message",
    "raw_text",
    "raw_output",
    "raw",
];

/// Why a trajectory could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtifError {
    #[error("\"steps\" is missing or not a list")]
    NoSteps,
    #[error("step {index} is not an object")]
    StepNotObject { index: usize },
    #[error("step {index} has unknown source {found:?}")]
    UnknownSource { index: usize, found: String },
    #[error("step {index}: {reason}")]
    BadStep { index: usize, reason: String },
}

/// Converts one trajectory into its trace. The trace id is `session_id`.
pub fn from_document(doc: &Map<String, Json>, origin: &Origin) -> Result<Trace, AtifError> {
    let trace_id = match doc.get("session_id") {
        Some(Json::String(s)) => s.clone(),
        Some(n @ Json::Number(_)) => n.to_string(),
        _ => origin.to_string(),
    };
    let steps = doc
        .get("steps")
        .and_then(Json::as_array)
        .ok_or(AtifError::NoSteps)?;
    let default_model = doc
        .get("agent")
        .and_then(|a| a.get("model_name"))
        .and_then(Json::as_str);
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut positions: Vec<Option<u64>> = Vec::new();
    let mut system: HashMap<String, String> = HashMap::new();
    // The attempt an immediately following user step may give results to.
    let mut awaiting_results: Option<usize> = None;
    for (index, step) in steps.iter().enumerate() {
        let obj = step.as_object().ok_or(AtifError::StepNotObject { index })?;
        let ours = obj
            .get("extra")
            .and_then(|e| e.get("mirotrace"))
            .and_then(Json::as_object);
        let session = ours
            .and_then(|m| m.get("session"))
            .and_then(Json::as_str)
            .unwrap_or("main");
        let message = || {
            content_text(obj.get("message"), index).map_err(|e| AtifError::BadStep {
                index,
                reason: e.to_string(),
            })
        };
        let source = obj.get("source").and_then(Json::as_str).unwrap_or_default();
        match source {
            "system" => {
                system.insert(session.to_string(), message()?);
                awaiting_results = None;
            }
            "user" => {
                let text = message()?;
                if let Some(a) = awaiting_results.take().and_then(|i| attempts.get_mut(i)) {
                    a.tool_results = vec![ToolResult {
                        result: text,
                        error: None,
                    }];
                }
            }
            "agent" => {
                let attempt = match ours.and_then(|m| m.get("attempt")) {
                    Some(exact) => exact_attempt(exact, &trace_id, origin, index)?,
                    None => agent_step(obj, &trace_id, session, origin, index, default_model)?,
                };
                let mut attempt = attempt;
                if attempt.system_prompt.is_none() {
                    attempt.system_prompt = system.remove(&*attempt.session).map(Into::into);
                }
                let has_observation = obj.get("observation").is_some_and(|o| !o.is_null());
                awaiting_results =
                    (!has_observation && attempt.tool_results.is_empty()).then_some(attempts.len());
                positions.push(ours.and_then(|m| m.get("position")).and_then(Json::as_u64));
                attempts.push(attempt);
            }
            other => {
                return Err(AtifError::UnknownSource {
                    index,
                    found: other.to_string(),
                })
            }
        }
    }
    // Our export writes steps in execution order; restore the trace's order.
    if positions.iter().all(Option::is_some) {
        let mut order: Vec<(u64, Attempt)> =
            positions.into_iter().flatten().zip(attempts).collect();
        order.sort_by_key(|(p, _)| *p);
        attempts = order.into_iter().map(|(_, a)| a).collect();
    }
    let recorded = doc
        .get("extra")
        .and_then(|e| e.pointer("/mirotrace/recorded"))
        .and_then(|r| serde_json::from_value::<RecordedTrace>(r.clone()).ok())
        .filter(|r| r.survivors.len() == attempts.len())
        .map(Box::new);
    Ok(Trace {
        trace_id: trace_id.into(),
        attempts,
        recorded,
    })
}

/// An attempt written by [`to_document`]: the native line, exactly.
fn exact_attempt(
    exact: &Json,
    trace_id: &str,
    origin: &Origin,
    index: usize,
) -> Result<Attempt, AtifError> {
    let mut line = exact
        .as_object()
        .cloned()
        .ok_or_else(|| AtifError::BadStep {
            index,
            reason: "extra.mirotrace.attempt is not an object".into(),
        })?;
    line.insert("trace_id".into(), Json::from(trace_id));
    let text = serde_json::to_string(&line).map_err(|e| AtifError::BadStep {
        index,
        reason: e.to_string(),
    })?;
    native::parse_line(&text, origin.clone()).map_err(|e| AtifError::BadStep {
        index,
        reason: e.to_string(),
    })
}

/// A foreign agent step.
fn agent_step(
    obj: &Map<String, Json>,
    trace_id: &str,
    session: &str,
    origin: &Origin,
    index: usize,
    default_model: Option<&str>,
) -> Result<Attempt, AtifError> {
    let extra = obj.get("extra").and_then(Json::as_object);
    let raw = extra.and_then(|e| {
        RAW_CONTENT_KEYS
            .iter()
            .find_map(|k| e.get(*k).and_then(Json::as_str))
    });
    let content = match raw {
        Some(r) => r.to_string(),
        None => content_text(obj.get("message"), index).map_err(|e| AtifError::BadStep {
            index,
            reason: e.to_string(),
        })?,
    };
    let calls = obj
        .get("tool_calls")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    // Raw MCP text already holds the calls the structured list was parsed from.
    let calls_in_text = raw.is_some_and(|r| r.contains("<use_mcp_tool>"));
    let tool_calls = (!calls.is_empty() && !calls_in_text)
        .then(|| Json::Array(calls.iter().map(chat_call).collect()));
    let results = obj
        .get("observation")
        .and_then(|o| o.get("results"))
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let ids: Vec<Option<&str>> = if tool_calls.is_some() {
        calls
            .iter()
            .map(|c| c.get("tool_call_id").and_then(Json::as_str))
            .collect()
    } else {
        Vec::new()
    };
    let model = obj
        .get("model_name")
        .and_then(Json::as_str)
        .or(default_model);
    let mut attempt = Attempt {
        origin: origin.clone(),
        trace_id: trace_id.into(),
        session: session.into(),
        agent: agent_of_session(session).into(),
        system_prompt: None,
        content,
        tool_calls,
        output: None,
        finish: Finish::Stop,
        llm_error: None,
        tool_results: match_results(&ids, results),
        meta: None,
        model: None,
        max_turns: None,
    };
    if let Some(m) = model {
        attempt.set_meta(json!({ "model": m }));
    }
    Ok(attempt)
}

/// An ATIF tool call as a Chat Completions call (arguments serialised as
/// Python's `json.dumps` would).
fn chat_call(call: &Json) -> Json {
    let id = call.get("tool_call_id").cloned().unwrap_or(Json::Null);
    let name = call.get("function_name").cloned().unwrap_or(Json::Null);
    let arguments = match call.get("arguments") {
        Some(Json::String(s)) => s.clone(),
        Some(v) => pyjson::dump(&pyjson::Value::from_serde(v)),
        None => "{}".to_string(),
    };
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// Observation results in call order: by `source_call_id`, else positional
/// among the results without one.
fn match_results(ids: &[Option<&str>], results: &[Json]) -> Vec<ToolResult> {
    if results.is_empty() {
        return Vec::new();
    }
    let text = |r: &Json| match r.get("content") {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => content_text(Some(other), 0).unwrap_or_else(|_| other.to_string()),
    };
    let source = |r: &Json| {
        r.get("source_call_id")
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    // A result is positional when it names no call id, or one no call has.
    let positional = |r: &&Json| source(r).map_or(true, |s| !ids.contains(&Some(s.as_str())));
    let mut unmatched = results.iter().filter(positional);
    let mut out: Vec<ToolResult> = ids
        .iter()
        .map(|id| {
            let found = id.and_then(|id| results.iter().find(|r| source(r).as_deref() == Some(id)));
            let r = found.or_else(|| unmatched.next());
            ToolResult {
                result: r.map(text).unwrap_or_default(),
                error: None,
            }
        })
        .collect();
    out.extend(unmatched.map(|r| ToolResult {
        result: text(r),
        error: None,
    }));
    out
}

/// A trajectory as written: fields in the RFC's order.
#[derive(Debug, Clone, Serialize)]
pub struct Trajectory {
    pub schema_version: &'static str,
    pub session_id: String,
    pub agent: AgentInfo,
    pub steps: Vec<Step>,
    pub final_metrics: FinalMetrics,
    pub extra: Json,
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentInfo {
    pub name: &'static str,
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FinalMetrics {
    pub total_steps: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub step_id: usize,
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    pub extra: Json,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolCall {
    pub tool_call_id: String,
    pub function_name: String,
    pub arguments: Json,
}

#[derive(Debug, Clone, Serialize)]
pub struct Observation {
    pub results: Vec<ObservationResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ObservationResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_call_id: Option<String>,
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagent_trajectory_ref: Vec<Json>,
}

/// Writes one replayed trace as an ATIF trajectory. Steps are in execution
/// order: a sub-agent session's steps follow the main-agent step that
/// launched it (whose observation refers to the session).
pub fn to_document(trace: &Trace, verdicts: &[Verdict]) -> Trajectory {
    let (order, launched) = execution_order(trace, verdicts);
    let mut steps: Vec<Step> = Vec::with_capacity(order.len() + 4);
    for pos in order {
        let a = &trace.attempts[pos];
        if let Some(prompt) = &a.system_prompt {
            steps.push(Step {
                step_id: steps.len() + 1,
                source: "system",
                model_name: None,
                message: prompt.to_string(),
                tool_calls: Vec::new(),
                observation: None,
                extra: json!({"mirotrace": {"session": a.session}}),
            });
        }
        let sessions = launched.get(&pos).map(Vec::as_slice).unwrap_or_default();
        steps.push(export_step(
            steps.len() + 1,
            pos,
            a,
            verdicts.get(pos),
            sessions,
        ));
    }
    let mut ours = Map::new();
    ours.insert(
        "converted_by".into(),
        json!(concat!("mirotrace ", env!("CARGO_PKG_VERSION"))),
    );
    if let Some(rec) = &trace.recorded {
        ours.insert(
            "recorded_counts".into(),
            serde_json::to_value(rec.counts()).unwrap_or(Json::Null),
        );
        ours.insert(
            "recorded".into(),
            serde_json::to_value(rec.as_ref()).unwrap_or(Json::Null),
        );
    }
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: trace.trace_id.to_string(),
        agent: AgentInfo {
            name: "mirothinker",
            version: "unknown",
            model_name: trace
                .attempts
                .iter()
                .find_map(|a| a.model.as_deref().map(str::to_string)),
        },
        final_metrics: FinalMetrics {
            total_steps: steps.len(),
        },
        steps,
        extra: json!({ "mirotrace": ours }),
    }
}

/// Per launching attempt: (call index, sub-agent session id) of each launch.
type Launches = HashMap<usize, Vec<(usize, String)>>;

/// Attempt positions in execution order: main attempts in order, each
/// sub-agent session right after the main attempt whose executed
/// `agent-*` call launched it; sessions never launched come last. Also
/// returns, per launching attempt, the session ids it launched (in call order).
fn execution_order(trace: &Trace, verdicts: &[Verdict]) -> (Vec<usize>, Launches) {
    let mut by_session: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, a) in trace.attempts.iter().enumerate() {
        by_session.entry(&*a.session).or_default().push(i);
    }
    let mut order = Vec::with_capacity(trace.attempts.len());
    let mut launched: Launches = HashMap::new();
    let mut launches = 0u32;
    for &pos in by_session
        .get("main")
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        order.push(pos);
        let Some(v) = verdicts.get(pos) else { continue };
        for (i, call) in v.calls.iter().enumerate().take(v.executed) {
            if call.server_name.starts_with("agent-") {
                launches += 1;
                let sid = format!("{}_{launches}", call.server_name);
                if let Some(sub) = by_session.get(sid.as_str()) {
                    order.extend_from_slice(sub);
                }
                launched.entry(pos).or_default().push((i, sid));
            }
        }
    }
    let mut placed = vec![false; trace.attempts.len()];
    for &p in &order {
        placed[p] = true;
    }
    order.extend((0..trace.attempts.len()).filter(|&p| !placed[p]));
    (order, launched)
}

fn export_step(
    step_id: usize,
    pos: usize,
    a: &Attempt,
    v: Option<&Verdict>,
    launched: &[(usize, String)],
) -> Step {
    let calls = v.map(|v| v.calls.as_slice()).unwrap_or_default();
    let ids: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| match &c.id {
            Json::String(s) if !s.is_empty() => s.clone(),
            _ => format!("call_{step_id}_{i}"),
        })
        .collect();
    let tool_calls = calls
        .iter()
        .zip(&ids)
        .map(|(c, id)| ToolCall {
            tool_call_id: id.clone(),
            function_name: format!("{}-{}", c.server_name, c.tool_name),
            arguments: match c.arguments.to_serde_lossy() {
                obj @ Json::Object(_) => obj,
                other => json!({ "_value": other }),
            },
        })
        .collect();
    let results: Vec<ObservationResult> = a
        .tool_results
        .iter()
        .enumerate()
        .map(|(i, r)| ObservationResult {
            source_call_id: ids.get(i).cloned(),
            content: if r.result.is_empty() {
                r.error.clone().unwrap_or_default()
            } else {
                r.result.clone()
            },
            subagent_trajectory_ref: launched
                .iter()
                .filter(|(call, _)| *call == i)
                .map(|(_, sid)| json!({ "session_id": sid, "extra": {"inline": true} }))
                .collect(),
        })
        .collect();
    let mut ours = json!({
        "session": a.session,
        "agent": a.agent,
        "position": pos,
        "origin": a.origin.to_string(),
        "attempt": exact_record(a),
    });
    if let Some(v) = v {
        ours["index"] = json!(v.index);
        ours["verdict"] = json!({
            "outcome": v.outcome.name(),
            "reason": v.reason.map(|r| r.name()),
            "turn": v.turn,
            "consecutive_rollbacks": v.consecutive_rollbacks,
            "flags": v.flags.iter().map(|f| f.name()).collect::<Vec<_>>(),
            "executed": v.executed,
        });
    }
    Step {
        step_id,
        source: "agent",
        model_name: a.model.as_deref().map(str::to_string),
        message: a.content.clone(),
        tool_calls,
        observation: (!results.is_empty()).then_some(Observation { results }),
        extra: json!({ "mirotrace": ours }),
    }
}

/// The attempt as a native line without `trace_id` (what [`exact_attempt`] reads back).
fn exact_record(a: &Attempt) -> Json {
    let mut line = Map::new();
    line.insert("session".into(), json!(a.session));
    line.insert("agent".into(), json!(a.agent));
    if let Some(p) = &a.system_prompt {
        line.insert("system_prompt".into(), json!(p));
    }
    line.insert("content".into(), json!(a.content));
    if let Some(t) = &a.tool_calls {
        line.insert("tool_calls".into(), t.clone());
    }
    if let Some(o) = &a.output {
        line.insert("output".into(), o.clone());
    }
    match &a.finish {
        Finish::Stop => {}
        Finish::Length => {
            line.insert("finish_reason".into(), json!("length"));
        }
        Finish::Unsupported(r) => {
            line.insert("finish_reason".into(), json!(r));
        }
    }
    if let Some(e) = &a.llm_error {
        line.insert("llm_error".into(), json!(e));
    }
    if !a.tool_results.is_empty() {
        let results: Vec<Json> = a
            .tool_results
            .iter()
            .map(|r| match &r.error {
                Some(e) => json!({"result": r.result, "error": e}),
                None => json!({ "result": r.result }),
            })
            .collect();
        line.insert("tool_results".into(), Json::Array(results));
    }
    if let Some(m) = &a.meta {
        line.insert("meta".into(), m.clone());
    }
    Json::Object(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            file: "t.json".into(),
            line: 1,
        }
    }

    #[test]
    fn foreign_steps_become_attempts() {
        let doc = json!({
            "schema_version": "ATIF-v1.4", "session_id": "s1",
            "agent": {"name": "x", "version": "1", "model_name": "m"},
            "steps": [
                {"step_id": 1, "source": "system", "message": "SYS"},
                {"step_id": 2, "source": "user", "message": "task"},
                {"step_id": 3, "source": "agent", "message": "searching",
                 "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "tool-google-search-google_search", "arguments": {"q": "x"}},
                    {"tool_call_id": "c2", "function_name": "tool-web-scrape", "arguments": {}}],
                 "observation": {"results": [
                    {"source_call_id": "c2", "content": "page"},
                    {"source_call_id": "c1", "content": "{\"organic\": []}"}]}},
                {"step_id": 4, "source": "agent", "message": "tidy", "extra": {"raw_content": "<use_mcp_tool>…</use_mcp_tool>"},
                 "tool_calls": [{"tool_call_id": "c3", "function_name": "a-b", "arguments": {}}]},
                {"step_id": 5, "source": "user", "message": "mcp result"},
            ]
        });
        let t = from_document(doc.as_object().unwrap(), &origin()).unwrap();
        assert_eq!(&*t.trace_id, "s1");
        let a = &t.attempts[0];
        assert_eq!(a.system_prompt.as_deref(), Some("SYS"));
        assert_eq!(a.model.as_deref(), Some("m"));
        let args = a.tool_calls.as_ref().unwrap()[0]["function"]["arguments"]
            .as_str()
            .unwrap();
        assert_eq!(args, "{\"q\": \"x\"}");
        let results: Vec<&str> = a.tool_results.iter().map(|r| r.result.as_str()).collect();
        assert_eq!(results, ["{\"organic\": []}", "page"]);
        let b = &t.attempts[1];
        assert_eq!(b.content, "<use_mcp_tool>…</use_mcp_tool>");
        assert!(b.tool_calls.is_none());
        assert_eq!(b.tool_results[0].result, "mcp result");
    }

    #[test]
    fn unknown_sources_are_errors() {
        let doc =
            json!({"schema_version": "ATIF-v1.4", "steps": [{"source": "robot", "message": ""}]});
        let err = from_document(doc.as_object().unwrap(), &origin()).unwrap_err();
        assert_eq!(err.to_string(), "step 0 has unknown source \"robot\"");
        let doc = json!({"schema_version": "ATIF-v1.4"});
        assert_eq!(
            from_document(doc.as_object().unwrap(), &origin()).unwrap_err(),
            AtifError::NoSteps
        );
    }
}
