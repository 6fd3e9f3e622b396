//! A recording read alone: runs, conversations, retries, fates.

use serde_json::{json, Value as Json};

use super::attempt::{fate, Fate};
use super::call::parse;
use super::conversation::{plan, Retry};
use super::slim::{Slim, Slimmer};
use super::traces::{run_of, traces, CLIENT_RETRY, SUMMARY_CALL};
use crate::model::{Origin, UnseenResults};

fn call(n: u64, session: Option<&str>, retry: u32, body: Json, response: Json) -> Slim {
    let mut headers = json!({"x-stainless-retry-count": retry.to_string()});
    if let Some(s) = session {
        headers["x-upstream-session-id"] = json!(s);
    }
    let line = json!({"mirotrace_recording": 1, "call": n, "seconds": 1.0,
        "request": {"method": "POST", "path": "/v1/chat/completions", "headers": headers, "body": body},
        "response": response, "error": null});
    let origin = Origin {
        file: "rec.jsonl".into(),
        line: n,
    };
    let call = parse(line.as_object().unwrap(), origin, "x-upstream-session-id").unwrap();
    Slimmer::default().slim(call)
}

fn body(system: &str, messages: Json, max_tokens: u64) -> Json {
    let mut all = vec![json!({"role": "system", "content": system})];
    all.extend(messages.as_array().unwrap().iter().cloned());
    json!({"model": "m", "max_tokens": max_tokens, "messages": all})
}

