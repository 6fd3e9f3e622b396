//! `tests/data/record-run/`: upstream's own orchestrator and client, run
//! through `mirotrace record` (its README says how). Its task logs joined
//! with its recording give the run's truth verdict by verdict, every
//! attempt with its text, the mistakes of the same run's native traces,
//! every call of the recording accounted for (attempts, summary calls,
//! upstream's retries, the SDK's), and no disagreement.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value as Json;

use super::super::tasklog_truth::{report_figures, truth_figures};
use super::{analyze, not_attempts, report};
use crate::common;

fn logs() -> PathBuf {
    common::path("record-run/logs")
}

fn recording() -> PathBuf {
    common::path("record-run/recording.jsonl")
}

fn jsonl(text: &str) -> Vec<Json> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn truth() -> Vec<Json> {
    jsonl(&common::read_to_string("record-run/truth.verdicts.jsonl"))
}

/// (trace, session) → its verdicts' (outcome, reason, streak), in order.
type Sequences = BTreeMap<(String, String), Vec<(String, Json, Json)>>;

fn sequences(verdicts: &[Json]) -> Sequences {
    let mut out = Sequences::new();
    for v in verdicts.iter().filter(|v| v["outcome"] != "unreachable") {
        out.entry((
            v["trace_id"].as_str().unwrap().to_string(),
            v["session"].as_str().unwrap().to_string(),
        ))
        .or_default()
        .push((
            v["outcome"].as_str().unwrap().to_string(),
            v["reason"].clone(),
            v["consecutive_rollbacks"].clone(),
        ));
    }
    out
}

#[test]
fn logs_and_recording_equal_the_runs_truth() {
    let out = analyze(&[&logs(), &recording()], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let joined = report(&out);
    assert_eq!(joined["bad_lines"], 0, "no disagreement: {stderr}");
    assert_eq!(report_figures(&joined), truth_figures(&truth()));
    assert_eq!(joined["blind_spots"]["text_unknown"], 0);
    assert_eq!(joined["mistakes"]["format_error"]["unclassified"], 0);
    // The log alone cannot say what the popped turns were.
    let alone = report(&analyze(&[&logs()], &["-q"]));
    assert_eq!(report_figures(&alone), truth_figures(&truth()));
    assert!(alone["blind_spots"]["text_unknown"].as_u64() > Some(0));

    // Every call of the recording is an attempt, a summary call, or a
    // retry folded into its attempt.
    let calls = jsonl(&common::read_to_string("record-run/recording.jsonl"));
    let sdk = calls
        .iter()
        .filter(|c| {
            c["request"]["headers"]["x-stainless-retry-count"]
                .as_str()
                .is_some_and(|n| n != "0")
        })
        .count() as u64;
    let count = |kind: &str| not_attempts(&stderr, kind).unwrap_or(0);
    assert_eq!(count("recording:sdk_retry"), sdk, "{stderr}");
    assert!(count("recording:client_retry") > 0 && count("recording:summary_call") > 0);
    assert_eq!(
        joined["attempts"].as_u64().unwrap()
            + count("recording:summary_call")
            + count("recording:client_retry")
            + count("recording:sdk_retry"),
        calls.len() as u64,
        "{stderr}"
    );
}

#[test]
fn replay_agrees_verdict_by_verdict() {
    let out = common::mirotrace()
        .arg("replay")
        .arg(logs())
        .arg(recording())
        .arg("-q")
        .output()
        .expect("run mirotrace");
    assert!(out.status.success());
    let got = sequences(&jsonl(&String::from_utf8_lossy(&out.stdout)));
    assert_eq!(got, sequences(&truth()));
}

/// The same run's native traces: the conformance run's lines of these
/// tasks, once per run (a task run twice under a second trace id).
fn native_traces() -> PathBuf {
    let mut runs: BTreeMap<String, usize> = BTreeMap::new();
    for v in truth()
        .iter()
        .filter(|v| v["index"] == 0 && v["session"] == "main")
    {
        *runs
            .entry(v["trace_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let lines = jsonl(&common::read_to_string("tasklogs/traces.jsonl"));
    let mut out = String::new();
    for (task, n) in &runs {
        for run in 0..*n {
            for l in lines.iter().filter(|l| l["trace_id"] == task.as_str()) {
                let mut l = l.clone();
                if run > 0 {
                    l["trace_id"] = Json::from(format!("{task}#{}", run + 1));
                }
                out.push_str(&l.to_string());
                out.push('\n');
            }
        }
    }
    let path = common::scratch("record-run-native").join("traces.jsonl");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn the_mistakes_equal_the_native_traces() {
    let joined = report(&analyze(&[&logs(), &recording()], &["-q"]));
    let native = report(&analyze(&[&native_traces()], &["-q"]));
    for family in [
        "format_errors",
        "format_error",
        "repaired_calls",
        "json_fixes",
        "llm_failed",
        "unknown_tool",
        "tool_error",
        "duplicate_query",
        "owner",
        "by_agent",
    ] {
        assert_eq!(
            joined["mistakes"][family], native["mistakes"][family],
            "mistakes.{family}"
        );
    }
    for figure in [
        "/duplicate_hits",
        "/duplicate_queries",
        "/limit_events",
        "/streaks/histogram",
        "/rollback_reasons",
    ] {
        assert_eq!(joined.pointer(figure), native.pointer(figure), "{figure}");
    }
}
