//! Other harnesses' traces (fixtures/harnesses/, see its README for the
//! sources): each file is read as it is, and its assistant turns and tool
//! calls, counted here straight from the file's JSON (independently of the
//! readers), are the attempts and parsed calls of the replay. With
//! `--plain-reply continue` every turn gets a verdict of its own, and no
//! turn that carries a tool call is judged `llm_failed`.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use mirotrace::policy::Policy;
use mirotrace::read::source::{expand, open_records, InputSpec, ReadOptions};
use mirotrace::read::{InputFormat, Record, Trace};
use mirotrace::replay::{Outcome, PlainReply, Replayer, Verdict};
use serde_json::Value as Json;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/harnesses")
}

fn fixture(name: &str) -> PathBuf {
    dir().join(name)
}

/// What a file holds, counted from its JSON: assistant turns and tool calls.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    turns: usize,
    calls: usize,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.turns += o.turns;
        self.calls += o.calls;
    }
}

fn json_file(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
}

fn json_lines(path: &Path) -> Vec<Json> {
    std::fs::read_to_string(path)
        .expect("fixture")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn arr(v: &Json) -> &[Json] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// A Chat Completions message list: assistant messages, and their
/// `tool_calls` or `tool_use` blocks.
fn chat_counts(messages: &[Json]) -> Counts {
    let mut c = Counts::default();
    for m in messages {
        if m["role"] != "assistant" || m["is_demo"] == true {
            continue;
        }
        c.turns += 1;
        let blocks = arr(&m["content"]);
        let native =
            arr(&m["tool_calls"]).len() + blocks.iter().filter(|b| b["type"] == "tool_use").count();
        // MiroThinker's own convention: MCP blocks in the text.
        let text = m["content"].as_str().unwrap_or("").to_string()
            + &blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<String>();
        c.calls += if native > 0 {
            native
        } else {
            text.matches("<use_mcp_tool>").count()
        };
    }
    c
}

/// SWE-agent `history`: a text-parsed `action` is the call when there are no `tool_calls`.
fn swe_agent_counts(doc: &Json) -> Counts {
    let mut c = chat_counts(arr(&doc["history"]));
    c.calls += arr(&doc["history"])
        .iter()
        .filter(|m| m["role"] == "assistant" && arr(&m["tool_calls"]).is_empty())
        .filter(|m| m["action"].as_str().is_some_and(|a| !a.trim().is_empty()))
        .count();
    c
}

/// mini-swe-agent: `tool_calls`, or else exactly one fenced shell block.
fn mini_swe_agent_counts(doc: &Json) -> Counts {
    let mut c = chat_counts(arr(&doc["messages"]));
    c.calls += arr(&doc["messages"])
        .iter()
        .filter(|m| m["role"] == "assistant" && arr(&m["tool_calls"]).is_empty())
        .filter(|m| {
            m["content"]
                .as_str()
                .unwrap_or("")
                .matches("```bash\n")
                .count()
                == 1
        })
        .count();
    c
}

/// OpenHands: each LLM response once (by id), and agent messages without one.
fn openhands_counts(events: &[Json]) -> Counts {
    let mut c = Counts::default();
    let mut seen = HashSet::new();
    for e in events {
        if e["source"] != "agent" || e.get("action").is_none() {
            continue;
        }
        let response = &e["tool_call_metadata"]["model_response"];
        match response["id"].as_str() {
            Some(id) if seen.insert(id.to_string()) => {
                c.turns += 1;
                c.calls += arr(&response["choices"][0]["message"]["tool_calls"]).len();
            }
            Some(_) => {}
            None if e["action"] == "message" => c.turns += 1,
            None => {}
        }
    }
    c
}

/// Claude Code: assistant responses by `message.id`, `tool_use` blocks.
fn claude_code_counts(lines: &[Json]) -> Counts {
    let mut c = Counts::default();
    let mut seen = HashSet::new();
    for l in lines.iter().filter(|l| l["type"] == "assistant") {
        let m = &l["message"];
        if seen.insert(m["id"].as_str().unwrap_or("").to_string()) {
            c.turns += 1;
        }
        c.calls += arr(&m["content"])
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .count();
    }
    c
}

/// OTLP spans: LLM spans and the calls in their output attributes.
fn otel_counts(docs: &[Json]) -> Counts {
    let mut c = Counts::default();
    for doc in docs {
        for r in arr(&doc["resourceSpans"]) {
            for s in arr(&r["scopeSpans"]) {
                for span in arr(&s["spans"]) {
                    let attrs: Vec<(&str, &Json)> = arr(&span["attributes"])
                        .iter()
                        .map(|kv| (kv["key"].as_str().unwrap_or(""), &kv["value"]))
                        .collect();
                    let text = |k: &str| {
                        attrs
                            .iter()
                            .find(|(key, _)| *key == k)
                            .and_then(|(_, v)| v["stringValue"].as_str())
                    };
                    let llm = text("gen_ai.operation.name") == Some("chat")
                        || text("openinference.span.kind") == Some("LLM");
                    if !llm {
                        continue;
                    }
                    c.turns += 1;
                    if let Some(out) = text("gen_ai.output.messages") {
                        let out: Json = serde_json::from_str(out).expect("output messages");
                        c.calls += arr(&out[0]["parts"])
                            .iter()
                            .filter(|p| p["type"] == "tool_call")
                            .count();
                    }
                    c.calls += attrs
                        .iter()
                        .filter(|(k, _)| k.ends_with(".tool_call.function.name"))
                        .count();
                }
            }
        }
    }
    c
}

/// OpenHands V1 events: each LLM response once (the actions sharing an
/// `llm_response_id`, or an agent message), one call per action.
fn openhands_v1_counts(events: &[Json]) -> Counts {
    let mut c = Counts::default();
    let mut seen = HashSet::new();
    for e in events {
        match e["kind"].as_str() {
            Some("ActionEvent") => {
                c.calls += 1;
                if seen.insert(e["llm_response_id"].to_string()) {
                    c.turns += 1;
                }
            }
            Some("MessageEvent") if e["source"] == "agent" => c.turns += 1,
            _ => {}
        }
    }
    c
}

/// A completion log: its one response, its calls native or `<function=…>` text.
fn completion_log_counts(log: &Json) -> Counts {
    let m = &log["response"]["choices"][0]["message"];
    let native = arr(&m["tool_calls"]).len();
    let text = m["content"]
        .as_str()
        .unwrap_or("")
        .matches("<function=")
        .count();
    Counts {
        turns: 1,
        calls: if native > 0 { native } else { text },
    }
}

/// Plain-JSON spans (any-agent, the console exporter): LLM spans and the
/// calls in their output (GenAI output messages, any-agent's `….output`).
fn plain_span_counts(spans: &[Json]) -> Counts {
    let mut c = Counts::default();
    for s in spans {
        let a = &s["attributes"];
        if !matches!(
            a["gen_ai.operation.name"].as_str(),
            Some("chat" | "call_llm")
        ) {
            continue;
        }
        c.turns += 1;
        if let Some(out) = a["gen_ai.output.messages"].as_str() {
            let out: Json = serde_json::from_str(out).expect("output messages");
            c.calls += arr(&out[0]["parts"])
                .iter()
                .filter(|p| p["type"] == "tool_call")
                .count();
        }
        for key in ["gen_ai.output", "genai.output"] {
            if a[format!("{key}.type")] == "json" {
                let out: Json =
                    serde_json::from_str(a[key].as_str().unwrap_or("")).unwrap_or_default();
                c.calls += arr(&out).len();
            }
        }
    }
    c
}

/// Documents one after another in a file (the console exporter's output).
fn json_documents(path: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(path).expect("fixture");
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Json>()
        .map(|d| d.expect("JSON document"))
        .collect()
}

/// Inspect: the samples of a log, or of an `.eval` archive.
fn inspect_counts(path: &Path) -> Counts {
    let mut c = Counts::default();
    if path.extension().is_some_and(|e| e == "eval") {
        let file = std::fs::File::open(path).expect("archive");
        let mut zip = zip::ZipArchive::new(file).expect("zip");
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).expect("entry");
            if !entry.name().starts_with("samples/") {
                continue;
            }
            let mut text = String::new();
            entry.read_to_string(&mut text).expect("sample");
            let sample: Json = serde_json::from_str(&text).expect("sample JSON");
            c += chat_counts(arr(&sample["messages"]));
        }
    } else {
        for s in arr(&json_file(path)["samples"]) {
            c += chat_counts(arr(&s["messages"]));
        }
    }
    c
}

