//! Every input form through the real binary: task logs, chat transcripts,
//! ATIF, compressed files, folders, stdin, all in one command line; broken
//! inputs reported and skipped; `export --format atif` round trips.

use std::collections::BTreeMap;
use std::process::{Command, Output};

use serde_json::Value as Json;

use crate::common;
use common::{fixture, scratch};

fn bin() -> Command {
    crate::common::mirotrace()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mirotrace")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// (trace_id, session, index, outcome, reason) of every verdict line.
fn verdicts(o: &Output) -> Vec<(String, String, u64, String, Option<String>)> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let v: Json = serde_json::from_str(l).expect("verdict line is JSON");
            (
                v["trace_id"].as_str().unwrap().to_string(),
                v["session"].as_str().unwrap().to_string(),
                v["index"].as_u64().unwrap(),
                v["outcome"].as_str().unwrap().to_string(),
                v["reason"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn trace_ids(o: &Output) -> Vec<String> {
    let mut ids: Vec<String> = verdicts(o).into_iter().map(|v| v.0).collect();
    ids.dedup();
    ids
}

#[test]
fn every_form_mixes_on_one_command_line() {
    let o = run(&[
        "replay",
        &fixture("tasklog/task_eiffel-height_2025-06-03-10-12-44.json"),
        &fixture("chat/openai-tool-calls.jsonl"),
        &fixture("atif/vienna-river.trajectory.json"),
        &fixture("mixed/ok/task_reykjavik-pop_2025-06-03-11-02-10.json.zst"),
        &fixture("mixed/ok/eiffel-height.chat.jsonl.gz"),
        &fixture("mixed/ok/native.jsonl"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ids = trace_ids(&o);
    assert_eq!(ids.len(), 8, "{ids:?}");
    assert_eq!(ids[0], "eiffel-height");
    assert_eq!(ids[1], "openai-tool-calls");
    assert_eq!(ids[3], "b1e7c2d0-3f7a-4c55-9d0e-8a51f0a2c9e4");
    assert_eq!(
        &ids[4..],
        ["reykjavik-pop", "eiffel-height", "native-1", "native-2"]
    );
}

#[test]
fn a_folder_of_good_inputs_reads_cleanly_in_sorted_order() {
    let o = run(&["replay", &fixture("mixed/ok")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        trace_ids(&o),
        [
            "eiffel-height",
            "native-2",
            "chat-in-native-file",
            "native-3",
            "native-1",
            "native-2",
            "eiffel-height",
            "reykjavik-pop",
            "b1e7c2d0-3f7a-4c55-9d0e-8a51f0a2c9e4"
        ]
    );
}

#[test]
fn broken_inputs_are_reported_and_skipped() {
    let o = run(&["replay", &fixture("mixed")]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "some input was skipped: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains(
            "cut-off.jsonl.gz: 192 lines read, then the input was cut at line 193: truncated or corrupt gzip stream"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "robot-role.chat.jsonl:2: chat transcript: message 1 has unknown role \"robot\""
        ),
        "{err}"
    );
    assert!(
        err.contains("task_cut-short_2025-06-03-12-00-00.json:41: not JSON: "),
        "{err}"
    );
    let ids = trace_ids(&o);
    // What could be read still is: the lines before the cut, the good chats, every good file.
    assert!(ids.contains(&"long-63".to_string()), "{ids:?}");
    assert!(ids.contains(&"good-chat-2".to_string()));
    assert!(ids.contains(&"reykjavik-pop".to_string()));
}

#[test]
fn compressed_stdin_is_detected() {
    let gz = std::fs::read(fixture(
        "mixed/ok/task_eiffel-height_2025-06-03-10-12-44.json.gz",
    ))
    .unwrap();
    let o = common::run_with_stdin(bin().args(["replay", "-"]), &gz);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let plain = run(&[
        "replay",
        &fixture("tasklog/task_eiffel-height_2025-06-03-10-12-44.json"),
    ]);
    assert_eq!(verdicts(&o), verdicts(&plain));
}

#[test]
fn input_format_forces_a_reader() {
    let o = run(&[
        "replay",
        "--input-format",
        "chat",
        &fixture("mixed/ok/native.jsonl"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "nothing readable as chat: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains(
        "native.jsonl:1: not a chat transcript (--input-format chat): it looks like a native attempt line"
    ));
    let o = run(&[
        "replay",
        "--input-format",
        "tasklog",
        &fixture("mixed/ok/task_reykjavik-pop_2025-06-03-11-02-10.json.zst"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bad = run(&[
        "replay",
        "--input-format",
        "yaml",
        &fixture("mixed/ok/native.jsonl"),
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn export_writes_atif_that_replays_the_same() {
    let inputs = [
        fixture("tasklog"),
        fixture("chat/openai-tool-calls.jsonl"),
        fixture("atif/vienna-river.trajectory.json"),
        fixture("mixed/ok/native.jsonl"),
    ];
    let mut args = vec!["replay"];
    args.extend(inputs.iter().map(String::as_str));
    let direct = run(&args);
    assert_eq!(direct.status.code(), Some(0), "{}", stderr(&direct));

    // One JSON line per trajectory on stdout …
    let mut args = vec!["export", "--format", "atif"];
    args.extend(inputs.iter().map(String::as_str));
    let exported = run(&args);
    assert_eq!(exported.status.code(), Some(0), "{}", stderr(&exported));
    let text = String::from_utf8(exported.stdout.clone()).unwrap();
    for line in text.lines() {
        let doc: Json = serde_json::from_str(line).unwrap();
        assert_eq!(doc["schema_version"], "ATIF-v1.4");
        assert!(doc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["step_id"].is_u64() && s["source"].is_string()));
    }
    let back = common::run_with_stdin(bin().args(["replay", "-"]), text.as_bytes());
    assert_eq!(back.status.code(), Some(0));
    let key = |o: &Output| {
        let mut v = verdicts(o);
        v.sort();
        v
    };
    assert_eq!(key(&back), key(&direct));

    // … or one pretty file per trace into a directory.
    let dir = scratch("export");
    let target = format!("{}/", dir.join("atif").display());
    let mut args = vec!["export", "-o", &target];
    args.extend(inputs.iter().map(String::as_str));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files = std::fs::read_dir(dir.join("atif")).unwrap().count();
    assert_eq!(files, trace_ids(&direct).len());
    let back = run(&["replay", &target]);
    assert_eq!(key(&back), key(&direct));
}

/// Rollback reasons counted from the step logs of the task logs in `dir`.
fn step_log_reasons(paths: &[&str]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in paths {
        let doc: Json = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        for s in doc["step_logs"].as_array().unwrap() {
            if !s["step_name"].as_str().unwrap().ends_with("| Rollback") {
                continue;
            }
            let m = s["message"].as_str().unwrap();
            let reason = match () {
                _ if m.starts_with("Tool call format") => "format_error",
                _ if m.starts_with("LLM refused") => "refusal",
                _ if m.starts_with("Duplicate query") => "duplicate_query",
                _ if m.contains("result: 'Unknown tool:") => "unknown_tool",
                _ if m.contains("result: 'Error executing tool") => "tool_error",
                _ => "empty_search",
            };
            *out.entry(reason.to_string()).or_default() += 1;
        }
    }
    out
}

#[test]
fn analyze_counts_the_whole_run_of_task_logs() {
    let logs = [
        fixture("tasklog/task_eiffel-height_2025-06-03-10-12-44.json"),
        fixture("tasklog/task_reykjavik-pop_2025-06-03-11-02-10.json"),
    ];
    let o = run(&["analyze", "--format", "json", &fixture("tasklog")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Json = serde_json::from_slice(&o.stdout).unwrap();
    // The headline figures count the rolled-back turns the step logs record.
    let reasons: BTreeMap<String, u64> =
        serde_json::from_value::<BTreeMap<String, u64>>(report["rollback_reasons"].clone())
            .unwrap()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
    let logged = step_log_reasons(&[&logs[0], &logs[1]]);
    assert_eq!(reasons, logged);
    let logged_total: u64 = logged.values().sum();
    assert_eq!(report["sources"]["recorded"]["attempts"], logged_total);
    assert_eq!(report["limit_events"]["duplicate_allowed"], 1);
    assert_eq!(report["limit_events"]["loop_ended"], 1);
    assert_eq!(report["recovered"], 4);
    assert_eq!(report["recorded"]["disagreements"], Json::Array(Vec::new()));
    let with_chats = run(&[
        "analyze",
        "--format",
        "json",
        &fixture("tasklog"),
        &fixture("chat"),
    ]);
    let with_chats: Json = serde_json::from_slice(&with_chats.stdout).unwrap();
    assert_eq!(
        with_chats["recorded"]["traces"], 2,
        "chat transcripts carry no log"
    );
    assert_eq!(
        with_chats["sources"]["recorded"]["attempts"],
        report["sources"]["recorded"]["attempts"]
    );

    let table = run(&["analyze", "--no-color", &fixture("tasklog")]);
    assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.to_lowercase()
            .contains("task logs: replayed and recorded verdicts")
            && text.contains("recorded (step_logs)"),
        "{text}"
    );
}

/// Issue 22 §2: `replay a > v; analyze a v` says what v is (verdicts, once,
/// counted) and reports the rate of a alone, exit 3; v alone exits 4.
#[test]
fn our_own_verdicts_are_said_to_be_verdicts_not_counted_as_attempts() {
    let dir = scratch("verdicts-given-back");
    let a = fixture("model-a.jsonl");
    let replayed = run(&["replay", &a, "--format", "jsonl"]);
    assert!(replayed.status.success());
    let v = dir.join("v.jsonl");
    std::fs::write(&v, &replayed.stdout).unwrap();
    let lines = replayed.stdout.iter().filter(|&&b| b == b'\n').count();
    let v = v.to_str().unwrap();
    let rate = |o: &Output| {
        let j: Json = serde_json::from_slice(&o.stdout).expect("JSON report");
        (
            j["rollback_rate"]["value"].as_f64(),
            j["attempts"].as_u64(),
            j,
        )
    };
    let alone = run(&["analyze", &a, "--format", "json", "-q"]);
    assert_eq!(alone.status.code(), Some(0));
    let both = run(&["analyze", &a, v, "--format", "json", "-q"]);
    assert_eq!(both.status.code(), Some(3), "{}", stderr(&both));
    let (r1, n1, _) = rate(&alone);
    let (r2, n2, report) = rate(&both);
    assert_eq!((r1, n1), (r2, n2));
    assert_eq!(report["input"]["skipped"]["replay-verdicts"], lines as u64);
    let err = stderr(&both);
    assert_eq!(
        err.matches("mirotrace replay` output (verdicts)").count(),
        1,
        "{err}"
    );
    assert!(err.contains("give the traces it was made from"), "{err}");
    let only = run(&["analyze", v, "-q"]);
    assert_eq!(only.status.code(), Some(4), "{}", stderr(&only));
    assert!(only.stdout.is_empty());
}

/// Labels, reports and partials are recognised too; an ATIF export stays
/// a trace.
#[test]
fn labels_reports_and_partials_are_not_traces() {
    let dir = scratch("our-outputs");
    let a = fixture("model-a.jsonl");
    let report = run(&["analyze", &a, "--format", "json", "-q"]);
    let r = dir.join("report.json");
    std::fs::write(&r, &report.stdout).unwrap();
    let p = dir.join("part");
    let part = run(&[
        "analyze",
        &a,
        "--format",
        "partial",
        "-q",
        "-o",
        p.to_str().unwrap(),
    ]);
    assert!(part.status.success(), "{}", stderr(&part));
    for (path, what) in [
        (fixture("keywords/labels.jsonl"), "refusal labels"),
        (r.to_str().unwrap().to_string(), "JSON report"),
        (p.to_str().unwrap().to_string(), "partial"),
    ] {
        let o = run(&["analyze", &path]);
        assert_eq!(o.status.code(), Some(4), "{path}: {}", stderr(&o));
        assert!(stderr(&o).contains(what), "{path}: {}", stderr(&o));
    }
    // `analyze fixtures/` counts no labels line.
    let fixtures = fixture("");
    let all = run(&["analyze", &fixtures, "--format", "json", "-q"]);
    let j: Json = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(j["input"]["skipped"]["keywords-labels"], 411);
    assert!(j["tools"].as_object().is_some());
}

/// A trace id with none of an attempt's fields is reported; an explicit
/// null content is a failed call, as upstream means it.
#[test]
fn a_trace_id_alone_is_reported_not_an_attempt() {
    let dir = scratch("trace-id-alone");
    let f = dir.join("a.jsonl");
    std::fs::write(
        &f,
        "{\"trace_id\": \"t\", \"content\": null}\n{\"trace_id\": \"t\", \"session\": \"main\"}\n",
    )
    .unwrap();
    let o = run(&["replay", f.to_str().unwrap(), "--format", "jsonl"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v = verdicts(&o);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].3, "llm_failed");
    assert!(stderr(&o).contains("a.jsonl:2: a \"trace_id\" but none of an attempt's fields"));
    std::fs::write(&f, "{\"trace_id\": \"t\"}\n{\"trace_id\": \"u\"}\n").unwrap();
    let o = run(&["analyze", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
}

/// Issue 23: inputs with no attempt exit 4 in every reader, and as a diff
/// side; beside a good input they are reported (exit 3).
#[test]
fn inputs_without_an_attempt_never_pass_silently() {
    let dir = scratch("no-attempt");
    let inputs = [
        (
            "user-only.json",
            r#"{"id": "c", "messages": [{"role": "user", "content": "hi"}]}"#,
        ),
        ("steps.json", r#"{"task_id": "t", "step_logs": []}"#),
        (
            "atif.json",
            r#"{"schema_version": "ATIF-v1.4", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "user", "message": "hi"}]}"#,
        ),
        (
            "claude.jsonl",
            r#"{"type": "user", "sessionId": "s", "uuid": "u1", "message": {"role": "user", "content": "hi"}}"#,
        ),
        ("empty.jsonl", ""),
    ];
    let good = fixture("model-a.jsonl");
    for (name, text) in inputs {
        let f = dir.join(name);
        std::fs::write(&f, format!("{text}\n")).unwrap();
        let f = f.to_str().unwrap();
        let o = run(&["analyze", f]);
        assert_eq!(o.status.code(), Some(4), "{name}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{name}");
        let mixed = run(&["analyze", &good, f, "-q"]);
        assert_eq!(mixed.status.code(), Some(3), "{name}: {}", stderr(&mixed));
        assert!(stderr(&mixed).contains(name), "{name}: {}", stderr(&mixed));
        let diff = run(&["diff", "--base", f, "--new", &good, "-q"]);
        assert_eq!(
            diff.status.code(),
            Some(4),
            "{name} as a diff side: {}",
            stderr(&diff)
        );
    }
}

/// Issue 23: the same file twice, or a folder and a file in it, is read
/// once, with one line saying so.
#[test]
fn a_file_given_twice_is_read_once() {
    let dir = scratch("twice");
    let a = dir.join("a.jsonl");
    std::fs::copy(fixture("model-a.jsonl"), &a).unwrap();
    let a = a.to_str().unwrap();
    let d = dir.to_str().unwrap();
    let once = run(&["analyze", a, "--format", "json", "-q"]);
    let attempts = |o: &Output| {
        let j: Json = serde_json::from_slice(&o.stdout).unwrap();
        j["attempts"].as_u64().unwrap()
    };
    let elsewhere = scratch("twice-link");
    let link = elsewhere.join("link.jsonl");
    #[cfg(unix)]
    std::os::unix::fs::symlink(a, &link).unwrap();
    let link = link.to_str().unwrap();
    let mut cases = vec![vec![a, a], vec![d, a], vec![a, d]];
    if cfg!(unix) {
        cases.push(vec![a, link]);
    }
    for args in cases {
        let mut full = vec!["analyze"];
        full.extend(&args);
        full.extend(["--format", "json"]);
        let o = run(&full);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(attempts(&o), attempts(&once), "{args:?}");
        assert_eq!(
            stderr(&o).matches("read once").count(),
            1,
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A plain JSONL file of a megabyte or more is read through a memory map
/// (`read::mapped`); the same bytes piped in are read with `read`. Both
/// give the same verdicts and the same report, with broken, blank and CRLF
/// lines among the good ones, and the same error for the broken line.
#[test]
fn a_mapped_file_reads_as_the_same_bytes_piped_in() {
    let corpus = common::read_to_string("replay/dev.jsonl");
    let mut lines: Vec<&str> = corpus.lines().collect();
    assert!(
        corpus.len() > 2 << 20,
        "the corpus is big enough to be mapped"
    );
    let crlf = format!("{}\r", lines[5]);
    lines.insert(3, "{\"trace_id\": \"broken\", ");
    lines.insert(7, "   ");
    lines[9] = &crlf;
    let text = lines.join("\n");
    let dir = scratch("mapped");
    let file = dir.join("dev.jsonl");
    std::fs::write(&file, &text).unwrap();
    let label = file.display().to_string();
    for args in [
        &["replay", "--format", "jsonl"][..],
        &["analyze", "--format", "json", "-q"],
    ] {
        let mapped = bin().args(args).arg(&file).output().unwrap();
        let piped = common::run_with_stdin(bin().args(args).arg("-"), text.as_bytes());
        assert_eq!(
            mapped.status.code(),
            Some(3),
            "{args:?}: {}",
            stderr(&mapped)
        );
        assert_eq!(piped.status.code(), Some(3), "{args:?}: {}", stderr(&piped));
        let as_file = |o: &Output| {
            let out = String::from_utf8_lossy(&o.stdout).replace("<stdin>", &label);
            (out, stderr(o).replace("<stdin>", &label))
        };
        let (mapped_out, mapped_err) = as_file(&mapped);
        let (piped_out, piped_err) = as_file(&piped);
        assert!(mapped_err.contains(&format!("{label}:4:")), "{mapped_err}");
        assert_eq!(mapped_err, piped_err, "{args:?}");
        assert!(mapped_out == piped_out, "{args:?}: the outputs differ");
    }
}
