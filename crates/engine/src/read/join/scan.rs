//! Finds the recordings among a run's inputs (by content: the first line
//! carries `"mirotrace_recording"`) and reads their calls into an
//! [`Index`], before any task log is read.

use std::io::BufRead;

use serde_json::Value as Json;

use super::Index;
use crate::model::Origin;
use crate::read::error::OpenError;
use crate::read::recording::{self, call::MARK, RecordedCall};
use crate::read::source::{open_text, InputSpec};

/// How far into an input the mark is looked for.
const HEAD_BYTES: usize = 4096;

/// What the scan found.
#[derive(Debug, Default)]
pub struct Scanned {
    pub index: Index,
    /// Positions (in the inputs) of the recordings read.
    pub recordings: Vec<usize>,
}

/// Reads every recording among `inputs` (files only: stdin is read once,
/// by its turn). `None` when there is none.
pub fn scan(inputs: &[Result<InputSpec, OpenError>], trace_header: &str) -> Option<Scanned> {
    let mut calls = Vec::new();
    let mut recordings = Vec::new();
    for (i, spec) in inputs.iter().enumerate() {
        let Ok(spec @ InputSpec::Path(path)) = spec else {
            continue;
        };
        if path.is_dir() {
            continue;
        }
        let Ok(mut text) = open_text(spec) else {
            continue;
        };
        // A recording's lines open with its mark: a look at the head
        // spares reading the first line of every other input (a task
        // log may be one long line).
        let head = match text.fill_buf() {
            Ok(h) => &h[..h.len().min(HEAD_BYTES)],
            Err(_) => continue,
        };
        if !head.windows(MARK.len()).any(|w| w == MARK.as_bytes()) {
            continue;
        }
        let label = spec.label();
        let mut line = Vec::new();
        let mut number = 0u64;
        let mut is_recording = None;
        loop {
            line.clear();
            match text.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => number += 1,
            }
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            let parsed: Option<serde_json::Map<String, Json>> =
                serde_json::from_slice(trimmed).ok();
            if is_recording.is_none() {
                let marked = parsed.as_ref().is_some_and(|m| m.contains_key(MARK));
                is_recording = Some(marked);
                if !marked {
                    break;
                }
            }
            let Some(obj) = parsed else { continue };
            let origin = Origin {
                file: label.clone(),
                line: number,
            };
            if let Ok(mut call) = recording::parse(&obj, origin, trace_header) {
                if call.api.is_model_call() {
                    slim(&mut call);
                    calls.push(call);
                }
            }
        }
        if is_recording == Some(true) {
            recordings.push(i);
        }
    }
    if recordings.is_empty() {
        return None;
    }
    Some(Scanned {
        index: Index::new(calls),
        recordings,
    })
}

/// Keeps of a request what the join compares (its system prompt, its
/// first user message, and its last one: a summary call's prompt): each
/// request resends the whole history, and a run's calls held whole would
/// grow with its turns squared.
fn slim(call: &mut RecordedCall) {
    let users: Vec<usize> = call
        .request
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.get("role").and_then(Json::as_str) == Some("user"))
        .map(|(i, _)| i)
        .collect();
    let keep: Vec<usize> = match (users.first(), users.last()) {
        (Some(&a), Some(&b)) if a != b => vec![a, b],
        (Some(&a), _) => vec![a],
        _ => Vec::new(),
    };
    let messages = std::mem::take(&mut call.request.messages);
    call.request.messages = messages
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, m)| m)
        .collect();
}
