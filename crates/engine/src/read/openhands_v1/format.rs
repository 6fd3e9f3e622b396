//! The registry entries of this module's two formats: OpenHands V1 event
//! streams (a conversation's events, read together) and LLM completion
//! logs (one call a file).

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::event::{self, Event};
use super::slim;
use super::{completion, from_events, is_event, is_event_list, read_events, EventsRead};
use crate::model::{Origin, Trace};
use crate::read::attribution::file_stem;
use crate::read::format::{Format, Gather, List, Unit};

pub const OPENHANDS_V1: &Format = &Format {
    name: "openhands-v1",
    description: "an OpenHands V1 event stream",
    recognised_by: "lines (or a list) of events with a known `kind` (`ActionEvent`, `MessageEvent`, …) and `id`/`timestamp`/`source`; a `history` of them is read under `openhands`",
    trace_per: "event stream (the file's name; the record's `instance_id` under `history`)",
    recognise: is_event,
    read: |_, _| {
        Err("one OpenHands V1 event on its own: a conversation's events are read together \
             (events.jsonl, a JSON list, or the SDK's `events/` folder of `event-NNNNN-ID.json` files: name the folder)"
            .to_string())
    },
    read_text: None,
    gather: Some(|file, _| Box::new(Events(Vec::new(), file))),
    list: Some(List {
        recognise: is_event_list,
        forced_reads_any: true,
        read: |items, origin| {
            let events = items.iter().map(|e| (origin.line, e));
            from_events(events, &conversation_name(&origin.file), origin)
                .map(whole)
                .map_err(|e| format!("OpenHands V1 events: {e}"))
        },
    }),
    element_id: None,
    extensions: &[],
};

pub const COMPLETION_LOG: &Format = &Format {
    name: "completion-log",
    description: "an LLM completion log",
    recognised_by: "`messages` beside a `response` with `choices` or `output` (or beside an `error` and `latency_sec`)",
    trace_per: "log (one attempt)",
    recognise: completion::is_completion_log,
    read: read_log,
    // Decoded without the request's tools and history, which are not read.
    read_text: Some(|text, origin, classify| {
        let obj = slim::decode(text)?;
        (classify(&obj) == Some(COMPLETION_LOG)).then(|| read_log(obj, origin))
    }),
    gather: None,
    list: None,
    element_id: None,
    extensions: &[],
};

fn read_log(obj: Map<String, Json>, origin: &Origin) -> Result<Unit, String> {
    completion::from_log(&obj, origin)
        .map(|t| Unit::traces(vec![t]))
        .map_err(|e| format!("completion log: {e}"))
}

/// A conversation's traces and problems, as the registry reports them.
fn whole(read: EventsRead) -> Unit {
    let (traces, problems) = parts(read);
    Unit::Whole(traces, problems)
}

fn parts(read: EventsRead) -> (Vec<Trace>, Vec<String>) {
    let problems = read
        .problems
        .into_iter()
        .map(|p| format!("OpenHands V1 events: {p}"))
        .collect();
    (vec![read.trace], problems)
}

/// A file's V1 events (with their lines), decoded as they are read: one
/// conversation, named by the file.
struct Events(Vec<(u64, Option<Event<'static>>)>, Arc<str>);

impl Gather for Events {
    /// The fast path: the line decoded once, straight into its event.
    fn push_text(&mut self, line: u64, text: &str) -> bool {
        match event::of_text(text) {
            Some(e) => {
                self.0.push((line, Some(e)));
                true
            }
            None => false,
        }
    }
    fn push(&mut self, line: u64, record: Json) -> Result<(), String> {
        let e = record.as_object().map(|o| event::of_json(o).into_owned());
        self.0.push((line, e));
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(Vec<Trace>, Vec<String>), String> {
        let Events(events, file) = *self;
        let origin = Origin {
            file: file.clone(),
            line: events.first().map_or(1, |(line, _)| *line),
        };
        read_events(events, &conversation_name(&file), &origin)
            .map(|(read, _)| parts(read))
            .map_err(|e| format!("OpenHands V1 events: {e}"))
    }
}

/// A conversation's name: its file's, or for the SDK's folder of one file
/// per event (`CONVERSATION/events/`), the conversation folder's.
/// A folder is named as it is, not as it was typed: `.`, `events` or
/// `../events` are resolved first.
pub(super) fn conversation_name(label: &str) -> String {
    let typed = std::path::Path::new(label.trim_end_matches('/'));
    let resolved = typed
        .is_dir()
        .then(|| std::fs::canonicalize(typed).ok())
        .flatten();
    let path = resolved.as_deref().unwrap_or(typed);
    match (path.file_name(), path.parent().and_then(|p| p.file_name())) {
        (Some(name), Some(parent)) if name == EVENTS_DIR => parent.to_string_lossy().into_owned(),
        _ => file_stem(&path.to_string_lossy()),
    }
}

/// The folder the SDK writes a conversation's events into, one file each.
pub const EVENTS_DIR: &str = "events";
