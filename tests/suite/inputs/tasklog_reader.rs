//! The task-log reader on small logs written here step by step: every
//! attempt rebuilt from the step log and the histories, sub-agent numbering
//! across rolled-back turns, crashes, and logs that do not fit upstream's
//! order (reported with their position, read as far as they make sense).

use mirotrace::crosscheck;
use mirotrace::model::{Origin, Outcome, Reason, Source};
use mirotrace::policy::Policy;
use mirotrace::read::source::{open_records, InputSpec, ReadOptions};
use mirotrace::read::tasklog::{from_document, TaskLogRead};
use mirotrace::read::Record;
use mirotrace::replay::{Replayer, Verdict};
use serde_json::{json, Value as Json};

fn step(name: &str, message: &str) -> Json {
    json!({"step_name": name, "message": message, "timestamp": "2025-06-01 09:00:00", "info_level": "info", "metadata": {}})
}

fn session_start(sid: &str) -> Json {
    json!({"step_name": "🤖 agent-browsing | Session Start",
           "message": format!("Starting {sid} for subtask: x"),
           "timestamp": "2025-06-01 09:00:00", "info_level": "info",
           "metadata": {"session_id": sid, "subtask": "x"}})
}

fn call(server: &str, tool: &str, args: &str) -> String {
    format!("<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n<arguments>\n{args}\n</arguments>\n</use_mcp_tool>")
}

fn read(doc: Json) -> TaskLogRead {
    let origin = Origin {
        file: "task_t.json".into(),
        line: 1,
    };
    from_document(doc.as_object().expect("an object"), &origin)
}

fn replay(read: &TaskLogRead) -> Vec<Verdict> {
    Replayer::new(Policy::default()).replay(&read.trace)
}

fn summary(verdicts: &[Verdict]) -> Vec<(String, Outcome, Option<Reason>, Source)> {
    verdicts
        .iter()
        .map(|v| (v.session.to_string(), v.outcome, v.reason, v.source()))
        .collect()
}

fn main_history(messages: Json) -> Json {
    json!({"system_prompt": "SYS", "message_history": messages})
}

#[test]
fn a_small_log_reads_every_attempt_in_order() {
    let doc = json!({
        "status": "success", "task_id": "t1",
        "env_info": {"llm_model_name": "m", "main_agent_max_turns": 20},
        "main_agent_message_history": main_history(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": call("tool-python", "run_python_code", "{\"code_block\": \"1\", \"sandbox_id\": \"s\"}")},
            {"role": "user", "content": "1"},
            {"role": "assistant", "content": "The answer is 1."},
        ])),
        "sub_agent_message_history_sessions": {},
        "step_logs": [
            step("Main | Task Start", "--- Starting Task Execution: t1 ---"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 0 | Rollback", "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5, Total attempts: 1/220"),
            step("🧠 FATAL ERROR | main | LLM Call ERROR", "main failed: Connection error."),
            step("🧠 Main agent | Turn: 1 | LLM Call Failed", "Main agent | Turn: 1 failed - no response received"),
            step("👑 Main Agent | Turn: 0 | LLM Call", "No valid response from LLM, retrying"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 1 | Tool Call", "Tool run_python_code completed in 12ms"),
            step("👑 Main Agent | Turn: 1 | Recovery", "Successfully recovered after 1 consecutive rollbacks"),
            step("🧠 Main agent | Turn: 2 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 2 | LLM Call", "LLM did not request tool usage, ending process."),
            step("👑 Main Agent | Main Loop Completed", "Main loop completed after 2 turns"),
        ],
    });
    let r = read(doc);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let t = &r.trace;
    assert_eq!(t.attempts.len(), 4);
    // The prompt and the turn limit go on the first attempt, rolled back or not.
    assert_eq!(t.attempts[0].system_prompt.as_deref(), Some("SYS"));
    assert_eq!(t.attempts[0].max_turns, Some(20));
    let rolled = t.attempts[0].decided().expect("known from the log only");
    assert_eq!(
        (rolled.reason, rolled.turn, rolled.streak),
        (Some(Reason::FormatError), Some(0), Some(1))
    );
    let failed = t.attempts[1].decided().expect("a failed call");
    assert_eq!(failed.error.as_deref(), Some("Connection error."));
    let v = replay(&r);
    let got: Vec<(Outcome, Option<i64>, Option<u32>, Source)> = v
        .iter()
        .map(|v| (v.outcome, v.turn, v.consecutive_rollbacks, v.source()))
        .collect();
    assert_eq!(
        got,
        [
            (Outcome::Rollback, Some(0), Some(1), Source::Recorded),
            (Outcome::LlmFailed, Some(0), Some(1), Source::Recorded),
            (Outcome::Ok, Some(1), Some(0), Source::Replayed),
            (Outcome::Final, Some(2), Some(0), Source::Replayed),
        ]
    );
    assert!(crosscheck::check(&r.trace, &v, &Policy::default()).is_empty());
    // The verdict line says where it comes from and what the log said.
    let line: Json = serde_json::from_str(&v[0].to_json_line()).unwrap();
    assert_eq!(line["source"], "recorded");
    // Where its LLM call is in step_logs.
    assert_eq!(line["logged"]["step"], 1);
    let line: Json = serde_json::from_str(&v[2].to_json_line()).unwrap();
    assert_eq!(line["source"], "replayed");
    assert!(line.get("logged").is_none());
}

