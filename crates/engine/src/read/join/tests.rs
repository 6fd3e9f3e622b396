//! The join on a small run: a task log and the recording of the same run,
//! then the recording changed (a call dropped, a foreign call added, two
//! calls swapped, a run recorded twice) and the disagreement named.

use serde_json::{json, Value as Json};

use super::{join, Index, CLIENT_RETRIES, SDK_RETRIES, SUMMARY_CALLS};
use crate::model::{Origin, Trace};
use crate::read::recording::{self, RecordedCall};
use crate::read::tasklog;

const HEADER: &str = "t-1-3f1c2a4e-9b7d-4c1e-8f00-0123456789ab";
const PROMPT: &str = "You are the main agent.";
const SUB_PROMPT: &str = "You are the browsing agent.";
const ROLLED_BACK: &str = "I call <use_mcp_tool><server_name>s</server_name> without the rest";
const OK: &str = "<use_mcp_tool>\n<server_name>tool-s</server_name>\n<tool_name>google_search</tool_name>\n<arguments>\n{\"q\": \"x\"}\n</arguments>\n</use_mcp_tool>";
const SUB: &str = "The answer is 4.";
const FINAL: &str = "\\boxed{4}";

fn step(name: &str, message: &str) -> Json {
    json!({"step_name": name, "message": message, "timestamp": "2025-06-01 09:00:02"})
}

/// Main: a rolled-back turn (after one retry of the client), a turn that
/// launches a sub-agent (one turn, then its summary), the final turn and
/// the final summary.
fn task_log() -> Trace {
    let doc = json!({
        "task_id": "t-1",
        "start_time": "2025-06-01 09:00:00",
        "end_time": "2025-06-01 09:10:00",
        "main_agent_message_history": {"system_prompt": PROMPT, "message_history": [
            {"role": "user", "content": "the task"},
            {"role": "assistant", "content": OK},
            {"role": "user", "content": "result"},
            {"role": "assistant", "content": FINAL}]},
        "sub_agent_message_history_sessions": {"agent-browsing_1": {"system_prompt": SUB_PROMPT, "message_history": [
            {"role": "user", "content": "the subtask"},
            {"role": "assistant", "content": SUB}]}},
        "step_logs": [
            step("🧠 LLM | API Error", "Error (attempt 1/10): boom, retrying..."),
            step("🧠 LLM | Token Usage", "x"),
            step("🧠 LLM | Response Status", "stop"),
            step("🧠 LLM | Message Retention", "kept 5 tool results"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 0 | Rollback", "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5, Total attempts: 1/200"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            {"step_name": "🤖 agent-browsing | Session Start", "message": "Starting agent-browsing_1 for subtask: the subtask", "metadata": {"session_id": "agent-browsing_1"}},
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "completed successfully"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "No tool calls found in agent-browsing, ending on turn 1"),
            step("🤖 agent-browsing | Final Summary", "Generating agent-browsing final summary"),
            step("🤖 agent-browsing | Final summary | LLM Call", "completed successfully"),
            step("🤖 agent-browsing | Session End", "Ending agent-browsing_1"),
            step("👑 Main Agent | Turn: 1 | Tool Call", "Tool search_and_browse completed in 10ms"),
            step("👑 Main Agent | Turn: 1 | Recovery", "Successfully recovered after 1 consecutive rollbacks"),
            step("🧠 Main agent | Turn: 2 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 2 | LLM Call", "LLM did not request tool usage, ending process."),
            step("👑 Main Agent | Final Summary", "Generating final summary"),
            step("🧠 Main agent | Final Summary (attempt 1/3) | LLM Call", "completed successfully"),
        ]
    });
    let origin = Origin {
        file: "task_t-1.json".into(),
        line: 1,
    };
    let read = tasklog::from_document(doc.as_object().unwrap(), &origin);
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    read.trace
}

/// (system prompt, first user message, answer or `None` for a 500, SDK retry count)
type Spec<'a> = (&'a str, &'a str, Option<&'a str>, u32);

