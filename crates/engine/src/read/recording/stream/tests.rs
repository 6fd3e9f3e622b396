//! Realistic event sequences of each API (the shapes OpenAI's and
//! Anthropic's streaming references and SDKs document).

use serde_json::{json, Value as Json};

use super::*;

fn sse(events: &[(Option<&str>, Json)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}

fn answer(result: CallResult) -> Answer {
    match result {
        CallResult::Answer(a) => a,
        other => panic!("not an answer: {other:?}"),
    }
}

fn chunk(delta: Json, finish: Json) -> (Option<&'static str>, Json) {
    (
        None,
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]}),
    )
}

fn chat_stream() -> String {
    let mut body = sse(&[
        chunk(json!({"role": "assistant", "content": ""}), Json::Null),
        chunk(json!({"content": "Let me "}), Json::Null),
        chunk(json!({"content": "search."}), Json::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
            "function": {"name": "search", "arguments": ""}}]}),
            Json::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":"}}]}),
            Json::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
            "function": {"name": "open", "arguments": "{}"}}]}),
            Json::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"rust\"}"}}]}),
            Json::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        (
            None,
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-2024", "choices": [],
            "usage": {"prompt_tokens": 30, "completion_tokens": 12, "prompt_tokens_details": {"cached_tokens": 10}}}),
        ),
    ]);
    body.push_str("data: [DONE]\n\n");
    body
}

#[test]
fn chat_chunks_merge_into_one_message() {
    let a = answer(merge(&Api::ChatCompletions, &chat_stream(), None));
    assert_eq!(a.text, "Let me search.");
    assert_eq!(a.tool_calls.len(), 2);
    assert_eq!(a.tool_calls[0]["id"], "call_a");
    assert_eq!(a.tool_calls[0]["function"]["arguments"], "{\"q\":\"rust\"}");
    assert_eq!(a.tool_calls[1]["function"]["name"], "open");
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));
    assert_eq!(a.model.as_deref(), Some("gpt-4o-2024"));
    let u = a.usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cached_input_tokens),
        (Some(30), Some(12), Some(10))
    );
    assert_eq!(a.incomplete, None);
}

#[test]
fn a_chat_refusal_is_the_text() {
    let mut body = sse(&[
        chunk(
            json!({"role": "assistant", "content": null, "refusal": ""}),
            Json::Null,
        ),
        chunk(json!({"refusal": "I can't help "}), Json::Null),
        chunk(json!({"refusal": "with that."}), Json::Null),
        chunk(json!({}), json!("stop")),
    ]);
    body.push_str("data: [DONE]\n\n");
    let a = answer(merge(&Api::ChatCompletions, &body, None));
    assert_eq!(a.text, "I can't help with that.");
}

#[test]
fn a_cut_chat_stream_keeps_what_arrived() {
    let full = chat_stream();
    // Cut in the middle of the fourth event, as a client that hung up leaves it.
    let cut_at = full.match_indices("data: ").nth(3).unwrap().0 + 20;
    let a = answer(merge(
        &Api::ChatCompletions,
        &full[..cut_at],
        Some("client_disconnected: gone".into()),
    ));
    assert_eq!(a.text, "Let me search.");
    assert_eq!(a.finish, None);
    assert!(a
        .incomplete
        .as_deref()
        .unwrap()
        .contains("client_disconnected"));
    // No recorded error, but no [DONE] either: still incomplete.
    let a = answer(merge(&Api::ChatCompletions, &full[..cut_at], None));
    assert!(a.incomplete.is_some());
}

#[test]
fn sse_fields_follow_the_spec() {
    let got = events(": comment\r\nevent: a\r\ndata: x\r\ndata:y\r\n\r\nid: 3\ndata: z");
    assert_eq!(
        got,
        [
            Event {
                name: Some("a".into()),
                data: "x\ny".into()
            },
            Event {
                name: None,
                data: "z".into()
            }
        ]
    );
}

fn anthropic_stream(stop: bool) -> String {
    let mut events = vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "model": "claude-sonnet-4", "stop_reason": null,
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "The user wants"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "text", "text": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "Checking the "}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "weather."}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 2}),
        ),
    ];
    if stop {
        events.push((Some("message_delta"), json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}})));
        events.push((Some("message_stop"), json!({"type": "message_stop"})));
    }
    sse(&events)
}

