//! Gives an attempt what its recorded call says: the model's text (also
//! for a turn the history kept: the recording has what the model wrote),
//! its finish, the failure of a call that got no answer, and the call's
//! tokens and seconds with its retries' (listed apart under
//! `meta.recording`). An attempt the log alone knew is replayed from its
//! text from then on; what the log decided stays for the cross-check.

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use super::pair::Try;
use crate::model::{Attempt, Finish, LoggedLlmCall, Outcome, Reason, Recorded, ToolResult, Usage};
use crate::read::recording::{CallResult, RecordedCall};

/// Fills `attempt` from its tries (retries first, its own last: `None`
/// where none was recorded). Returns what disagrees with the log.
pub fn fill(
    attempt: &mut Attempt,
    tries: &[Option<Try<'_>>],
    logged: &LoggedLlmCall,
    later: &[LoggedQueryAt],
) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(Some(own)) = tries.last() else {
        return problems;
    };
    let answering = own.last();
    let all: Vec<&RecordedCall> = tries
        .iter()
        .flatten()
        .flat_map(|t| t.calls.iter().copied())
        .collect();
    attempt.usage = total_usage(&all);
    let seconds: Vec<f64> = all.iter().filter_map(|c| c.seconds).collect();
    attempt.duration_s = (!seconds.is_empty()).then(|| seconds.iter().sum());
    set_recording_meta(attempt, tries, logged);
    let rec = attempt.recorded.clone();
    let decided = rec.as_deref().is_some_and(|r| r.decided);
    let what = || format!("recorded call {} ({})", answering.call, answering.origin);
    match &answering.result {
        CallResult::Answer(a) => {
            // A failed call may have answered: the client raises on a
            // finish reason it does not take (`content_filter`).
            let accepted = matches!(a.finish.as_deref(), None | Some("stop" | "length"));
            if logged.failed && accepted && !a.text.is_empty() {
                problems.push(format!(
                    "{}: answered (finish {:?}), but the log shows the call failed; the log's verdict is kept",
                    what(),
                    a.finish.as_deref().unwrap_or("none")
                ));
                return problems;
            }
            if !decided && !same_text(&attempt.content, &a.text) {
                problems.push(format!(
                    "{}: the model's text differs from the message history's ({}); the recording's is replayed",
                    what(),
                    first_difference(&attempt.content, &a.text)
                ));
            }
            attempt.content = a.text.clone();
            if !a.tool_calls.is_empty() {
                attempt.tool_calls = Some(Json::Array(a.tool_calls.clone()));
            }
            match a.finish.as_deref() {
                Some("length") => attempt.finish = Finish::Length,
                Some("stop") | None => {}
                Some(other) if attempt.finish == Finish::Stop && other != "tool_calls" => {
                    attempt.finish = Finish::Unsupported(other.to_string())
                }
                Some(_) => {}
            }
            if let Some(rec) = rec.as_deref().filter(|r| r.decided) {
                attempt.tool_results = logged_results(rec, &attempt.content, later);
                undecide(attempt, rec);
            }
        }
        CallResult::Failed { message, .. }
        | CallResult::NoResponse { message, .. }
        | CallResult::Unreadable(message) => {
            if !logged.failed && !decided {
                problems.push(format!(
                    "{}: no answer ({message}), but the message history holds this turn",
                    what()
                ));
                return problems;
            }
            if let Some(rec) = rec.as_deref().filter(|r| r.decided) {
                // The client's own words, as the log has them, else the recording's.
                attempt.llm_error = Some(rec.error.clone().unwrap_or_else(|| message.clone()));
                undecide(attempt, rec);
            }
        }
    }
    problems
}

/// From now on the attempt is replayed from its text; the log's word stays.
fn undecide(attempt: &mut Attempt, rec: &Recorded) {
    attempt.recorded = Some(Arc::new(Recorded {
        decided: false,
        ..rec.clone()
    }));
}