/// A main turn that launched `agent-browsing_1` and then rolled back on
/// its second call; the retry launched `agent-browsing_2`.
fn rolled_back_launch() -> Json {
    let launch = call(
        "agent-browsing",
        "search_and_browse",
        "{\"subtask\": \"x\"}",
    );
    let sub = |answer: &str| {
        json!({"system_prompt": "SUB", "message_history": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": answer},
            {"role": "user", "content": "Summarize the above conversation, and output the FINAL ANSWER"},
            {"role": "assistant", "content": "summary"},
        ]})
    };
    json!({
        "status": "success", "task_id": "t2",
        "main_agent_message_history": main_history(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": launch},
            {"role": "user", "content": "summary"},
            {"role": "assistant", "content": "Done."},
        ])),
        "sub_agent_message_history_sessions": {
            "agent-browsing_1": sub("first answer"),
            "agent-browsing_2": sub("second answer"),
        },
        "step_logs": [
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            session_start("agent-browsing_1"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "completed successfully"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "No tool calls found in agent-browsing, ending on turn 1"),
            step("🤖 agent-browsing | Final Summary", "Generating agent-browsing final summary"),
            step("🤖 agent-browsing | Session End", "Ending agent-browsing_1"),
            step("👑 Main Agent | Turn: 1 | Tool Call", "Tool search_and_browse completed in 9ms"),
            step("👑 Main Agent | Turn: 0 | Rollback", "Tool result error - tool: google_search, result: 'Unknown tool: google_search'"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            session_start("agent-browsing_2"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "completed successfully"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "No tool calls found in agent-browsing, ending on turn 1"),
            step("🤖 agent-browsing | Final Summary", "Generating agent-browsing final summary"),
            step("🤖 agent-browsing | Session End", "Ending agent-browsing_2"),
            step("👑 Main Agent | Turn: 1 | Tool Call", "Tool search_and_browse completed in 9ms"),
            step("👑 Main Agent | Turn: 1 | Recovery", "Successfully recovered after 1 consecutive rollbacks"),
            step("🧠 Main agent | Turn: 2 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 2 | LLM Call", "LLM did not request tool usage, ending process."),
        ],
    })
}