/// Every fixture with what it holds, counted by the format's own rules.
fn expected() -> Vec<(&'static str, Counts)> {
    let f = fixture;
    let mut out = vec![
        (
            "tau-bench/gpt-4o-airline.first-3.json",
            arr(&json_file(&f("tau-bench/gpt-4o-airline.first-3.json")))
                .iter()
                .fold(Counts::default(), |mut c, run| {
                    c += chat_counts(arr(&run["traj"]));
                    c
                }),
        ),
        (
            "miroflow/task_result.json",
            chat_counts(arr(
                &json_file(&f("miroflow/task_result.json"))["message_history"]["message_history"]
            )),
        ),
        (
            "anthropic/messages.jsonl",
            json_lines(&f("anthropic/messages.jsonl")).iter().fold(
                Counts::default(),
                |mut c, r| {
                    c += chat_counts(arr(&r["messages"]));
                    c
                },
            ),
        ),
        (
            "swe-agent/function_calling_simple.traj",
            swe_agent_counts(&json_file(&f("swe-agent/function_calling_simple.traj"))),
        ),
        (
            "swe-agent/networking_1.traj",
            swe_agent_counts(&json_file(&f("swe-agent/networking_1.traj"))),
        ),
        (
            "claude-code/session.jsonl",
            claude_code_counts(&json_lines(&f("claude-code/session.jsonl"))),
        ),
        (
            "claude-code/parallel-2.1.42.jsonl",
            claude_code_counts(&json_lines(&f("claude-code/parallel-2.1.42.jsonl"))),
        ),
        (
            "otel/genai-weather.otlp.json",
            otel_counts(&[json_file(&f("otel/genai-weather.otlp.json"))]),
        ),
        (
            "otel/openinference.otlp.jsonl",
            otel_counts(&json_lines(&f("otel/openinference.otlp.jsonl"))),
        ),
    ];
    out.push((
        "openhands-v1/events.jsonl",
        openhands_v1_counts(&json_lines(&f("openhands-v1/events.jsonl"))),
    ));
    for name in [
        "openhands-v1/gpt-4o-1762178521.410-a1b2.json",
        "openhands-v1/qwen3-coder-1762178531.020-c3d4.json",
    ] {
        out.push((name, completion_log_counts(&json_file(&f(name)))));
    }
    let tau2 = json_file(&f("tau2/telecom-results.json"));
    let tau2_counts = arr(&tau2["simulations"])
        .iter()
        .fold(Counts::default(), |mut c, sim| {
            c += chat_counts(arr(&sim["messages"]));
            c
        });
    out.push(("tau2/telecom-results.json", tau2_counts));
    out.push((
        "otel/any-agent-openai.spans.json",
        plain_span_counts(arr(
            &json_file(&f("otel/any-agent-openai.spans.json"))["spans"]
        )),
    ));
    out.push((
        "otel/any-agent-smolagents.spans.json",
        plain_span_counts(arr(&json_file(&f("otel/any-agent-smolagents.spans.json")))),
    ));
    out.push((
        "otel/console-exporter.spans.json",
        plain_span_counts(&json_documents(&f("otel/console-exporter.spans.json"))),
    ));
    for name in [
        "mini-swe-agent/text-actions.traj.json",
        "mini-swe-agent/tool-calls.traj.json",
    ] {
        out.push((name, mini_swe_agent_counts(&json_file(&f(name)))));
    }
    for name in [
        "openhands/basic.json",
        "openhands/basic_interactions.json",
        "openhands/wrong_initial_state.json",
    ] {
        out.push((name, openhands_counts(arr(&json_file(&f(name))))));
    }
    for name in [
        "inspect/2025-05-12T20-27-36-04-00_browser.json",
        "inspect/log_message_deduplication.eval",
        "inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        "inspect/mockllm-0.3.285.eval",
    ] {
        out.push((name, inspect_counts(&f(name))));
    }
    out
}

