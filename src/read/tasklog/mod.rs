//! MiroThinker / MiroFlow task logs (`logs/task_<id>_<time>.json`, written
//! by upstream's `TaskLog.to_json`) → one trace and its recorded view.
//!
//! The surviving turns come from `main_agent_message_history` and
//! `sub_agent_message_history_sessions` (each `{"system_prompt",
//! "message_history"}`, or a bare message list in older logs). The recorded
//! view comes from `step_logs`: the error-correction events, and a per-session
//! timeline of LLM calls that is aligned with the surviving turns, so that
//! each survivor knows its turn and the rollback streak before it, and so that
//! the tool results merged into one user message can be split per call.

pub mod recorded;

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use crate::model::{agent_of_session, Attempt, Origin, ToolResult, Trace};
use recorded::{RecordedEvent, RecordedTrace, SurvivorContext};

/// Upstream's cap on a tool result fed back to the model (`TOOL_RESULT_MAX_LENGTH`).
const TOOL_RESULT_MAX_CHARS: usize = 100_000;

/// Why a task log could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskLogError {
    #[error("{session}: the message history is {found}, not a list")]
    BadHistory {
        session: String,
        found: &'static str,
    },
    #[error("\"sub_agent_message_history_sessions\" is not an object")]
    BadSessions,
    #[error("\"step_logs\" is not a list")]
    BadStepLogs,
    #[error("{session}: {source}")]
    Chat { session: String, source: ChatError },
}

/// One session's history as logged.
struct SessionHistory<'a> {
    id: String,
    system_prompt: Option<String>,
    messages: &'a [Json],
}

/// Converts a task-log document into its trace. The trace id is the log's
/// `task_id` (the file name when empty); every attempt's origin is the
/// document's first line.
pub fn from_document(doc: &Map<String, Json>, origin: &Origin) -> Result<Trace, TaskLogError> {
    let trace_id = match doc.get("task_id") {
        Some(Json::String(s)) if !s.is_empty() => s.clone(),
        Some(n @ Json::Number(_)) => n.to_string(),
        _ => origin.file.to_string(),
    };
    let mut sessions = Vec::new();
    if let Some(main) = history("main", doc.get("main_agent_message_history"))? {
        sessions.push(main);
    }
    match doc.get("sub_agent_message_history_sessions") {
        None | Some(Json::Null) => {}
        Some(Json::Object(subs)) => {
            let mut ids: Vec<&String> = subs.keys().collect();
            ids.sort_by_key(|id| session_order(id));
            for id in ids {
                if let Some(h) = history(id, subs.get(id.as_str()))? {
                    sessions.push(h);
                }
            }
        }
        Some(_) => return Err(TaskLogError::BadSessions),
    }

    let mut attempts: Vec<Attempt> = Vec::new();
    let mut ranges: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    for h in sessions {
        let agent = agent_of_session(&h.id);
        let converted = chat::convert_messages(
            h.messages,
            SessionTarget {
                trace_id: &trace_id,
                session: &h.id,
                agent: &agent,
                origin,
                system_prompt: h.system_prompt,
            },
        )
        .map_err(|source| TaskLogError::Chat {
            session: h.id.clone(),
            source,
        })?;
        let start = attempts.len();
        attempts.extend(converted);
        ranges.push((h.id, start..attempts.len()));
    }
    if let Some(first) = attempts.iter_mut().find(|a| &*a.session == "main") {
        first.set_meta(meta(doc));
    }

    let recorded = match doc.get("step_logs") {
        None | Some(Json::Null) => None,
        Some(Json::Array(steps)) => Some(Box::new(recorded_view(steps, &ranges, &mut attempts))),
        Some(_) => return Err(TaskLogError::BadStepLogs),
    };
    Ok(Trace {
        trace_id: trace_id.into(),
        attempts,
        recorded,
    })
}