#[test]
fn a_rolled_back_turn_that_launched_a_sub_agent_keeps_the_numbering() {
    let r = read(rolled_back_launch());
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let launched = &r.trace.attempts[0].decided().unwrap().launched;
    assert_eq!(launched, &["agent-browsing_1".to_string()]);
    let v = replay(&r);
    use Outcome::*;
    let main = "main".to_string();
    let (one, two) = (
        "agent-browsing_1".to_string(),
        "agent-browsing_2".to_string(),
    );
    assert_eq!(
        summary(&v),
        [
            (
                main.clone(),
                Rollback,
                Some(Reason::UnknownTool),
                Source::Recorded
            ),
            // The sub-agent it launched ran inside it.
            (one, Final, None, Source::Replayed),
            // The surviving launch is the second sub-agent, not the first.
            (main.clone(), Ok, None, Source::Replayed),
            (two, Final, None, Source::Replayed),
            (main, Final, None, Source::Replayed),
        ]
    );
    assert!(crosscheck::check(&r.trace, &v, &Policy::default()).is_empty());
    // The blamed tool of the logged rollback is the one its message names.
    assert_eq!(
        v[0].recorded.as_ref().and_then(|r| r.blamed_tool()),
        Some("google_search")
    );
}

#[test]
fn crashes_in_a_sub_agent_and_in_the_main_loop_are_recorded() {
    let doc = json!({
        "status": "failed", "task_id": "t3",
        "error": "Traceback (most recent call last):\nTypeError: list indices must be integers or slices, not str",
        // Saved after the first turn; the crash in the second left it as it was.
        "main_agent_message_history": main_history(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": call("agent-browsing", "search_and_browse", "{\"subtask\": \"x\"}")},
            {"role": "user", "content": "Tool call to search_and_browse on agent-browsing failed. Error: 'bool' object has no attribute 'copy'"},
        ])),
        "sub_agent_message_history_sessions": {},
        "step_logs": [
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            session_start("agent-browsing_1"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "completed successfully"),
            step("🤖 agent-browsing | Turn: 0 | Rollback", "LLM refused to answer - found refusal keywords: ['time constraint']. Consecutive rollbacks: 1/5, Total attempts: 1/220"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "completed successfully"),
            step("❌ Main Agent | Turn: 1 | Tool Call", "Tool search_and_browse failed to execute: 'bool' object has no attribute 'copy'"),
            step("🧠 Main agent | Turn: 2 | LLM Call", "completed successfully"),
            step("task_error_notification", "An error occurred during task t3"),
            step("task_error_details", "Traceback (most recent call last):\n  File \"x\"\nTypeError: list indices must be integers or slices, not str"),
            step("task_execution_finished", "Task t3 execution completed with status: failed"),
        ],
    });
    let r = read(doc);
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let errors: Vec<Option<&str>> = r
        .trace
        .attempts
        .iter()
        .map(|a| a.decided().and_then(|d| d.error.as_deref()))
        .collect();
    assert_eq!(
        errors,
        [
            None,
            None,
            Some("'bool' object has no attribute 'copy'"),
            Some("TypeError: list indices must be integers or slices, not str"),
        ]
    );
    let v = replay(&r);
    let outcomes: Vec<(String, Outcome)> = v
        .iter()
        .map(|v| (v.session.to_string(), v.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("main".to_string(), Outcome::Ok),
            ("agent-browsing_1".to_string(), Outcome::Rollback),
            ("agent-browsing_1".to_string(), Outcome::Crash),
            ("main".to_string(), Outcome::Crash),
        ]
    );
    assert_eq!(
        v[3].error.as_deref(),
        Some("TypeError: list indices must be integers or slices, not str")
    );
}

