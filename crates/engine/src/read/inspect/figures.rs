//! What an Inspect sample records about its LLM calls and its result:
//! each `model` event's `output.usage` and time, matched to the assistant
//! message it produced by the message's `id` (a call whose message cannot
//! be matched so is left without figures, never matched by position), and
//! the sample's `scores`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::model::{TaskResult, Usage};

/// What one model call recorded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Call {
    pub usage: Option<Usage>,
    pub duration_s: Option<f64>,
}

/// The calls of a sample's `model` events, by the id of the assistant
/// message each produced.
pub fn calls_by_message(sample: &Map<String, Json>) -> HashMap<String, Call> {
    let mut calls = HashMap::new();
    let Some(events) = sample.get("events").and_then(Json::as_array) else {
        return calls;
    };
    for event in events {
        if event.get("event").and_then(Json::as_str) != Some("model") {
            continue;
        }
        let Some(output) = event.get("output") else {
            continue;
        };
        let Some(id) = output
            .pointer("/choices/0/message/id")
            .and_then(Json::as_str)
        else {
            continue;
        };
        let duration_s = seconds(event.get("working_time")).or_else(|| seconds(output.get("time")));
        let call = Call {
            usage: output.get("usage").and_then(usage_of),
            duration_s,
        };
        calls.insert(id.to_string(), call);
    }
    calls
}

fn seconds(v: Option<&Json>) -> Option<f64> {
    v.and_then(Json::as_f64)
        .filter(|s| s.is_finite() && *s >= 0.0)
}

/// Inspect's `ModelUsage`. Providers differ in whether `input_tokens`
/// includes the cached ones (OpenAI) or not (Anthropic); `total_tokens`
/// tells which. Where it cannot tell, the input count is left unknown.
pub fn usage_of(u: &Json) -> Option<Usage> {
    let count = |k: &str| u.get(k).and_then(Json::as_u64);
    let (input, output) = (count("input_tokens"), count("output_tokens"));
    let read = count("input_tokens_cache_read").unwrap_or(0);
    let write = count("input_tokens_cache_write").unwrap_or(0);
    if input.is_none() && output.is_none() {
        return None;
    }
    let cache = read.saturating_add(write);
    let apart = match (input, output, count("total_tokens")) {
        _ if cache == 0 => Some(false),
        (Some(i), Some(o), Some(total)) if total == i.saturating_add(o).saturating_add(cache) => {
            Some(true)
        }
        (Some(i), Some(o), Some(total)) if total == i.saturating_add(o) => Some(false),
        _ => None,
    };
    let input_tokens = match apart {
        Some(true) => input.map(|i| i.saturating_add(cache)),
        Some(false) => input,
        None => None,
    };
    Some(Usage {
        input_tokens,
        output_tokens: output,
        cached_input_tokens: apart.map(|_| read),
    })
}

/// The sample's result: its scorer's value (`C`/`I` or a boolean → passed
/// or failed; a number, or `P`/`N` as Inspect counts them, → a score). With
/// several scorers the first by name is taken; the basis names it. A value
/// of another shape (a list, a dict of metrics) gives no result.
pub fn task_result(sample: &Map<String, Json>) -> Option<TaskResult> {
    let scores = sample.get("scores")?.as_object()?;
    let (name, score) = scores.iter().next()?;
    let value = score.get("value")?;
    let (success, score) = match value {
        Json::String(s) => match s.as_str() {
            "C" => (Some(true), None),
            "I" => (Some(false), None),
            "P" => (None, Some(0.5)),
            "N" => (None, Some(0.0)),
            _ => return None,
        },
        Json::Bool(b) => (Some(*b), None),
        Json::Number(n) => (None, Some(n.as_f64().filter(|f| f.is_finite())?)),
        _ => return None,
    };
    Some(TaskResult {
        success,
        score,
        basis: Arc::from(format!("Inspect scorer {name:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_counts_cached_input_once() {
        let openai = json!({"input_tokens": 100, "output_tokens": 5, "total_tokens": 105,
                            "input_tokens_cache_read": 60});
        let anthropic = json!({"input_tokens": 40, "output_tokens": 5, "total_tokens": 105,
                               "input_tokens_cache_read": 60});
        let unsure = json!({"input_tokens": 40, "output_tokens": 5, "input_tokens_cache_read": 60});
        let want = Usage {
            input_tokens: Some(100),
            output_tokens: Some(5),
            cached_input_tokens: Some(60),
        };
        assert_eq!(usage_of(&openai), Some(want));
        assert_eq!(usage_of(&anthropic), Some(want));
        assert_eq!(
            usage_of(&unsure),
            Some(Usage {
                input_tokens: None,
                output_tokens: Some(5),
                cached_input_tokens: None
            })
        );
        assert_eq!(usage_of(&json!({"x": 1})), None);
    }

    #[test]
    fn scores_give_results() {
        let result = |v: Json| {
            let s = json!({"scores": {"match": {"value": v}}});
            task_result(s.as_object().unwrap())
        };
        let r = result(json!("C")).unwrap();
        assert_eq!((r.success, r.score), (Some(true), None));
        assert_eq!(&*r.basis, "Inspect scorer \"match\"");
        assert_eq!(result(json!("I")).unwrap().success, Some(false));
        assert_eq!(result(json!(0.25)).unwrap().score, Some(0.25));
        assert_eq!(result(json!({"a": 1})), None);
        assert_eq!(result(json!("maybe")), None);
    }

    #[test]
    fn model_events_are_matched_by_message_id() {
        let s = json!({"events": [
            {"event": "sample_init"},
            {"event": "model", "working_time": 1.5, "output": {"time": 2.0,
                "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
                "choices": [{"message": {"id": "m1", "role": "assistant"}}]}},
            {"event": "model", "output": {"time": 0.5,
                "choices": [{"message": {"role": "assistant"}}]}}
        ]});
        let calls = calls_by_message(s.as_object().unwrap());
        assert_eq!(calls.len(), 1);
        assert_eq!(calls["m1"].duration_s, Some(1.5));
        assert_eq!(calls["m1"].usage.unwrap().output_tokens, Some(2));
    }
}
