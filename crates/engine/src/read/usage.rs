//! Token usage and task results as other harnesses record them, in one
//! place so that every reader reads them alike.
//!
//! Usage objects come in two vocabularies: OpenAI's (`prompt_tokens`,
//! `completion_tokens`, `prompt_tokens_details.cached_tokens`) and the one
//! Anthropic, OpenAI's Responses API and the native format use
//! (`input_tokens`, `output_tokens`, and `cached_input_tokens`,
//! `cache_read_input_tokens` or `input_tokens_details.cached_tokens`);
//! ATIF's step `metrics` use OpenAI's names with a flat `cached_tokens`;
//! LiteLLM and OpenHands write `cache_read_tokens`. A count that is
//! absent, negative or not an integer (an integer written as a float,
//! `7.0`, counts) is unknown.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::model::{TaskResult, Usage};

/// The counts of a usage object; `None` when it records none.
pub fn of(v: &Json) -> Option<Usage> {
    let obj = v.as_object()?;
    of_fields(|k| obj.get(k))
}

/// The keys [`of_fields`] looks up: a reader that decodes a usage object
/// itself keeps only these.
pub const KEYS: [&str; 10] = [
    "input_tokens",
    "prompt_tokens",
    "output_tokens",
    "completion_tokens",
    "cached_input_tokens",
    "cache_read_input_tokens",
    "cache_read_tokens",
    "cached_tokens",
    "prompt_tokens_details",
    "input_tokens_details",
];

/// The counts of a usage object whose fields `get` looks up (by one of
/// [`KEYS`]); `None` when it records none.
pub fn of_fields<'a>(get: impl Fn(&str) -> Option<&'a Json>) -> Option<Usage> {
    let first = |keys: &[&str]| keys.iter().find_map(|k| count(get(k)));
    let nested = |outer: &str| count(get(outer).and_then(|d| d.get("cached_tokens")));
    let usage = Usage {
        input_tokens: first(&["input_tokens", "prompt_tokens"]),
        output_tokens: first(&["output_tokens", "completion_tokens"]),
        cached_input_tokens: first(&[
            "cached_input_tokens",
            "cache_read_input_tokens",
            "cache_read_tokens",
            "cached_tokens",
        ])
        .or_else(|| nested("prompt_tokens_details"))
        .or_else(|| nested("input_tokens_details")),
    };
    (usage != Usage::default()).then_some(usage)
}

/// A count: a non-negative integer, or an integer written as a float.
pub fn count(v: Option<&Json>) -> Option<u64> {
    let v = v?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0)
            .map(|x| x as u64)
    })
}

/// A finite, non-negative number of seconds.
pub fn seconds(v: &Json) -> Option<f64> {
    v.as_f64().filter(|s| s.is_finite() && *s >= 0.0)
}

/// A tau-bench style `reward`: the task passed when it is 1 (tau-bench's
/// own rule, to 1e-6), failed otherwise; the reward is kept as the score.
pub fn reward(v: &Json) -> Option<TaskResult> {
    let r = v.as_f64().filter(|r| r.is_finite())?;
    Some(TaskResult {
        success: Some((r - 1.0).abs() < 1e-6),
        score: Some(r),
        basis: Arc::from("reward"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_vocabularies() {
        let openai = of(&json!({"prompt_tokens": 10, "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 4}}))
        .expect("usage");
        assert_eq!(
            (
                openai.input_tokens,
                openai.output_tokens,
                openai.cached_input_tokens
            ),
            (Some(10), Some(3), Some(4))
        );
        let anthropic = of(&json!({"input_tokens": 7, "output_tokens": -1})).expect("usage");
        assert_eq!(
            (anthropic.input_tokens, anthropic.output_tokens),
            (Some(7), None)
        );
        assert_eq!(of(&json!({"total": 5})), None);
        let litellm = of(&json!({"prompt_tokens": 7.0, "cache_read_tokens": 2})).expect("usage");
        assert_eq!(
            (litellm.input_tokens, litellm.cached_input_tokens),
            (Some(7), Some(2))
        );
        assert_eq!(of(&json!({"prompt_tokens": 1.5})), None);
        assert_eq!(of(&json!("12")), None);
    }

    #[test]
    fn rewards() {
        assert_eq!(reward(&json!(1.0)).and_then(|r| r.success), Some(true));
        assert_eq!(reward(&json!(0.5)).and_then(|r| r.success), Some(false));
        assert_eq!(reward(&json!("1")), None);
    }
}
