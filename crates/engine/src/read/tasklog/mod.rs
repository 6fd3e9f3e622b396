//! MiroThinker / MiroFlow task logs (`logs/task_<id>_<time>.json`, written
//! by upstream's `TaskLog.to_json`) → one trace holding every attempt of
//! the run.
//!
//! A task log keeps two views of a run. The message histories
//! (`main_agent_message_history`, `sub_agent_message_history_sessions`,
//! each `{"system_prompt", "message_history"}` or a bare message list) hold
//! the turns that survived, with their text; upstream popped every
//! rolled-back turn from them. `step_logs` records every LLM call of every
//! loop, in order, and what became of it ([`step_log`]). The reader walks
//! each session's logged calls and takes the next surviving message for
//! each call that stayed in the history: that attempt is replayed from its
//! text, and carries what the log says of it for the cross-check. Every
//! other call (rolled back, failed, or in a sub-agent whose history was
//! never saved) becomes an attempt without text whose verdict the log
//! decided ([`crate::model::Recorded`]). Attempts come out in the order
//! upstream ran them.
//!
//! Whatever does not fit (unknown steps, steps out of order, a history
//! longer than its log) is reported as a problem and the rest is read.

pub mod calls;
mod cost;
pub mod results;
pub mod salvage;
mod step_log;
mod steps;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::chat::{self, SessionTarget};
use crate::model::{agent_of_session, Attempt, Finish, Origin, Outcome, Trace};
use step_log::{Presence, SessionLog, Timeline};

/// A task log, read.
#[derive(Debug, Clone)]
pub struct TaskLogRead {
    pub trace: Trace,
    /// What did not fit, each with its place in the document
    /// (`step_logs[17]: …`); each counts as a skipped line.
    pub problems: Vec<String>,
}

/// One session's history as logged, converted into attempts.
struct History {
    id: String,
    attempts: Vec<Attempt>,
}

/// Converts a task-log document into its trace. The trace id is the log's
/// `task_id` (the file name when empty); every attempt's origin is the
/// document's first line.
pub fn from_document(doc: &Map<String, Json>, origin: &Origin) -> TaskLogRead {
    let trace_id: Arc<str> = match doc.get("task_id") {
        Some(Json::String(s)) if !s.is_empty() => s.as_str().into(),
        Some(n @ Json::Number(_)) => n.to_string().into(),
        _ => crate::read::attribution::unnamed(origin).into(),
    };
    let mut problems = Vec::new();
    let histories = histories(doc, &trace_id, origin, &mut problems);
    let timeline = match doc.get("step_logs") {
        None | Some(Json::Null) => None,
        Some(Json::Array(steps)) => Some(step_log::read(steps)),
        Some(_) => {
            problems
                .push("\"step_logs\" is not a list; only the message histories are read".into());
            None
        }
    };
    let mut merge = Merge {
        trace_id: trace_id.clone(),
        origin,
        placed: Vec::new(),
        problems,
    };
    // (session, its prompt), in history order: main, then sub-agents in launch order.
    let mut prompts: Vec<(String, Option<Arc<str>>)> = Vec::new();
    let mut by_id: HashMap<String, Vec<Attempt>> = HashMap::new();
    let mut history_order = Vec::new();
    for mut h in histories {
        let prompt = h.attempts.first_mut().and_then(|a| a.system_prompt.take());
        prompts.push((h.id.clone(), prompt));
        history_order.push(h.id.clone());
        by_id.insert(h.id, h.attempts);
    }
    let Timeline { sessions, problems } = timeline.unwrap_or_default();
    let logged_any = !sessions.is_empty();
    merge
        .problems
        .extend(problems.into_iter().map(|p| match p.step {
            Some(i) => format!("step_logs[{i}]: {}", p.message),
            None => p.message,
        }));
    for log in &sessions {
        let history = by_id.remove(&log.id);
        merge.session(&log.id, Some(log), history);
    }
    for id in history_order {
        if let Some(history) = by_id.remove(&id) {
            if logged_any && !history.is_empty() {
                merge.problems.push(format!(
                    "{id}: in the message history but not in step_logs; its turns are replayed without the log"
                ));
            }
            merge.session(&id, None, Some(history));
        }
    }
    let Merge {
        mut placed,
        problems,
        ..
    } = merge;
    placed.sort_by_key(|(key, seq, _)| (*key, *seq));
    let mut attempts: Vec<Attempt> = placed.into_iter().map(|(_, _, a)| a).collect();
    // A sub-agent whose history was never saved (it crashed) had the prompt
    // its agent gets every time: the same tools, the same instructions.
    for log in &sessions {
        if prompts.iter().any(|(id, p)| *id == log.id && p.is_some()) {
            continue;
        }
        let agent = agent_of_session(&log.id);
        let borrowed = prompts
            .iter()
            .find(|(id, p)| p.is_some() && agent_of_session(id) == agent)
            .and_then(|(_, p)| p.clone());
        if borrowed.is_some() {
            prompts.retain(|(id, _)| *id != log.id);
            prompts.push((log.id.clone(), borrowed));
        }
    }
    // Each session's prompt goes on its first attempt: upstream sets the
    // tool→server mapping when the session starts.
    for (id, prompt) in prompts {
        if let Some(first) = attempts.iter_mut().find(|a| *a.session == *id) {
            first.system_prompt = prompt;
        }
    }
    if let Some(first) = attempts.iter_mut().find(|a| &*a.session == "main") {
        first.set_meta(meta(doc));
    }
    cost::durations(doc, &mut attempts);
    if let Some(first) = attempts.first_mut() {
        first.task_result = cost::result(doc);
    }
    let mut trace = Trace::new(trace_id, attempts);
    // `env_info.llm_model_name` is every attempt's model: a task log's
    // messages do not name theirs.
    trace.model = run_model(doc).and_then(Json::as_str).map(Into::into);
    trace.call_log = Some(Arc::new(calls::call_log(doc)));
    TaskLogRead { trace, problems }
}

