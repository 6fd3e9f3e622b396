//! `mirotrace analyze logs/ recording.jsonl`: the bundled task logs joined
//! with a recording of the same run ([`derive`]). Every attempt is replayed
//! from its text, so the figures equal the run's truth, the mistakes equal
//! those of the complete native traces, no attempt is without text, the
//! SDK's retries fold into their attempts and the summary calls are
//! counted, not judged. A recording changed (a call dropped, a foreign
//! call, two calls swapped) is reported, naming what disagrees.

mod derive;
mod record_run;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value as Json;

use super::tasklog_truth::{report_figures, truth_figures, truth_lines};
use crate::common;

struct Run {
    logs: common::TempDir,
    recording: PathBuf,
    derived: derive::Derived,
}

fn run_with(edit: impl FnOnce(&mut Vec<String>)) -> Run {
    let logs = common::unpack("tasklogs/logs");
    let mut derived = derive::derive(
        &logs,
        &common::read_to_string("tasklogs/traces.jsonl"),
        &common::read_to_string("tasklogs/traces.verdicts.jsonl"),
    );
    edit(&mut derived.lines);
    let dir = common::scratch("recording-join");
    let recording = dir.join("recording.jsonl");
    std::fs::write(&recording, derived.lines.join("\n") + "\n").expect("write the recording");
    Run {
        logs,
        recording,
        derived,
    }
}

fn analyze(inputs: &[&Path], extra: &[&str]) -> Output {
    let mut cmd = common::mirotrace();
    cmd.arg("analyze");
    cmd.args(inputs);
    cmd.args(["--format", "json", "--top", "100000"]);
    cmd.args(extra);
    cmd.output().expect("run mirotrace")
}