/// A session's `{"system_prompt", "message_history"}` (or bare list); `None` when empty or absent.
fn history<'a>(
    session: &str,
    value: Option<&'a Json>,
) -> Result<Option<SessionHistory<'a>>, TaskLogError> {
    let bad = |found| TaskLogError::BadHistory {
        session: session.to_string(),
        found,
    };
    let (system_prompt, messages) = match value {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Array(list)) => (None, list.as_slice()),
        Some(Json::Object(obj)) => {
            let messages = match obj.get("message_history") {
                None | Some(Json::Null) => &[][..],
                Some(Json::Array(list)) => list.as_slice(),
                Some(_) => return Err(bad("not a list under \"message_history\"")),
            };
            (
                obj.get("system_prompt")
                    .and_then(Json::as_str)
                    .map(str::to_string),
                messages,
            )
        }
        Some(Json::String(_)) => return Err(bad("a string")),
        Some(_) => return Err(bad("a number or boolean")),
    };
    Ok(Some(SessionHistory {
        id: session.to_string(),
        system_prompt,
        messages,
    }))
}

/// Sorts `agent-browsing_10` after `agent-browsing_9`.
fn session_order(id: &str) -> (String, u64) {
    match id.rsplit_once('_') {
        Some((agent, n)) if n.parse::<u64>().is_ok() => (agent.to_string(), n.parse().unwrap_or(0)),
        _ => (id.to_string(), 0),
    }
}

/// The first main attempt's `meta`: task id, status, model and turn limit from `env_info`.
fn meta(doc: &Map<String, Json>) -> Json {
    let mut meta = Map::new();
    meta.insert("source".into(), Json::from("tasklog"));
    for key in ["task_id", "status"] {
        if let Some(v) = doc.get(key) {
            meta.insert(key.into(), v.clone());
        }
    }
    let env = doc.get("env_info").and_then(Json::as_object);
    if let Some(model) = env
        .and_then(|e| e.get("llm_model_name"))
        .filter(|m| m.is_string())
    {
        meta.insert("model".into(), model.clone());
    }
    if let Some(turns) = env
        .and_then(|e| e.get("main_agent_max_turns"))
        .and_then(Json::as_i64)
    {
        meta.insert("max_turns".into(), Json::from(turns));
    }
    Json::Object(meta)
}

/// A tool call as the step log reports it.
#[derive(Debug, Clone, PartialEq)]
enum LoggedCall {
    /// `Tool {tool} completed in {n}ms\nResult: {result}`.
    Completed { tool: String, result: String },
    /// `Tool {tool} failed to execute: {error}`.
    Failed { tool: String, error: String },
    /// Completed, but the log carries no result text.
    NoResult,
}

/// One LLM call of a session, as the step log shows it.
#[derive(Debug, Default)]
struct LoggedAttempt {
    turn: Option<i64>,
    step: usize,
    rolled_back: bool,
    /// The response was empty: upstream retried, the streak stands.
    llm_failed: bool,
    events: Vec<usize>,
    calls: Vec<LoggedCall>,
}

/// A step name without its icon, split into agent, turn and label.
struct StepName<'a> {
    agent: &'a str,
    turn: Option<i64>,
    label: &'a str,
}

fn split_step_name(name: &str) -> StepName<'_> {
    let name = name.trim_start_matches(|c: char| !c.is_alphanumeric());
    let mut parts = name.split(" | ");
    let agent = parts.next().unwrap_or_default().trim();
    let mut turn = None;
    let mut label = agent;
    for part in parts {
        let part = part.trim();
        if let Some(n) = part.strip_prefix("Turn:") {
            turn = n.trim().parse().ok();
        }
        label = part;
    }
    StepName { agent, turn, label }
}

