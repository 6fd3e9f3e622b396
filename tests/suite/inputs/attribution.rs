//! Attribution: every attempt of a trace carries the model its trace
//! names (crates/engine/src/read/attribution.rs), whatever the format; the
//! expected models are read here straight from the files' JSON.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use mirotrace::read::source::{expand, open_records, InputSpec, ReadOptions};
use mirotrace::read::{Record, Trace};
use serde_json::Value as Json;

/// Every trace of every file under `dir`, by file.
fn traces_under(dir: &Path) -> Vec<(PathBuf, Vec<Trace>)> {
    expand(&[InputSpec::Path(dir.to_path_buf())])
        .into_iter()
        .map(|spec| {
            let spec = spec.expect("walks");
            let InputSpec::Path(path) = &spec else {
                unreachable!()
            };
            let traces = open_records(&spec, &ReadOptions::default())
                .expect("opens")
                .filter_map(|r| match r {
                    Record::Trace(t) => Some(t),
                    _ => None,
                })
                .collect();
            (path.clone(), traces)
        })
        .collect()
}

fn models(t: &Trace) -> Vec<Option<&str>> {
    t.attempts.iter().map(|a| a.model.as_deref()).collect()
}

/// A trace that names a model anywhere has a model on every attempt.
#[test]
fn no_attempt_is_without_a_model_while_its_trace_names_one() {
    let mut named = 0;
    for dir in ["harnesses", "atif", "chat", "tasklog"] {
        for (path, traces) in traces_under(&crate::common::fixture_path(dir)) {
            for t in &traces {
                let with = t.attempts.iter().filter(|a| a.model.is_some()).count();
                assert!(
                    with == 0 || with == t.attempts.len(),
                    "{} trace {}: {:?}",
                    path.display(),
                    t.trace_id,
                    models(t)
                );
                named += with;
            }
        }
    }
    // The fixtures name models in most formats: the check is not empty.
    assert!(named > 50, "{named}");
}

fn task_log_json(path: &Path) -> Json {
    let mut text = String::new();
    zstd::stream::read::Decoder::new(std::fs::File::open(path).expect("opens"))
        .expect("zstd")
        .read_to_string(&mut text)
        .expect("reads");
    serde_json::from_str(&text).expect("a task log")
}

/// Task logs name their model once, in `env_info`: it is every attempt's,
/// sub-agents' and rolled-back turns' alike.
#[test]
fn every_attempt_of_a_task_log_has_the_model_of_its_env_info() {
    let mut attempts = 0;
    for (path, traces) in traces_under(&crate::common::path("tasklogs/logs")) {
        let doc = task_log_json(&path);
        let want = doc["env_info"]["llm_model_name"].as_str().expect("named");
        assert_eq!(traces.len(), 1, "{}", path.display());
        let t = &traces[0];
        assert!(!t.attempts.is_empty());
        assert!(
            t.attempts.iter().all(|a| a.model.as_deref() == Some(want)),
            "{}: {:?}",
            path.display(),
            models(t)
        );
        attempts += t.attempts.len();
    }
    assert!(attempts > 60, "{attempts}");
}

/// `analyze --group-by model` of the task logs: one group, the model the
/// logs name, holding every attempt.
#[test]
fn task_logs_group_by_model_into_one_group() {
    let logs = crate::common::path("tasklogs/logs");
    let names: HashSet<String> = traces_under(&logs)
        .iter()
        .map(|(p, _)| task_log_json(p)["env_info"]["llm_model_name"].to_string())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let out = crate::common::mirotrace()
        .args(["analyze", "--group-by", "model", "--format", "json", "-q"])
        .arg(&logs)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let groups = report["groups"]["items"].as_array().expect("groups");
    let keys: Vec<String> = groups.iter().map(|g| g["key"].to_string()).collect();
    assert_eq!(keys, names.into_iter().collect::<Vec<_>>());
    assert_eq!(groups[0]["attempts"], report["attempts"]);
    assert_eq!(groups[0]["traces"], report["traces"]);
}