/// Every trace of a file; any skipped record fails the test.
fn traces(path: &Path) -> Vec<Trace> {
    open_records(
        &InputSpec::Path(path.to_path_buf()),
        &ReadOptions::default(),
    )
    .expect("opens")
    .map(|r| match r {
        Record::Trace(t) => t,
        other => panic!("{}: not read as it is: {other:?}", path.display()),
    })
    .collect()
}

fn replay(t: &Trace, rule: PlainReply) -> Vec<Verdict> {
    Replayer::new(Policy::default())
        .with_plain_reply(rule)
        .replay(t)
}

#[test]
fn every_fixture_is_listed_and_counted() {
    let listed: HashSet<PathBuf> = expected().iter().map(|(n, _)| fixture(n)).collect();
    let on_disk: HashSet<PathBuf> = expand(&[InputSpec::Path(dir())])
        .into_iter()
        .map(|s| match s.expect("walks") {
            InputSpec::Path(p) => p,
            InputSpec::Stdin => unreachable!(),
        })
        .collect();
    assert_eq!(listed, on_disk, "fixtures/harnesses and this test disagree");
    for (name, counts) in expected() {
        assert!(counts.turns > 0, "{name}: no turns counted");
    }
}

#[test]
fn turns_are_attempts_and_calls_are_parsed_calls() {
    let mut total = Counts::default();
    let mut parsed_total = 0;
    for (name, want) in expected() {
        let ts = traces(&fixture(name));
        let attempts: usize = ts.iter().map(|t| t.attempts.len()).sum();
        assert_eq!(attempts, want.turns, "{name}: attempts");
        let mut parsed = 0;
        for t in &ts {
            assert!(t.attempts.iter().all(|a| a.native_tools), "{name}");
            let verdicts = replay(t, PlainReply::Continue);
            assert_eq!(verdicts.len(), t.attempts.len(), "{name}");
            for (a, v) in t.attempts.iter().zip(&verdicts) {
                assert_ne!(v.outcome, Outcome::Unreachable, "{name}: {v:?}");
                let carries_calls = a
                    .tool_calls
                    .as_ref()
                    .and_then(Json::as_array)
                    .is_some_and(|c| !c.is_empty());
                assert!(
                    !(carries_calls && v.outcome == Outcome::LlmFailed),
                    "{name}: a turn with tool calls judged llm_failed: {v:?}"
                );
                parsed += v.calls.len();
            }
        }
        assert_eq!(parsed, want.calls, "{name}: parsed calls");
        total += want;
        parsed_total += parsed;
    }
    assert!(parsed_total * 100 >= total.calls * 99);
    assert!(total.calls > 40 && total.turns > 80, "{total:?}");
}