/// Reads the step log into events and per-session timelines, aligns each
/// session's timeline with its surviving attempts, and splits merged tool
/// results where the log's per-call results fit them exactly.
fn recorded_view(
    steps: &[Json],
    ranges: &[(String, std::ops::Range<usize>)],
    attempts: &mut Vec<Attempt>,
) -> RecordedTrace {
    let mut events: Vec<RecordedEvent> = Vec::new();
    let mut timelines: HashMap<String, Vec<LoggedAttempt>> = HashMap::new();
    let mut llm_open: HashMap<String, bool> = HashMap::new();
    let mut current_sub: Option<String> = None;
    // Sessions whose final summary the log records.
    let mut summarised: HashSet<String> = HashSet::new();
    for (idx, step) in steps.iter().enumerate() {
        let name = step
            .get("step_name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let message = step
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let StepName { agent, turn, label } = split_step_name(name);
        let is_sub = agent.starts_with("agent-");
        if is_sub && label == "Session Start" {
            let from_meta = step.pointer("/metadata/session_id").and_then(Json::as_str);
            let from_message = message
                .strip_prefix("Starting ")
                .and_then(|m| m.split_once(" for subtask"))
                .map(|(sid, _)| sid);
            current_sub = Some(from_meta.or(from_message).unwrap_or(agent).to_string());
            continue;
        }
        if is_sub && label == "Session End" {
            current_sub = None;
            continue;
        }
        let session = if agent.eq_ignore_ascii_case("main agent") {
            "main".to_string()
        } else if is_sub {
            current_sub.clone().unwrap_or_else(|| agent.to_string())
        } else {
            // Not an agent loop's step; still count any event it records.
            events.extend(RecordedEvent::from_step(agent, label, turn, message, idx));
            continue;
        };
        let timeline = timelines.entry(session.clone()).or_default();
        let open = llm_open.entry(session.clone()).or_insert(false);
        match label {
            "LLM Call" if turn.is_some() && message == "completed successfully" => {
                timeline.push(LoggedAttempt {
                    turn,
                    step: idx,
                    ..LoggedAttempt::default()
                });
                *open = true;
            }
            "LLM Call"
                if *open
                    && (message.starts_with("No valid response from LLM")
                        || message == "LLM call failed") =>
            {
                if let Some(last) = timeline.last_mut() {
                    last.llm_failed = true;
                }
            }
            "LLM Call Failed" | "LLM Call ERROR" => *open = false,
            "Final Summary" => {
                summarised.insert(session.clone());
            }
            "Tool Call" => {
                if let (Some(call), Some(last)) = (logged_call(message), timeline.last_mut()) {
                    last.calls.push(call);
                }
            }
            _ => {
                if let Some(ev) = RecordedEvent::from_step(&session, label, turn, message, idx) {
                    if let Some(last) = timeline.last_mut() {
                        last.events.push(events.len());
                        if ev.kind == recorded::EventKind::Rollback {
                            last.rolled_back = true;
                        }
                    }
                    events.push(ev);
                }
            }
        }
    }

    let mut survivors = vec![None; attempts.len()];
    let mut unaligned_sessions = Vec::new();
    // Summary answers whose prompt was not recognised as one.
    let mut summaries = Vec::new();
    for (session, range) in ranges {
        let timeline = timelines
            .get(session.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut n = range.len();
        let mut matched = align(timeline, n);
        if matched.is_none() && n > 0 && summarised.contains(session.as_str()) {
            matched = align(timeline, n - 1);
            if matched.is_some() {
                n -= 1;
                summaries.push(range.start + n);
            }
        }
        match matched {
            Some(matched) => {
                for (offset, (logged, streak_before)) in matched.into_iter().enumerate() {
                    let pos = range.start + offset;
                    survivors[pos] = Some(SurvivorContext {
                        turn: logged.turn,
                        streak_before,
                        step: logged.step,
                        events: logged.events.clone(),
                    });
                    refine_results(&mut attempts[pos], &logged.calls);
                }
            }
            None if n > 0 => unaligned_sessions.push(session.clone()),
            None => {}
        }
    }
    for pos in summaries.into_iter().rev() {
        attempts.remove(pos);
        survivors.remove(pos);
    }
    RecordedTrace {
        events,
        survivors,
        unaligned_sessions,
    }
}

/// The logged attempts that survived, each with the rollback streak before
/// it, when their number matches the history's `n` attempts. An empty
/// response that upstream logged as a success may or may not have reached
/// the history, so both readings are tried.
fn align(timeline: &[LoggedAttempt], n: usize) -> Option<Vec<(&LoggedAttempt, u32)>> {
    let mut with_streak = Vec::new();
    let mut streak = 0u32;
    for t in timeline {
        if t.rolled_back {
            streak += 1;
        } else {
            with_streak.push((t, streak));
            if !t.llm_failed {
                streak = 0;
            }
        }
    }
    if with_streak.len() == n {
        return Some(with_streak);
    }
    let without_failed: Vec<_> = with_streak
        .into_iter()
        .filter(|(t, _)| !t.llm_failed)
        .collect();
    (without_failed.len() == n).then_some(without_failed)
}

fn logged_call(message: &str) -> Option<LoggedCall> {
    let rest = message.strip_prefix("Tool ")?;
    if let Some((tool, rest)) = rest.split_once(" completed in ") {
        return Some(match rest.split_once("ms\nResult: ") {
            Some((_, result)) => LoggedCall::Completed {
                tool: tool.to_string(),
                result: result.to_string(),
            },
            None => LoggedCall::NoResult,
        });
    }
    let (tool, error) = rest.split_once(" failed to execute: ")?;
    Some(LoggedCall::Failed {
        tool: tool.to_string(),
        error: error.to_string(),
    })
}

/// Replaces an attempt's single merged result (upstream joins the calls'
/// results with `\n` into one user message) by per-call results, when the
/// step log's results rebuild the merged text exactly.
fn refine_results(attempt: &mut Attempt, calls: &[LoggedCall]) {
    if calls.is_empty() {
        return;
    }
    let [merged] = attempt.tool_results.as_slice() else {
        return;
    };
    if merged.error.is_some() {
        return;
    }
    if let Some(split) = split_results(&merged.result, calls) {
        attempt.tool_results = split;
    }
}

fn split_results(merged: &str, calls: &[LoggedCall]) -> Option<Vec<ToolResult>> {
    let mut rest = merged;
    let mut out = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix('\n')?;
        }
        let (result, after) = match call {
            LoggedCall::NoResult => return None,
            LoggedCall::Completed { tool, result } => match strip_result(rest, result) {
                Some(after) => (
                    ToolResult {
                        result: result.clone(),
                        error: None,
                    },
                    after,
                ),
                None => {
                    let after = strip_error(rest, tool, result)?;
                    (
                        ToolResult {
                            result: String::new(),
                            error: Some(result.clone()),
                        },
                        after,
                    )
                }
            },
            LoggedCall::Failed { tool, error } => {
                let wrapped = format!("Tool call failed: {error}");
                match strip_error(rest, tool, error) {
                    Some(after) => (
                        ToolResult {
                            result: String::new(),
                            error: Some(error.clone()),
                        },
                        after,
                    ),
                    None => (
                        ToolResult {
                            result: String::new(),
                            error: Some(wrapped.clone()),
                        },
                        strip_error(rest, tool, &wrapped)?,
                    ),
                }
            }
        };
        out.push(result);
        rest = after;
    }
    rest.is_empty().then_some(out)
}