/// The tool results a rolled-back turn got, as far as the log tells them:
/// each call it shows (its logged result or error; a call whose result
/// the log does not quote returned something upstream let pass, here an
/// empty text), then the result the rollback quotes for the call it blames.
pub fn logged_results(rec: &Recorded, text: &str, later: &[LoggedQueryAt]) -> Vec<ToolResult> {
    let blamed = matches!(
        rec.reason,
        Some(Reason::UnknownTool | Reason::ToolError | Reason::EmptySearch)
    ) && rec.outcome == Some(Outcome::Rollback);
    let mut out = Vec::new();
    let mut quoted = false;
    for c in &rec.calls {
        let r = match (&c.error, &c.result) {
            (Some(e), _) => ToolResult {
                error: Some(e.clone()),
                ..ToolResult::default()
            },
            (None, Some(r)) => ToolResult {
                result: r.clone(),
                ..ToolResult::default()
            },
            (None, None) if blamed && !c.completed && !quoted => {
                quoted = true;
                quoted_result(rec, text, later)
            }
            (None, None) => ToolResult::default(),
        };
        out.push(r);
    }
    if blamed && !quoted {
        out.push(quoted_result(rec, text, later));
    }
    out
}

/// A duplicate query the log names (a `Duplicate query detected`
/// rollback, an `Allow Duplicate`): its step, tool and fingerprint
/// (`<tool>_<query>`).
#[derive(Debug, Clone)]
pub struct LoggedQueryAt {
    pub step: usize,
    pub tool: String,
    pub query: String,
}

/// The result a rollback quotes. The log does not say whether the tool
/// returned it as its `result` (the query then counts as run) or its
/// `error` (it does not): a tool error is taken as an `error`, unless a
/// later step of the log names this turn's query as run before.
fn quoted_result(rec: &Recorded, text: &str, later: &[LoggedQueryAt]) -> ToolResult {
    let quoted = rec.result.clone().unwrap_or_default();
    let tool = rec.tool.as_deref().unwrap_or_default();
    let counted = later.iter().any(|q| {
        q.step > rec.step
            && q.tool == tool
            && q.query
                .strip_prefix(tool)
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|query| {
                    // A fingerprint joins its arguments with `_`.
                    let mut parts = query.split('_').filter(|p| !p.is_empty()).peekable();
                    parts.peek().is_some() && parts.all(|p| text.contains(p))
                })
    });
    let text = quoted;
    if rec.reason == Some(Reason::ToolError) && !counted {
        ToolResult {
            error: Some(text),
            ..ToolResult::default()
        }
    } else {
        ToolResult {
            result: text,
            ..ToolResult::default()
        }
    }
}

fn total_usage(calls: &[&RecordedCall]) -> Option<Usage> {
    let usages: Vec<Usage> = calls
        .iter()
        .filter_map(|c| match &c.result {
            CallResult::Answer(a) => a.usage,
            _ => None,
        })
        .collect();
    if usages.is_empty() {
        return None;
    }
    let sum = |f: fn(&Usage) -> Option<u64>| -> Option<u64> {
        let known: Vec<u64> = usages.iter().filter_map(f).collect();
        (!known.is_empty()).then(|| known.iter().sum())
    };
    Some(Usage {
        input_tokens: sum(|u| u.input_tokens),
        output_tokens: sum(|u| u.output_tokens),
        cached_input_tokens: sum(|u| u.cached_input_tokens),
    })
}

/// `meta.recording`: the answering call and every retry folded into it.
fn set_recording_meta(attempt: &mut Attempt, tries: &[Option<Try<'_>>], logged: &LoggedLlmCall) {
    let mut retries = Vec::new();
    let last = tries.len().saturating_sub(1);
    for (k, t) in tries.iter().enumerate() {
        let Some(t) = t else { continue };
        for (n, c) in t.calls.iter().enumerate() {
            let is_own = k == last && n + 1 == t.calls.len();
            if is_own {
                continue;
            }
            // A call the SDK tried again, else one upstream's client did.
            let kind = if n + 1 < t.calls.len() {
                "sdk".to_string()
            } else {
                logged
                    .retries
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| "client".into())
            };
            retries.push(call_json(c, Some(kind)));
        }
    }
    let Some(Some(own)) = tries.last() else {
        return;
    };
    let mut rec = match call_json(own.last(), None) {
        Json::Object(m) => m,
        _ => Map::new(),
    };
    rec.insert("retries".into(), Json::Array(retries));
    match attempt.meta.as_mut() {
        Some(Json::Object(m)) => {
            m.insert("recording".into(), Json::Object(rec));
        }
        _ => attempt.meta = Some(json!({ "recording": rec })),
    }
}

