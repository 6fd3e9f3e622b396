//! `mirotrace analyze`: its counts against verdicts added up independently
//! (from `replay` and from the golden verdict file), snapshots of the table
//! and Markdown output, the JSON keys, and the command's behaviour.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::common;
use common::tempdir;

use crate::common::BIN;

fn fixtures() -> PathBuf {
    common::fixture_path("analyze")
}

/// Runs mirotrace as found on PATH (`argv[0]` is `mirotrace`: suggested
/// commands name it so).
fn run(args: &[&str], dir: Option<&Path>) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(BIN);
    cmd.arg0("mirotrace").args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    cmd.output().expect("mirotrace runs")
}

fn analyze_json(input: &Path, extra: &[&str]) -> Value {
    let input = input.to_str().expect("UTF-8 path");
    let mut args = vec![
        "analyze", input, "--format", "json", "--top", "100000", "-q",
    ];
    args.extend_from_slice(extra);
    let out = run(&args, None);
    assert!(
        out.status.success(),
        "analyze failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("analyze writes JSON")
}

fn jsonl(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a verdict line"))
        .collect()
}

fn count_into(map: &mut BTreeMap<String, u64>, key: &str) {
    *map.entry(key.to_string()).or_insert(0) += 1;
}

/// Upstream's duplicate-query fingerprint of a call (the keys per tool of
/// `_check_duplicate_query`), written out here independently of the crate.
fn fingerprint(call: &Value) -> Option<String> {
    let tool = call["tool_name"].as_str()?;
    let keys: &[&str] = match tool {
        "search_and_browse" => &["subtask"],
        "google_search" => &["q"],
        "sogou_search" => &["Query"],
        "scrape_website" => &["url"],
        "scrape_and_extract_info" => &["url", "info_to_extract"],
        _ => return None,
    };
    let mut q = tool.to_string();
    for k in keys {
        q.push('_');
        q.push_str(call["arguments"][k].as_str().unwrap_or(""));
    }
    Some(q)
}

/// What the spec's verdicts add up to, computed from verdict lines alone.
#[derive(Debug, Default)]
struct Expected {
    traces: u64,
    sessions_main: u64,
    sessions_sub: u64,
    attempts: u64,
    outcomes: BTreeMap<String, u64>,
    rollback_reasons: BTreeMap<String, u64>,
    end_reasons: BTreeMap<String, u64>,
    traces_by_reason: BTreeMap<String, u64>,
    traces_with_rollback: u64,
    calls: u64,
    calls_executed: u64,
    calls_repaired: u64,
    json_paths: BTreeMap<String, u64>,
    repairs: BTreeMap<String, u64>,
    flags: BTreeMap<String, u64>,
    streak_histogram: BTreeMap<String, u64>,
    tool_rollbacks: BTreeMap<String, BTreeMap<String, u64>>,
    agent_attempts: BTreeMap<String, u64>,
    duplicate_rollbacks: BTreeMap<(String, String), u64>,
    /// (rollbacks, trace_id) in input order.
    per_trace: Vec<(u64, String)>,
    /// Session index (500 and later pooled) → (attempts, rollbacks).
    by_index: BTreeMap<u64, (u64, u64)>,
}

fn expected_from(verdicts: &[Value]) -> Expected {
    let mut e = Expected::default();
    let mut seen_sessions: HashMap<(String, String), ()> = HashMap::new();
    let mut by_trace: Vec<(String, Vec<&Value>)> = Vec::new();
    for v in verdicts {
        let trace = v["trace_id"].as_str().expect("trace_id").to_string();
        match by_trace.last_mut() {
            Some((id, list)) if *id == trace => list.push(v),
            _ => by_trace.push((trace, vec![v])),
        }
    }
    for (trace, list) in &by_trace {
        e.traces += 1;
        let mut reasons_here: BTreeMap<String, u64> = BTreeMap::new();
        // Per session: the current run's highest consecutive_rollbacks.
        let mut runs: BTreeMap<String, u64> = BTreeMap::new();
        let close = |len: u64, hist: &mut BTreeMap<String, u64>| {
            if len > 0 {
                count_into(hist, &len.to_string());
            }
        };
        for v in list {
            e.attempts += 1;
            let session = v["session"].as_str().expect("session").to_string();
            if seen_sessions
                .insert((trace.clone(), session.clone()), ())
                .is_none()
            {
                if session == "main" {
                    e.sessions_main += 1;
                } else {
                    e.sessions_sub += 1;
                }
            }
            let agent = if session == "main" {
                "main".to_string()
            } else {
                session
                    .rsplit_once('_')
                    .map_or(session.clone(), |(a, _)| a.to_string())
            };
            count_into(&mut e.agent_attempts, &agent);
            let outcome = v["outcome"].as_str().expect("outcome");
            count_into(&mut e.outcomes, outcome);
            let index = v["index"].as_u64().expect("index").min(500);
            let at = e.by_index.entry(index).or_insert((0, 0));
            at.0 += 1;
            at.1 += u64::from(outcome == "rollback");
            let calls = v["calls"].as_array().expect("calls");
            let executed = v["executed"].as_u64().expect("executed") as usize;
            if let Some(reason) = v["reason"].as_str() {
                if outcome == "rollback" {
                    count_into(&mut e.rollback_reasons, reason);
                    count_into(&mut reasons_here, reason);
                    let tool = match reason {
                        "format_error" | "refusal" => "(no tool call)".to_string(),
                        _ => calls[executed - 1]["tool_name"]
                            .as_str()
                            .expect("tool")
                            .to_string(),
                    };
                    count_into(e.tool_rollbacks.entry(tool).or_default(), reason);
                    if reason == "duplicate_query" {
                        let call = &calls[executed - 1];
                        let key = (
                            call["tool_name"].as_str().expect("tool").to_string(),
                            fingerprint(call).expect("a fingerprinted tool"),
                        );
                        *e.duplicate_rollbacks.entry(key).or_insert(0) += 1;
                    }
                } else if outcome == "end" {
                    count_into(&mut e.end_reasons, reason);
                }
            }
            for f in v["flags"].as_array().expect("flags") {
                count_into(&mut e.flags, f.as_str().expect("flag"));
            }
            for (i, c) in calls.iter().enumerate() {
                e.calls += 1;
                e.calls_executed += u64::from(i < executed);
                let path = c["json"].as_str().expect("json path");
                count_into(&mut e.json_paths, path);
                let repairs = c["repairs"].as_array().expect("repairs");
                for r in repairs {
                    count_into(&mut e.repairs, r.as_str().expect("repair"));
                }
                if !repairs.is_empty() || path == "repaired" || path == "lenient" {
                    e.calls_repaired += 1;
                }
            }
            let run = runs.entry(session).or_insert(0);
            match v["consecutive_rollbacks"].as_u64() {
                Some(0) | None => {
                    close(*run, &mut e.streak_histogram);
                    *run = 0;
                }
                Some(k) => *run = (*run).max(k),
            }
        }
        for (_, len) in runs {
            close(len, &mut e.streak_histogram);
        }
        for r in reasons_here.keys() {
            count_into(&mut e.traces_by_reason, r);
        }
        let rollbacks: u64 = reasons_here.values().sum();
        e.traces_with_rollback += u64::from(rollbacks > 0);
        e.per_trace.push((rollbacks, trace.clone()));
    }
    e
}

fn as_counts(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .expect("an object of counts")
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().expect("a count")))
        .collect()
}

