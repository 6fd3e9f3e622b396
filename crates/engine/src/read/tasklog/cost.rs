//! What a task log says of cost and result: each LLM call's seconds from
//! the step timestamps, and the task's result.
//!
//! A call's duration is the time from the step before its `LLM Call` step
//! to that step (upstream logs a call when it returns; the step before it
//! is the last thing that happened before the request): an upper bound, to
//! the timestamps' resolution (whole seconds in upstream's format). Task
//! logs record no tokens per call; mirotrace reads none from them.
//!
//! The result is `final_judge_result` when the task was judged (`CORRECT`
//! passes, `INCORRECT` and `NOT_ATTEMPTED` fail), else the run's `status`
//! (`success` passes, `failed` fails): the basis says which. Any other
//! value is not a result mirotrace knows, and the trace has none.

use crate::read::clock::days_from_civil;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::model::{Attempt, TaskResult};

/// Sets each attempt's duration from the timestamps of `step_logs`.
pub fn durations(doc: &Map<String, Json>, attempts: &mut [Attempt]) {
    let Some(Json::Array(steps)) = doc.get("step_logs") else {
        return;
    };
    let at = |i: usize| {
        steps
            .get(i)
            .and_then(|s| s.get("timestamp"))
            .and_then(Json::as_str)
            .and_then(seconds_of)
    };
    for a in attempts {
        let Some(step) = a.recorded.as_ref().map(|r| r.step) else {
            continue;
        };
        let Some(before) = step.checked_sub(1) else {
            continue;
        };
        if let (Some(start), Some(end)) = (at(before), at(step)) {
            if end >= start {
                a.duration_s = Some(end - start);
            }
        }
    }
}

/// The task's result, from the judge or else the run's status.
pub fn result(doc: &Map<String, Json>) -> Option<TaskResult> {
    let judged = doc
        .get("final_judge_result")
        .and_then(Json::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let (basis, success) = match judged {
        Some(judge) => (
            "final_judge_result",
            match judge.to_ascii_uppercase().as_str() {
                "CORRECT" => true,
                "INCORRECT" | "NOT_ATTEMPTED" => false,
                _ => return None,
            },
        ),
        None => (
            "status",
            match doc.get("status").and_then(Json::as_str)? {
                "success" => true,
                "failed" => false,
                _ => return None,
            },
        ),
    };
    Some(TaskResult {
        success: Some(success),
        score: None,
        basis: Arc::from(basis),
    })
}

/// Seconds since 1970 of `YYYY-MM-DD HH:MM:SS[.fff]` (or with a `T`),
/// read as UTC: only differences are used.
fn seconds_of(ts: &str) -> Option<f64> {
    let ts = ts.trim();
    let (date, time) = ts.split_once([' ', 'T'])?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let time = time.trim_end_matches('Z');
    let mut t = time.splitn(3, ':');
    let (h, min) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = t.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || !(0.0..61.0).contains(&sec) {
        return None;
    }
    Some((days_from_civil(y, m, day) * 86_400 + h * 3600 + min * 60) as f64 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_subtract_across_days() {
        let a = seconds_of("2025-06-01 09:00:06").expect("parses");
        let b = seconds_of("2025-06-01 09:00:10").expect("parses");
        assert_eq!(b - a, 4.0);
        let c = seconds_of("2024-02-29T23:59:59.5").expect("parses");
        let d = seconds_of("2024-03-01 00:00:01").expect("parses");
        assert_eq!(d - c, 1.5);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(seconds_of("yesterday"), None);
    }

    #[test]
    fn judge_first_then_status() {
        let doc = |v: serde_json::Value| v.as_object().cloned().expect("object");
        let r = result(&doc(
            serde_json::json!({"final_judge_result": "INCORRECT", "status": "success"}),
        ))
        .expect("judged");
        assert_eq!((r.success, &*r.basis), (Some(false), "final_judge_result"));
        let r = result(&doc(
            serde_json::json!({"final_judge_result": "", "status": "success"}),
        ))
        .expect("status");
        assert_eq!((r.success, &*r.basis), (Some(true), "status"));
        assert_eq!(result(&doc(serde_json::json!({"status": "running"}))), None);
    }
}