fn recording(header: &str, calls: &[Spec<'_>], start: &str) -> Vec<RecordedCall> {
    calls
        .iter()
        .enumerate()
        .map(|(i, (system, user, answer, retry))| {
            let response = match answer {
                Some(text) => json!({"status": 200, "body": {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}}),
                None => json!({"status": 500, "body": {"error": {"message": "boom"}}}),
            };
            let mut messages = vec![
                json!({"role": "system", "content": system}),
                json!({"role": "user", "content": user}),
            ];
            // A summary call ends with upstream's summary prompt.
            if answer.is_some_and(|a| a.ends_with("summary")) {
                messages.push(json!({"role": "assistant", "content": "…"}));
                messages.push(json!({"role": "user", "content": "Summarize the above conversation, and output the FINAL ANSWER to the original question."}));
            }
            let line = json!({
                "mirotrace_recording": 1, "call": i + 1, "started": start, "seconds": 0.5,
                "request": {"method": "POST", "path": "/v1/chat/completions",
                    "headers": {"x-upstream-session-id": header, "x-stainless-retry-count": retry.to_string()},
                    "body": {"model": "m", "messages": messages}},
                "response": response, "error": null
            });
            let origin = Origin {
                file: "rec.jsonl".into(),
                line: i as u64 + 1,
            };
            recording::parse(line.as_object().unwrap(), origin, recording::DEFAULT_TRACE_HEADER)
                .unwrap()
        })
        .collect()
}

/// The run as the proxy saw it: the first try failed (the client
/// retried: its warning is in the log), the SDK retried the sub-agent's call.
fn the_run() -> Vec<Spec<'static>> {
    vec![
        (PROMPT, "the task", None, 0),
        (PROMPT, "the task", Some(ROLLED_BACK), 0),
        (PROMPT, "the task", Some(OK), 0),
        (SUB_PROMPT, "the subtask", None, 0),
        (SUB_PROMPT, "the subtask", Some(SUB), 1),
        (SUB_PROMPT, "the subtask", Some("summary"), 0),
        (PROMPT, "the task", Some(FINAL), 0),
        (PROMPT, "the task", Some("final summary"), 0),
    ]
}

const START: &str = "2025-06-01T01:00:05.000000Z";

fn joined(calls: &[Spec<'_>]) -> (Trace, Vec<String>) {
    let mut trace = task_log();
    let index = Index::new(recording(HEADER, calls, START));
    let problems = join(&mut trace, &index);
    (trace, problems)
}

fn count(trace: &Trace, kind: &str) -> u64 {
    trace
        .not_attempts
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, n)| n)
        .sum()
}

#[test]
fn every_attempt_gets_its_text_and_retries_fold_into_it() {
    let (trace, problems) = joined(&the_run());
    assert!(problems.is_empty(), "{problems:?}");
    let texts: Vec<(&str, &str)> = trace
        .attempts
        .iter()
        .map(|a| (&*a.session, a.content.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("main", ROLLED_BACK),
            ("main", OK),
            ("agent-browsing_1", SUB),
            ("main", FINAL)
        ]
    );
    assert!(trace.attempts.iter().all(|a| a.decided().is_none()));
    // The rolled-back turn keeps what the log decided, for the cross-check.
    let rec = trace.attempts[0].recorded.as_deref().unwrap();
    assert_eq!(rec.outcome, Some(crate::model::Outcome::Rollback));
    // Its client retry: both calls' seconds, the answer's tokens, listed apart.
    assert_eq!(trace.attempts[0].duration_s, Some(1.0));
    let retries = trace.attempts[0].meta.as_ref().unwrap()["recording"]["retries"].clone();
    assert_eq!(retries[0]["kind"], "LLM | API Error");
    assert_eq!(retries[0]["call"], 1);
    assert_eq!(
        trace.attempts[2].meta.as_ref().unwrap()["recording"]["retries"][0]["kind"],
        "sdk"
    );
    assert_eq!(trace.attempts[2].usage.unwrap().input_tokens, Some(100));
    assert_eq!(count(&trace, SUMMARY_CALLS), 2);
    assert_eq!(count(&trace, CLIENT_RETRIES), 1);
    assert_eq!(count(&trace, SDK_RETRIES), 1);
}

