//! Issue 38's attribution through the binary: tool errors as the harness
//! records them (`tool_error_prefixes`, structural failure flags), blind
//! spots (`blind_spots` in `analyze --format json`, its section and
//! headline) and model or environment (`owners`, `mistakes.owner`, the
//! verdict's `why.owner`). A tau-bench-like transcript made here, the
//! bundled harness files, and, when present, the real tau-bench airline
//! trajectories of ../shared.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::common;

fn run(args: &[&str]) -> Output {
    common::mirotrace()
        .args(args)
        .output()
        .expect("run mirotrace")
}

fn ok_stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn analyze_json(file: &Path, extra: &[&str]) -> Value {
    let path = file.display().to_string();
    let mut args = vec!["analyze", path.as_str(), "-q", "--format", "json"];
    args.extend(extra);
    serde_json::from_str(&ok_stdout(&run(&args))).expect("analyze JSON")
}

fn replay(file: &Path, extra: &[&str]) -> Vec<Value> {
    let path = file.display().to_string();
    let mut args = vec!["replay", path.as_str(), "-q", "--format", "jsonl"];
    args.extend(extra);
    ok_stdout(&run(&args))
        .lines()
        .map(|l| serde_json::from_str(l).expect("verdict"))
        .collect()
}

/// A policy file naming tau-bench's error prefix besides upstream's.
fn tau_policy(dir: &Path) -> PathBuf {
    let p = dir.join("tau.toml");
    std::fs::write(
        &p,
        "tool_error_prefixes = [\"Error executing tool\", \"Error:\"]\n",
    )
    .expect("write policy");
    p
}

/// Whether a tool result reads like an error (the definition the blind
/// spot counts): `Error`, `ERROR` or `error`, then `:` or white space.
fn reads_like_error(text: &str) -> bool {
    ["Error", "ERROR", "error"].iter().any(|w| {
        text.strip_prefix(w)
            .and_then(|r| r.chars().next())
            .is_some_and(|c| c == ':' || c.is_whitespace())
    })
}

/// For each assistant turn of a tau-bench file (list of `{traj}` runs), in
/// file order: the results that answer it.
fn turns_of(runs: &Value) -> Vec<Vec<String>> {
    let mut turns = Vec::new();
    for run in runs.as_array().expect("a list of runs") {
        let mut open: Option<Vec<String>> = None;
        for m in run["traj"].as_array().expect("traj") {
            match m["role"].as_str() {
                Some("assistant") => {
                    turns.extend(open.take());
                    open = Some(Vec::new());
                }
                Some("tool") => {
                    if let Some(o) = open.as_mut() {
                        o.push(m["content"].as_str().unwrap_or_default().to_string());
                    }
                }
                _ => {}
            }
        }
        turns.extend(open);
    }
    turns
}

/// The property of the "Done when", on any tau-bench file: by
/// default the error results are blind spots and nothing is a tool error;
/// with the prefix every turn holding one is rolled back, ended or passed
/// at the limit, and no other turn is a tool error.
fn check_tau(file: &Path, dir: &Path) -> usize {
    let runs: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("JSON");
    let turns = turns_of(&runs);
    let errors: usize = turns
        .iter()
        .map(|t| t.iter().filter(|r| reads_like_error(r)).count())
        .sum();
    let turns_with_error = turns
        .iter()
        .filter(|t| t.iter().any(|r| reads_like_error(r)))
        .count();
    assert!(errors > 0, "{}: no error results", file.display());

    let plain = ["--plain-reply", "continue"];
    let report = analyze_json(file, &plain);
    let blind = &report["blind_spots"];
    assert_eq!(blind["tool_errors_unmatched"], json!(errors));
    assert_eq!(blind["attempts_with_unmatched"], json!(turns_with_error));
    assert_eq!(report["rollback_reasons"]["tool_error"], json!(0));
    // Native tool calls only: the MCP-XML rule cannot fire.
    assert_eq!(blind["rules_idle"][0]["rule"], "format_error");

    let policy = tau_policy(dir);
    let policy = policy.display().to_string();
    let with = [plain[0], plain[1], "--policy", policy.as_str()];
    let verdicts = replay(file, &with);
    assert_eq!(
        verdicts.len(),
        turns.len(),
        "one verdict per assistant turn"
    );
    for (i, (v, results)) in verdicts.iter().zip(&turns).enumerate() {
        let holds = results.iter().any(|r| r.starts_with("Error:"));
        let tool_error = v["reason"] == "tool_error"
            && matches!(v["outcome"].as_str(), Some("rollback" | "end"));
        let passed = v["flags"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == "tool_error_passed"));
        if holds {
            assert!(
                tool_error || passed || v["outcome"] == "rollback",
                "turn {i}: {v}"
            );
        } else {
            assert!(!tool_error && !passed, "turn {i} holds no error: {v}");
        }
        if tool_error {
            assert_eq!(v["why"]["owner"], "model", "turn {i}: {v}");
        }
    }
    let report = analyze_json(file, &with);
    // What reads like an error without the prefix stays a blind spot.
    let unprefixed = turns
        .iter()
        .flatten()
        .filter(|r| reads_like_error(r) && !r.starts_with("Error:"))
        .count();
    assert_eq!(
        report["blind_spots"]["tool_errors_unmatched"],
        json!(unprefixed)
    );
    let rolled = report["rollback_reasons"]["tool_error"]
        .as_u64()
        .unwrap_or(0)
        + report["end_reasons"]["tool_error"].as_u64().unwrap_or(0);
    assert_eq!(report["owners"]["model"], json!(rolled));
    assert_eq!(
        report["mistakes"]["owner"]["tool_error.model"],
        json!(rolled)
    );
    errors
}