fn report(out: &Output) -> Json {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "analyze writes JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// What the native traces of the run give (the run's complete record).
fn native_report() -> Json {
    let dir = common::scratch("recording-join-native");
    let traces = dir.join("traces.jsonl");
    std::fs::write(&traces, common::read_to_string("tasklogs/traces.jsonl")).unwrap();
    report(&analyze(&[&traces], &["-q"]))
}

/// `N × KIND` on the reading summary's line of records that are not attempts.
fn not_attempts(stderr: &str, kind: &str) -> Option<u64> {
    let line = stderr
        .lines()
        .find(|l| l.contains("records read that are not attempts"))?;
    let (_, counts) = line.split_once("): ")?;
    counts.split(", ").find_map(|part| {
        let (n, k) = part.trim().split_once(" × ")?;
        (k.trim() == kind).then(|| n.trim().parse().ok())?
    })
}

#[test]
fn logs_and_recording_equal_the_truth_with_every_text() {
    let run = run_with(|_| {});
    let out = analyze(&[&*run.logs, &run.recording], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let joined = report(&out);
    // Nothing disagrees: no problem, no skipped line.
    assert_eq!(joined["bad_lines"], 0, "{stderr}");
    // The figures check.py compares equal the truth's.
    assert_eq!(report_figures(&joined), truth_figures(&truth_lines()));
    // Every attempt has its text: none is judged by the log alone.
    assert_eq!(joined["blind_spots"]["text_unknown"], 0);
    assert_eq!(
        joined["sources"]["recorded"]["attempts"]
            .as_u64()
            .unwrap_or(0),
        0,
        "{}",
        joined["sources"]
    );
    // Without the recording the log decides hundreds of them.
    let alone = report(&analyze(&[&*run.logs], &["-q"]));
    assert!(alone["blind_spots"]["text_unknown"].as_u64().unwrap() > 100);

    // The mistakes equal those of the complete native traces of the run.
    let native = native_report();
    let (m, n) = (&joined["mistakes"], &native["mistakes"]);
    for family in [
        "format_errors",
        "format_error",
        "repaired_calls",
        "json_fixes",
        "llm_failed",
        "tool_error",
        "duplicate_query",
        "owner",
    ] {
        assert_eq!(m[family], n[family], "mistakes.{family}");
    }
    assert_eq!(m["format_error"]["unclassified"], 0);
    // An unknown tool's kind names the server against the prompt upstream
    // had loaded last; the logs hold a sub-agent session the native traces
    // lack (the scripted client's filler), so only the count is compared.
    let total = |v: &Json| -> u64 {
        v.as_object()
            .unwrap()
            .values()
            .filter_map(Json::as_u64)
            .sum()
    };
    assert_eq!(total(&m["unknown_tool"]), total(&n["unknown_tool"]));
    // (Where a streak ends may differ: the logs' filler turns end some
    // streaks the native traces leave at their last line.)
    for figure in [
        "/duplicate_hits",
        "/duplicate_queries",
        "/limit_events",
        "/streaks/histogram",
        "/streaks/count",
        "/rollback_reasons",
        "/recovered",
    ] {
        assert_eq!(joined.pointer(figure), native.pointer(figure), "{figure}");
    }

    // Summary calls and the SDK's retries: counted apart, never attempts.
    assert!(run.derived.summary_calls > 0 && run.derived.sdk_retries > 0);
    assert_eq!(
        not_attempts(&stderr, "recording:summary_call"),
        Some(run.derived.summary_calls),
        "{stderr}"
    );
    assert_eq!(
        not_attempts(&stderr, "recording:sdk_retry"),
        Some(run.derived.sdk_retries),
        "{stderr}"
    );
    let turns =
        run.derived.lines.len() as u64 - run.derived.summary_calls - run.derived.sdk_retries;
    assert_eq!(joined["attempts"].as_u64(), Some(turns));
}

/// The index of the line of recorded call `call`.
fn line_of(lines: &[String], pred: impl Fn(&Json) -> bool) -> usize {
    lines
        .iter()
        .position(|l| pred(&serde_json::from_str(l).unwrap()))
        .expect("such a call")
}

fn problems(run: &Run) -> String {
    let out = analyze(&[&*run.logs, &run.recording], &["--max-errors", "100000"]);
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn answer(l: &Json) -> &str {
    l["response"]["body"]["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_dropped_call_is_named() {
    // A rolled-back turn of the first task: its answer leaks a tag.
    let mut dropped = String::new();
    let run = run_with(|lines| {
        let i = line_of(lines, |l| {
            answer(l).contains("<use_mcp_tool>")
                && l["request"]["headers"]["x-stainless-retry-count"] == "0"
        });
        dropped = lines.remove(i);
    });
    let stderr = problems(&run);
    let call: Json = serde_json::from_str(&dropped).unwrap();
    let task = call["request"]["headers"]["x-upstream-session-id"]
        .as_str()
        .unwrap()
        .split("-0000-4000")
        .next()
        .unwrap()
        .rsplit_once('-')
        .unwrap()
        .0
        .to_string();
    assert!(
        stderr
            .lines()
            .any(|l| l.contains(&format!("task_{task}.json"))
                && l.contains("LLM call: no recorded call matches it")),
        "{stderr}"
    );
}

#[test]
fn a_foreign_call_is_named() {
    let run = run_with(|lines| {
        let mut l: Json = serde_json::from_str(&lines[3]).unwrap();
        l["request"]["body"]["messages"][1]["content"] = Json::from("a task of another run");
        lines.insert(4, l.to_string());
    });
    let stderr = problems(&run);
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("recording.jsonl:5: recorded call")
                && l.contains("is not in the task log")
                && l.contains("a conversation no saved session of the log has")),
        "{stderr}"
    );
}

#[test]
fn swapped_calls_are_named() {
    // The order is the proxy's (`call`), not the lines': lines written in
    // another order read the same.
    let run = run_with(|lines| lines.swap(1, 2));
    let stderr = problems(&run);
    assert!(!stderr.contains("recording: "), "{stderr}");
    // A main-agent call received after the sub-agent call that followed it.
    let run = run_with(|lines| {
        let prompt = |l: &str| {
            serde_json::from_str::<Json>(l).unwrap()["request"]["body"]["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let main = prompt(&lines[0]);
        let sub = lines.iter().position(|l| prompt(l) != main).unwrap();
        let mut a: Json = serde_json::from_str(&lines[sub - 1]).unwrap();
        let mut b: Json = serde_json::from_str(&lines[sub]).unwrap();
        std::mem::swap(&mut a["call"], &mut b["call"]);
        lines[sub - 1] = a.to_string();
        lines[sub] = b.to_string();
    });
    let stderr = problems(&run);
    assert!(
        stderr.contains("is not in the task log") && stderr.contains("no recorded call"),
        "{stderr}"
    );
}

#[test]
fn a_run_no_task_log_claims_is_read_as_a_recording_alone() {
    let run = run_with(|_| {});
    let all = report(&analyze(&[&*run.logs, &run.recording], &["-q"]));
    let removed = std::fs::read_dir(&*run.logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    std::fs::remove_file(&removed).unwrap();
    let out = analyze(&[&*run.logs, &run.recording], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fewer = report(&out);
    // Its run is still there, once: read from the recording alone.
    assert_eq!(fewer["traces"], all["traces"], "{stderr}");
    assert!(fewer["attempts"].as_u64() > Some(0));
    assert_eq!(fewer["blind_spots"]["text_unknown"], 0);
    assert!(!stderr.contains("recording: "), "{stderr}");
}

/// A joined trace's timeline: rolled-back turns in place, each with the
/// model's text as the recording has it.
#[test]
fn a_joined_timeline_snapshot() {
    let run = run_with(|_| {});
    let out = common::mirotrace()
        .arg("replay")
        .arg(&*run.logs)
        .arg(&run.recording)
        .args(["--trace", "tld-71-0001", "--wide", "-q"])
        .output()
        .expect("run mirotrace");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::snapshot::assert_text(
        "recording_join",
        "replay-trace",
        &String::from_utf8(out.stdout).unwrap(),
    );
}
