//! Inspect AI logs → traces, one per sample and epoch. A log
//! (`EvalLog`: `version`, `eval`, `samples`) keeps each sample's
//! conversation in `samples[].messages`: Chat-style messages whose tool
//! calls are `{"id", "function": NAME, "arguments": {object}}` and whose
//! long strings may be stored once in `attachments` and referred to as
//! `attachment://HASH`. The `.eval` form is a ZIP of `header.json` and
//! `samples/*.json` ([`archive`]).

pub mod archive;

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use crate::model::{Origin, Trace};

/// Why a log or sample could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    #[error("\"samples\" is not a list")]
    SamplesNotAList,
    #[error("sample {index} is not an object")]
    SampleNotAnObject { index: usize },
    #[error("sample {id}: \"messages\" is not a list")]
    NoMessages { id: String },
    #[error("sample {id}: {source}")]
    Chat { id: String, source: ChatError },
}

/// Every sample of a log (or the one sample given) as a trace.
pub fn from_log(obj: &Map<String, Json>, origin: &Origin) -> Result<Vec<Trace>, InspectError> {
    let model = model_of(obj.get("eval"));
    match obj.get("samples") {
        Some(Json::Array(samples)) => samples
            .iter()
            .enumerate()
            .map(|(index, s)| {
                let s = s
                    .as_object()
                    .ok_or(InspectError::SampleNotAnObject { index })?;
                sample_trace(s, model.as_deref(), origin)
            })
            .collect(),
        // A log header, or a log of a run that kept no samples.
        None | Some(Json::Null) if obj.contains_key("eval") => Ok(Vec::new()),
        None | Some(Json::Null) => sample_trace(obj, model.as_deref(), origin).map(|t| vec![t]),
        Some(_) => Err(InspectError::SamplesNotAList),
    }
}

/// The model a log ran (`eval.model`), without its provider prefix kept off.
pub fn model_of(eval: Option<&Json>) -> Option<String> {
    eval.and_then(|e| e.get("model"))
        .and_then(Json::as_str)
        .map(str::to_string)
}

/// One sample's trace, named `<id>_epoch_<epoch>` as the `.eval` archive
/// names its file.
pub fn sample_trace(
    sample: &Map<String, Json>,
    model: Option<&str>,
    origin: &Origin,
) -> Result<Trace, InspectError> {
    let id = match sample.get("id") {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        _ => origin.to_string(),
    };
    let trace_id = match sample.get("epoch").and_then(Json::as_u64) {
        Some(epoch) => format!("{id}_epoch_{epoch}"),
        None => id.clone(),
    };
    let messages = sample
        .get("messages")
        .and_then(Json::as_array)
        .ok_or_else(|| InspectError::NoMessages { id: id.clone() })?;
    let resolved;
    let messages = match sample.get("attachments").and_then(Json::as_object) {
        Some(attachments) if !attachments.is_empty() => {
            let mut copy = Json::Array(messages.clone());
            resolve_attachments(&mut copy, attachments);
            resolved = copy;
            resolved.as_array().map_or(&[][..], Vec::as_slice)
        }
        _ => messages.as_slice(),
    };
    let mut attempts = chat::convert_messages(
        messages,
        SessionTarget {
            trace_id: &trace_id,
            session: "main",
            agent: "main",
            origin,
            system_prompt: None,
        },
    )
    .map_err(|source| InspectError::Chat {
        id: id.clone(),
        source,
    })?;
    for a in &mut attempts {
        a.native_tools = true;
    }
    let model = model.map(str::to_string).or_else(|| {
        sample
            .get("output")
            .and_then(|o| o.get("model"))
            .and_then(Json::as_str)
            .map(str::to_string)
    });
    if let (Some(first), Some(model)) = (attempts.first_mut(), model) {
        first.set_meta(serde_json::json!({ "model": model }));
    }
    Ok(Trace::new(Arc::<str>::from(trace_id), attempts))
}

/// Replaces `attachment://HASH` strings by the text stored for them.
fn resolve_attachments(value: &mut Json, attachments: &Map<String, Json>) {
    match value {
        Json::String(s) => {
            if let Some(text) = s
                .strip_prefix("attachment://")
                .and_then(|hash| attachments.get(hash))
                .and_then(Json::as_str)
            {
                *s = text.to_string();
            }
        }
        Json::Array(items) => items
            .iter_mut()
            .for_each(|v| resolve_attachments(v, attachments)),
        Json::Object(obj) => obj
            .values_mut()
            .for_each(|v| resolve_attachments(v, attachments)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> Origin {
        Origin {
            file: "log.json".into(),
            line: 1,
        }
    }

    #[test]
    fn samples_become_traces_with_their_calls() {
        let log = json!({"version": 2, "eval": {"model": "openai/gpt-4o-mini"}, "samples": [{
        "id": 3, "epoch": 2, "input": "x",
        "attachments": {"abc": "long page text"},
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "function": "web_go", "arguments": {"url": "u"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "attachment://abc"},
            {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "r"},
                                               {"type": "text", "text": "done"}]}
        ]}]});
        let traces = from_log(log.as_object().unwrap(), &origin()).unwrap();
        assert_eq!(traces.len(), 1);
        let t = &traces[0];
        assert_eq!(&*t.trace_id, "3_epoch_2");
        assert_eq!(t.attempts.len(), 2);
        assert!(t.attempts.iter().all(|a| a.native_tools));
        assert_eq!(t.attempts[0].tool_results[0].result, "long page text");
        assert_eq!(
            t.attempts[0].tool_calls.as_ref().unwrap()[0]["function"]["arguments"],
            "{\"url\":\"u\"}"
        );
        assert_eq!(t.attempts[1].content, "done");
        assert_eq!(t.attempts[0].model.as_deref(), Some("openai/gpt-4o-mini"));
    }

    #[test]
    fn a_log_without_samples_has_no_traces() {
        let log = json!({"version": 2, "status": "error", "eval": {"model": "m"}});
        assert!(from_log(log.as_object().unwrap(), &origin())
            .unwrap()
            .is_empty());
    }
}
