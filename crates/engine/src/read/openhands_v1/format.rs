//! The registry entries of this module's two formats: OpenHands V1 event
//! streams (a conversation's events, read together) and LLM completion
//! logs (one call a file).

use std::sync::Arc;

use serde_json::Value as Json;

use super::{completion, from_events, is_event, is_event_list, EventsRead};
use crate::model::{Origin, Trace};
use crate::read::formats::{Format, Gather, List, Unit};
use crate::read::reader::file_stem;

pub const OPENHANDS_V1: &Format = &Format {
    name: "openhands-v1",
    description: "an OpenHands V1 event stream",
    recognised_by: "lines (or a list) of events with a known `kind` (`ActionEvent`, `MessageEvent`, …) and `id`/`timestamp`/`source`; a `history` of them is read under `openhands`",
    trace_per: "event stream (the file's name; the record's `instance_id` under `history`)",
    recognise: is_event,
    read: |_, _| {
        Err("one OpenHands V1 event on its own: a conversation's events are read together \
             (events.jsonl, or a JSON list: `jq -s . events/*.json`)"
            .to_string())
    },
    gather: Some(|file| Box::new(Events(Vec::new(), file))),
    list: Some(List {
        recognise: is_event_list,
        forced_reads_any: true,
        read: |items, origin| {
            let events = items.iter().map(|e| (origin.line, e));
            from_events(events, &file_stem(&origin.file), origin)
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
    read: |obj, origin| {
        completion::from_log(&obj, origin)
            .map(|t| Unit::traces(vec![t]))
            .map_err(|e| format!("completion log: {e}"))
    },
    gather: None,
    list: None,
    element_id: None,
    extensions: &[],
};

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

/// A file's V1 events (with their lines): one conversation, named by the
/// file.
struct Events(Vec<(u64, Json)>, Arc<str>);

impl Gather for Events {
    fn push(&mut self, line: u64, record: Json) -> Result<(), String> {
        self.0.push((line, record));
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(Vec<Trace>, Vec<String>), String> {
        let Events(events, file) = *self;
        let origin = Origin {
            file: file.clone(),
            line: events.first().map_or(1, |(line, _)| *line),
        };
        from_events(
            events.iter().map(|(l, e)| (*l, e)),
            &file_stem(&file),
            &origin,
        )
        .map(parts)
        .map_err(|e| format!("OpenHands V1 events: {e}"))
    }
}
