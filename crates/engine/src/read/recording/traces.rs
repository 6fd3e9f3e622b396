//! A recording's calls → traces. Calls are grouped by the trace header
//! (`--trace-header`, default `x-upstream-session-id`): a trace's id is
//! the header's value without a trailing `-<uuid>` (MiroThinker sends
//! `{task_id}-{uuid4}`, one uuid per run), so the runs of one task pair
//! up in `diff`. Calls without the header are grouped per file, under an
//! id that says so (`STEM#no-HEADER`). Inside a group the calls are put in
//! the order the proxy received them and planned
//! ([`super::conversation`]); a group holding several independent runs
//! gives one trace per run (`ID`, `ID#2`, …).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::attempt::{build, fate, Place};
use super::conversation::plan;
use super::slim::Slim;
use crate::model::Trace;
use crate::read::attribution::file_stem;

/// `FORMAT:KIND` of what is read and not replayed.
pub const SUMMARY_CALL: &str = "recording:summary_call";
pub const CLIENT_RETRY: &str = "recording:client_retry";
pub const OTHER_API_CALL: &str = "recording:other_api_call";

/// A header value without a trailing `-<uuid>`.
pub fn run_of(value: &str) -> &str {
    let is_uuid = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    match value.len().checked_sub(37) {
        Some(at)
            if value.is_char_boundary(at)
                && value[at..].starts_with('-')
                && is_uuid(&value[at + 1..]) =>
        {
            &value[..at]
        }
        _ => value,
    }
}

/// The traces of a file's calls, and the problems met.
pub fn traces(file: &str, header: &str, calls: Vec<Slim>) -> (Vec<Trace>, Vec<String>) {
    let mut groups: BTreeMap<(u64, String), Vec<Slim>> = BTreeMap::new();
    let mut first_call: BTreeMap<String, u64> = BTreeMap::new();
    let no_header = format!("{}#no-{}", file_stem(file), header.to_ascii_lowercase());
    for call in calls {
        let id = call
            .call
            .session
            .as_deref()
            .map_or_else(|| no_header.clone(), |s| run_of(s).to_string());
        let first = *first_call.entry(id.clone()).or_insert(call.call.call);
        groups.entry((first, id)).or_default().push(call);
    }
    let mut traces = Vec::new();
    let mut problems = Vec::new();
    for ((_, id), mut calls) in groups {
        calls.sort_by_key(|c| c.call.call);
        group(&id, calls, &mut traces, &mut problems);
    }
    (traces, problems)
}

/// One group's traces.
fn group(id: &str, calls: Vec<Slim>, traces: &mut Vec<Trace>, problems: &mut Vec<String>) {
    let mut other = 0u64;
    let mut model_calls = Vec::with_capacity(calls.len());
    for call in calls {
        if !call.call.api.is_model_call() {
            other += 1;
        } else if let Some(why) = &call.call.request.unreadable {
            problems.push(format!(
                "call {} (line {}): {why}: not replayed",
                call.call.call, call.call.origin.line
            ));
        } else {
            model_calls.push(call);
        }
    }
    let calls = model_calls;
    let plan = plan(&calls);
    let ids: Vec<Arc<str>> = (0..plan.runs)
        .map(|run| match run {
            0 => Arc::from(id),
            n => Arc::from(format!("{id}#{}", n + 1)),
        })
        .collect();
    let mut runs: Vec<Trace> = ids
        .iter()
        .map(|id| Trace::new(id.clone(), Vec::new()))
        .collect();
    let mut prompted = vec![false; plan.conversations.len()];
    for draft in &plan.drafts {
        let conversation = &plan.conversations[draft.conversation];
        let later = conversation
            .calls
            .iter()
            .filter(|&&k| k > draft.last())
            .map(|&k| &calls[k]);
        let fate = fate(&calls[draft.last()], later);
        let system_prompt = if std::mem::replace(&mut prompted[draft.conversation], true) {
            None
        } else {
            calls[draft.calls[0].0].system_prompt.clone()
        };
        let place = Place {
            trace_id: &ids[conversation.run],
            session: &conversation.session,
            system_prompt,
        };
        match build(draft, &calls, fate, place) {
            Ok(attempt) => runs[conversation.run].attempts.push(attempt),
            Err(problem) => problems.push(problem),
        }
        let retries = draft.calls.len() as u64 - 1;
        if retries > 0 {
            add(&mut runs[conversation.run], CLIENT_RETRY, retries);
        }
    }
    for &s in &plan.summaries {
        let run = plan
            .conversations
            .iter()
            .find(|c| c.calls.contains(&s))
            .map_or(0, |c| c.run);
        add(&mut runs[run], SUMMARY_CALL, 1);
    }
    if other > 0 {
        add(&mut runs[0], OTHER_API_CALL, other);
    }
    traces.extend(
        runs.into_iter()
            .filter(|t| !t.attempts.is_empty() || !t.not_attempts.is_empty()),
    );
}

fn add(trace: &mut Trace, kind: &str, n: u64) {
    match trace.not_attempts.iter_mut().find(|(k, _)| k == kind) {
        Some((_, count)) => *count += n,
        None => trace.not_attempts.push((kind.to_string(), n)),
    }
}
