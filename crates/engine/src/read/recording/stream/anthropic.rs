//! Anthropic Messages events merged: `message_start` (model, input
//! usage), `content_block_start` / `content_block_delta` (`text_delta`,
//! `input_json_delta` fragments of a tool's input, `thinking_delta`, left
//! out of the text as a whole response's thinking blocks are),
//! `message_delta` (`stop_reason`, the final usage), `message_stop`, and
//! `error`.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use super::{Event, Merged};
use crate::read::calls::{chat_call, openai_finish};

#[derive(Default)]
struct Block {
    kind: String,
    text: String,
    id: Option<Json>,
    name: String,
    input: String,
}

/// Merges an Anthropic Messages stream.
pub fn merge(events: &[Event]) -> Merged {
    let mut merged = Merged::default();
    let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
    let mut usage: Map<String, Json> = Map::new();
    for event in events {
        let Some(data) = merged.json(event) else {
            continue;
        };
        let kind = data
            .get("type")
            .and_then(Json::as_str)
            .or(event.name.as_deref())
            .unwrap_or("");
        let index = data.get("index").and_then(Json::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                let message = data.get("message");
                if let Some(model) = message.and_then(|m| m.get("model")).and_then(Json::as_str) {
                    merged.answer.model = Some(model.into());
                }
                add_usage(&mut usage, message.and_then(|m| m.get("usage")));
            }
            "content_block_start" => {
                let block = data.get("content_block");
                let get = |k: &str| block.and_then(|b| b.get(k));
                blocks.insert(
                    index,
                    Block {
                        kind: get("type").and_then(Json::as_str).unwrap_or("").to_string(),
                        text: get("text").and_then(Json::as_str).unwrap_or("").to_string(),
                        id: get("id").cloned(),
                        name: get("name").and_then(Json::as_str).unwrap_or("").to_string(),
                        input: String::new(),
                    },
                );
            }
            "content_block_delta" => {
                let block = blocks.entry(index).or_default();
                let delta = data.get("delta");
                let get = |k: &str| delta.and_then(|d| d.get(k)).and_then(Json::as_str);
                match get("type") {
                    Some("text_delta") => block.text.push_str(get("text").unwrap_or("")),
                    Some("input_json_delta") => {
                        block.input.push_str(get("partial_json").unwrap_or(""))
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Json::as_str)
                {
                    merged.answer.finish = Some(openai_finish(reason).to_string());
                }
                add_usage(&mut usage, data.get("usage"));
            }
            "message_stop" => merged.done = true,
            "error" => {
                let error = data.get("error").unwrap_or(&data);
                merged.error = Some(
                    super::super::response::message_in(error).unwrap_or_else(|| error.to_string()),
                );
            }
            _ => {}
        }
    }
    for block in blocks.into_values() {
        match block.kind.as_str() {
            "tool_use" | "server_tool_use" => {
                let input = if block.input.trim().is_empty() {
                    "{}".to_string()
                } else {
                    block.input
                };
                merged.answer.tool_calls.push(chat_call(
                    block.id.as_ref(),
                    &block.name,
                    &Json::String(input),
                ));
            }
            "thinking" | "redacted_thinking" => {}
            _ => merged.answer.text.push_str(&block.text),
        }
    }
    merged.answer.usage = super::super::response::anthropic_usage(&Json::Object(usage));
    merged
}

/// Later usage counts replace earlier ones (`message_delta`'s are the
/// final, cumulative figures).
fn add_usage(into: &mut Map<String, Json>, usage: Option<&Json>) {
    for (k, v) in usage.and_then(Json::as_object).into_iter().flatten() {
        if !v.is_null() {
            into.insert(k.clone(), v.clone());
        }
    }
}
