//! Recordings of `mirotrace record` read alone (tests/data/recording/):
//! calls grouped into runs by the trace header, conversations told apart,
//! retries folded, streamed answers merged, broken lines reported with
//! their file and line while the rest is read. The timeline and the report
//! are kept as snapshots (tests/snapshots/recording__*.snap).

use std::path::Path;
use std::process::Output;

use serde_json::Value as Json;

const DIR: &str = "tests/data/recording";

fn run(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    crate::common::mirotrace()
        .arg0("mirotrace")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .output()
        .expect("mirotrace runs")
}

fn file(name: &str) -> String {
    format!("{DIR}/{name}")
}

fn verdicts(args: &[&str]) -> Vec<Json> {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn field<'a>(v: &'a [Json], key: &str) -> Vec<&'a str> {
    v.iter().map(|v| v[key].as_str().unwrap_or("")).collect()
}

#[test]
fn a_mirothinker_recording_replays_every_attempt_with_its_text() {
    let v = verdicts(&["replay", &file("mirothinker.jsonl")]);
    // One run (the uuid removed), main and its sub-agent, retries folded:
    // 11 calls, 2 retries and 2 summary calls are not attempts.
    assert!(v.iter().all(|v| v["trace_id"] == "task-7"));
    assert_eq!(
        field(&v, "session"),
        [
            "main",
            "main",
            "main",
            "agent-browsing_1",
            "agent-browsing_1",
            "main",
            "main"
        ]
    );
    // The rolled-back format error is judged from its text.
    assert_eq!(
        (v[1]["outcome"].as_str(), v[1]["reason"].as_str()),
        (Some("rollback"), Some("format_error"))
    );
    assert_eq!(v[1]["source"], "replayed");
    // The turn whose tool ran and was rolled back: not judged by the result rules.
    assert_eq!(v[5]["outcome"], "rollback");
    assert_eq!(v[5]["source"], "recorded");
    assert_eq!(v[5]["logged"]["unjudged"], "rolled_back");
    assert_eq!(v[5]["calls"][0]["tool_name"], "google_search");
    assert_eq!(v[6]["outcome"], "final");
}

#[test]
fn the_report_counts_what_is_not_an_attempt_and_what_it_could_not_judge() {
    let out = run(&["analyze", "--format", "json", &file("mirothinker.jsonl")]);
    assert!(out.status.success());
    let r: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["attempts"], 7);
    assert_eq!(r["input"]["skipped"]["recording:client_retry"], 2);
    assert_eq!(r["input"]["skipped"]["recording:summary_call"], 2);
    assert_eq!(r["blind_spots"]["results_unseen"], 1);
    assert_eq!(r["blind_spots"]["text_unknown"], 0);
    // Tokens and seconds are the recording's, retries' included.
    let total = &r["cost"]["total"];
    assert_eq!(total["known"]["seconds"], 7);
    assert!(total["input_tokens"].as_u64().unwrap() > 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 × recording:client_retry"), "{stderr}");
}

#[test]
fn streamed_and_other_apis_read_as_their_answers() {
    let chat = verdicts(&["replay", &file("chat-stream.jsonl")]);
    assert_eq!(chat[0]["calls"][0]["arguments"]["city"], "Paris");
    assert_eq!(field(&chat, "outcome"), ["ok", "final", "llm_failed"]);
    // No session header: grouped per file, and the id says so.
    assert_eq!(chat[0]["trace_id"], "chat-stream#no-x-upstream-session-id");
    assert!(chat[2]["why"]["error"]
        .as_str()
        .unwrap()
        .contains("cut short"));
    let anthropic = verdicts(&["replay", &file("anthropic.jsonl")]);
    assert_eq!(
        field(&anthropic, "trace_id"),
        ["claude-run-1", "claude-run-1", "claude-run-2"]
    );
    assert_eq!(anthropic[0]["calls"][0]["id"], "toolu_01");
    assert_eq!(field(&anthropic, "outcome"), ["ok", "final", "llm_failed"]);
    let responses = verdicts(&["replay", &file("responses.jsonl")]);
    assert_eq!(
        responses[0]["calls"][0]["arguments"]["isbn"],
        "978-0141439549"
    );
    assert_eq!(field(&responses, "outcome"), ["ok", "final"]);
}

#[test]
fn another_trace_header_groups_the_calls() {
    let v = verdicts(&[
        "replay",
        "--trace-header",
        "Anthropic-Version",
        &file("anthropic.jsonl"),
    ]);
    // The third call opens another conversation no agent call launched: another run.
    assert_eq!(
        field(&v, "trace_id"),
        ["2023-06-01", "2023-06-01", "2023-06-01#2"]
    );
    let v = verdicts(&[
        "replay",
        "--trace-header",
        "x-none",
        &file("anthropic.jsonl"),
    ]);
    assert!(v.iter().all(|v| v["trace_id"]
        .as_str()
        .unwrap()
        .starts_with("anthropic#no-x-none")));
}

#[test]
fn broken_lines_are_reported_with_file_and_line_and_the_rest_is_read() {
    let out = run(&["replay", &file("broken.jsonl")]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in 2..=6 {
        assert!(
            stderr.contains(&format!("{DIR}/broken.jsonl:{line}: ")),
            "line {line} not reported:\n{stderr}"
        );
    }
    assert!(stderr.contains("over --max-body"), "{stderr}");
    let good = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(good, 2, "the two good calls are read");
    let json = run(&["analyze", "--format", "json", &file("broken.jsonl")]);
    let r: Json = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(r["bad_lines"], 5);
}

#[test]
fn runs_of_one_task_pair_up_in_diff() {
    let out = run(&[
        "diff",
        "--base",
        &file("mirothinker.jsonl"),
        "--new",
        &file("mirothinker-run2.jsonl"),
        "--format",
        "json",
        "--iterations",
        "200",
    ]);
    let r: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["comparisons"][0]["paired"]["shared"], 1);
}

#[test]
fn timeline_and_report_snapshots() {
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).is_dir());
    let trace = run(&[
        "replay",
        &file("mirothinker.jsonl"),
        "--trace",
        "task-7",
        "--wide",
    ]);
    crate::common::snapshot::assert_text(
        "recording",
        "replay-trace",
        &String::from_utf8(trace.stdout).unwrap(),
    );
    let report = run(&["analyze", DIR]);
    assert_eq!(
        report.status.code(),
        Some(3),
        "broken.jsonl's lines are skipped"
    );
    crate::common::snapshot::assert_text(
        "recording",
        "analyze",
        &String::from_utf8(report.stdout).unwrap(),
    );
}

#[test]
fn a_rolled_back_turn_keeps_its_text_for_keywords_and_export() {
    let run2 = file("mirothinker-run2.jsonl");
    let out = run(&[
        "export",
        "--format",
        "examples",
        "--kind",
        "refusal",
        "--trace-header",
        "X-Upstream-Session-Id",
        &run2,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let example: Json =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(example["trace_id"], "task-7");
    assert!(example.to_string().contains("time constraint"), "{example}");
    let out = run(&[
        "keywords",
        "--format",
        "json",
        "--trace-header",
        "x-upstream-session-id",
        &run2,
    ]);
    let r: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["text_unknown"], 0, "every attempt's text is there");
}