/// Drops zero counts (the report lists every key; verdicts only the seen ones).
fn nonzero(m: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    m.into_iter().filter(|(_, n)| *n > 0).collect()
}

fn check_against(report: &Value, e: &Expected) {
    assert_eq!(report["files"], 1);
    assert_eq!(report["bad_lines"], 0);
    assert_eq!(report["traces"], e.traces, "traces");
    assert_eq!(report["attempts"], e.attempts, "attempts");
    assert_eq!(report["sessions"]["main"], e.sessions_main, "main sessions");
    assert_eq!(
        report["sessions"]["sub_agent"], e.sessions_sub,
        "sub-agent sessions"
    );
    assert_eq!(
        nonzero(as_counts(&report["outcomes"])),
        e.outcomes,
        "outcomes"
    );
    assert_eq!(report["rollbacks"], e.outcomes["rollback"], "rollbacks");
    assert_eq!(
        nonzero(as_counts(&report["rollback_reasons"])),
        e.rollback_reasons,
        "rollback_reasons"
    );
    assert_eq!(
        nonzero(as_counts(&report["end_reasons"])),
        e.end_reasons,
        "end_reasons"
    );
    assert_eq!(
        nonzero(as_counts(&report["traces_by_reason"])),
        e.traces_by_reason,
        "traces_by_reason"
    );
    assert_eq!(report["traces_with_rollback"], e.traces_with_rollback);
    assert_eq!(report["calls"], e.calls, "calls");
    assert_eq!(report["calls_executed"], e.calls_executed, "calls_executed");
    assert_eq!(report["calls_repaired"], e.calls_repaired, "calls_repaired");
    assert_eq!(
        nonzero(as_counts(&report["json_paths"])),
        e.json_paths,
        "json_paths"
    );
    assert_eq!(nonzero(as_counts(&report["repairs"])), e.repairs, "repairs");
    let flag = |f: &str| e.flags.get(f).copied().unwrap_or(0);
    assert_eq!(
        report["limit_events"]["loop_ended"],
        e.outcomes.get("end").copied().unwrap_or(0)
    );
    assert_eq!(
        report["limit_events"]["duplicate_allowed"],
        flag("allowed_duplicate")
    );
    assert_eq!(
        report["limit_events"]["result_passed"],
        flag("tool_error_passed")
    );
    assert_eq!(report["recovered"], flag("recovered"));
    assert_eq!(
        as_counts(&report["streaks"]["histogram"]),
        e.streak_histogram,
        "streak histogram"
    );
    let max: u64 = e
        .streak_histogram
        .keys()
        .map(|k| k.parse::<u64>().expect("length"))
        .max()
        .unwrap_or(0);
    assert_eq!(report["streaks"]["max"], max);

    // Rollbacks over the attempts the loops reached (docs/metrics.md).
    let reached = e.attempts - e.outcomes.get("unreachable").copied().unwrap_or(0);
    let rate = report["rollback_rate"]["value"].as_f64().expect("a rate");
    assert!((rate - e.outcomes["rollback"] as f64 / reached as f64).abs() < 1e-12);
    let (lo, hi) = (
        report["rollback_rate"]["lo"].as_f64().expect("lo"),
        report["rollback_rate"]["hi"].as_f64().expect("hi"),
    );
    assert!(
        lo < rate && rate < hi,
        "interval [{lo}, {hi}] around {rate}"
    );

    for (tool, reasons) in &e.tool_rollbacks {
        assert_eq!(
            nonzero(as_counts(&report["tools"][tool]["rollbacks"])),
            *reasons,
            "rollbacks of tool {tool}"
        );
    }
    let agents: BTreeMap<String, u64> = report["agents"]
        .as_object()
        .expect("agents")
        .iter()
        .map(|(k, a)| (k.clone(), a["attempts"].as_u64().expect("attempts")))
        .collect();
    assert_eq!(agents, e.agent_attempts, "attempts per agent");

    // Duplicate hotspots: every rolled-back repeat, by fingerprint.
    let hotspots = report["duplicate_hotspots"].as_array().expect("hotspots");
    let rolled: BTreeMap<(String, String), u64> = hotspots
        .iter()
        .filter(|h| h["rolled_back"].as_u64() > Some(0))
        .map(|h| {
            let key = (
                h["tool"].as_str().expect("tool").to_string(),
                h["query"].as_str().expect("query").to_string(),
            );
            (key, h["rolled_back"].as_u64().expect("count"))
        })
        .collect();
    assert_eq!(
        rolled, e.duplicate_rollbacks,
        "rolled-back duplicates by fingerprint"
    );
    let counts: Vec<u64> = hotspots
        .iter()
        .map(|h| h["count"].as_u64().expect("count"))
        .collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]),
        "most repeated first"
    );
    for h in hotspots {
        assert_eq!(
            h["count"].as_u64(),
            Some(h["rolled_back"].as_u64().unwrap_or(0) + h["allowed"].as_u64().unwrap_or(0))
        );
        assert!(h["traces"].as_u64() <= h["count"].as_u64());
    }
    let allowed: u64 = hotspots
        .iter()
        .map(|h| h["allowed"].as_u64().unwrap_or(0))
        .sum();
    assert!(
        allowed >= flag("allowed_duplicate"),
        "each allowed_duplicate attempt hit a query"
    );
    assert_eq!(report["duplicate_hits"], counts.iter().sum::<u64>());

    // Worst traces: the highest rollback counts, ties in input order.
    let mut ranked = e.per_trace.clone();
    ranked.sort_by_key(|(n, _)| std::cmp::Reverse(*n)); // stable: input order for ties
    let worst: Vec<(u64, String)> = report["worst_traces"]
        .as_array()
        .expect("worst traces")
        .iter()
        .map(|t| {
            (
                t["rollbacks"].as_u64().expect("n"),
                t["trace_id"].as_str().expect("id").to_string(),
            )
        })
        .collect();
    assert_eq!(worst, ranked[..worst.len()].to_vec());
    assert_eq!(worst.len() as u64, e.traces.min(100_000));

    // Where in a session: every position up to the last, in order.
    let by_index: Vec<(u64, u64, u64)> = report["rollbacks_by_index"]
        .as_array()
        .expect("rollbacks_by_index")
        .iter()
        .map(|r| {
            (
                r["index"].as_u64().expect("index"),
                r["attempts"].as_u64().expect("attempts"),
                r["rollbacks"].as_u64().expect("rollbacks"),
            )
        })
        .collect();
    let last = e.by_index.keys().next_back().copied().unwrap_or(0);
    let expected: Vec<(u64, u64, u64)> = (0..=last)
        .filter(|_| !e.by_index.is_empty())
        .map(|i| {
            let (n, r) = e.by_index.get(&i).copied().unwrap_or((0, 0));
            (i, n, r)
        })
        .collect();
    assert_eq!(by_index, expected, "rollbacks by session index");
}

