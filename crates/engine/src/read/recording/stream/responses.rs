//! Responses events merged. The terminal event (`response.completed`,
//! `response.incomplete`, `response.failed`) carries the whole response:
//! it is read as an unstreamed one. When the stream was cut before it,
//! the answer is put together from the items and deltas that came:
//! `response.output_item.added` / `.done`, `response.output_text.delta`,
//! `response.refusal.delta`, `response.function_call_arguments.delta`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{Event, Merged};
use crate::read::calls::chat_call;
use crate::read::recording::response::{message_in, responses_answer, responses_finish};

#[derive(Default)]
struct Item {
    kind: String,
    text: String,
    refusal: String,
    call_id: Option<Json>,
    name: String,
    arguments: String,
}

/// Merges a Responses stream.
pub fn merge(events: &[Event]) -> Merged {
    let mut merged = Merged::default();
    let mut items: BTreeMap<u64, Item> = BTreeMap::new();
    let mut last: Option<Json> = None;
    for event in events {
        let Some(data) = merged.json(event) else {
            continue;
        };
        let kind = data
            .get("type")
            .and_then(Json::as_str)
            .or(event.name.as_deref())
            .unwrap_or("")
            .to_string();
        let index = data.get("output_index").and_then(Json::as_u64).unwrap_or(0);
        let delta = data.get("delta").and_then(Json::as_str).unwrap_or("");
        match kind.as_str() {
            "response.created" | "response.in_progress" => {
                if let Some(model) = data
                    .get("response")
                    .and_then(|r| r.get("model"))
                    .and_then(Json::as_str)
                {
                    merged.answer.model = Some(model.into());
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                let item = data.get("item");
                let get = |k: &str| item.and_then(|i| i.get(k));
                let entry = items.entry(index).or_default();
                entry.kind = get("type").and_then(Json::as_str).unwrap_or("").to_string();
                if let Some(id) = get("call_id") {
                    entry.call_id = Some(id.clone());
                }
                if let Some(name) = get("name").and_then(Json::as_str) {
                    entry.name = name.to_string();
                }
                match get("arguments").and_then(Json::as_str) {
                    Some(args) if !args.is_empty() => entry.arguments = args.to_string(),
                    _ => {}
                }
            }
            "response.output_text.delta" => items.entry(index).or_default().text.push_str(delta),
            "response.refusal.delta" => items.entry(index).or_default().refusal.push_str(delta),
            "response.function_call_arguments.delta" => {
                items.entry(index).or_default().arguments.push_str(delta)
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                merged.done = true;
                last = data.get("response").cloned();
            }
            "error" => {
                merged.error = Some(message_in(&data).unwrap_or_else(|| data.to_string()));
            }
            _ => {}
        }
    }
    if let Some(response) = last {
        if response.get("status").and_then(Json::as_str) == Some("failed") {
            let error = response.get("error").unwrap_or(&Json::Null);
            merged.error = Some(message_in(error).unwrap_or_else(|| "response.failed".into()));
            return merged;
        }
        if let Ok(answer) = responses_answer(&response) {
            merged.answer = answer;
            return merged;
        }
    }
    for item in items.into_values() {
        match item.kind.as_str() {
            "function_call" => merged.answer.tool_calls.push(chat_call(
                item.call_id.as_ref(),
                &item.name,
                &Json::String(item.arguments),
            )),
            _ if !item.text.is_empty() => merged.answer.text.push_str(&item.text),
            _ => merged.answer.text.push_str(&item.refusal),
        }
    }
    let has_calls = !merged.answer.tool_calls.is_empty();
    merged.answer.finish = merged
        .done
        .then(|| responses_finish(&serde_json::json!({"status": "completed"}), has_calls))
        .flatten();
    merged
}
