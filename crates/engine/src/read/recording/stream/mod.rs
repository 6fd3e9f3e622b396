//! A streamed response (`text/event-stream`) merged into the answer the
//! same call would have given unstreamed. The body is read as Server-Sent
//! Events ([`events`]); each API has its merger: [`chat`] (Chat
//! Completions chunks), [`responses`] (Responses events), [`anthropic`]
//! (Messages events). A stream cut short keeps what arrived and says the
//! answer is incomplete; an error event in place of an answer is a failed
//! call.

pub mod anthropic;
pub mod chat;
pub mod responses;

use serde_json::Value as Json;

use super::call::{Answer, Api, CallResult};

/// One Server-Sent Event: its `event:` name (when given) and its data
/// (`data:` lines joined by newlines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: Option<String>,
    pub data: String,
}

/// The events of an SSE body, in order. A last event without the blank
/// line that ends it (a stream cut short) is still returned.
pub fn events(body: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    let mut data: Option<String> = None;
    let mut flush = |name: &mut Option<String>, data: &mut Option<String>| {
        if let Some(d) = data.take() {
            out.push(Event {
                name: name.take(),
                data: d,
            });
        }
        *name = None;
    };
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            flush(&mut name, &mut data);
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => name = Some(value.to_string()),
            "data" => match data.as_mut() {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    flush(&mut name, &mut data);
    out
}

/// What a merger made of a stream.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Merged {
    pub answer: Answer,
    /// The stream's last event came (`[DONE]`, `message_stop`,
    /// `response.completed`, …).
    pub done: bool,
    /// An error the stream itself reported, with its HTTP-like status
    /// where it gives one.
    pub error: Option<String>,
    /// Events whose data is not JSON (a cut or broken stream).
    pub unreadable_events: usize,
    /// The events that carried a JSON object.
    pub read_events: usize,
}

impl Merged {
    /// Parses an event's data, counting what cannot be read.
    pub(crate) fn json(&mut self, event: &Event) -> Option<Json> {
        match serde_json::from_str::<Json>(&event.data) {
            Ok(v @ Json::Object(_)) => {
                self.read_events += 1;
                Some(v)
            }
            _ => {
                self.unreadable_events += 1;
                None
            }
        }
    }
}

/// A streamed body → the call's result. `cut` is the recording's error
/// (`client_disconnected: …`, `upstream: …`) when the stream did not end
/// normally.
pub fn merge(api: &Api, body: &str, cut: Option<String>) -> CallResult {
    let events = events(body);
    let merged = match api {
        Api::ChatCompletions => chat::merge(&events),
        Api::Responses => responses::merge(&events),
        Api::AnthropicMessages => anthropic::merge(&events),
        Api::Other(path) => {
            return CallResult::Unreadable(format!(
                "a stream from {path}, no model API mirotrace reads"
            ))
        }
    };
    finish(merged, cut)
}

fn finish(merged: Merged, cut: Option<String>) -> CallResult {
    let Merged {
        mut answer,
        done,
        error,
        unreadable_events,
        read_events,
    } = merged;
    let empty = answer.text.is_empty() && answer.tool_calls.is_empty();
    if let (Some(message), true) = (&error, empty) {
        return CallResult::Failed {
            status: 200,
            message: format!("error event in the stream: {message}"),
        };
    }
    if read_events == 0 && cut.is_none() {
        return CallResult::Unreadable(format!(
            "a stream without a readable event ({unreadable_events} unreadable)"
        ));
    }
    answer.incomplete = match (cut, error, done) {
        (Some(cut), _, _) => Some(format!("the stream was cut short ({cut})")),
        (None, Some(message), _) => Some(format!("error event in the stream: {message}")),
        (None, None, false) => Some("the stream ended before its last event".into()),
        (None, None, true) => None,
    };
    CallResult::Answer(answer)
}

#[cfg(test)]
mod tests;
