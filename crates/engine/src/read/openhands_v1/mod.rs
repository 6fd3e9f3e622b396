//! OpenHands V1 (the `openhands-sdk` / software-agent-sdk) event streams
//! and LLM completion logs → traces.
//!
//! A V1 conversation is a stream of events, each tagged with its `kind`
//! (`events.jsonl`, one event a line; a JSON list of them; or an evaluation
//! output line holding them under `history`). Each LLM response is one
//! attempt: a `MessageEvent` from the agent (a reply without a call), or the
//! `ActionEvent`s sharing one `llm_response_id` (one per call of the
//! response: parallel calls), whose text is their `thought`. The
//! `ObservationEvent`, `UserRejectObservation` or `AgentErrorEvent` naming a
//! call's `tool_call_id` is its result; `SystemPromptEvent` is the system
//! prompt; user `MessageEvent`s are the conversation around the attempts.
//! Other known kinds (state updates, condensations, pauses, tokens, …) are
//! not attempts: they are counted and skipped. An unknown kind is reported.
//!
//! Per-response token counts and latencies are in the conversation's
//! metrics (`token_usages`, `response_latencies`, each with its
//! `response_id`: in a `ConversationStateUpdateEvent`'s state, or an
//! evaluation line's `metrics`); an evaluation line's `resolved` is the
//! task's result. Completion logs are [`completion`]'s, the text tool-call
//! format [`text_calls`]'.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value as Json};

use super::calls::chat_call;
use super::chat::{self, ChatError, SessionTarget};
use super::usage::{self, seconds};
use crate::model::{Origin, TaskResult, Trace, Usage};

pub mod completion;
mod event;
pub mod folder;
mod format;
mod slim;
pub mod text_calls;

use event::{id_text as text_of, Event};
pub use format::{COMPLETION_LOG, OPENHANDS_V1};

/// Why an event stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenHandsV1Error {
    #[error("\"history\" is not a list of OpenHands V1 events")]
    NoHistory,
    #[error("{0}")]
    Chat(#[from] ChatError),
}

/// Event kinds that make the conversation (read into attempts).
const CONVERSATION_KINDS: [&str; 6] = [
    "ActionEvent",
    "ObservationEvent",
    "UserRejectObservation",
    "AgentErrorEvent",
    "MessageEvent",
    "SystemPromptEvent",
];

/// Event kinds that are not LLM calls nor their results: skipped, counted.
const OTHER_KINDS: [&str; 14] = [
    "ConversationStateUpdateEvent",
    "PauseEvent",
    "InterruptEvent",
    "Condensation",
    "CondensationRequest",
    "CondensationSummaryEvent",
    "ConversationErrorEvent",
    "TokenEvent",
    "LLMCompletionLogEvent",
    "HookExecutionEvent",
    "ACPToolCallEvent",
    "StreamingDeltaEvent",
    "SecurityAnalyzerEvent",
    "ConversationIterationLimitEvent",
];

/// Whether an object is one V1 event: a known `kind` with an event's
/// bookkeeping (`id`, `timestamp` or `source`).
pub fn is_event(obj: &Map<String, Json>) -> bool {
    obj.get("kind")
        .and_then(Json::as_str)
        .is_some_and(|k| CONVERSATION_KINDS.contains(&k) || OTHER_KINDS.contains(&k))
        && ["id", "timestamp", "source"]
            .iter()
            .any(|k| obj.contains_key(*k))
}

/// Whether a list is a V1 event stream: its first few elements are events.
pub fn is_event_list(items: &[Json]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .take(8)
            .all(|e| e.as_object().is_some_and(is_event))
}

/// One conversation read: its trace, the events skipped (by kind) and the
/// problems met (unknown kinds, events that are not objects).
#[derive(Debug)]
pub struct EventsRead {
    pub trace: Trace,
    /// Events read into the conversation (turns, results, prompts).
    pub read: usize,
    /// Known events that are not turns, by kind.
    pub skipped: BTreeMap<String, usize>,
    pub problems: Vec<String>,
}

