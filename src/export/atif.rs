//! Writing replayed traces as ATIF trajectories (Harbor's Agent Trajectory
//! Interchange Format, RFC 0001): standard ATIF a viewer can show (message,
//! parsed tool calls, observations, the replay's verdict), plus the exact
//! recorded attempt under `extra.mirotrace.attempt`, so that reading our own
//! export back ([`crate::read::atif`]) replays to the same verdicts.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{json, Map, Value as Json};

use crate::model::{Attempt, Finish, Trace};
use crate::replay::Verdict;

/// The ATIF version written.
pub const SCHEMA_VERSION: &str = "ATIF-v1.4";

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
    if a.native_tools {
        ours["native_tools"] = json!(true);
    }
    // What a task log recorded about the attempt (the reader takes it back).
    if let Some(rec) = &a.recorded {
        ours["recorded"] = serde_json::to_value(rec.as_ref()).unwrap_or(Json::Null);
    }
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

/// The attempt as a native line without `trace_id` (what the reader takes back as is).
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