#[test]
fn a_dropped_call_is_named_by_its_step() {
    let mut run = the_run();
    run.remove(1); // the rolled-back turn's answer
    let (trace, problems) = joined(&run);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("step_logs[4]: main's LLM call: no recorded call matches it")
            || problems[0]
                .contains("step_logs[4]: main's LLM call: no recorded call for its retry"),
        "{problems:?}"
    );
    // Nothing else moved: the later attempts still have their own text.
    assert_eq!(trace.attempts[1].content, OK);
    assert_eq!(trace.attempts[3].content, FINAL);
}

#[test]
fn a_foreign_call_is_named_by_its_line() {
    let mut run = the_run();
    run.insert(3, ("Some other agent", "another task", Some("hello"), 0));
    let (trace, problems) = joined(&run);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("rec.jsonl:4: recorded call 4 of run t-1-")
            && problems[0].contains("is not in the task log")
            && problems[0].contains("a conversation no saved session of the log has"),
        "{problems:?}"
    );
    assert_eq!(trace.attempts[2].content, SUB);
}

#[test]
fn swapped_calls_are_named() {
    let mut run = the_run();
    run.swap(2, 3); // the main turn's answer after the sub-agent's first try
    let (_, problems) = joined(&run);
    assert!(!problems.is_empty());
    assert!(
        problems
            .iter()
            .any(|p| p.contains("no recorded call") || p.contains("is not in the task log")),
        "{problems:?}"
    );
    // Two calls of one session swapped: the text the history kept tells
    // which call is the kept turn's, so the other is out of place.
    let mut run = the_run();
    run.swap(1, 2);
    let (_, problems) = joined(&run);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("rec.jsonl:3: recorded call 3")
                && p.contains("is not in the task log")),
        "{problems:?}"
    );
}

#[test]
fn a_task_run_twice_is_paired_by_time_and_an_unknown_task_is_said() {
    let other = "t-1-00000000-0000-4000-8000-000000000000";
    let mut calls = recording(other, &the_run(), "2025-06-02T01:00:05.000000Z");
    calls.extend(recording(HEADER, &the_run(), START));
    let index = Index::new(calls);
    let mut trace = task_log();
    let problems = join(&mut trace, &index);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(index.is_claimed(HEADER) && !index.is_claimed(other));
    // Both runs inside the log's times: the choice is said.
    let mut calls = recording(other, &the_run(), "2025-06-01T01:00:06.000000Z");
    calls.extend(recording(HEADER, &the_run(), START));
    let mut trace = task_log();
    let problems = join(&mut trace, &Index::new(calls));
    assert!(
        problems[0].contains("ambiguous: 2 runs of task t-1"),
        "{problems:?}"
    );
    let mut trace = task_log();
    let problems = join(
        &mut trace,
        &Index::new(recording(
            "t-2-3f1c2a4e-9b7d-4c1e-8f00-0123456789ab",
            &the_run(),
            START,
        )),
    );
    assert!(
        problems[0].contains("no run of task t-1 in the recording"),
        "{problems:?}"
    );
}

#[test]
fn a_kept_turn_whose_text_differs_is_named_once() {
    let mut run = the_run();
    run[6].2 = Some("\\boxed{5}");
    let (trace, problems) = joined(&run);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("step_logs[15]: main's LLM call: recorded call 7")
            && problems[0].contains("the model's text differs from the message history's"),
        "{problems:?}"
    );
    // The recording's text is the one replayed.
    assert_eq!(trace.attempts[3].content, "\\boxed{5}");
}