#[test]
fn tau_bench_null_content_calls_are_tool_turns() {
    // Finding 1: `content: null` with `tool_calls` and no finish reason.
    let ts = traces(&fixture("tau-bench/gpt-4o-airline.first-3.json"));
    assert_eq!(ts.len(), 3);
    assert_eq!(&*ts[0].trace_id, "0#0");
    let null_content_calls = ts
        .iter()
        .flat_map(|t| t.attempts.iter())
        .filter(|a| a.content.is_empty() && a.tool_calls.is_some())
        .count();
    assert!(null_content_calls > 10, "{null_content_calls}");
    for t in &ts {
        for (a, v) in t.attempts.iter().zip(replay(t, PlainReply::Final)) {
            if a.tool_calls.is_some() && v.outcome != Outcome::Unreachable {
                assert_eq!(v.outcome, Outcome::Ok, "{v:?}");
                assert_eq!(v.executed, v.calls.len());
            }
        }
    }
}

#[test]
fn a_plain_reply_ends_the_session_only_under_the_final_rule() {
    let ts = traces(&fixture("tau-bench/gpt-4o-airline.first-3.json"));
    let count = |rule, outcome| -> usize {
        ts.iter()
            .map(|t| {
                replay(t, rule)
                    .iter()
                    .filter(|v| v.outcome == outcome)
                    .count()
            })
            .sum()
    };
    let attempts: usize = ts.iter().map(|t| t.attempts.len()).sum();
    // Upstream's rule: the first reply to the customer ends the session.
    assert_eq!(count(PlainReply::Final, Outcome::Final), ts.len());
    assert!(count(PlainReply::Final, Outcome::Unreachable) * 2 > attempts);
    assert_eq!(count(PlainReply::Continue, Outcome::Unreachable), 0);
    // A refusal is still judged, and rolls back, under `continue`; the
    // next attempt goes on.
    let mut t = ts[0].clone();
    t.attempts.truncate(2);
    t.attempts[0].content = "I'm sorry, I cannot solve this one.".into();
    t.attempts[0].tool_calls = None;
    let v = replay(&t, PlainReply::Continue);
    assert_eq!(v[0].outcome, Outcome::Rollback);
    assert_ne!(v[1].outcome, Outcome::Unreachable);
}

