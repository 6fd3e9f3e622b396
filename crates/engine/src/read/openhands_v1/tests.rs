use super::*;

fn origin() -> Origin {
    Origin {
        file: "events.jsonl".into(),
        line: 1,
    }
}

fn action(id: &str, response: &str, call: &str, thought: &str) -> Json {
    json!({"kind": "ActionEvent", "id": id, "timestamp": "2025-01-01T00:00:00", "source": "agent",
           "thought": [{"type": "text", "text": thought}], "tool_name": "terminal", "tool_call_id": call,
           "tool_call": {"id": call, "name": "terminal", "arguments": "{\"command\": \"ls\"}", "origin": "completion"},
           "llm_response_id": response, "action": {"kind": "TerminalAction", "command": "ls"}})
}

fn observation(call: &str, text: &str) -> Json {
    json!({"kind": "ObservationEvent", "id": format!("o-{call}"), "source": "environment", "tool_name": "terminal",
           "tool_call_id": call, "action_id": "a", "observation": {"kind": "TerminalObservation",
           "content": [{"type": "text", "text": text}], "is_error": false}})
}

fn stream() -> Vec<Json> {
    vec![
        json!({"kind": "SystemPromptEvent", "id": "s", "source": "agent",
               "system_prompt": {"type": "text", "text": "You are OpenHands agent."}, "tools": []}),
        json!({"kind": "MessageEvent", "id": "u", "source": "user",
               "llm_message": {"role": "user", "content": [{"type": "text", "text": "list files"}]}}),
        action("a1", "resp-1", "c1", "Two looks at once."),
        action("a2", "resp-1", "c2", ""),
        observation("c2", "B"),
        observation("c1", "A"),
        json!({"kind": "ConversationStateUpdateEvent", "id": "st", "source": "environment", "key": "stats",
               "value": {"usage_to_metrics": {"agent": {
                   "token_usages": [{"prompt_tokens": 30, "completion_tokens": 4, "cache_read_tokens": 20, "response_id": "resp-1"}],
                   "response_latencies": [{"model": "m", "latency": 2.5, "response_id": "resp-1"}]}}}}),
        json!({"kind": "MessageEvent", "id": "m", "source": "agent", "llm_response_id": "resp-2",
               "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}}),
        json!({"kind": "PauseEvent", "id": "p", "source": "user"}),
        json!({"kind": "FutureEvent", "id": "f", "source": "agent"}),
    ]
}

#[test]
fn one_attempt_per_llm_response_with_parallel_calls() {
    let events = stream();
    let read = from_events(
        events.iter().enumerate().map(|(i, e)| (i as u64 + 1, e)),
        "conv",
        &origin(),
    )
    .unwrap();
    let a = &read.trace.attempts;
    assert_eq!(a.len(), 2);
    assert_eq!(a[0].content, "Two looks at once.");
    assert_eq!(
        a[0].tool_calls.as_ref().unwrap().as_array().unwrap().len(),
        2
    );
    let results: Vec<&str> = a[0]
        .tool_results
        .iter()
        .map(|r| r.result.as_str())
        .collect();
    assert_eq!(results, ["A", "B"]);
    assert_eq!(
        a[0].system_prompt.as_deref(),
        Some("You are OpenHands agent.")
    );
    assert_eq!(a[0].usage.unwrap().cached_input_tokens, Some(20));
    assert_eq!(a[0].duration_s, Some(2.5));
    assert_eq!(a[0].origin.line, 3);
    assert_eq!(a[1].content, "Done.");
    assert!(a[1].usage.is_none());
    assert!(a.iter().all(|a| a.native_tools));
    assert_eq!(read.skipped.get("ConversationStateUpdateEvent"), Some(&1));
    assert_eq!(read.skipped.get("PauseEvent"), Some(&1));
    assert_eq!(
        read.problems,
        ["line 10: unknown OpenHands V1 event kind \"FutureEvent\", skipped"]
    );
}

#[test]
fn events_are_recognised_by_kind() {
    let events = stream();
    assert!(is_event_list(&events));
    assert!(is_event(events[0].as_object().unwrap()));
    assert!(!is_event(
        json!({"kind": "ActionEvent"}).as_object().unwrap()
    ));
    assert!(!is_event(
        json!({"kind": "Sedan", "id": 1}).as_object().unwrap()
    ));
}

#[test]
fn an_evaluation_line_carries_metrics_and_resolved() {
    let record = json!({"instance_id": "django__django-1", "history": stream()[..6],
        "metrics": {"token_usages": [{"prompt_tokens": 9, "completion_tokens": 1, "response_id": "resp-1"}]},
        "report": {"resolved": true}});
    let read = from_record(record.as_object().unwrap(), &origin()).unwrap();
    assert_eq!(&*read.trace.trace_id, "django__django-1");
    let first = &read.trace.attempts[0];
    assert_eq!(first.usage.unwrap().input_tokens, Some(9));
    let result = first.task_result.as_ref().unwrap();
    assert_eq!(
        (result.success, &*result.basis),
        (Some(true), "report.resolved")
    );
}

#[test]
fn every_event_is_read_counted_or_reported() {
    let mut events = stream();
    events.push(json!("not an event"));
    let read = from_events(
        events.iter().enumerate().map(|(i, e)| (i as u64 + 1, e)),
        "conv",
        &origin(),
    )
    .unwrap();
    let skipped: usize = read.skipped.values().sum();
    assert_eq!(read.read + skipped + read.problems.len(), events.len());
    assert_eq!((read.read, skipped, read.problems.len()), (7, 2, 2));
    assert_eq!(
        read.trace.not_attempts,
        [
            ("openhands-v1:ConversationStateUpdateEvent".to_string(), 1),
            ("openhands-v1:PauseEvent".to_string(), 1)
        ]
    );
}

#[test]
fn a_line_decoded_as_an_event_reads_as_the_parsed_event() {
    let events = stream();
    let lines: Vec<String> = events.iter().map(Json::to_string).collect();
    let decoded: Vec<(u64, Option<Event<'static>>)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, event::of_text(l)))
        .collect();
    // The unknown kind is not decoded on the fast path (parsed whole
    // instead, then reported); every known one is.
    let unknown = decoded.iter().filter(|(_, e)| e.is_none()).count();
    assert_eq!(unknown, 1);
    let fast: Vec<(u64, Option<Event<'static>>)> = decoded
        .into_iter()
        .zip(&events)
        .map(|((line, e), v)| {
            (
                line,
                e.or_else(|| v.as_object().map(|o| event::of_json(o).into_owned())),
            )
        })
        .collect();
    let (fast, _) = read_events(fast, "conv", &origin()).unwrap();
    let slow = from_events(
        events.iter().enumerate().map(|(i, e)| (i as u64 + 1, e)),
        "conv",
        &origin(),
    )
    .unwrap();
    assert_eq!(fast.trace, slow.trace);
    assert_eq!(fast.skipped, slow.skipped);
    assert_eq!(fast.problems, slow.problems);
}

#[test]
fn odd_lines_fall_back_to_the_parsed_event() {
    // A null call id, a call without arguments, a duplicated key: the
    // typed decoding gives way (or agrees) rather than read them otherwise.
    for line in [
        r#"{"kind": "ActionEvent", "id": "a", "tool_call_id": null, "tool_call": {"id": "c", "name": "t", "arguments": null}, "action": {"x": 1}, "llm_response_id": "r"}"#,
        r#"{"kind": "ActionEvent", "id": "a", "id": "b", "tool_name": "t"}"#,
        r#"{"kind": "MessageEvent", "source": 3}"#,
    ] {
        let value: Json = serde_json::from_str(line).unwrap_or(Json::Null);
        let slow = value.as_object().map(|o| event::of_json(o).into_owned());
        let fast = event::of_text(line);
        let read = |e: Option<Event<'static>>| {
            read_events(vec![(1, e)], "t", &origin()).map(|(r, _)| r.trace)
        };
        match fast {
            Some(e) => assert_eq!(read(Some(e)), read(slow), "{line}"),
            None => assert!(slow.is_some() || value.is_null(), "{line}"),
        }
    }
}

#[test]
fn agent_errors_and_error_observations_are_failed_results() {
    let mut events = stream();
    // c2's observation marked as an error; c1 answered by an AgentErrorEvent.
    events[4]["observation"]["is_error"] = json!(true);
    events[5] = json!({"kind": "AgentErrorEvent", "id": "e", "source": "agent",
        "tool_name": "terminal", "tool_call_id": "c1", "error": "terminal session is not ready"});
    let read = from_events(
        events.iter().enumerate().map(|(i, e)| (i as u64 + 1, e)),
        "conv",
        &origin(),
    )
    .unwrap();
    let results = &read.trace.attempts[0].tool_results;
    let got: Vec<(&str, bool)> = results
        .iter()
        .map(|r| (r.result.as_str(), r.failed))
        .collect();
    assert_eq!(got, [("terminal session is not ready", true), ("B", true)]);
    // The stream as written has none.
    let plain = stream();
    let read = from_events(
        plain.iter().enumerate().map(|(i, e)| (i as u64 + 1, e)),
        "conv",
        &origin(),
    )
    .unwrap();
    assert!(read.trace.attempts[0]
        .tool_results
        .iter()
        .all(|r| !r.failed));
}