#[test]
fn json_counts_equal_the_golden_verdicts() {
    let report = analyze_json(&common::path("replay/dev.jsonl"), &[]);
    let golden = common::read_to_string("replay/dev.verdicts.jsonl");
    check_against(&report, &expected_from(&jsonl(golden.as_bytes())));
}

#[test]
fn json_counts_equal_what_replay_writes() {
    let input = common::path("replay/dev.jsonl");
    let out = run(
        &["replay", input.to_str().expect("path"), "--format", "jsonl"],
        None,
    );
    assert!(out.status.success());
    let report = analyze_json(&input, &[]);
    check_against(&report, &expected_from(&jsonl(&out.stdout)));
}

#[test]
fn sanity_corpus_counts_agree_too() {
    let report = analyze_json(&common::path("replay/sanity.jsonl"), &[]);
    let golden = common::read_to_string("replay/sanity.verdicts.jsonl");
    check_against(&report, &expected_from(&jsonl(golden.as_bytes())));
}

#[test]
fn json_has_every_documented_key() {
    let report = analyze_json(&fixtures().join("sample.jsonl"), &[]);
    // Listed here literally: removing or renaming a key must fail a test.
    let required = [
        "schema",
        "files",
        "traces",
        "sessions",
        "attempts",
        "bad_lines",
        "outcomes",
        "rollbacks",
        "rollback_rate",
        "rollback_reasons",
        "end_reasons",
        "traces_with_rollback",
        "traces_by_reason",
        "refusal_keywords",
        "tools",
        "agents",
        "calls",
        "calls_executed",
        "calls_repaired",
        "json_paths",
        "repairs",
        "duplicate_hotspots",
        "duplicate_hits",
        "duplicate_queries",
        "duplicate_counts_exact",
        "near_duplicate_hotspots",
        "near_duplicate_hits",
        "near_duplicate_queries",
        "streaks",
        "limit_events",
        "recovered",
        "traces_ended_early",
        "sub_agent_sessions_ended_early",
        "worst_traces",
        "rollbacks_by_index",
        "groups",
        "options",
    ];
    let keys: Vec<&str> = report
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    for k in required {
        assert!(keys.contains(&k), "missing key {k}");
    }
    assert_eq!(
        mirotrace::analyze::render_json::REQUIRED_KEYS.to_vec(),
        required.to_vec()
    );
    assert_eq!(report["schema"], "mirotrace.analyze/1");
    for (key, inner) in [
        (
            "outcomes",
            &[
                "ok",
                "final",
                "rollback",
                "end",
                "llm_failed",
                "context_exceeded",
                "crash",
                "unreachable",
            ][..],
        ),
        (
            "rollback_reasons",
            &[
                "format_error",
                "refusal",
                "duplicate_query",
                "unknown_tool",
                "tool_error",
                "empty_search",
            ][..],
        ),
        (
            "json_paths",
            &["strict", "repaired", "lenient", "failed"][..],
        ),
        (
            "repairs",
            &[
                "server_name",
                "tool_name",
                "arg_alias",
                "sandbox_id",
                "none_filtered",
            ][..],
        ),
        (
            "streaks",
            &["histogram", "max", "count", "ended_by", "longest"][..],
        ),
        (
            "limit_events",
            &["loop_ended", "duplicate_allowed", "result_passed"][..],
        ),
        (
            "rollback_rate",
            &["value", "lo", "hi", "level", "iterations", "seed"][..],
        ),
        ("sessions", &["total", "main", "sub_agent"][..]),
    ] {
        for k in inner {
            assert!(report[key].get(k).is_some(), "missing {key}.{k}");
        }
    }
    for h in report["duplicate_hotspots"].as_array().expect("list") {
        for k in ["tool", "query", "count", "traces"] {
            assert!(h.get(k).is_some(), "hotspot without {k}");
        }
        let query = h["query"].as_str().expect("query");
        assert!(
            query.starts_with(h["tool"].as_str().expect("tool")),
            "{query} is upstream's fingerprint"
        );
    }
    assert_eq!(report["groups"], Value::Null);
}