/// `text` after the result as fed to the model (cut at upstream's cap).
fn strip_result<'a>(text: &'a str, result: &str) -> Option<&'a str> {
    match result.char_indices().nth(TOOL_RESULT_MAX_CHARS) {
        None => text.strip_prefix(result),
        Some((cut, _)) => text
            .strip_prefix(&result[..cut])?
            .strip_prefix("\n... [Result truncated]"),
    }
}

/// `text` after `Tool call to {tool} on {server} failed. Error: {error}`.
fn strip_error<'a>(text: &'a str, tool: &str, error: &str) -> Option<&'a str> {
    let rest = text
        .strip_prefix("Tool call to ")?
        .strip_prefix(tool)?
        .strip_prefix(" on ")?;
    let (_, rest) = rest.split_once(" failed. Error: ")?;
    rest.strip_prefix(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> Origin {
        Origin {
            file: "task_1.json".into(),
            line: 1,
        }
    }

    fn step(name: &str, message: &str) -> Json {
        json!({"step_name": name, "message": message, "timestamp": "2025-01-01 00:00:00", "info_level": "info", "metadata": {}})
    }

    #[test]
    fn step_names_lose_icons_and_split() {
        let s = split_step_name("👑 Main Agent | Turn: 3 | Rollback");
        assert_eq!(
            (s.agent, s.turn, s.label),
            ("Main Agent", Some(3), "Rollback")
        );
        let s = split_step_name("▶️ agent-browsing | Too Many Rollbacks");
        assert_eq!(
            (s.agent, s.turn, s.label),
            ("agent-browsing", None, "Too Many Rollbacks")
        );
    }

    #[test]
    fn merged_results_split_when_the_log_rebuilds_them() {
        let calls = vec![
            LoggedCall::Completed {
                tool: "google_search".into(),
                result: "{\"organic\": [1]}".into(),
            },
            LoggedCall::Completed {
                tool: "scrape".into(),
                result: "Error executing tool scrape: boom".into(),
            },
            LoggedCall::Failed {
                tool: "python".into(),
                error: "timeout".into(),
            },
        ];
        let merged = "{\"organic\": [1]}\nTool call to scrape on tool-s failed. Error: Error executing tool scrape: boom\nTool call to python on tool-p failed. Error: timeout";
        let split = split_results(merged, &calls).unwrap();
        assert_eq!(split[0].result, "{\"organic\": [1]}");
        assert_eq!(
            split[1].error.as_deref(),
            Some("Error executing tool scrape: boom")
        );
        assert_eq!(split[2].effective_text(), "timeout");
        assert!(split_results("something else", &calls).is_none());
    }

    #[test]
    fn a_minimal_log_reads_with_its_events() {
        let doc = json!({
            "status": "success", "task_id": "t1",
            "env_info": {"llm_model_name": "m", "main_agent_max_turns": 20},
            "main_agent_message_history": {"system_prompt": "S", "message_history": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "a1"},
                {"role": "user", "content": "r1"},
                {"role": "assistant", "content": "a2"},
            ]},
            "sub_agent_message_history_sessions": {},
            "step_logs": [
                step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
                step("👑 Main Agent | Turn: 0 | Rollback", "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5, Total attempts: 1/220"),
                step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
                step("👑 Main Agent | Turn: 1 | Recovery", "Successfully recovered after 1 consecutive rollbacks"),
                step("🧠 Main agent | Turn: 2 | LLM Call", "completed successfully"),
            ],
        });
        let t = from_document(doc.as_object().unwrap(), &origin()).unwrap();
        assert_eq!(&*t.trace_id, "t1");
        assert_eq!(t.attempts.len(), 2);
        assert_eq!(t.attempts[0].max_turns, Some(20));
        let rec = t.recorded.unwrap();
        assert_eq!(rec.counts().rollback_reasons.get("format_error"), Some(&1));
        assert_eq!(rec.counts().recoveries, 1);
        let first = rec.survivors[0].as_ref().unwrap();
        assert_eq!((first.turn, first.streak_before), (Some(1), 1));
        assert_eq!(rec.survivors[1].as_ref().unwrap().streak_before, 0);
        assert!(rec.unaligned_sessions.is_empty());
    }

    #[test]
    fn bad_histories_are_errors() {
        let doc = json!({"task_id": "x", "main_agent_message_history": "oops", "step_logs": []});
        let err = from_document(doc.as_object().unwrap(), &origin()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "main: the message history is a string, not a list"
        );
        let doc = json!({"main_agent_message_history": [{"role": "wizard"}]});
        assert!(matches!(
            from_document(doc.as_object().unwrap(), &origin()),
            Err(TaskLogError::Chat { .. })
        ));
    }
}