fn answer(text: &str, finish: &str, tokens: u64) -> Json {
    json!({"status": 200, "headers": {"content-type": "application/json"}, "body": {
        "model": "m-1", "choices": [{"index": 0, "finish_reason": finish,
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 1}}})
}

fn server_error() -> Json {
    json!({"status": 503, "headers": {}, "body": {"error": {"message": "busy"}}})
}

fn launch(server: &str, subtask: &str) -> String {
    format!("<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>search_and_browse</tool_name>\n<arguments>\n{{\"subtask\": \"{subtask}\"}}\n</arguments>\n</use_mcp_tool>")
}

const S: Option<&str> = Some("task-1-3f1c2b4a-1d2e-4f60-9a7b-0c1d2e3f4a5b");

#[test]
fn the_run_is_the_header_without_its_uuid() {
    assert_eq!(
        run_of("task-7-3f1c2b4a-1d2e-4f60-9a7b-0c1d2e3f4a5b"),
        "task-7"
    );
    assert_eq!(
        run_of("3f1c2b4a-1d2e-4f60-9a7b-0c1d2e3f4a5b"),
        "3f1c2b4a-1d2e-4f60-9a7b-0c1d2e3f4a5b"
    );
    assert_eq!(run_of("task-7-not-a-uuid"), "task-7-not-a-uuid");
    assert_eq!(run_of("é"), "é");
}

#[test]
fn retries_fold_into_their_attempt_and_repeats_after_answers_do_not() {
    let user = json!([{"role": "user", "content": "task"}]);
    let calls = vec![
        call(
            1,
            S,
            0,
            body("SYS", user.clone(), 100),
            answer("cut", "length", 10),
        ),
        call(
            2,
            S,
            0,
            body("SYS", user.clone(), 110),
            answer("<bad", "stop", 11),
        ),
        // the same request after an answer: the next attempt (a rollback)
        call(3, S, 0, body("SYS", user.clone(), 100), server_error()),
        call(4, S, 0, body("SYS", user.clone(), 100), server_error()),
        call(
            5,
            S,
            1,
            body("SYS", user.clone(), 100),
            answer("ok", "stop", 12),
        ),
        // a length answer, then the same max_tokens: not a length retry
        call(
            6,
            S,
            0,
            body("SYS", user.clone(), 100),
            answer("more", "stop", 13),
        ),
    ];
    let p = plan(&calls);
    let folded: Vec<Vec<(usize, Option<Retry>)>> =
        p.drafts.iter().map(|d| d.calls.clone()).collect();
    assert_eq!(
        folded,
        [
            vec![(0, None), (1, Some(Retry::Length))],
            vec![
                (2, None),
                (3, Some(Retry::AfterFailure)),
                (4, Some(Retry::Sdk))
            ],
            vec![(5, None)],
        ]
    );
    let (traces, problems) = traces("rec.jsonl", "x-upstream-session-id", calls);
    assert!(problems.is_empty(), "{problems:?}");
    let t = &traces[0];
    assert_eq!(&*t.trace_id, "task-1");
    assert_eq!(t.attempts.len(), 3);
    assert_eq!(t.not_attempts, [(CLIENT_RETRY.to_string(), 3)]);
    // Every call's tokens and seconds are the attempt's.
    assert_eq!(t.attempts[0].usage.unwrap().input_tokens, Some(21));
    assert_eq!(t.attempts[1].usage.unwrap().input_tokens, Some(12));
    assert_eq!(t.attempts[1].duration_s, Some(3.0));
    assert_eq!(t.attempts[0].content, "<bad");
    assert_eq!(
        t.attempts[0].unseen_results,
        Some(UnseenResults::RolledBack)
    );
    assert_eq!(t.attempts[1].llm_error, None);
}

#[test]
fn sub_agents_are_named_after_the_main_call_that_launched_them() {
    let main = json!([{"role": "user", "content": "task"}]);
    let sub = |text: &str| json!([{"role": "user", "content": text}]);
    let two = format!(
        "{}\n{}",
        launch("agent-browsing", "a"),
        launch("agent-coding", "b")
    );
    let calls = vec![
        call(
            1,
            S,
            0,
            body("MAIN", main.clone(), 100),
            answer(&two, "stop", 1),
        ),
        call(
            2,
            S,
            0,
            body("SUB", sub("a"), 100),
            answer("found a", "stop", 1),
        ),
        call(
            3,
            S,
            0,
            body("SUB2", sub("b"), 100),
            answer("found b", "stop", 1),
        ),
        // the same subtask launched again later, from a fresh opening
        call(
            4,
            S,
            0,
            body(
                "MAIN",
                json!([{"role": "user", "content": "task"}, {"role": "assistant", "content": two},
            {"role": "user", "content": "results"}]),
                100,
            ),
            answer(&launch("agent-browsing", "a"), "stop", 1),
        ),
        call(
            5,
            S,
            0,
            body("SUB", sub("a"), 100),
            answer("found a again", "stop", 1),
        ),
        // a conversation no agent call launched: another run
        call(
            6,
            S,
            0,
            body("OTHER", sub("z"), 100),
            answer("z", "stop", 1),
        ),
    ];
    let (traces, _) = traces("rec.jsonl", "x-upstream-session-id", calls);
    let sessions: Vec<(&str, &str)> = traces
        .iter()
        .flat_map(|t| t.attempts.iter().map(|a| (&*a.trace_id, &*a.session)))
        .collect();
    assert_eq!(
        sessions,
        [
            ("task-1", "main"),
            ("task-1", "agent-browsing_1"),
            ("task-1", "agent-coding_2"),
            ("task-1", "main"),
            ("task-1", "agent-browsing_3"),
            ("task-1#2", "main"),
        ]
    );
    assert_eq!(&*traces[0].attempts[1].agent, "agent-browsing");
    // The session's prompt rides on its first attempt only.
    assert_eq!(traces[0].attempts[0].system_prompt.as_deref(), Some("MAIN"));
    assert_eq!(traces[0].attempts[3].system_prompt, None);
}

#[test]
fn summary_calls_are_calls_not_attempts() {
    let h = json!([{"role": "user", "content": "task"}, {"role": "assistant", "content": "\\boxed{1}"},
        {"role": "user", "content": "Summarize the above conversation, and output the FINAL ANSWER to the original question."}]);
    let calls = vec![
        call(
            1,
            None,
            0,
            body("S", json!([{"role": "user", "content": "task"}]), 10),
            answer("\\boxed{1}", "stop", 1),
        ),
        call(
            2,
            None,
            0,
            body("S", h, 10),
            answer("\\boxed{1}", "stop", 1),
        ),
    ];
    let (traces, _) = traces("dir/rec.jsonl.zst", "x-upstream-session-id", calls);
    assert_eq!(&*traces[0].trace_id, "rec#no-x-upstream-session-id");
    assert_eq!(traces[0].attempts.len(), 1);
    assert_eq!(traces[0].not_attempts, [(SUMMARY_CALL.to_string(), 1)]);
}

#[test]
fn a_turn_is_kept_rolled_back_or_unknown() {
    let user = json!([{"role": "user", "content": "task"}]);
    let turns = |n: usize| {
        let mut m = vec![json!({"role": "user", "content": "task"})];
        for k in 0..n {
            m.push(json!({"role": "assistant", "content": format!("a{k}")}));
            m.push(json!({"role": "user", "content": format!("result {k}")}));
        }
        body("S", Json::Array(m), 10)
    };
    let first = call(
        1,
        S,
        0,
        body("S", user.clone(), 10),
        answer("a0", "stop", 1),
    );
    let next = call(2, S, 0, turns(1), answer("a1", "stop", 1));
    let again = call(3, S, 0, body("S", user, 10), answer("a0", "stop", 1));
    assert_eq!(
        fate(&first, [&next]),
        Fate::Kept(vec![json!({"role": "user", "content": "result 0"})])
    );
    assert_eq!(
        fate(&first, [&again]),
        Fate::Unseen(UnseenResults::RolledBack)
    );
    assert_eq!(fate(&first, []), Fate::Unseen(UnseenResults::Unknown));
    // Only the turn right after shows the results (a call keeps its last
    // turn): a history two turns on does not say them.
    let later = call(4, S, 0, turns(2), answer("a2", "stop", 1));
    assert_eq!(fate(&first, [&later]), Fate::Unseen(UnseenResults::Unknown));
    assert_eq!(
        fate(&next, [&later]),
        Fate::Kept(vec![json!({"role": "user", "content": "result 1"})])
    );
}

#[test]
fn the_bundled_recording_reads_as_its_run_went() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/recording/mirothinker.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut slimmer = Slimmer::default();
    let calls: Vec<Slim> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let v: Json = serde_json::from_str(l).unwrap();
            let origin = Origin {
                file: "m.jsonl".into(),
                line: i as u64 + 1,
            };
            slimmer.slim(parse(v.as_object().unwrap(), origin, "X-Upstream-Session-Id").unwrap())
        })
        .collect();
    let (traces, problems) = traces("m.jsonl", "x-upstream-session-id", calls);
    assert!(problems.is_empty());
    assert_eq!(traces.len(), 1);
    let t = &traces[0];
    let shape: Vec<(&str, bool, Option<UnseenResults>)> = t
        .attempts
        .iter()
        .map(|a| (&*a.session, a.tool_results.is_empty(), a.unseen_results))
        .collect();
    assert_eq!(
        shape,
        [
            ("main", false, None),
            ("main", true, Some(UnseenResults::RolledBack)),
            ("main", false, None),
            ("agent-browsing_1", false, None),
            // a final answer has no results; the summary call shows it kept
            ("agent-browsing_1", true, None),
            ("main", true, Some(UnseenResults::RolledBack)),
            ("main", true, None),
        ]
    );
    let mut not: Vec<(String, u64)> = t.not_attempts.clone();
    not.sort();
    assert_eq!(
        not,
        [(CLIENT_RETRY.to_string(), 2), (SUMMARY_CALL.to_string(), 2)]
    );
}