fn call_json(c: &RecordedCall, kind: Option<String>) -> Json {
    let mut m = Map::new();
    m.insert("call".into(), json!(c.call));
    m.insert("file".into(), json!(&*c.origin.file));
    m.insert("line".into(), json!(c.origin.line));
    if let Some(kind) = kind {
        m.insert("kind".into(), json!(kind));
    }
    if let Some(s) = c.seconds {
        m.insert("seconds".into(), json!(s));
    }
    match &c.result {
        CallResult::Answer(a) => {
            if let Some(u) = a.usage {
                m.insert("input_tokens".into(), json!(u.input_tokens));
                m.insert("output_tokens".into(), json!(u.output_tokens));
            }
            m.insert("finish".into(), json!(a.finish));
        }
        CallResult::Failed { status, message } => {
            m.insert("status".into(), json!(status));
            m.insert("error".into(), json!(message));
        }
        CallResult::NoResponse { kind, message } => {
            m.insert("error".into(), json!(format!("{kind}: {message}")));
        }
        CallResult::Unreadable(why) => {
            m.insert("error".into(), json!(why));
        }
    }
    Json::Object(m)
}

/// Equal texts, modulo upstream's `fix_server_name_in_text` (the server
/// names inside `<server_name>` the history may have corrected) and the
/// surrounding white space.
/// An empty answer cut at the length limit is kept as `LLM response is
/// empty.` (upstream's client).
pub fn same_text(history: &str, recorded: &str) -> bool {
    let empty = recorded.trim().is_empty() && history == "LLM response is empty.";
    empty
        || history.trim() == recorded.trim()
        || without_servers(history) == without_servers(recorded)
}

/// The text with every `<server_name>` emptied and the tool names upstream
/// renames (`python`, `python_code` → `run_python_code`) renamed.
fn without_servers(text: &str) -> String {
    let mut text = text.to_string();
    for wrong in ["python", "python_code"] {
        text = text.replace(
            &format!("<tool_name>{wrong}</tool_name>"),
            "<tool_name>run_python_code</tool_name>",
        );
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find("<server_name>") {
        out.push_str(&rest[..open + "<server_name>".len()]);
        rest = &rest[open + "<server_name>".len()..];
        match rest.find("</server_name>") {
            Some(close) => rest = &rest[close..],
            None => break,
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// Where two texts part, for a report.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let cut = |s: &str| s.chars().skip(at).take(40).collect::<String>();
    format!(
        "from character {at}: history {:?}, recording {:?}",
        cut(a),
        cut(b)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LoggedCall;

    #[test]
    fn server_names_do_not_make_texts_differ() {
        assert!(same_text(
            "x <server_name>tool-a</server_name> y",
            "x <server_name>tool_a</server_name> y\n"
        ));
        assert!(!same_text(
            "x <server_name>a</server_name> y",
            "x <server_name>a</server_name> z"
        ));
    }

    #[test]
    fn a_rolled_back_turn_gets_the_result_its_rollback_quotes() {
        let rec = Recorded {
            outcome: Some(Outcome::Rollback),
            reason: Some(Reason::ToolError),
            result: Some("Error executing tool scrape: 500".into()),
            calls: vec![LoggedCall {
                tool: "google_search".into(),
                completed: true,
                ..LoggedCall::default()
            }],
            ..Recorded::default()
        };
        let r = logged_results(&rec, "", &[]);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].effective_text(), "None");
        assert_eq!(r[1].effective_text(), "Error executing tool scrape: 500");
        assert!(r[1].error.is_some());
        let refusal = Recorded {
            outcome: Some(Outcome::Rollback),
            reason: Some(Reason::Refusal),
            ..Recorded::default()
        };
        assert!(logged_results(&refusal, "", &[]).is_empty());
    }
}