/// An evaluation output line (`instance_id`, `history` of V1 events,
/// `metrics`, a report with `resolved`).
pub fn from_record(
    obj: &Map<String, Json>,
    origin: &Origin,
) -> Result<EventsRead, OpenHandsV1Error> {
    let events = obj
        .get("history")
        .and_then(Json::as_array)
        .filter(|h| is_event_list(h))
        .ok_or(OpenHandsV1Error::NoHistory)?;
    let id = chat::record_id(obj).unwrap_or_else(|| super::attribution::unnamed(origin));
    let (mut read, response_ids) = read_events(
        of_values(events.iter().map(|e| (origin.line, e))),
        &id,
        origin,
    )?;
    let mut metrics = Metrics::default();
    if let Some(m) = obj.get("metrics") {
        metrics.gather(m, 0);
    }
    metrics.apply(&mut read.trace, &response_ids);
    if let (Some(first), Some(result)) = (read.trace.attempts.first_mut(), resolved(obj)) {
        first.task_result = Some(result);
    }
    Ok(read)
}

/// One conversation's events (each with the line it was read from), in
/// order, as one trace.
pub fn from_events<'e>(
    events: impl IntoIterator<Item = (u64, &'e Json)>,
    trace_id: &str,
    origin: &Origin,
) -> Result<EventsRead, OpenHandsV1Error> {
    read_events(of_values(events), trace_id, origin).map(|(read, _)| read)
}

/// Events parsed already, each looked at in place (`None`: not an object).
fn of_values<'e>(
    events: impl IntoIterator<Item = (u64, &'e Json)>,
) -> impl Iterator<Item = (u64, Option<Event<'e>>)> {
    events
        .into_iter()
        .map(|(line, e)| (line, e.as_object().map(event::of_json)))
}

/// [`from_events`], with the response id of each attempt.
fn read_events<'e>(
    events: impl IntoIterator<Item = (u64, Option<Event<'e>>)>,
    trace_id: &str,
    origin: &Origin,
) -> Result<(EventsRead, Vec<Option<String>>), OpenHandsV1Error> {
    let mut messages: Vec<Json> = Vec::new();
    let mut response_ids: Vec<Option<String>> = Vec::new();
    // Response id → index in `messages` of its assistant message.
    let mut open_response: HashMap<String, usize> = HashMap::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut read = 0;
    let mut metrics = Metrics::default();
    let mut first_line = None;
    for (index, (line, event)) in events.into_iter().enumerate() {
        let Some(event) = event else {
            problems.push(format!(
                "line {line}: OpenHands V1 event {index} is not an object"
            ));
            continue;
        };
        match event {
            Event::SystemPrompt(text) => {
                messages.push(json!({"role": "system", "content": text}));
            }
            Event::Message {
                agent,
                content,
                response,
            } => {
                let text = chat::content_text(content.as_deref(), index)?;
                if agent {
                    first_line.get_or_insert(line);
                    messages.push(json!({"role": "assistant", "content": text}));
                    response_ids.push(response);
                } else {
                    messages.push(json!({"role": "user", "content": text}));
                }
            }
            Event::Action {
                id,
                name,
                arguments,
                thought,
                response,
            } => {
                let call = chat_call(id.as_deref(), &name, &arguments);
                match response.as_ref().and_then(|r| open_response.get(r)) {
                    Some(&at) => {
                        if let Some(calls) = messages[at]
                            .get_mut("tool_calls")
                            .and_then(Json::as_array_mut)
                        {
                            calls.push(call);
                        }
                    }
                    None => {
                        first_line.get_or_insert(line);
                        let thought = thought_text(thought.as_deref());
                        if let Some(r) = &response {
                            open_response.insert(r.clone(), messages.len());
                        }
                        messages.push(json!({
                            "role": "assistant",
                            "content": thought,
                            "tool_calls": [call],
                        }));
                        response_ids.push(response);
                    }
                }
            }
            Event::Result {
                tool_call_id,
                text,
                failed,
            } => {
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": tool_call_id.map_or(Json::Null, Cow::into_owned),
                    "content": text,
                    "is_error": failed,
                }));
            }
            Event::StateUpdate(value) => {
                if let Some(v) = value {
                    metrics.gather(&v, 0);
                }
                *skipped
                    .entry("ConversationStateUpdateEvent".to_string())
                    .or_default() += 1;
                continue;
            }
            Event::Other(kind) => {
                *skipped.entry(kind.to_string()).or_default() += 1;
                continue;
            }
            Event::Unknown(kind) => {
                problems.push(format!(
                    "line {line}: unknown OpenHands V1 event kind {kind:?}, skipped"
                ));
                continue;
            }
        }
        read += 1;
    }
    let at = Origin {
        file: origin.file.clone(),
        line: first_line.unwrap_or(origin.line),
    };
    let mut attempts = chat::convert_messages(
        &messages,
        SessionTarget {
            trace_id,
            session: "main",
            agent: "main",
            origin: &at,
            system_prompt: None,
        },
    )?;
    for a in &mut attempts {
        a.native_tools = true;
    }
    let mut trace = Trace::new(trace_id, attempts);
    trace.not_attempts = skipped
        .iter()
        .map(|(kind, n)| (format!("{}:{kind}", format::OPENHANDS_V1.name), *n as u64))
        .collect();
    metrics.apply(&mut trace, &response_ids);
    let read = EventsRead {
        trace,
        read,
        skipped,
        problems,
    };
    Ok((read, response_ids))
}