#[test]
fn unknown_steps_and_steps_out_of_order_are_reported_with_their_position() {
    let doc = json!({
        "task_id": "t4",
        "main_agent_message_history": main_history(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "The answer is 1."},
        ])),
        "step_logs": [
            step("👑 Main Agent | Turn: 1 | Rollback", "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            step("🔮 Oracle | Vision", "a step upstream never writes"),
            step("👑 Main Agent | Turn: 0 | Rollback", "The model sneezed"),
            step("🤖 agent-browsing | Turn: 1 | LLM Call", "completed successfully"),
            step("🧠 Main agent | Turn: 3 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 3 | LLM Call", "LLM did not request tool usage, ending process."),
            "not a step",
        ],
    });
    let r = read(doc);
    let at = |i: usize| {
        r.problems
            .iter()
            .find(|p| p.starts_with(&format!("step_logs[{i}]: ")))
            .unwrap_or_else(|| panic!("nothing reported at step {i}: {:?}", r.problems))
    };
    assert!(at(0).contains("before any LLM call"), "{}", at(0));
    assert!(
        at(2).contains("unknown step name \"🔮 Oracle | Vision\""),
        "{}",
        at(2)
    );
    assert!(
        at(3).contains("rollback message the reader does not know"),
        "{}",
        at(3)
    );
    assert!(
        at(4).contains("outside any agent-browsing session"),
        "{}",
        at(4)
    );
    assert!(at(5).contains("turn 3 follows turn 0"), "{}", at(5));
    assert!(at(7).contains("not a step"), "{}", at(7));
    // The rest is still read: the unknown rollback, and the surviving answer.
    let v = replay(&r);
    assert_eq!(
        summary(&v),
        [
            (
                "main".to_string(),
                Outcome::Rollback,
                None,
                Source::Recorded
            ),
            ("main".to_string(), Outcome::Final, None, Source::Replayed),
        ]
    );
    let d = crosscheck::check(&r.trace, &v, &Policy::default());
    assert!(
        d.iter()
            .any(|d| d.kind == crosscheck::DisagreementKind::UnexplainedRollback),
        "{d:?}"
    );
}

#[test]
fn a_history_the_log_does_not_explain_is_reported_and_still_replayed() {
    let doc = json!({
        "task_id": "t5",
        "main_agent_message_history": main_history(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": call("tool-python", "run_python_code", "{\"code_block\": \"1\", \"sandbox_id\": \"s\"}")},
            {"role": "user", "content": "1"},
            {"role": "assistant", "content": "The answer is 1."},
        ])),
        "sub_agent_message_history_sessions": {"agent-browsing_9": {"system_prompt": "S", "message_history": [
            {"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}},
        "step_logs": [
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 1 | Tool Call", "Tool run_python_code completed in 12ms"),
        ],
    });
    let r = read(doc);
    assert!(
        r.problems.iter().any(|p| p.contains(
            "main: the message history holds 1 turn(s) after the last one step_logs shows"
        )),
        "{:?}",
        r.problems
    );
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("agent-browsing_9: in the message history but not in step_logs")),
        "{:?}",
        r.problems
    );
    assert_eq!(r.trace.attempts.len(), 3);
}

use crate::common::fixture_path as fixture;