/// Compares `actual` with `fixtures/analyze/NAME`, a file the README shows:
/// the one kind of snapshot that stays a plain file (common/snapshot.rs).
fn snapshot(name: &str, actual: &str) {
    common::snapshot::doc_file(&format!("fixtures/analyze/{name}"), actual);
}

#[test]
fn table_output_snapshot() {
    let out = run(
        &[
            "analyze",
            "sample.jsonl",
            "--no-color",
            "--seed",
            "7",
            "--top",
            "5",
            "-q",
        ],
        Some(&fixtures()),
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        !text.contains('\x1b'),
        "no colour codes with --no-color or into a pipe"
    );
    assert!(
        text.starts_with("rollback rate "),
        "the headline comes first"
    );
    snapshot("sample.table.txt", &text);
}

#[test]
fn markdown_output_snapshot() {
    let out = run(
        &[
            "analyze",
            "sample.jsonl",
            "--format",
            "markdown",
            "--seed",
            "7",
            "--top",
            "5",
            "--group-by",
            "model",
            "-q",
        ],
        Some(&fixtures()),
    );
    assert!(out.status.success());
    snapshot("sample.md", &String::from_utf8(out.stdout).expect("UTF-8"));
}

#[test]
fn same_report_on_one_thread_and_many() {
    let input = common::path("replay/dev.jsonl");
    let one = analyze_json(&input, &["-j", "1", "--group-by", "agent"]);
    let many = analyze_json(&input, &["-j", "4", "--group-by", "agent"]);
    assert_eq!(one, many);
}

