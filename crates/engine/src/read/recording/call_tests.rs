use serde_json::{json, Value as Json};

use super::*;

fn origin() -> Origin {
    Origin {
        file: "rec.jsonl".into(),
        line: 3,
    }
}

fn line(request: Json, response: Json, error: Json) -> Map<String, Json> {
    let mut v = json!({"mirotrace_recording": 1, "call": 7,
        "started": "2026-12-03T17:00:00.123456Z", "seconds": 1.5, "first_byte_seconds": 0.25,
        "upstream": "https://api.openai.com/v1", "request": request, "error": error});
    if !response.is_null() {
        v["response"] = response;
    }
    v.as_object().unwrap().clone()
}

fn chat_request(headers: Json) -> Json {
    json!({"method": "POST", "path": "/v1/chat/completions", "headers": headers, "bytes": 10,
        "body": {"model": "m1", "max_tokens": 4096, "messages": [
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": [{"type": "text", "text": "task"}]}]}})
}

fn ok(body: Json) -> Json {
    json!({"status": 200, "headers": {"content-type": "application/json"}, "body": body})
}

#[test]
fn a_chat_completion_is_read_whole() {
    let headers = json!({"X-Upstream-Session-Id": "task-7-3f1c", "x-stainless-retry-count": "2"});
    let body = json!({"model": "m1-2026", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\":1}"}}]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 64}}});
    let call = parse(
        &line(chat_request(headers), ok(body), Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert_eq!(call.call, 7);
    assert_eq!(call.origin, origin());
    assert_eq!(call.started.as_deref(), Some("2026-12-03T17:00:00.123456Z"));
    assert_eq!(
        (call.seconds, call.first_byte_seconds),
        (Some(1.5), Some(0.25))
    );
    assert_eq!(call.session.as_deref(), Some("task-7-3f1c"));
    assert_eq!(call.sdk_retry, 2);
    assert_eq!(call.api, Api::ChatCompletions);
    assert_eq!(call.request.system_prompt.as_deref(), Some("SYS"));
    assert_eq!(call.request.messages.len(), 1);
    assert_eq!(call.request.first_user_text().as_deref(), Some("task"));
    assert_eq!(call.request.max_tokens, Some(4096));
    assert_eq!(call.request.model.as_deref(), Some("m1"));
    assert!(!call.request.stream);
    let CallResult::Answer(a) = call.result else {
        panic!("{:?}", call.result)
    };
    assert_eq!(a.text, "Looking.");
    assert_eq!(a.tool_calls[0]["function"]["name"], "search");
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));
    assert_eq!(a.model.as_deref(), Some("m1-2026"));
    let u = a.usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cached_input_tokens),
        (Some(100), Some(20), Some(64))
    );
    assert_eq!(a.incomplete, None);
}

#[test]
fn another_trace_header_is_read_case_insensitively() {
    let headers = json!({"x-run": ["r1", "r2"], "x-upstream-session-id": "s"});
    let call = parse(
        &line(
            chat_request(headers),
            ok(json!({"choices": []})),
            Json::Null,
        ),
        origin(),
        "X-Run",
    )
    .unwrap();
    assert_eq!(call.session.as_deref(), Some("r1"));
    assert_eq!(call.sdk_retry, 0);
    assert!(matches!(call.result, CallResult::Unreadable(_)));
}

