//! Inspect AI logs → traces, one per sample and epoch. A log
//! (`EvalLog`: `version`, `eval`, `samples`) keeps each sample's
//! conversation in `samples[].messages`: Chat-style messages whose tool
//! calls are `{"id", "function": NAME, "arguments": {object}}` and whose
//! long strings may be stored once in `attachments` and referred to as
//! `attachment://HASH`. The `.eval` form is a ZIP of `header.json` and
//! `samples/*.json` ([`archive`]).

pub mod archive;
pub mod attachments;
pub mod figures;

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
    #[error(
        "sample {id}: its attachment:// references expand to more than {limit} bytes, the limit (docs/limits.md); sample skipped"
    )]
    AttachmentsTooLarge { id: String, limit: usize },
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

/// The sample's id as Inspect names it, and its trace id
/// `<id>_epoch_<epoch>` (how the `.eval` archive names its file).
fn sample_ids(sample: &Map<String, Json>, origin: &Origin) -> (String, String) {
    let id = match sample.get("id") {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        _ => crate::read::attribution::unnamed(origin),
    };
    let trace_id = match sample.get("epoch").and_then(Json::as_u64) {
        Some(epoch) => format!("{id}_epoch_{epoch}"),
        None => id.clone(),
    };
    (id, trace_id)
}

/// One sample's trace, from a sample held by a log: its messages are
/// copied only when they hold attachment references to resolve.
pub fn sample_trace(
    sample: &Map<String, Json>,
    model: Option<&str>,
    origin: &Origin,
) -> Result<Trace, InspectError> {
    let (id, _) = sample_ids(sample, origin);
    let messages = sample
        .get("messages")
        .and_then(Json::as_array)
        .ok_or_else(|| InspectError::NoMessages { id: id.clone() })?;
    match sample.get("attachments").and_then(Json::as_object) {
        Some(stored) if !stored.is_empty() => {
            let mut copy = Json::Array(messages.clone());
            let limit = attachments::limit_for(stored);
            attachments::resolve(&mut copy, stored, limit)
                .map_err(|e| InspectError::AttachmentsTooLarge { id, limit: e.limit })?;
            let resolved = copy.as_array().map_or(&[][..], Vec::as_slice);
            convert(sample, resolved, model, origin)
        }
        _ => convert(sample, messages, model, origin),
    }
}

/// One sample's trace, from a sample read on its own (an `.eval`
/// member): its references are resolved in place.
pub fn sample_trace_owned(
    mut sample: Map<String, Json>,
    model: Option<&str>,
    origin: &Origin,
) -> Result<Trace, InspectError> {
    let (id, _) = sample_ids(&sample, origin);
    let mut messages = match sample.remove("messages") {
        Some(Json::Array(m)) => Json::Array(m),
        _ => return Err(InspectError::NoMessages { id }),
    };
    if let Some(stored) = sample.get("attachments").and_then(Json::as_object) {
        let limit = attachments::limit_for(stored);
        attachments::resolve(&mut messages, stored, limit)
            .map_err(|e| InspectError::AttachmentsTooLarge { id, limit: e.limit })?;
    }
    sample.remove("attachments");
    let messages = messages.as_array().map_or(&[][..], Vec::as_slice);
    convert(&sample, messages, model, origin)
}

/// The attempts of a sample's messages, with what its model events and
/// scores record.
fn convert(
    sample: &Map<String, Json>,
    messages: &[Json],
    model: Option<&str>,
    origin: &Origin,
) -> Result<Trace, InspectError> {
    let (id, trace_id) = sample_ids(sample, origin);
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
    // One attempt per assistant message, in order (the conversion stops
    // early only at upstream's summary prompt, which Inspect never sends).
    let calls = figures::calls_by_message(sample);
    let assistant_ids = messages
        .iter()
        .filter(|m| m.get("role").and_then(Json::as_str) == Some("assistant"))
        .filter(|m| m.get("is_demo").and_then(Json::as_bool) != Some(true))
        .map(|m| m.get("id").and_then(Json::as_str));
    for (a, message_id) in attempts.iter_mut().zip(assistant_ids) {
        if let Some(call) = message_id.and_then(|m| calls.get(m)) {
            a.usage = call.usage;
            a.duration_s = call.duration_s;
        }
    }
    for a in &mut attempts {
        a.native_tools = true;
    }
    if let Some(first) = attempts.first_mut() {
        first.task_result = figures::task_result(sample);
    }
    // Each assistant message names the model that wrote it (the chat
    // reader takes it); the run's is the log's `eval.model`, else the
    // sample's output's.
    let mut trace = Trace::new(Arc::<str>::from(trace_id), attempts);
    trace.model = model
        .or_else(|| {
            sample
                .get("output")
                .and_then(|o| o.get("model"))
                .and_then(Json::as_str)
        })
        .map(Arc::from);
    Ok(trace)
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
            {"role": "assistant", "model": "gpt-4o-mini-2024-07-18",
             "content": [{"type": "reasoning", "reasoning": "r"}, {"type": "text", "text": "done"}]}
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
        // The log's model is the run's; a message's own model is its attempt's.
        assert_eq!(t.model.as_deref(), Some("openai/gpt-4o-mini"));
        assert_eq!(t.attempts[0].model, None);
        assert_eq!(
            t.attempts[1].model.as_deref(),
            Some("gpt-4o-mini-2024-07-18")
        );
    }

    #[test]
    fn a_log_without_samples_has_no_traces() {
        let log = json!({"version": 2, "status": "error", "eval": {"model": "m"}});
        assert!(from_log(log.as_object().unwrap(), &origin())
            .unwrap()
            .is_empty());
    }
}