#[test]
fn a_task_log_cut_off_mid_write_is_read_up_to_the_cut() {
    let text = std::fs::read_to_string(fixture(
        "tasklog/task_eiffel-height_2025-06-03-10-12-44.json",
    ))
    .unwrap();
    // Cut inside the step log, after the sub-agent's first rollback.
    let at = text
        .find("Tool result error - tool: scrape_website")
        .unwrap();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("task_cut.json");
    std::fs::write(&path, &text[..at]).unwrap();

    let records: Vec<Record> =
        open_records(&InputSpec::Path(path.clone()), &ReadOptions::default())
            .unwrap()
            .collect();
    let mut bad = Vec::new();
    let mut traces = Vec::new();
    for r in records {
        match r {
            Record::Bad(b) => bad.push(b.to_string()),
            Record::Trace(t) => traces.push(t),
            Record::Failed(e) => panic!("{e}"),
            Record::NoAttempt(n) => panic!("{n}"),
            Record::NotTraces(n) => panic!("{n}"),
        }
    }
    assert!(
        bad[0].contains("task_cut.json:")
            && bad[0].contains("not JSON: ")
            && bad[0].contains("read as a task log cut off after line"),
        "{bad:?}"
    );
    // The turns after the cut are still in the histories: replayed without the log.
    assert!(
        bad.iter()
            .any(|b| b.contains("after the last one step_logs shows")),
        "{bad:?}"
    );
    assert_eq!(traces.len(), 1);
    let v = Replayer::new(Policy::default()).replay(&traces[0]);
    let recorded = v.iter().filter(|v| v.source() == Source::Recorded).count();
    // Before the cut: the main agent's format error and duplicate, the sub-agent's empty search.
    assert_eq!(recorded, 3, "{:?}", summary(&v));
    assert!(v.iter().all(|v| v.outcome != Outcome::Unreachable));

    // Counted like a skipped line: exit code 3.
    let o = crate::common::mirotrace()
        .args(["analyze", "-q", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let report: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["bad_lines"].as_u64(), Some(bad.len() as u64));
}

#[test]
fn a_crashed_sub_agent_gets_its_agents_first_prompt_every_time() {
    let sub = |prompt: &str| {
        json!({"system_prompt": prompt, "message_history": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "answer"},
        ]})
    };
    let launch = call(
        "agent-browsing",
        "search_and_browse",
        "{\"subtask\": \"x\"}",
    );
    let mut steps = vec![step(
        "🧠 Main agent | Turn: 1 | LLM Call",
        "completed successfully",
    )];
    for n in 1..=3 {
        steps.push(session_start(&format!("agent-browsing_{n}")));
        steps.push(step(
            "🤖 agent-browsing | Turn: 1 | LLM Call",
            "completed successfully",
        ));
        if n > 1 {
            steps.push(step(
                "🤖 agent-browsing | Turn: 1 | LLM Call",
                "No tool calls found in agent-browsing, ending on turn 1",
            ));
            steps.push(step(
                "🤖 agent-browsing | Session End",
                &format!("Ending agent-browsing_{n}"),
            ));
            steps.push(step(
                "👑 Main Agent | Turn: 1 | Tool Call",
                "Tool search_and_browse completed in 9ms",
            ));
        } else {
            steps.push(step(
                "❌ Main Agent | Turn: 1 | Tool Call",
                "Tool search_and_browse failed to execute: boom",
            ));
        }
    }
    let doc = json!({
        "task_id": "t6",
        "main_agent_message_history": main_history(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": format!("{launch}\n{launch}\n{launch}")},
        ])),
        "sub_agent_message_history_sessions": {
            "agent-browsing_3": sub("PROMPT THREE"),
            "agent-browsing_2": sub("PROMPT TWO"),
        },
        "step_logs": steps,
    });
    let first = read(doc.clone());
    assert!(first.problems.is_empty(), "{:?}", first.problems);
    let crashed = first
        .trace
        .attempts
        .iter()
        .find(|a| &*a.session == "agent-browsing_1")
        .unwrap();
    assert_eq!(crashed.system_prompt.as_deref(), Some("PROMPT TWO"));
    for _ in 0..5 {
        assert_eq!(read(doc.clone()).trace, first.trace);
    }
}

mod shuffled {
    //! Step logs in any order, with any histories: the reader never panics,
    //! and every attempt it yields gets a verdict.

    use super::*;
    use proptest::prelude::*;

