//! Reading ATIF (Harbor's Agent Trajectory Interchange Format, RFC 0001)
//! into attempts; the writer is `mirotrace::export::atif` (in the CLI crate).
//!
//! Each `agent` step is an attempt: its `message` is the content
//! (or, when a converter kept the raw, unparsed tool-call text in the step's
//! `extra`, that text), its `tool_calls` become Chat Completions calls with
//! the arguments object serialised, and `observation.results` matched by
//! `source_call_id` are its tool results. `system` steps set the next
//! attempt's system prompt; a `user` step right after an agent step without
//! an observation carries that step's results (the chat-transcript habit).
//!
//! Our own export keeps the exact recorded attempt under
//! `extra.mirotrace.attempt`; it is read back as written, so an exported
//! trace replays to the same verdicts. A foreign trajectory's agent steps
//! are read as a native-tool harness's ([`Attempt::native_tools`]); our own
//! export says which of its attempts were (`extra.mirotrace.native_tools`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use super::chat::content_text;
use super::native;
use crate::model::{agent_of_session, Attempt, Origin, ToolResult, Trace};
use crate::pyjson;

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
        _ => super::attribution::unnamed(origin),
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
                        failed: false,
                    }];
                }
            }
            "agent" => {
                let attempt = match ours.and_then(|m| m.get("attempt")) {
                    Some(exact) => {
                        let mut a = exact_attempt(exact, &trace_id, origin, index)?;
                        a.native_tools = ours
                            .and_then(|m| m.get("native_tools"))
                            .and_then(Json::as_bool)
                            .unwrap_or(false);
                        a
                    }
                    None => agent_step(obj, &trace_id, session, origin, index)?,
                };
                let mut attempt = attempt;
                // What a task log recorded about the attempt, as we exported it.
                attempt.recorded = ours
                    .and_then(|m| m.get("recorded"))
                    .and_then(|r| serde_json::from_value(r.clone()).ok())
                    .map(Arc::new);
                // A system step belongs to the next agent step of its session
                // and is used up by it, even when that step is our exact
                // attempt carrying the prompt itself: left pending, it would
                // set the prompt again on a later attempt of the session and
                // undo a sub-agent's prompt (the mapping is process-global).
                let pending = system.remove(&*attempt.session);
                if attempt.system_prompt.is_none() {
                    attempt.system_prompt = pending.map(Into::into);
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
    let mut trace = Trace::new(trace_id, attempts);
    // `agent.model_name` is the run's model; a step's `model_name` its own.
    trace.model = default_model.map(Into::into);
    Ok(trace)
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
    let model = obj.get("model_name").and_then(Json::as_str);
    let mut attempt = Attempt {
        content,
        tool_calls,
        tool_results: match_results(&ids, results),
        // A foreign trajectory's agent called its tools natively.
        native_tools: true,
        usage: obj.get("metrics").and_then(super::usage::of),
        ..Attempt::blank(
            origin.clone(),
            trace_id.into(),
            session.into(),
            agent_of_session(session).into(),
        )
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
    let positional = |r: &&Json| source(r).is_none_or(|s| !ids.contains(&Some(s.as_str())));
    let mut unmatched = results.iter().filter(positional);
    let mut out: Vec<ToolResult> = ids
        .iter()
        .map(|id| {
            let found = id.and_then(|id| results.iter().find(|r| source(r).as_deref() == Some(id)));
            let r = found.or_else(|| unmatched.next());
            ToolResult {
                result: r.map(text).unwrap_or_default(),
                error: None,
                failed: false,
            }
        })
        .collect();
    out.extend(unmatched.map(|r| ToolResult {
        result: text(r),
        error: None,
        failed: false,
    }));
    out
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
        // The run's model; its steps name none of their own.
        assert_eq!(t.model.as_deref(), Some("m"));
        assert_eq!(a.model, None);
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