/// Written by Inspect 0.3.285 (zstd members) with tests/writers/inspect_log.py.
#[test]
fn the_current_inspect_release_is_read_with_usage_and_scores() {
    let ts = traces(&fixture("inspect/mockllm-0.3.285.eval"));
    let ids: Vec<&str> = ts.iter().map(|t| &*t.trace_id).collect();
    assert_eq!(
        ids,
        [
            "1_epoch_1",
            "2_epoch_1",
            "3_epoch_1",
            "4_epoch_1",
            "5_epoch_1"
        ]
    );
    for t in &ts {
        assert!(
            t.attempts.iter().all(|a| a.usage.is_some()),
            "{}",
            t.trace_id
        );
        assert!(
            t.attempts.iter().all(|a| a.duration_s.is_some()),
            "{}",
            t.trace_id
        );
        assert!(t.attempts[1..].iter().all(|a| a.task_result.is_none()));
        let result = t.attempts[0].task_result.as_ref().expect("a score");
        assert_eq!(&*result.basis, "Inspect scorer \"includes\"");
        // Sample 3 answers wrong on purpose.
        assert_eq!(
            result.success,
            Some(&*t.trace_id != "3_epoch_1"),
            "{}",
            t.trace_id
        );
    }
    let u = ts[0].attempts[0].usage.expect("usage");
    assert_eq!((u.input_tokens, u.output_tokens), (Some(40), Some(7)));
    // Sample 5's tool results are attachments, resolved.
    let pages = &ts[4].attempts[0].tool_results;
    assert_eq!(pages.len(), 2);
    assert!(
        pages[0].result.starts_with("page 5: lorem"),
        "{:?}",
        pages[0]
    );
    assert!(
        pages[1].result.starts_with("page 6: lorem"),
        "{:?}",
        pages[1]
    );
}

