//! Token counts as harnesses record them, in the spellings they use:
//! Chat Completions (`prompt_tokens`, `completion_tokens`,
//! `prompt_tokens_details.cached_tokens`), Responses and Anthropic
//! (`input_tokens`, `output_tokens`, `cache_read_input_tokens`), LiteLLM's
//! and OpenHands' `cache_read_tokens`. Shared by the readers that fill
//! [`Attempt::usage`](crate::model::Attempt::usage).

use serde_json::Value as Json;

use crate::model::Usage;

/// A count: a non-negative integer, or an integer written as a float.
pub fn count(v: Option<&Json>) -> Option<u64> {
    let v = v?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0)
            .map(|x| x as u64)
    })
}

/// The usage an object records; `None` when it names no count.
pub fn usage_of(u: &Json) -> Option<Usage> {
    let first = |keys: &[&str]| keys.iter().find_map(|k| count(u.get(*k)));
    let cached = first(&[
        "cache_read_tokens",
        "cache_read_input_tokens",
        "cached_tokens",
    ])
    .or_else(|| {
        ["prompt_tokens_details", "input_tokens_details"]
            .iter()
            .find_map(|k| count(u.get(*k)?.get("cached_tokens")))
    });
    let usage = Usage {
        input_tokens: first(&["prompt_tokens", "input_tokens"]),
        output_tokens: first(&["completion_tokens", "output_tokens"]),
        cached_input_tokens: cached,
    };
    (usage != Usage::default()).then_some(usage)
}

/// A duration in seconds: a finite, non-negative number.
pub fn seconds(v: Option<&Json>) -> Option<f64> {
    v?.as_f64().filter(|s| s.is_finite() && *s >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spellings_of_the_counts() {
        let chat = json!({"prompt_tokens": 10, "completion_tokens": 2,
                          "prompt_tokens_details": {"cached_tokens": 4}});
        assert_eq!(
            usage_of(&chat),
            Some(Usage {
                input_tokens: Some(10),
                output_tokens: Some(2),
                cached_input_tokens: Some(4)
            })
        );
        let responses = json!({"input_tokens": 7.0, "output_tokens": 1});
        assert_eq!(usage_of(&responses).unwrap().input_tokens, Some(7));
        assert_eq!(usage_of(&json!({"total": 3})), None);
        assert_eq!(usage_of(&json!({"prompt_tokens": -1})), None);
        assert_eq!(seconds(Some(&json!(1.5))), Some(1.5));
        assert_eq!(seconds(Some(&json!(-1))), None);
    }
}