#[test]
fn runs_without_the_header_may_interleave() {
    let open = |task: &str| json!([{"role": "user", "content": task}]);
    let next = |task: &str, said: &str| {
        json!([{"role": "user", "content": task}, {"role": "assistant", "content": said},
               {"role": "user", "content": "result"}])
    };
    let a1 = launch("agent-browsing", "find x");
    let calls = vec![
        call(
            1,
            None,
            0,
            body("MAIN", open("task A"), 9),
            answer(&a1, "stop", 1),
        ),
        call(
            2,
            None,
            0,
            body("MAIN", open("task B"), 9),
            answer("b1", "stop", 1),
        ),
        call(
            3,
            None,
            0,
            body("SUB", open("find x\n\nPlease provide the answer."), 9),
            answer("x is 1", "stop", 1),
        ),
        call(
            4,
            None,
            0,
            body("MAIN", next("task B", "b1"), 9),
            answer("b2", "stop", 1),
        ),
        call(
            5,
            None,
            0,
            body("MAIN", next("task A", &a1), 9),
            answer("a2", "stop", 1),
        ),
    ];
    let (traces, _) = traces("rec.jsonl", "x-upstream-session-id", calls);
    let got: Vec<(&str, Vec<(&str, u64)>)> = traces
        .iter()
        .map(|t| {
            let at = t
                .attempts
                .iter()
                .map(|a| (&*a.session, a.origin.line))
                .collect();
            (&*t.trace_id, at)
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "rec#no-x-upstream-session-id",
                vec![("main", 1), ("agent-browsing_1", 3), ("main", 5)]
            ),
            (
                "rec#no-x-upstream-session-id#2",
                vec![("main", 2), ("main", 4)]
            ),
        ]
    );
    // The first turns' results are those the next requests show.
    assert_eq!(traces[0].attempts[0].tool_results[0].result, "result");
    assert_eq!(traces[1].attempts[0].tool_results[0].result, "result");
}

#[test]
fn a_severe_repeat_is_retried_and_the_tries_are_bounded() {
    assert!(super::conversation::severe_repeat(&"ab".repeat(200)));
    assert!(!super::conversation::severe_repeat(&"ab".repeat(20)));
    assert!(!super::conversation::severe_repeat(
        "a short answer, repeated? no"
    ));
    // 49 characters is too short, whatever repeats.
    assert!(!super::conversation::severe_repeat(&"é".repeat(49)));
    let user = json!([{"role": "user", "content": "task"}]);
    let looped = "I will search again. ".repeat(30);
    let mut calls = vec![call(
        1,
        S,
        0,
        body("S", user.clone(), 100),
        answer(&looped, "stop", 1),
    )];
    calls.push(call(
        2,
        S,
        0,
        body("S", user.clone(), 100),
        answer("fine", "stop", 1),
    ));
    // The same answer after that one: a rollback, the next attempt.
    calls.push(call(3, S, 0, body("S", user.clone(), 100), server_error()));
    for n in 4..=14 {
        calls.push(call(n, S, 0, body("S", user.clone(), 100), server_error()));
    }
    let p = plan(&calls);
    let sizes: Vec<usize> = p.drafts.iter().map(|d| d.calls.len()).collect();
    // 1 + its repeat retry; then a failing attempt of 10 tries, and another.
    assert_eq!(sizes, [2, 10, 2]);
    assert_eq!(p.drafts[0].calls[1].1, Some(Retry::Repeat));
}