/// Claude Code 2.1.38+ writes the results of parallel calls between the
/// lines of their response: still one attempt per `message.id`.
#[test]
fn claude_code_responses_stay_whole_in_both_layouts() {
    let ts = traces(&fixture("claude-code/parallel-2.1.42.jsonl"));
    assert_eq!(ts.len(), 1);
    let a = &ts[0].attempts;
    assert_eq!(a.len(), 4);
    let calls = |i: usize| {
        a[i].tool_calls
            .as_ref()
            .and_then(Json::as_array)
            .map_or(0, Vec::len)
    };
    assert_eq!((calls(0), calls(1), calls(2), calls(3)), (3, 1, 2, 0));
    assert!(a[0].tool_results[2].result.contains("1 failed"));
    // The second call's result came first; each is matched by its id.
    assert!(a[2].tool_results[0].result.contains("1 passed"));
    assert!(a[2].tool_results[1].result.contains("1 file changed"));
    let u = a[0].usage.expect("usage");
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cached_input_tokens),
        (Some(10_203), Some(212), Some(9000))
    );
    assert!((a[0].duration_s.expect("timed") - 3.8).abs() < 1e-9);
    let old = traces(&fixture("claude-code/session.jsonl"));
    assert!(old[0].attempts.len() >= 2);
}

#[test]
fn the_eval_archive_reads_like_its_samples() {
    let ts = traces(&fixture("inspect/log_message_deduplication.eval"));
    assert_eq!(ts.len(), 1);
    assert_eq!(&*ts[0].trace_id, "0_epoch_1");
    let calls = ts[0].attempts[0].tool_calls.as_ref().expect("calls");
    assert_eq!(calls[0]["function"]["name"], "bash");
    assert_eq!(calls[0]["function"]["arguments"], "{\"cmd\":\"ls\"}");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mirotrace"))
}

#[test]
fn the_whole_folder_analyzes_cleanly_with_continue() {
    let out = bin()
        .args([
            "analyze",
            "-q",
            "--plain-reply",
            "continue",
            "--format",
            "json",
        ])
        .arg(dir())
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let turns: usize = expected().iter().map(|(_, c)| c.turns).sum();
    assert_eq!(report["attempts"].as_u64(), Some(turns as u64));
    assert_eq!(report["outcomes"]["unreachable"], 0);
    assert_eq!(report["files"].as_u64(), Some(expected().len() as u64));
}

#[test]
fn the_headline_names_the_option_when_most_attempts_are_unreachable() {
    let out = bin()
        .args(["analyze", "--no-color"])
        .arg(fixture("tau-bench/gpt-4o-airline.first-3.json"))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("are unreachable"), "{text}");
    assert!(text.contains("--plain-reply continue"), "{text}");
    let out = bin()
        .args(["analyze", "--no-color", "--plain-reply", "continue"])
        .arg(fixture("tau-bench/gpt-4o-airline.first-3.json"))
        .output()
        .expect("runs");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("are unreachable"));
}

#[test]
fn a_wrong_forced_format_is_an_error_not_zeros() {
    for (format, file) in [
        ("tasklog", "tau-bench/gpt-4o-airline.first-3.json"),
        ("tasklog", "openhands/basic.json"),
        ("inspect", "swe-agent/networking_1.traj"),
        ("otel", "claude-code/session.jsonl"),
        ("native", "inspect/log_message_deduplication.eval"),
        ("tau2", "openhands-v1/events.jsonl"),
        ("openhands-v1", "tau2/telecom-results.json"),
    ] {
        let out = bin()
            .args(["analyze", "-q", "--input-format", format])
            .arg(fixture(file))
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(3 | 4)),
            "{format} on {file}: {:?} {stderr}",
            out.status
        );
        assert!(
            stderr.contains("not ") && stderr.contains(format) || stderr.contains("ZIP"),
            "{format} on {file}: {stderr}"
        );
    }
}

