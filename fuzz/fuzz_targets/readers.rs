//! Each of the newer readers on its own, fed JSON the fuzzer shapes: the
//! first byte picks the reader, the rest is parsed as JSON and placed where
//! that reader looks (or, when it is not JSON, placed as a string), so
//! mutations reach the converters rather than stopping at the parser.
//! Readers: Inspect (logs, samples with events and scores, `.eval`
//! archives), OpenHands, SWE-agent and
//! mini-swe-agent, Claude Code sessions, OTLP and plain-JSON spans, task
//! logs (whole and cut: the salvage), OpenHands V1 events and completion
//! logs (with their `<function=…>` text calls; V1 events also as an
//! `events.jsonl`, and the SDK's event file names), tau2-bench results, and the
//! sniffing of records. Every trace read is
//! replayed: one verdict per attempt, no panic.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use mirotrace::policy::Policy;
use mirotrace::read::sniff::{self, InputFormat};
use mirotrace::read::source::{open_stream, ReadOptions};
use mirotrace::read::{
    anthropic, inspect, openhands, openhands_v1, otel, swe_agent, tasklog, tau2, Origin, Record,
    Trace,
};
use mirotrace::replay::Replayer;
use serde_json::{json, Map, Value as Json};

fn replayer() -> &'static Replayer {
    static R: OnceLock<Replayer> = OnceLock::new();
    R.get_or_init(|| Replayer::new(Policy::default()))
}

fn replay(traces: impl IntoIterator<Item = Trace>) {
    for t in traces {
        assert_eq!(replayer().replay(&t).len(), t.attempts.len());
    }
}

fn object(v: Json) -> Map<String, Json> {
    match v {
        Json::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("value".into(), other);
            m
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let value: Json =
        serde_json::from_str(&text).unwrap_or_else(|_| Json::String(text.to_string()));
    let file: Arc<str> = "fuzz.json".into();
    let origin = Origin {
        file: file.clone(),
        line: 1,
    };
    // Sniffing never panics, whatever the value.
    let _ = sniff::layout_of(rest);
    let _ = sniff::describe_value(&value);
    if let Json::Object(obj) = &value {
        let _ = sniff::classify(obj);
        for kind in InputFormat::all().iter().filter_map(|f| f.forced_kind()) {
            let _ = sniff::forced_mismatch(kind, obj);
        }
    }
    match selector % 12 {
        0 => {
            if let Ok(ts) = inspect::from_log(&object(value.clone()), &origin) {
                replay(ts);
            }
            let log = json!({"eval": {"model": "m"}, "samples": [
                {"id": 1, "epoch": 1, "input": "q", "messages": value}
            ]});
            if let Ok(ts) = inspect::from_log(&object(log), &origin) {
                replay(ts);
            }
            // The fields read for usage, durations and results, and the
            // attachments resolved in place (an `.eval` member's path).
            let sample = json!({"id": 1, "epoch": 1, "events": value, "scores": value,
                "attachments": value, "messages": [
                    {"role": "assistant", "id": "m", "content": "attachment://value"}]});
            if let Ok(t) = inspect::sample_trace_owned(object(sample), Some("m"), &origin) {
                replay([t]);
            }
        }
        1 => {
            // An archive (deflate or zstd members), one sample at a time and
            // a few at once.
            for threads in [1, 2] {
                if let Ok(archive) = inspect::archive::Archive::open(rest.into(), &file, 1 << 20) {
                    replay(archive.samples(threads).filter_map(|(_, t)| t.ok()));
                }
            }
        }
        2 => {
            let events = match &value {
                Json::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            if let Ok(t) = openhands::from_events(&events, "fuzz", &origin) {
                replay([t]);
            }
            if let Ok(t) = openhands::from_record(&object(json!({"history": value})), &origin) {
                replay([t]);
            }
        }
        3 => {
            for record in [
                object(value.clone()),
                object(json!({"history": value, "trajectory": []})),
                object(json!({"trajectory_format": "mini-swe-agent-1", "messages": value})),
            ] {
                if let Ok((id, attempts)) = swe_agent::from_record(&record, &origin) {
                    replay([Trace::new(id, attempts)]);
                }
            }
        }
        4 => {
            let lines: Vec<(u64, Json)> = match value {
                Json::Array(items) => items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (i as u64 + 1, v))
                    .collect(),
                other => vec![(1, other)],
            };
            if let Ok(ts) = anthropic::from_session_lines(lines, &file) {
                replay(ts);
            }
        }
        5 => {
            let docs = vec![
                (1, value.clone()),
                (
                    2,
                    json!({"resourceSpans": [{"scopeSpans": [{"spans": value}]}]}),
                ),
            ];
            if let Ok((ts, _notes)) = otel::from_documents(docs, &file) {
                replay(ts);
            }
        }
        6 => {
            let read = tasklog::from_document(&object(value), &origin);
            replay([read.trace]);
        }
        7 => {
            // A task log cut anywhere: salvaged up to its last whole part.
            if let Some((Json::Object(doc), _)) = tasklog::salvage::complete_prefix(&text) {
                if sniff::classify(&doc) == Some(mirotrace::read::formats::TASKLOG) {
                    replay([tasklog::from_document(&doc, &origin).trace]);
                }
            }
        }
        8 => {
            let events = match &value {
                Json::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            let lines = events.iter().enumerate().map(|(i, e)| (i as u64 + 1, e));
            if let Ok(read) = openhands_v1::from_events(lines, "fuzz", &origin) {
                replay([read.trace]);
            }
            let record = object(json!({"instance_id": "i", "history": value, "metrics": value}));
            if let Ok(read) = openhands_v1::from_record(&record, &origin) {
                replay([read.trace]);
            }
            // As an events.jsonl: each event a line, decoded on the fast
            // path (typed) or parsed whole, then gathered.
            let jsonl: String = events.iter().map(|e| format!("{e}\n")).collect();
            let opts = ReadOptions {
                max_line_bytes: 1 << 20,
                format: InputFormat::OpenHandsV1,
                ..ReadOptions::default()
            };
            let stream = Box::new(std::io::Cursor::new(jsonl.into_bytes()));
            if let Ok(records) = open_stream(stream, "events.jsonl".into(), &opts) {
                replay(records.filter_map(|r| match r {
                    Record::Trace(t) => Some(t),
                    _ => None,
                }));
            }
            // The SDK's event file names.
            let _ = openhands_v1::folder::event_file_index(&text);
        }
        9 => {
            let _ = openhands_v1::text_calls::split_text_calls(&text);
            for log in [
                object(value.clone()),
                object(json!({"messages": [], "response": value, "latency_sec": 1})),
                object(
                    json!({"messages": [], "response": {"choices": [{"message": {"content": text}}]}}),
                ),
            ] {
                if let Ok(t) = openhands_v1::completion::from_log(&log, &origin) {
                    replay([t]);
                }
            }
        }
        10 => {
            for doc in [
                object(value.clone()),
                object(json!({"info": {}, "simulations": value})),
                object(json!({"info": {}, "simulations": [{"task_id": 1, "messages": value}]})),
            ] {
                if let Ok((ts, _)) = tau2::from_results(&doc, &origin) {
                    replay(ts);
                }
            }
        }
        _ => {
            let _ = sniff::parse_json(&text);
            // Plain-JSON spans: a document, a list, or inside `spans`.
            let docs = vec![(1, value.clone()), (2, json!({"spans": value}))];
            if let Ok((ts, _notes)) = otel::from_documents(docs, &file) {
                replay(ts);
            }
        }
    }
});
