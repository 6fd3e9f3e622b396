//! Chat Completions chunks (`chat.completion.chunk`) merged: the first
//! choice's content and refusal deltas, its tool-call deltas by `index`
//! (the id and name come once, the arguments in fragments), its
//! `finish_reason`, the usage chunk (`stream_options.include_usage`, an
//! empty `choices`), and `[DONE]`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{Event, Merged};
use crate::read::calls::{chat_call, openai_finish};
use crate::read::usage;

#[derive(Default)]
struct Call {
    id: Option<Json>,
    name: String,
    arguments: String,
}

/// Merges a Chat Completions stream.
pub fn merge(events: &[Event]) -> Merged {
    let mut merged = Merged::default();
    let mut refusal = String::new();
    let mut calls: BTreeMap<u64, Call> = BTreeMap::new();
    for event in events {
        if event.data.trim() == "[DONE]" {
            merged.done = true;
            continue;
        }
        let Some(chunk) = merged.json(event) else {
            continue;
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            merged.error = Some(
                super::super::response::message_in(error).unwrap_or_else(|| error.to_string()),
            );
            continue;
        }
        if let Some(model) = chunk.get("model").and_then(Json::as_str) {
            merged.answer.model = Some(model.into());
        }
        if let Some(u) = chunk.get("usage").and_then(usage::of) {
            merged.answer.usage = Some(u);
        }
        let choice = chunk.get("choices").and_then(Json::as_array).and_then(|c| {
            c.iter()
                .find(|c| c.get("index").and_then(Json::as_u64).unwrap_or(0) == 0)
        });
        let Some(choice) = choice else { continue };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Json::as_str) {
                merged.answer.text.push_str(text);
            }
            if let Some(text) = delta.get("refusal").and_then(Json::as_str) {
                refusal.push_str(text);
            }
            for (position, d) in delta
                .get("tool_calls")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let index = d
                    .get("index")
                    .and_then(Json::as_u64)
                    .unwrap_or(position as u64);
                let call = calls.entry(index).or_default();
                if let Some(id) = d.get("id").filter(|i| !i.is_null()) {
                    call.id = Some(id.clone());
                }
                let function = d.get("function");
                if let Some(name) = function.and_then(|f| f.get("name")).and_then(Json::as_str) {
                    call.name.push_str(name);
                }
                if let Some(args) = function
                    .and_then(|f| f.get("arguments"))
                    .and_then(Json::as_str)
                {
                    call.arguments.push_str(args);
                }
            }
        }
        if let Some(finish) = choice.get("finish_reason").and_then(Json::as_str) {
            merged.answer.finish = Some(openai_finish(finish).to_string());
        }
    }
    if merged.answer.text.is_empty() {
        merged.answer.text = refusal;
    }
    merged.answer.tool_calls = calls
        .into_values()
        .map(|c| chat_call(c.id.as_ref(), &c.name, &Json::String(c.arguments)))
        .collect();
    merged
}