/// The model the run names: `env_info.llm_model_name`, when a string.
fn run_model(doc: &Map<String, Json>) -> Option<&Json> {
    doc.get("env_info")
        .and_then(Json::as_object)
        .and_then(|e| e.get("llm_model_name"))
        .filter(|m| m.is_string())
}

/// The message histories, main first, then the sub-agents in launch order.
/// A history that cannot be read is a problem, and that session is read
/// from the step log alone.
fn histories(
    doc: &Map<String, Json>,
    trace_id: &str,
    origin: &Origin,
    problems: &mut Vec<String>,
) -> Vec<History> {
    let mut raw: Vec<(String, &Json)> = Vec::new();
    if let Some(main) = doc.get("main_agent_message_history") {
        raw.push(("main".into(), main));
    }
    match doc.get("sub_agent_message_history_sessions") {
        None | Some(Json::Null) => {}
        Some(Json::Object(subs)) => {
            let mut ids: Vec<&String> = subs.keys().collect();
            ids.sort_by_key(|id| session_order(id));
            raw.extend(ids.into_iter().map(|id| (id.clone(), &subs[id.as_str()])));
        }
        Some(_) => problems.push(
            "\"sub_agent_message_history_sessions\" is not an object; sub-agents are read from step_logs alone".into(),
        ),
    }
    let mut out = Vec::new();
    for (id, value) in raw {
        let (system_prompt, messages) = match messages_of(value) {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(found) => {
                problems.push(format!(
                    "{id}: the message history is {found}, not a list; read from step_logs alone"
                ));
                continue;
            }
        };
        let agent = agent_of_session(&id);
        let converted = chat::convert_messages(
            messages,
            SessionTarget {
                trace_id,
                session: &id,
                agent: &agent,
                origin,
                system_prompt,
            },
        );
        match converted {
            Ok(attempts) => out.push(History { id, attempts }),
            Err(e) => problems.push(format!(
                "{id}: message history: {e}; read from step_logs alone"
            )),
        }
    }
    out
}