/// Inspect: each assistant message names the model that wrote it (more
/// specific than the log's `eval.model`), and its attempt carries it.
#[test]
fn inspect_attempts_carry_their_messages_model() {
    let path =
        crate::common::fixture_path("harnesses/inspect/2025-05-12T20-27-36-04-00_browser.json");
    let log: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let want: Vec<Option<&str>> = log["samples"][0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["model"].as_str())
        .collect();
    assert!(want.len() > 1 && want.iter().all(Option::is_some));
    let (_, traces) = traces_under(&path).remove(0);
    assert_eq!(models(&traces[0]), want);
}

/// OpenHands: each response names its model; every attempt carries one
/// of those the file records.
#[test]
fn openhands_attempts_carry_their_responses_model() {
    for name in [
        "basic.json",
        "basic_interactions.json",
        "wrong_initial_state.json",
    ] {
        let path = crate::common::fixture_path(&format!("harnesses/openhands/{name}"));
        let events: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let recorded: HashSet<&str> = events
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["tool_call_metadata"]["model_response"]["model"].as_str())
            .collect();
        assert!(!recorded.is_empty(), "{name}");
        for (_, traces) in traces_under(&path) {
            for t in traces {
                assert!(
                    t.attempts
                        .iter()
                        .all(|a| a.model.as_deref().is_some_and(|m| recorded.contains(m))),
                    "{name}: {:?} not in {recorded:?}",
                    models(&t)
                );
            }
        }
    }
}

/// any-agent's saved traces name each trace by a 128-bit integer: the
/// trace's id is its digits, all of them (read here from the file's text).
#[test]
fn integer_trace_ids_of_128_bits_are_exact() {
    for name in [
        "any-agent-openai.spans.json",
        "any-agent-smolagents.spans.json",
    ] {
        let path = crate::common::fixture_path(&format!("harnesses/otel/{name}"));
        let text = std::fs::read_to_string(&path).unwrap();
        let written: HashSet<&str> = text
            .split("\"trace_id\":")
            .skip(1)
            .map(|rest| {
                let rest = rest.trim_start();
                &rest[..rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len())]
            })
            // Numbers only: a root span's parent is `"trace_id": null`.
            .filter(|digits| !digits.is_empty())
            .collect();
        assert!(written.iter().all(|d| d.len() > 20), "{name}: {written:?}");
        let (_, traces) = traces_under(&path).remove(0);
        let ids: HashSet<&str> = traces.iter().map(|t| &*t.trace_id).collect();
        assert_eq!(ids, written, "{name}");
    }
}

/// Integer ids too big for 64 bits, in JSONL records of other formats (a
/// chat record's `trace_id`, an OTLP span's `traceId`): digit for digit,
/// and two that differ only in their last digit stay two traces.
#[test]
fn big_integer_ids_in_jsonl_records_stay_exact_and_apart() {
    let a = "340282366920938463463374607431768211454";
    let b = "340282366920938463463374607431768211455";
    let chat = |id: &str| {
        format!(
            r#"{{"trace_id": {id}, "messages": [{{"role": "user", "content": "q"}}, {{"role": "assistant", "content": "a"}}]}}"#
        )
    };
    let span = |id: &str| {
        format!(
            r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{{"traceId": {id}, "spanId": "s{}", "startTimeUnixNano": "1", "attributes": [{{"key": "gen_ai.operation.name", "value": {{"stringValue": "chat"}}}}, {{"key": "gen_ai.output.messages", "value": {{"stringValue": "[{{\"role\": \"assistant\", \"parts\": [{{\"type\": \"text\", \"content\": \"hi\"}}]}}]"}}}}]}}]}}]}}]}}"#,
            &id[id.len() - 1..]
        )
    };
    for (what, text) in [
        ("chat", format!("{}\n{}\n", chat(a), chat(b))),
        ("otlp", format!("{}\n{}\n", span(a), span(b))),
    ] {
        let records = mirotrace::read::source::open_stream(
            Box::new(std::io::Cursor::new(text.into_bytes())),
            "big.jsonl".into(),
            &ReadOptions::default(),
        )
        .expect("opens");
        let ids: Vec<String> = records
            .map(|r| match r {
                Record::Trace(t) => t.trace_id.to_string(),
                other => panic!("{what}: {other:?}"),
            })
            .collect();
        assert_eq!(ids, [a, b], "{what}");
    }
}