/// A small tau-bench-like run: a tool-calling customer-service dialogue
/// whose tool answers `Error: …`, once alone and then five times in a row
/// (the fifth is let through at the limit), plus `error occurred` (reads
/// like an error, no `Error:` prefix) and ordinary results.
fn tau_like() -> Value {
    let call = |id: &str, name: &str, args: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": args}}]})
    };
    let result = |id: &str, name: &str, text: &str| json!({"role": "tool", "tool_call_id": id, "name": name, "content": text});
    let mut retries = Vec::new();
    for k in 0..5 {
        let id = format!("r{k}");
        retries.push(call(&id, "book_reservation", &format!("{{\"seat\": {k}}}")));
        retries.push(result(
            &id,
            "book_reservation",
            "Error: not enough seats on flight HAT001",
        ));
    }
    let mut second = vec![
        json!({"role": "system", "content": "You are an airline agent."}),
        json!({"role": "user", "content": "Book me a seat."}),
    ];
    second.extend(retries);
    second.push(call("s", "get_user_details", "{\"user_id\": \"u\"}"));
    second.push(result(
        "s",
        "get_user_details",
        "error occurred while reading",
    ));
    second.push(json!({"role": "assistant", "content": "Sorry, the flight is full."}));
    json!([
        {"task_id": 0, "reward": 1.0, "traj": [
            {"role": "system", "content": "You are an airline agent."},
            {"role": "user", "content": "Change my flight."},
            call("a", "get_reservation_details", "{\"reservation_id\": \"ABC123\"}"),
            result("a", "get_reservation_details", "{\"reservation_id\": \"ABC123\"}"),
            call("b", "update_reservation_flights", "{\"reservation_id\": \"ABC123\"}"),
            result("b", "update_reservation_flights", "Error: payment amount does not add up, total price is 300, but paid 200"),
            call("c", "update_reservation_flights", "{\"reservation_id\": \"ABC123\", \"paid\": 300}"),
            result("c", "update_reservation_flights", "{\"status\": \"ok\"}"),
            {"role": "assistant", "content": "Done."}
        ]},
        {"task_id": 1, "reward": 0.0, "traj": second}
    ])
}