/// Task logs and ATIF documents put every attempt on line 1: ties in the
/// rankings must still come out the same however the work was split.
#[test]
fn same_bytes_on_one_thread_and_many_for_documents_too() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let inputs: Vec<String> = ["model-a.jsonl", "model-b.jsonl", "tasklog", "atif"]
        .iter()
        .map(|f| root.join(f).display().to_string())
        .collect();
    let report = |threads: &str| {
        let mut args = vec!["analyze", "-q", "--format", "json", "--group-by", "model"];
        args.extend(["-j", threads]);
        args.extend(inputs.iter().map(String::as_str));
        let out = run(&args, None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let one = report("1");
    assert_eq!(one, report("2"));
    assert_eq!(one, report("3"));
}

#[test]
fn seed_changes_only_the_interval() {
    let input = fixtures().join("sample.jsonl");
    let mut a = analyze_json(&input, &["--seed", "1"]);
    let mut b = analyze_json(&input, &["--seed", "2"]);
    assert_ne!(a["rollback_rate"]["lo"], b["rollback_rate"]["lo"]);
    for r in [&mut a, &mut b] {
        r["rollback_rate"] = json!(null);
        r["options"] = json!(null);
    }
    assert_eq!(a, b);
}

#[test]
fn groups_add_up_to_the_whole() {
    let dir = tempdir("groups");
    let dev = common::read_to_string("replay/dev.jsonl");
    let lines: Vec<&str> = dev.lines().collect();
    // Split at a trace boundary so each file holds whole traces.
    let cut = (1500..lines.len())
        .find(|&i| trace_of(lines[i]) != trace_of(lines[i - 1]))
        .expect("a boundary");
    std::fs::write(dir.join("a.jsonl"), lines[..cut].join("\n") + "\n").expect("write");
    std::fs::write(dir.join("b.jsonl"), lines[cut..].join("\n") + "\n").expect("write");
    let out = run(
        &[
            "analyze",
            "a.jsonl",
            "b.jsonl",
            "--format",
            "json",
            "--group-by",
            "file",
            "-q",
        ],
        Some(&dir),
    );
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let items = report["groups"]["items"].as_array().expect("groups");
    let keys: Vec<&str> = items
        .iter()
        .map(|g| g["key"].as_str().expect("key"))
        .collect();
    assert_eq!(keys, ["a.jsonl", "b.jsonl"]);
    for key in [
        "traces",
        "attempts",
        "rollbacks",
        "calls",
        "calls_repaired",
        "files",
    ] {
        let sum: u64 = items.iter().map(|g| g[key].as_u64().expect("count")).sum();
        assert_eq!(report[key].as_u64(), Some(sum), "{key} per file adds up");
    }
    assert_eq!(report["files"], 2);

    let by_model = analyze_json(&common::path("replay/dev.jsonl"), &["--group-by", "model"]);
    let models: Vec<&str> = by_model["groups"]["items"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["key"].as_str().expect("key"))
        .collect();
    assert!(
        models.contains(&"qwen3-32b") && models.contains(&"glm-4.5-air"),
        "{models:?}"
    );
    let attempts: u64 = by_model["groups"]["items"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["attempts"].as_u64().expect("n"))
        .sum();
    assert_eq!(by_model["attempts"].as_u64(), Some(attempts));
}

fn trace_of(line: &str) -> String {
    serde_json::from_str::<Value>(line).expect("a line")["trace_id"]
        .as_str()
        .expect("id")
        .to_string()
}

#[test]
fn bad_lines_are_counted_and_set_the_exit_code() {
    let dir = tempdir("bad");
    let sample = std::fs::read_to_string(fixtures().join("sample.jsonl")).expect("fixture");
    let model_less = "{\"trace_id\": \"extra\", \"content\": \"The answer is 4.\"}\n";
    std::fs::write(
        dir.join("in.jsonl"),
        format!("{sample}not json\n{model_less}"),
    )
    .expect("write");
    let out = run(
        &["analyze", "in.jsonl", "--format", "json", "-q"],
        Some(&dir),
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("in.jsonl:"),
        "the bad line is named"
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("still a report");
    assert_eq!(report["bad_lines"], 1);
    let clean = analyze_json(&fixtures().join("sample.jsonl"), &[]);
    assert_eq!(
        report["traces"].as_u64(),
        clean["traces"].as_u64().map(|n| n + 1)
    );

    let strict = run(&["analyze", "in.jsonl", "--strict", "-q"], Some(&dir));
    assert_eq!(strict.status.code(), Some(3));
}

#[test]
fn output_file_and_unreadable_input() {
    let dir = tempdir("out");
    let sample = fixtures().join("sample.jsonl");
    let out = run(
        &[
            "analyze",
            sample.to_str().expect("path"),
            "--format",
            "markdown",
            "-o",
            "report.md",
            "-q",
        ],
        Some(&dir),
    );
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(dir.join("report.md")).expect("report written");
    assert!(written.starts_with("# mirotrace analyze"));

    let missing = run(&["analyze", "no-such-file.jsonl", "-q"], Some(&dir));
    assert_eq!(missing.status.code(), Some(4));
}

/// The task logs of `tests/data/tasklogs/logs/` were written by upstream while
/// it ran `traces.jsonl`; read as the whole run (surviving turns replayed,
/// the rest as their `step_logs` recorded), they add up to what the verdicts
/// of that run add up to.
#[test]
fn task_log_records_equal_the_full_run_truth() {
    let logs = common::path("tasklogs/logs");
    let n_logs = std::fs::read_dir(&logs).expect("the task logs").count() as u64;
    let report = analyze_json(&logs, &[]);
    assert_eq!(
        report["files"].as_u64(),
        Some(n_logs),
        "every .json.zst read"
    );
    assert_eq!(report["bad_lines"], 0);

    let golden = common::read_to_string("tasklogs/traces.verdicts.jsonl");
    let truth = expected_from(&jsonl(golden.as_bytes()));
    assert!(!truth.rollback_reasons.is_empty(), "the run has rollbacks");
    let n = |m: &BTreeMap<String, u64>, k: &str| Some(m.get(k).copied().unwrap_or(0));

    for outcome in ["rollback", "llm_failed", "end", "crash"] {
        assert_eq!(
            report["outcomes"][outcome].as_u64(),
            n(&truth.outcomes, outcome),
            "{outcome}"
        );
    }
    assert_eq!(
        nonzero(as_counts(&report["rollback_reasons"])),
        truth.rollback_reasons
    );
    assert_eq!(
        nonzero(as_counts(&report["streaks"]["histogram"])),
        truth.streak_histogram
    );
    let limits = &report["limit_events"];
    assert_eq!(limits["loop_ended"].as_u64(), n(&truth.outcomes, "end"));
    assert_eq!(
        limits["duplicate_allowed"].as_u64(),
        n(&truth.flags, "allowed_duplicate")
    );
    assert_eq!(
        limits["result_passed"].as_u64(),
        n(&truth.flags, "tool_error_passed")
    );
    assert_eq!(report["recovered"].as_u64(), n(&truth.flags, "recovered"));
    // Rollbacks per tool: a logged rollback names its tool.
    let tools: BTreeMap<String, BTreeMap<String, u64>> = report["tools"]
        .as_object()
        .expect("tools")
        .iter()
        .map(|(t, s)| (t.clone(), nonzero(as_counts(&s["rollbacks"]))))
        .filter(|(_, r)| !r.is_empty())
        .collect();
    assert_eq!(tools, truth.tool_rollbacks);

    let recorded = &report["recorded"];
    assert_eq!(recorded["traces"].as_u64(), Some(n_logs));
    assert_eq!(recorded["disagreements"], Value::Array(Vec::new()));
    assert_eq!(
        report["sources"]["recorded"]["outcomes"]["rollback"].as_u64(),
        n(&truth.outcomes, "rollback"),
        "every rollback was popped from the history: the log gives it"
    );
}

/// A folder of `.json.zst` task logs reads as the same logs uncompressed.
#[test]
fn compressed_task_logs_read_as_plain_ones() {
    let plain = common::unpack("tasklogs/logs");
    let zst = common::path("tasklogs/logs");
    let lines = |dir: &Path| {
        let report = analyze_json(dir, &["--group-by", "file"]);
        // File names are the only difference: `<dir>/task_….json[.zst]`.
        serde_json::to_string_pretty(&report)
            .expect("JSON")
            .replace(dir.to_str().expect("UTF-8 path"), "<dir>")
            .replace(".json.zst", ".json")
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (a, b) = (lines(&plain), lines(&zst));
    assert!(
        a.iter().any(|l| l.contains("<dir>/task_tld-")),
        "file names are in the report"
    );
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        first.is_none() && a.len() == b.len(),
        "reports differ at line {first:?}: {:?} vs {:?}",
        first.map(|i| &a[i]),
        first.map(|i| &b[i])
    );
}

/// Issue 39: `mistakes.duplicate_query.after_rolled_back` counts the
/// duplicate_query rollbacks upstream's own cache blames on the layer
/// (`dev.blame.jsonl`), and the headline says how many and what would
/// prevent them.
#[test]
fn rollbacks_the_layer_caused_are_counted_and_headlined() {
    let labelled = jsonl(common::read_to_string("replay/dev.blame.jsonl").as_bytes())
        .iter()
        .filter(|l| l["kind"] == "duplicate_query" && l["blame"] == "after_rolled_back")
        .count() as u64;
    assert_eq!(labelled, 31);
    let input = common::path("replay/dev.jsonl");
    let report = analyze_json(&input, &[]);
    let dup = &report["mistakes"]["duplicate_query"];
    assert_eq!(dup["after_rolled_back"].as_u64(), Some(labelled));
    let all: u64 = as_counts(dup).values().sum();
    let out = run(&["analyze", input.to_str().expect("path"), "-q"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    let headline = text.split("\n\n").next().unwrap_or_default();
    assert!(
        headline.contains(&format!(
            "the layer caused {labelled} of {all} duplicate_query rollbacks itself"
        )) && headline.contains("query_commit = \"per_turn\""),
        "{headline}"
    );
    // With upstream's fix as the policy, none is left to blame on the layer.
    let policy = common::scratch("per-turn").join("policy.toml");
    std::fs::write(&policy, "query_commit = \"per_turn\"\n").expect("write policy");
    let fixed = analyze_json(&input, &["--policy", policy.to_str().expect("path")]);
    assert_eq!(
        fixed["mistakes"]["duplicate_query"]["after_rolled_back"].as_u64(),
        None
    );
}

/// The task logs decide `after_rolled_back` from their step logs: the
/// verdicts that carry it are the ones a replay of the same run's native
/// traces (every attempt's text at hand) gives.
#[test]
fn task_logs_blame_the_layer_where_the_full_run_does() {
    let logs = common::unpack("tasklogs/logs");
    let traces = common::scratch("tasklog-traces").join("traces.jsonl");
    std::fs::write(&traces, common::read_to_string("tasklogs/traces.jsonl")).expect("write");
    let layer = |input: &Path| -> BTreeSet<String> {
        let out = run(&["replay", input.to_str().expect("path")], None);
        assert!(out.status.success());
        jsonl(&out.stdout)
            .iter()
            .filter(|v| v["why"]["kind"] == "after_rolled_back")
            .map(|v| format!("{}/{}#{}", v["trace_id"], v["session"], v["index"]))
            .collect()
    };
    let full = layer(&traces);
    assert!(full.len() >= 10, "the run has rollbacks the layer caused");
    assert_eq!(layer(&logs), full);
}
