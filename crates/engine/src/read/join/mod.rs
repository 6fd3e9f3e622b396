//! A task log joined with a recording of the same run (`mirotrace record`):
//! the log says what upstream decided and what the tools returned, the
//! recording what the model wrote, the popped turns included.
//!
//! The recordings are read first ([`index`]: calls grouped by run, runs by
//! task id); each task log claims its run (by task id, and by time when the
//! task ran more than once), [`pair`] lines the run's calls up with the
//! LLM calls its step log shows, and [`fill`] gives each attempt its text,
//! tokens and seconds. The client's retries fold into their attempt;
//! final-summary and final-answer calls are counted (`recording:summary_call`
//! among the trace's records that are not attempts), never judged. What
//! does not agree is a problem naming both sides.

pub mod fill;
pub mod index;
pub mod pair;
pub mod scan;
pub mod wire;

use crate::model::{CallPurpose, Trace};
pub use index::Index;
pub use wire::Joining;

/// The trace's records that are not attempts, as the join counts them
/// (the names a recording read alone counts them by).
pub use crate::read::recording::traces::{
    CLIENT_RETRY as CLIENT_RETRIES, SUMMARY_CALL as SUMMARY_CALLS,
};
/// The SDK's own retries (`x-stainless-retry-count` ≥ 1), folded into their attempt.
pub const SDK_RETRIES: &str = "recording:sdk_retry";

/// Joins a task log's trace with its run in `index`, when there is one.
/// Returns the disagreements, each a sentence.
pub fn join(trace: &mut Trace, index: &Index) -> Vec<String> {
    let Some(log) = trace.call_log.clone() else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let Some((run, note)) = index.claim(
        &trace.trace_id,
        log.start_time.as_deref(),
        log.end_time.as_deref(),
    ) else {
        problems.push(format!(
            "recording: no run of task {} in the recording; its attempts keep only the log's word",
            trace.trace_id
        ));
        return problems;
    };
    problems.extend(note.map(|n| format!("recording: {n}")));
    // The texts the histories kept, by logged call.
    let kept: Vec<Option<String>> = log
        .calls
        .iter()
        .map(|c| {
            let a = trace.attempts.iter().find(|a| {
                a.recorded
                    .as_deref()
                    .is_some_and(|r| r.step == c.step && !r.decided)
            })?;
            (c.purpose == CallPurpose::Turn).then(|| a.content.clone())
        })
        .collect();
    let kept: Vec<Option<&str>> = kept.iter().map(Option::as_deref).collect();
    let pairing = pair::pair(&log, &run.calls, &kept);
    let later = logged_queries(trace);
    let (mut summaries, mut client_retries, mut sdk_retries) = (0u64, 0u64, 0u64);
    for (logged, tries) in log.calls.iter().zip(&pairing.tries) {
        let what = call_name(logged);
        for (k, t) in tries.iter().enumerate() {
            match t {
                Some(t) => {
                    sdk_retries += (t.calls.len() - 1) as u64;
                    client_retries += u64::from(k + 1 < tries.len());
                }
                None if k + 1 < tries.len() => problems.push(format!(
                    "recording: step_logs[{}]: {what}: no recorded call for its retry {} ({})",
                    logged.step,
                    k + 1,
                    logged.retries[k]
                )),
                None => problems.push(format!(
                    "recording: step_logs[{}]: {what}: no recorded call matches it",
                    logged.step
                )),
            }
        }
        match logged.purpose {
            CallPurpose::Summary => {
                summaries += u64::from(tries.last().is_some_and(Option::is_some))
            }
            CallPurpose::Turn => {
                let attempt = trace
                    .attempts
                    .iter_mut()
                    .find(|a| a.recorded.as_deref().is_some_and(|r| r.step == logged.step));
                match attempt {
                    Some(a) => problems.extend(
                        fill::fill(a, tries, logged, &later)
                            .into_iter()
                            .map(|p| format!("recording: step_logs[{}]: {what}: {p}", logged.step)),
                    ),
                    None => problems.push(format!(
                        "recording: step_logs[{}]: {what}: the task log read no attempt for it; its recorded call is left out",
                        logged.step
                    )),
                }
            }
        }
    }
    for t in &pairing.unknown {
        let c = t.first();
        let whose = match pair::sessions_of(c, &log.sessions) {
            Some(s) if s.is_empty() => "a conversation no saved session of the log has".to_string(),
            Some(s) => format!("a conversation of {}", s.join(" or ")),
            None => "a request that could not be read".to_string(),
        };
        problems.push(format!(
            "recording: {}: recorded call {} of run {} ({}) is not in the task log: no LLM call of the step log is left for it; not counted",
            c.origin,
            c.call,
            run.header,
            whose
        ));
    }
    for (kind, n) in [
        (SUMMARY_CALLS, summaries),
        (CLIENT_RETRIES, client_retries),
        (SDK_RETRIES, sdk_retries),
    ] {
        if n > 0 {
            trace.not_attempts.push((kind.to_string(), n));
        }
    }
    problems
}

/// Every duplicate query the log names, with its step.
fn logged_queries(trace: &Trace) -> Vec<fill::LoggedQueryAt> {
    let mut out = Vec::new();
    for rec in trace.attempts.iter().filter_map(|a| a.recorded.as_deref()) {
        if rec.reason == Some(crate::model::Reason::DuplicateQuery) {
            if let (Some(tool), Some(query)) = (&rec.tool, &rec.query) {
                out.push(fill::LoggedQueryAt {
                    step: rec.step,
                    tool: tool.clone(),
                    query: query.clone(),
                });
            }
        }
        out.extend(rec.allowed.iter().map(|q| fill::LoggedQueryAt {
            step: rec.step,
            tool: q.tool.clone(),
            query: q.query.clone(),
        }));
    }
    out
}

fn call_name(c: &crate::model::LoggedLlmCall) -> String {
    match c.purpose {
        CallPurpose::Turn => format!("{}'s LLM call", c.session),
        CallPurpose::Summary => format!("{}'s summary call", c.session),
    }
}

#[cfg(test)]
mod tests;