#[test]
fn tau_bench_errors_are_blind_spots_until_the_policy_names_their_prefix() {
    let dir = common::tempdir("tau-like");
    let file = dir.join("tau-like.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&tau_like()).expect("JSON"),
    )
    .expect("write");
    // 1 + 5 `Error:` results and one `error occurred`.
    assert_eq!(check_tau(&file, &dir), 7);
    // The limit: four rollbacks, then the fifth error is let through.
    let policy = tau_policy(&dir).display().to_string();
    let verdicts = replay(
        &file,
        &["--plain-reply", "continue", "--policy", policy.as_str()],
    );
    // The first run's four turns, then the retries of the second.
    let second = &verdicts[4..];
    let outcomes: Vec<&str> = second
        .iter()
        .take(5)
        .map(|v| v["outcome"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        outcomes,
        ["rollback", "rollback", "rollback", "rollback", "ok"]
    );
    assert!(second[4]["flags"].to_string().contains("tool_error_passed"));
    // The `error occurred` result stays a blind spot under the policy.
    let report = analyze_json(
        &file,
        &["--plain-reply", "continue", "--policy", policy.as_str()],
    );
    assert_eq!(report["blind_spots"]["tool_errors_unmatched"], json!(1));
}

#[test]
fn the_report_says_its_blind_spots_in_the_headline_and_a_section() {
    let dir = common::tempdir("tau-like-text");
    let file = dir.join("tau-like.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&tau_like()).expect("JSON"),
    )
    .expect("write");
    let path = file.display().to_string();
    let text = ok_stdout(&run(&["analyze", &path, "-q", "--plain-reply", "continue"]));
    let head: String = text.lines().take(6).collect::<Vec<_>>().join(" ");
    assert!(
        head.contains("blind spots: 7 tool results read like errors"),
        "{text}"
    );
    assert!(text.contains("BLIND SPOTS"), "{text}");
    let md = ok_stdout(&run(&[
        "analyze",
        &path,
        "-q",
        "--plain-reply",
        "continue",
        "--format",
        "markdown",
    ]));
    assert!(md.contains("Blind spots"), "{md}");
    let html = ok_stdout(&run(&[
        "analyze",
        &path,
        "-q",
        "--plain-reply",
        "continue",
        "--format",
        "html",
    ]));
    assert!(html.contains("id=\"blind-spots\""));
    assert!(html.contains("blind spots: 7 tool results"));
    // Nothing to say, no line and no section.
    let clean = ok_stdout(&run(&["analyze", &common::fixture("model-a.jsonl"), "-q"]));
    assert!(!clean.contains("blind spots") && !clean.contains("BLIND SPOTS"));
}

/// The real airline trajectories (tau-bench), when ../shared holds them:
/// 73 error results (the figure) and the same property.
#[test]
fn tau_bench_airline_of_shared_when_present() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/real-traces/tau-bench/historical_trajectories/gpt-4o-airline.json");
    if !file.exists() {
        eprintln!("skipped: {} is not here", file.display());
        return;
    }
    let dir = common::tempdir("tau-shared");
    assert_eq!(check_tau(&file, &dir), 73);
}

/// A Claude Code tool result marked `is_error` is a tool error whatever its
/// text; the same session with the mark removed has none.
#[test]
fn a_result_marked_failed_is_a_tool_error() {
    let src = common::fixture_path("harnesses/claude-code/parallel-2.1.42.jsonl");
    let text = std::fs::read_to_string(&src).expect("fixture");
    assert!(text.contains("\"is_error\": true"));
    let dir = common::tempdir("is-error");
    let unmarked = dir.join("unmarked.jsonl");
    std::fs::write(
        &unmarked,
        text.replace("\"is_error\": true", "\"is_error\": false"),
    )
    .expect("write");
    let errors = |v: &[Value]| {
        v.iter()
            .filter(|v| v["reason"] == "tool_error")
            .cloned()
            .collect::<Vec<_>>()
    };
    let marked = errors(&replay(&src, &[]));
    assert_eq!(marked.len(), 1, "{marked:?}");
    assert_eq!(marked[0]["outcome"], "rollback");
    // A failing test run: the model's.
    assert_eq!(marked[0]["why"]["owner"], "model");
    assert!(errors(&replay(&unmarked, &[])).is_empty());
}

/// A chat transcript whose tool message carries Inspect's `error`, and
/// one whose error is the environment's: `why.owner` and `owners` say so.
#[test]
fn owners_separate_the_model_from_its_environment() {
    let dir = common::tempdir("owners");
    let call = |id: &str| {
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "fetch", "arguments": "{\"url\": \"x\"}"}}]})
    };
    let lines = [
        json!({"id": "env", "messages": [
            {"role": "user", "content": "go"},
            call("a"),
            {"role": "tool", "tool_call_id": "a", "content": "", "error": {"type": "timeout", "message": "Command timed out after 180 seconds"}},
            {"role": "assistant", "content": "done"}]}),
        json!({"id": "model", "messages": [
            {"role": "user", "content": "go"},
            call("b"),
            {"role": "tool", "tool_call_id": "b", "content": "", "error": {"type": "file_not_found", "message": "File /no/such/path.txt not found"}},
            {"role": "assistant", "content": "done"}]}),
    ];
    let file = dir.join("chat.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).expect("write");
    let verdicts = replay(&file, &[]);
    let owner_of = |id: &str| {
        verdicts
            .iter()
            .find(|v| v["trace_id"] == id && v["reason"] == "tool_error")
            .map(|v| v["why"]["owner"].clone())
    };
    assert_eq!(owner_of("env"), Some(json!("environment")));
    assert_eq!(owner_of("model"), Some(json!("model")));
    let report = analyze_json(&file, &[]);
    assert_eq!(
        report["owners"],
        json!({"model": 1, "environment": 1, "unclassified": 0})
    );
    assert_eq!(
        report["mistakes"]["owner"]["tool_error.environment"],
        json!(1)
    );
    let path = file.display().to_string();
    let text = ok_stdout(&run(&["analyze", &path, "-q"]));
    assert!(
        text.contains("tool errors and LLM failures: 1 the environment's"),
        "{text}"
    );
}