#[test]
fn anthropic_events_merge_into_one_message() {
    let a = answer(merge(
        &Api::AnthropicMessages,
        &anthropic_stream(true),
        None,
    ));
    assert_eq!(a.text, "Checking the weather.");
    assert_eq!(a.tool_calls[0]["id"], "toolu_1");
    assert_eq!(
        a.tool_calls[0]["function"]["arguments"],
        "{\"city\": \"Paris\"}"
    );
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));
    let u = a.usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (Some(112), Some(100), Some(89))
    );
    assert_eq!(a.incomplete, None);
    let cut = answer(merge(
        &Api::AnthropicMessages,
        &anthropic_stream(false),
        Some("upstream: reset".into()),
    ));
    assert_eq!(cut.text, "Checking the weather.");
    assert_eq!(cut.finish, None);
    assert!(cut.incomplete.is_some());
}

#[test]
fn an_error_event_instead_of_an_answer_is_a_failure() {
    let body = sse(&[
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 3}}}),
        ),
        (
            Some("error"),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]);
    let CallResult::Failed { status, message } = merge(&Api::AnthropicMessages, &body, None) else {
        panic!()
    };
    assert_eq!(status, 200);
    assert!(message.contains("Overloaded"));
}

fn responses_events(complete: bool) -> Vec<(Option<&'static str>, Json)> {
    let mut events = vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-5", "output": []}}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
        ),
        (
            Some("response.content_part.added"),
            json!({"type": "response.content_part.added", "sequence_number": 2,
            "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": ""}}),
        ),
        (
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "sequence_number": 3,
            "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Double "}),
        ),
        (
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "sequence_number": 4,
            "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "bubble."}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 5, "output_index": 1,
            "item": {"id": "fc_1", "type": "function_call", "call_id": "call_9", "name": "bath", "arguments": ""}}),
        ),
        (
            Some("response.function_call_arguments.delta"),
            json!({"type": "response.function_call_arguments.delta",
            "sequence_number": 6, "item_id": "fc_1", "output_index": 1, "delta": "{\"n\":"}),
        ),
        (
            Some("response.function_call_arguments.delta"),
            json!({"type": "response.function_call_arguments.delta",
            "sequence_number": 7, "item_id": "fc_1", "output_index": 1, "delta": "10}"}),
        ),
    ];
    if complete {
        events.push((Some("response.completed"), json!({"type": "response.completed", "sequence_number": 8,
            "response": {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-2025",
                "output": [
                    {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Double bubble.", "annotations": []}]},
                    {"id": "fc_1", "type": "function_call", "call_id": "call_9", "name": "bath", "arguments": "{\"n\":10}", "status": "completed"}],
                "usage": {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 8}, "output_tokens": 9}}})));
    }
    events
}

#[test]
fn responses_prefer_the_completed_response() {
    let a = answer(merge(&Api::Responses, &sse(&responses_events(true)), None));
    assert_eq!(a.text, "Double bubble.");
    assert_eq!(a.tool_calls[0]["function"]["arguments"], "{\"n\":10}");
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));
    assert_eq!(a.model.as_deref(), Some("gpt-5-2025"));
    assert_eq!(a.usage.unwrap().cached_input_tokens, Some(8));
    assert_eq!(a.incomplete, None);
}

#[test]
fn a_cut_responses_stream_falls_back_to_the_deltas() {
    let a = answer(merge(
        &Api::Responses,
        &sse(&responses_events(false)),
        Some("upstream: eof".into()),
    ));
    assert_eq!(a.text, "Double bubble.");
    assert_eq!(a.tool_calls[0]["id"], "call_9");
    assert_eq!(a.tool_calls[0]["function"]["arguments"], "{\"n\":10}");
    assert_eq!(a.model.as_deref(), Some("gpt-5"));
    assert_eq!(a.finish, None);
    assert!(a.incomplete.is_some());
}

#[test]
fn a_failed_response_is_a_failure() {
    let body = sse(&[(
        Some("response.failed"),
        json!({"type": "response.failed",
        "response": {"status": "failed", "output": [], "error": {"code": "server_error", "message": "The model failed"}}}),
    )]);
    let CallResult::Failed { message, .. } = merge(&Api::Responses, &body, None) else {
        panic!()
    };
    assert!(message.contains("The model failed"));
}

#[test]
fn a_stream_is_known_by_its_text_too() {
    let response = json!({"status": 200, "headers": {"content-type": "text/plain"}, "body_text": chat_stream()});
    let a = answer(super::super::response::read(
        &Api::ChatCompletions,
        Some(&response),
        None,
    ));
    assert_eq!(a.text, "Let me search.");
    let plain = json!({"status": 200, "headers": {}, "body_text": "Internal error"});
    assert!(matches!(
        super::super::response::read(&Api::ChatCompletions, Some(&plain), None),
        CallResult::Unreadable(_)
    ));
}

#[test]
fn a_stream_of_nothing_readable_is_no_answer() {
    assert!(matches!(
        merge(&Api::ChatCompletions, "data: {not json\n\n", None),
        CallResult::Unreadable(_)
    ));
}