#[test]
fn errors_are_failures_never_answers() {
    let failed = json!({"status": 400, "headers": {}, "body":
        {"error": {"message": "This model's maximum context length is 128000 tokens", "type": "invalid_request_error"}}});
    let call = parse(
        &line(chat_request(json!({})), failed, Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert_eq!(
        call.result,
        CallResult::Failed {
            status: 400,
            message: "This model's maximum context length is 128000 tokens".into()
        }
    );
    let anthropic = json!({"status": 529, "headers": {}, "body":
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}});
    let call = parse(
        &line(chat_request(json!({})), anthropic, Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert_eq!(
        call.result,
        CallResult::Failed {
            status: 529,
            message: "Overloaded".into()
        }
    );
    let refused = json!({"kind": "connect", "message": "connection refused"});
    let call = parse(
        &line(chat_request(json!({})), Json::Null, refused),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert_eq!(
        call.result,
        CallResult::NoResponse {
            kind: "connect".into(),
            message: "connection refused".into()
        }
    );
    let omitted = json!({"status": 200, "headers": {}, "bytes": 209715200,
        "omitted": "body of 209715200 bytes is over --max-body (33554432)"});
    let call = parse(
        &line(chat_request(json!({})), omitted, Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    let CallResult::Unreadable(why) = call.result else {
        panic!()
    };
    assert!(why.contains("over --max-body"), "{why}");
}

#[test]
fn an_omitted_request_is_unseen_not_empty() {
    let request = json!({"method": "POST", "path": "/v1/chat/completions", "headers": {}, "bytes": 9,
        "omitted": "body of 9 bytes is over --max-body (1)"});
    let call = parse(
        &line(request, ok(json!({"choices": []})), Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert!(call
        .request
        .unreadable
        .as_deref()
        .unwrap()
        .contains("over --max-body"));
    assert!(!call.request.same_conversation(&call.request.clone()));
}

#[test]
fn anthropic_messages_are_read() {
    let request = json!({"method": "POST", "path": "/v1/messages", "headers": {}, "body": {
        "model": "claude-x", "max_tokens": 1024,
        "system": [{"type": "text", "text": "You are"}, {"type": "text", "text": " helpful."}],
        "messages": [{"role": "user", "content": "hi"}]}});
    let body = json!({"type": "message", "model": "claude-x-1", "stop_reason": "tool_use",
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"a": 1}}],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5, "output_tokens": 7}});
    let call = parse(
        &line(request, ok(body), Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert_eq!(call.api, Api::AnthropicMessages);
    assert_eq!(
        call.request.system_prompt.as_deref(),
        Some("You are helpful.")
    );
    let CallResult::Answer(a) = call.result else {
        panic!()
    };
    assert_eq!(a.text, "Let me check.");
    assert_eq!(a.tool_calls[0]["function"]["arguments"], "{\"a\":1}");
    assert_eq!(a.finish.as_deref(), Some("tool_calls"));
    let u = a.usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (Some(105), Some(90), Some(7))
    );
}

#[test]
fn responses_requests_become_chat_messages() {
    let request = json!({"method": "POST", "path": "/v1/responses", "headers": {}, "body": {
        "model": "gpt-x", "instructions": "Be brief.", "max_output_tokens": 300, "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]}});
    let body = json!({"object": "response", "status": "incomplete", "model": "gpt-x-1",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is sun"}]}],
        "usage": {"input_tokens": 50, "output_tokens": 300, "input_tokens_details": {"cached_tokens": 0}}});
    let call = parse(
        &line(request, ok(body), Json::Null),
        origin(),
        DEFAULT_TRACE_HEADER,
    )
    .unwrap();
    assert_eq!(call.api, Api::Responses);
    assert_eq!(call.request.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(call.request.max_tokens, Some(300));
    let roles: Vec<&str> = call
        .request
        .messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(call.request.messages[1]["tool_calls"][0]["id"], "call_1");
    let CallResult::Answer(a) = call.result else {
        panic!()
    };
    assert_eq!(
        (a.text.as_str(), a.finish.as_deref()),
        ("It is sun", Some("length"))
    );
}

#[test]
fn lines_that_are_no_calls_are_errors() {
    let mut l = line(chat_request(json!({})), Json::Null, Json::Null);
    l.insert("mirotrace_recording".into(), json!(2));
    assert!(parse(&l, origin(), DEFAULT_TRACE_HEADER)
        .unwrap_err()
        .contains("version 2"));
    l.insert("mirotrace_recording".into(), json!(1));
    l.remove("call");
    assert!(parse(&l, origin(), DEFAULT_TRACE_HEADER).is_err());
    let l = line(chat_request(json!({})), Json::Null, Json::Null);
    assert!(matches!(
        parse(&l, origin(), DEFAULT_TRACE_HEADER).unwrap().result,
        CallResult::Unreadable(_)
    ));
}

#[test]
fn the_api_comes_from_the_path_else_the_body() {
    use super::super::request::api_of;
    assert_eq!(
        api_of("/v1/chat/completions?x=1", None),
        Api::ChatCompletions
    );
    assert_eq!(
        api_of("/openai/deployments/d/chat/completions", None),
        Api::ChatCompletions
    );
    assert_eq!(api_of("/v1/messages", None), Api::AnthropicMessages);
    assert_eq!(api_of("/v1/responses", None), Api::Responses);
    assert_eq!(
        api_of("/generate", Some(&json!({"model": "m", "messages": []}))),
        Api::ChatCompletions
    );
    assert_eq!(
        api_of(
            "/x",
            Some(&json!({"model": "m", "system": "s", "messages": []}))
        ),
        Api::AnthropicMessages
    );
    assert_eq!(api_of("/v1/models", None), Api::Other("/v1/models".into()));
}