/// A session's `{"system_prompt", "message_history"}` (or bare list);
/// `None` when absent, else what it is instead of a list.
#[allow(clippy::type_complexity)]
fn messages_of(value: &Json) -> Result<Option<(Option<String>, &[Json])>, &'static str> {
    match value {
        Json::Null => Ok(None),
        Json::Array(list) => Ok(Some((None, list.as_slice()))),
        Json::Object(obj) => {
            let messages = match obj.get("message_history") {
                None | Some(Json::Null) => &[][..],
                Some(Json::Array(list)) => list.as_slice(),
                Some(_) => return Err("not a list under \"message_history\""),
            };
            let prompt = obj
                .get("system_prompt")
                .and_then(Json::as_str)
                .map(str::to_string);
            Ok(Some((prompt, messages)))
        }
        Json::String(_) => Err("a string"),
        _ => Err("a number or boolean"),
    }
}

/// Sorts `agent-browsing_10` after `agent-browsing_9`.
fn session_order(id: &str) -> (String, u64) {
    match id.rsplit_once('_') {
        Some((agent, n)) if n.parse::<u64>().is_ok() => (agent.to_string(), n.parse().unwrap_or(0)),
        _ => (id.to_string(), 0),
    }
}

/// Places every session's attempts, each under the position of its LLM
/// call in `step_logs`.
struct Merge<'a> {
    trace_id: Arc<str>,
    origin: &'a Origin,
    /// (step position, tie-breaker, attempt)
    placed: Vec<(usize, usize, Attempt)>,
    problems: Vec<String>,
}

impl Merge<'_> {
    fn place(&mut self, key: usize, attempt: Attempt) {
        let seq = self.placed.len();
        self.placed.push((key, seq, attempt));
    }

    fn session(&mut self, id: &str, log: Option<&SessionLog>, history: Option<Vec<Attempt>>) {
        let mut history = history.unwrap_or_default().into_iter().peekable();
        let Some(log) = log else {
            for a in history {
                self.place(usize::MAX, a);
            }
            return;
        };
        let session: Arc<str> = id.into();
        let agent: Arc<str> = agent_of_session(id).into();
        let mut last_key = usize::MAX;
        for turn in &log.turns {
            last_key = turn.rec.step;
            let in_history = match turn.presence {
                Presence::Absent => false,
                Presence::Present | Presence::Maybe => history.peek().is_some(),
                Presence::EmptyText => history.peek().is_some_and(|a| {
                    a.content.is_empty() && a.tool_calls.is_none() && a.output.is_none()
                }),
            };
            let survivor = if in_history { history.next() } else { None };
            if let Some(mut a) = survivor {
                results::refine(&mut a, &turn.rec.calls);
                // The history keeps no finish_reason; the log shows the client
                // stopped the loop on a length-truncated answer.
                if turn.rec.outcome == Some(Outcome::ContextExceeded) && a.finish == Finish::Stop {
                    a.finish = Finish::Length;
                }
                a.recorded = Some(Arc::new(turn.rec.clone()));
                self.place(turn.rec.step, a);
                continue;
            }
            let what = turn_name(id, turn);
            let Some(outcome) = turn.rec.outcome else {
                self.problems.push(format!(
                    "step_logs[{}]: {what}: neither the log nor the history says what became of it; left out",
                    turn.rec.step
                ));
                continue;
            };
            if turn.presence == Presence::Present && log.saved {
                self.problems.push(format!(
                    "step_logs[{}]: {what} ({}) is missing from the message history; counted as the log recorded it",
                    turn.rec.step,
                    outcome.name()
                ));
            }
            let attempt = Attempt::recorded_only(
                self.origin.clone(),
                self.trace_id.clone(),
                session.clone(),
                agent.clone(),
                turn.rec.clone(),
            );
            self.place(turn.rec.step, attempt);
        }
        let rest: Vec<Attempt> = history.collect();
        // A summary prompt the chat reader did not recognise leaves the
        // summary answer behind: not a loop turn.
        if rest.len() == 1 && log.summarised {
            return;
        }
        if !rest.is_empty() {
            self.problems.push(format!(
                "{id}: the message history holds {} turn(s) after the last one step_logs shows; they are replayed without the log",
                rest.len()
            ));
        }
        for a in rest {
            self.place(last_key, a);
        }
    }
}

fn turn_name(session: &str, turn: &step_log::Turn) -> String {
    match turn.llm_turn {
        Some(n) => format!("{session} turn {n}"),
        None => format!("{session} turn ?"),
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
    if let Some(model) = run_model(doc) {
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