#[test]
fn other_files_say_what_they_look_like() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("harness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let zip_path = dir.join("photos.eval");
    {
        let file = std::fs::File::create(&zip_path).expect("zip file");
        let mut w = zip::ZipWriter::new(file);
        w.start_file("cat.jpg", zip::write::SimpleFileOptions::default())
            .expect("entry");
        std::io::Write::write_all(&mut w, b"\xff\xd8").expect("write");
        w.finish().expect("finish");
    }
    let json_path = dir.join("package.json");
    std::fs::write(
        &json_path,
        "{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\"\n}\n",
    )
    .expect("json");
    for (path, says) in [
        (&zip_path, "a ZIP archive of something else"),
        (&json_path, "a JSON object with keys name, version"),
    ] {
        let out = bin()
            .args(["analyze", "-q"])
            .arg(path)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn forced_formats_read_their_own_files() {
    for (format, file) in [
        (
            InputFormat::Inspect,
            "inspect/2025-05-12T20-27-36-04-00_browser.json",
        ),
        (InputFormat::OpenHands, "openhands/basic.json"),
        (InputFormat::SweAgent, "swe-agent/networking_1.traj"),
        (InputFormat::ClaudeCode, "claude-code/session.jsonl"),
        (InputFormat::Otel, "otel/openinference.otlp.jsonl"),
        (InputFormat::Chat, "tau-bench/gpt-4o-airline.first-3.json"),
        (InputFormat::OpenHandsV1, "openhands-v1/events.jsonl"),
        (
            InputFormat::CompletionLog,
            "openhands-v1/gpt-4o-1762178521.410-a1b2.json",
        ),
        (InputFormat::Tau2, "tau2/telecom-results.json"),
        (InputFormat::Otel, "otel/any-agent-smolagents.spans.json"),
        (InputFormat::Otel, "otel/console-exporter.spans.json"),
    ] {
        let opts = ReadOptions {
            format,
            ..ReadOptions::default()
        };
        let recs: Vec<Record> = open_records(&InputSpec::Path(fixture(file)), &opts)
            .expect("opens")
            .collect();
        assert!(
            !recs.is_empty() && recs.iter().all(|r| matches!(r, Record::Trace(_))),
            "{file}: {recs:?}"
        );
    }
}

#[test]
fn new_writers_fill_usage_duration_and_result() {
    // tau2: per message, and the reward on the first attempt.
    let ts = traces(&fixture("tau2/telecom-results.json"));
    assert_eq!(ts.len(), 2);
    assert_eq!(&*ts[0].trace_id, "[mobile_data_issue]airplane_mode_on#0");
    let a = &ts[0].attempts;
    assert_eq!(a[1].usage.and_then(|u| u.cached_input_tokens), Some(1408));
    assert_eq!(a[1].duration_s, Some(1.4));
    let result = a[0].task_result.as_ref().expect("reward");
    assert_eq!((result.success, result.score), (Some(true), Some(1.0)));
    let failed = ts[1].attempts[0].task_result.as_ref().expect("reward");
    assert_eq!(failed.success, Some(false));
    // The user's own tool calls are not the agent's turns or results.
    let user_side = a
        .iter()
        .flat_map(|a| &a.tool_results)
        .filter(|r| r.result.contains("airplane mode ON") || r.result.contains("now OFF"))
        .count();
    assert_eq!(user_side, 0);
    assert_eq!(a[3].tool_results.len(), 2);
    // OpenHands V1: latencies and tokens by response id.
    let ts = traces(&fixture("openhands-v1/events.jsonl"));
    let a = &ts[0].attempts;
    assert_eq!(a[0].tool_results.len(), 2);
    assert_eq!(a[0].duration_s, Some(3.42));
    assert_eq!(a[1].usage.and_then(|u| u.cached_input_tokens), Some(2050));
    assert!(a[1].tool_results[0].result.starts_with("Action rejected"));
    assert!(a[3].usage.is_none());
    // A completion log: its response, its latency and usage.
    let ts = traces(&fixture("openhands-v1/gpt-4o-1762178521.410-a1b2.json"));
    let a = &ts[0].attempts[0];
    assert_eq!(a.duration_s, Some(1.183));
    assert_eq!(a.usage.and_then(|u| u.input_tokens), Some(812));
    // Plain spans: end − start, and the span's token counts.
    let ts = traces(&fixture("otel/console-exporter.spans.json"));
    let a = &ts[0].attempts;
    assert!((a[0].duration_s.expect("duration") - 1.25).abs() < 1e-9);
    assert_eq!(a[0].tool_results[0].result, "rainy, 57F");
    assert_eq!(a[1].usage.and_then(|u| u.cached_input_tokens), Some(64));
    let ts = traces(&fixture("otel/any-agent-smolagents.spans.json"));
    let call = &ts[0].attempts[0].tool_calls.as_ref().expect("calls")[0];
    assert_eq!(call["function"]["name"], "get_current_time");
    assert_eq!(
        ts[0].attempts[0].tool_results[0].result,
        "{\"datetime\": \"2025-07-07T19:48:41+09:00\"}"
    );
}

#[test]
fn a_lone_openhands_v1_event_says_how_to_give_the_stream() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("harness-v1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let one = dir.join("event-00003-e3.json");
    let line = std::fs::read_to_string(fixture("openhands-v1/events.jsonl")).expect("fixture");
    let event: Json = serde_json::from_str(line.lines().nth(3).expect("line")).expect("JSON");
    std::fs::write(&one, serde_json::to_string_pretty(&event).expect("JSON")).expect("write");
    let out = bin()
        .args(["analyze", "-q"])
        .arg(&one)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("one OpenHands V1 event on its own"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_folder_of_v1_event_files_is_one_conversation() {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("harness-v1-folder-{}", std::process::id()));
    let events = root.join("conv-7").join("events");
    std::fs::create_dir_all(&events).expect("temp dir");
    let text = std::fs::read_to_string(fixture("openhands-v1/events.jsonl")).expect("fixture");
    for (i, line) in text.lines().enumerate() {
        let event: Json = serde_json::from_str(line).expect("JSON");
        // As the SDK names them; some pretty-printed, as a user may leave them.
        let name = format!(
            "event-{i:05}-{:08x}-0000-4000-8000-000000000000.json",
            i * 7919
        );
        let body = if i % 3 == 0 {
            serde_json::to_string_pretty(&event).expect("JSON")
        } else {
            line.to_string()
        };
        std::fs::write(events.join(name), body).expect("write");
    }
    std::fs::write(events.join(".eventlog.lock"), "").expect("write");
    let replay = |input: &std::path::Path| {
        let out = bin()
            .args(["replay", "-q", "--format", "jsonl"])
            .arg(input)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("UTF-8")
            .lines()
            .map(|l| serde_json::from_str::<Json>(l).expect("verdict"))
            .collect::<Vec<_>>()
    };
    let whole = replay(&fixture("openhands-v1/events.jsonl"));
    // Named itself or found in a walk of its conversation's folder.
    for input in [&events, &root] {
        let folder = replay(input);
        assert_eq!(folder.len(), whole.len());
        for (f, w) in folder.iter().zip(&whole) {
            assert_eq!(f["trace_id"], "conv-7");
            assert_eq!(f["outcome"], w["outcome"]);
            assert_eq!(f["index"], w["index"]);
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn records_that_are_not_attempts_are_counted_not_problems() {
    let out = bin()
        .args(["analyze", "--format", "json"])
        .arg(fixture("openhands-v1/events.jsonl"))
        .arg(fixture("tau2/telecom-results.json"))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Read and counted, not skipped input: the exit code stays 0.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("records read that are not attempts")
            && stderr.contains("openhands-v1:ConversationStateUpdateEvent")
            && stderr.contains("tau2:user-tool-result"),
        "{stderr}"
    );
    let report: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let skipped = &report["input"]["skipped"];
    let v1 = json_lines(&fixture("openhands-v1/events.jsonl"))
        .iter()
        .filter(|e| e["kind"] == "ConversationStateUpdateEvent")
        .count();
    assert_eq!(
        skipped["openhands-v1:ConversationStateUpdateEvent"].as_u64(),
        Some(v1 as u64)
    );
    assert!(skipped["tau2:user-tool-result"].as_u64() > Some(0));
}