    fn any_step() -> impl Strategy<Value = Json> {
        let names = prop::sample::select(vec![
            "🧠 Main agent | Turn: {t} | LLM Call",
            "👑 Main Agent | Turn: {t} | LLM Call",
            "🧠 Main agent | Turn: {t} | LLM Call Failed",
            "👑 Main Agent | Turn: {t} | Rollback",
            "👑 Main Agent | Turn: {t} | Tool Call",
            "👑 Main Agent | Turn: {t} | Recovery",
            "👑 Main Agent | Turn: {t} | Allow Duplicate",
            "👑 Main Agent | Turn: {t} | End After Max Rollbacks",
            "🤖 agent-browsing | Session Start",
            "🤖 agent-browsing | Session End",
            "🤖 agent-browsing | Turn: {t} | LLM Call",
            "🤖 agent-browsing | Turn: {t} | Rollback",
            "🤖 agent-browsing | Final Summary",
            "🧠 FATAL ERROR | main | LLM Call ERROR",
            "task_error_notification",
            "👑 Main Agent | Final Summary",
            "🔮 Somewhere | Else",
        ]);
        let messages = prop::sample::select(vec![
            "completed successfully",
            "No valid response from LLM, retrying",
            "LLM did not request tool usage, ending process.",
            "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5",
            "Tool result error - tool: google_search, result: 'Unknown tool: x'",
            "Duplicate query detected - tool: google_search, query: 'google_search_x', previous count: 1. Consecutive rollbacks: 2/5",
            "Allowing duplicate query after 4 rollbacks - tool: google_search, query: 'google_search_x', previous count: 1",
            "Tool google_search completed in 3ms",
            "Tool search_and_browse failed to execute: boom",
            "Executing google_search on tool-google-search",
            "Successfully recovered after 1 consecutive rollbacks",
            "Starting agent-browsing_1 for subtask: x",
            "Starting agent-browsing_4294967295 for subtask: x",
            "Starting main for subtask: x",
            "Ending agent-browsing_1",
            "Ending agent loop after 4 consecutive MCP format errors",
            "",
        ]);
        let turns = prop_oneof![0i64..4, Just(i64::MAX), Just(i64::MIN)];
        (names, messages, turns).prop_map(|(n, m, t)| step(&n.replace("{t}", &t.to_string()), m))
    }

    fn any_message() -> impl Strategy<Value = Json> {
        let roles = prop::sample::select(vec!["user", "assistant", "assistant", "tool"]);
        let texts = prop::sample::select(vec![
            String::new(),
            format!(
                "{}\n{}",
                call(
                    "agent-browsing",
                    "search_and_browse",
                    "{\"subtask\": \"x\"}"
                ),
                call(
                    "agent-browsing",
                    "search_and_browse",
                    "{\"subtask\": \"y\"}"
                )
            ),
            "done".to_string(),
            call("tool-google-search", "google_search", "{\"q\": \"x\"}"),
            call(
                "agent-browsing",
                "search_and_browse",
                "{\"subtask\": \"x\"}",
            ),
            "<use_mcp_tool>".to_string(),
            "Summarize the above conversation, and output the FINAL ANSWER".to_string(),
        ]);
        (roles, texts).prop_map(|(r, t)| json!({"role": r, "content": t}))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn any_log_reads_and_replays(
            steps in prop::collection::vec(any_step(), 0..40),
            main in prop::collection::vec(any_message(), 0..8),
            sub in prop::collection::vec(any_message(), 0..6),
        ) {
            let doc = json!({
                "task_id": "p",
                "main_agent_message_history": main_history(Json::Array(main)),
                "sub_agent_message_history_sessions": {"agent-browsing_1": {"system_prompt": "S", "message_history": sub}},
                "step_logs": steps,
            });
            let r = read(doc);
            let v = replay(&r);
            prop_assert_eq!(v.len(), r.trace.attempts.len());
            let _ = crosscheck::check(&r.trace, &v, &Policy::default());
        }
    }
}

#[test]
fn a_log_naming_the_main_agent_as_a_sub_agent_session_does_not_loop() {
    let doc = json!({
        "task_id": "t7",
        "step_logs": [
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            session_start("main"),
            step("👑 Main Agent | Turn: 0 | Rollback", "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5"),
            step("🧠 Main agent | Turn: 1 | LLM Call", "completed successfully"),
            step("👑 Main Agent | Turn: 1 | LLM Call", "LLM did not request tool usage, ending process."),
        ],
    });
    let r = read(doc);
    assert!(!r.problems.is_empty());
    let v = replay(&r);
    assert_eq!(v.len(), r.trace.attempts.len());
}