/// The text parts of a `thought` (a list of `{type: "text", text}`).
fn thought_text(v: Option<&Json>) -> String {
    match v {
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Json::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Some(Json::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// Per-response usage and latency, by response id.
#[derive(Default)]
struct Metrics {
    usage: HashMap<String, Usage>,
    latency: HashMap<String, f64>,
    /// The model each response came from (`token_usages[].model`,
    /// `response_latencies[].model`).
    model: HashMap<String, String>,
    /// The metrics' `model_name`: the conversation's model.
    run_model: Option<String>,
}

/// How deep a state snapshot is searched for metrics.
const METRICS_DEPTH: usize = 6;

impl Metrics {
    /// Takes the `token_usages` and `response_latencies` lists found in a
    /// value (a metrics object, or a state that holds some).
    fn gather(&mut self, v: &Json, depth: usize) {
        let Some(obj) = v.as_object() else {
            return;
        };
        for u in obj
            .get("token_usages")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(id), Some(usage)) = (text_of(u.get("response_id")), usage::of(u)) {
                self.usage.entry(id).or_insert(usage);
            }
            self.model_of(u);
        }
        for l in obj
            .get("response_latencies")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(id), Some(s)) = (
                text_of(l.get("response_id")),
                l.get("latency").and_then(seconds),
            ) {
                self.latency.entry(id).or_insert(s);
            }
            self.model_of(l);
        }
        if self.run_model.is_none() {
            self.run_model = text_of(obj.get("model_name")).filter(|m| !m.is_empty());
        }
        if depth < METRICS_DEPTH {
            for (k, inner) in obj {
                if k != "token_usages" && k != "response_latencies" && inner.is_object() {
                    self.gather(inner, depth + 1);
                }
            }
        }
    }

    /// Takes the model an entry of `token_usages` or `response_latencies`
    /// names for its response.
    fn model_of(&mut self, entry: &Json) {
        if let (Some(id), Some(model)) = (
            text_of(entry.get("response_id")),
            text_of(entry.get("model")).filter(|m| !m.is_empty()),
        ) {
            self.model.entry(id).or_insert(model);
        }
    }

    fn apply(&self, trace: &mut Trace, response_ids: &[Option<String>]) {
        if trace.model.is_none() {
            trace.model = self.run_model.as_deref().map(Into::into);
        }
        for (a, id) in trace.attempts.iter_mut().zip(response_ids) {
            let Some(id) = id else { continue };
            if a.model.is_none() {
                a.model = self.model.get(id).map(|m| m.as_str().into());
            }
            if a.usage.is_none() {
                a.usage = self.usage.get(id).copied();
            }
            if a.duration_s.is_none() {
                a.duration_s = self.latency.get(id).copied();
            }
        }
    }
}

/// An evaluation's verdict: `resolved` at the top, in `report` or in
/// `test_result.report`.
fn resolved(obj: &Map<String, Json>) -> Option<TaskResult> {
    let (basis, value) = [
        ("resolved", obj.get("resolved")),
        (
            "report.resolved",
            obj.get("report").and_then(|r| r.get("resolved")),
        ),
        (
            "test_result.report.resolved",
            obj.get("test_result")
                .and_then(|t| t.get("report"))
                .and_then(|r| r.get("resolved")),
        ),
    ]
    .into_iter()
    .find_map(|(b, v)| Some((b, v?.as_bool()?)))?;
    Some(TaskResult {
        success: Some(value),
        score: None,
        basis: basis.into(),
    })
}

#[cfg(test)]
mod tests;
