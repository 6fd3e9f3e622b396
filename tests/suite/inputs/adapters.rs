//! The input adapters through the library: task logs (with their recorded
//! view), chat transcripts, ATIF (and the export round trip), compressed
//! inputs, directories and mixed files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mirotrace::crosscheck::{self, DisagreementKind};
use mirotrace::export::atif;
use mirotrace::model::Source;
use mirotrace::policy::Policy;
use mirotrace::read::source::{expand, open_records, InputSpec, ReadOptions};
use mirotrace::read::{InputFormat, ReadError, Record, Trace};
use mirotrace::replay::{Outcome, Replayer, Verdict};
use serde_json::Value as Json;

const EIFFEL: &str = "tasklog/task_eiffel-height_2025-06-03-10-12-44.json";
const REYKJAVIK: &str = "tasklog/task_reykjavik-pop_2025-06-03-11-02-10.json";

use crate::common::fixture_path as fixture;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("adapters-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Everything one input yields.
fn records(path: &Path, format: InputFormat) -> Vec<Record> {
    let opts = ReadOptions {
        format,
        ..ReadOptions::default()
    };
    open_records(&InputSpec::Path(path.to_path_buf()), &opts)
        .expect("opens")
        .collect()
}

fn traces(path: &Path) -> Vec<Trace> {
    records(path, InputFormat::Auto)
        .into_iter()
        .map(|r| match r {
            Record::Trace(t) => t,
            other => panic!("{}: unexpected {other:?}", path.display()),
        })
        .collect()
}

fn replay(t: &Trace) -> Vec<Verdict> {
    Replayer::new(Policy::default()).replay(t)
}

/// The spec's verdict lines of every trace of an input.
fn verdict_lines(path: &Path) -> Vec<String> {
    traces(path)
        .iter()
        .flat_map(|t| {
            replay(t)
                .iter()
                .map(Verdict::to_json_line)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Upstream's rollback reasons counted straight from a task log's step_logs,
/// independently of the adapter: the step-name label and the message text.
fn step_log_counts(path: &Path) -> (BTreeMap<String, u64>, u64, u64, u64) {
    let doc: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut reasons = BTreeMap::new();
    let (mut allowed, mut ended, mut recoveries) = (0, 0, 0);
    for step in doc["step_logs"].as_array().unwrap() {
        let label = step["step_name"]
            .as_str()
            .unwrap()
            .rsplit(" | ")
            .next()
            .unwrap();
        let msg = step["message"].as_str().unwrap();
        match label {
            "Rollback" => {
                let reason = if msg.starts_with("Tool call format") {
                    "format_error"
                } else if msg.starts_with("LLM refused") {
                    "refusal"
                } else if msg.starts_with("Duplicate query") {
                    "duplicate_query"
                } else if msg.contains("result: 'Unknown tool:") {
                    "unknown_tool"
                } else if msg.contains("result: 'Error executing tool") {
                    "tool_error"
                } else {
                    "empty_search"
                };
                *reasons.entry(reason.to_string()).or_default() += 1;
            }
            "Allow Duplicate" => allowed += 1,
            "End After Max Rollbacks" | "Too Many Rollbacks" => ended += 1,
            "Recovery" => recoveries += 1,
            _ => {}
        }
    }
    (reasons, allowed, ended, recoveries)
}

/// Verdicts by outcome name, and flags by name, over a trace's replay.
fn tally(verdicts: &[Verdict]) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let (mut reasons, mut flags) = (BTreeMap::new(), BTreeMap::new());
    for v in verdicts {
        if v.outcome == Outcome::Rollback {
            *reasons
                .entry(v.reason.map_or("unknown", |r| r.name()).to_string())
                .or_default() += 1;
        }
        if v.outcome == Outcome::End {
            *flags.entry("end".to_string()).or_default() += 1;
        }
        for f in &v.flags {
            *flags.entry(f.name().to_string()).or_default() += 1;
        }
    }
    (reasons, flags)
}

#[test]
fn task_logs_yield_every_attempt_the_step_log_records() {
    for name in [EIFFEL, REYKJAVIK] {
        let path = fixture(name);
        let ts = traces(&path);
        assert_eq!(ts.len(), 1, "{name}");
        let v = replay(&ts[0]);
        let (reasons, flags) = tally(&v);
        let (logged, allowed, ended, recoveries) = step_log_counts(&path);
        assert_eq!(reasons, logged, "{name}");
        let flag = |k: &str| flags.get(k).copied().unwrap_or(0);
        assert_eq!(
            (flag("allowed_duplicate"), flag("end"), flag("recovered")),
            (allowed, ended, recoveries),
            "{name}"
        );
        // Rolled-back turns come from the log, the rest is replayed.
        for v in &v {
            let expected = if v.outcome == Outcome::Rollback {
                Source::Recorded
            } else {
                Source::Replayed
            };
            assert_eq!(v.source(), expected, "{name} {} #{}", v.session, v.index);
        }
    }
    let eiffel = &traces(&fixture(EIFFEL))[0];
    assert_eq!(&*eiffel.trace_id, "eiffel-height");
    // In the order upstream ran them: the sub-agent inside the main turn that launched it.
    let sessions: Vec<&str> = eiffel.attempts.iter().map(|a| &*a.session).collect();
    assert_eq!(
        sessions,
        [
            "main",
            "main",
            "main",
            "main",
            "agent-browsing_1",
            "agent-browsing_1",
            "agent-browsing_1",
            "agent-browsing_1",
            "main",
            "main"
        ]
    );
    assert_eq!(&*eiffel.attempts[4].agent, "agent-browsing");
    // Each session's prompt is on its first attempt, rolled back or not.
    assert!(eiffel.attempts[0].decided().is_some());
    assert!(eiffel.attempts[0]
        .system_prompt
        .as_deref()
        .unwrap()
        .contains("## Server name: tool-google-search"));
    assert!(eiffel.attempts[4]
        .system_prompt
        .as_deref()
        .unwrap()
        .contains("## Server name: tool-reader"));
    assert_eq!(
        eiffel.attempts[0].model.as_deref(),
        Some("MiroThinker-v1.0-8B")
    );
    // The summary answer after upstream's summary prompt is not a loop turn.
    assert!(eiffel
        .attempts
        .iter()
        .all(|a| !a.content.contains("The answer is \\boxed{330}")));
}

#[test]
fn replayed_and_recorded_turns_share_one_loop_state() {
    let t = &traces(&fixture(REYKJAVIK))[0];
    let v = replay(t);
    let got: Vec<(Outcome, Option<i64>, Option<u32>)> = v
        .iter()
        .map(|v| (v.outcome, v.turn, v.consecutive_rollbacks))
        .collect();
    use Outcome::{End, Ok, Rollback};
    assert_eq!(
        got,
        [
            (Ok, Some(1), Some(0)),
            (Rollback, Some(1), Some(1)),
            (Rollback, Some(1), Some(2)),
            (Rollback, Some(1), Some(3)),
            (Rollback, Some(1), Some(4)),
            // Replayed after four logged rollbacks: the duplicate is let through.
            (Ok, Some(2), Some(0)),
            (Ok, Some(3), Some(0)),
            (Rollback, Some(3), Some(1)),
            (Rollback, Some(3), Some(2)),
            (Rollback, Some(3), Some(3)),
            (Rollback, Some(3), Some(4)),
            // …and the format error at the limit ends the loop.
            (End, Some(4), Some(4)),
        ]
    );
    assert_eq!(
        v[5].flags,
        [
            mirotrace::replay::Flag::AllowedDuplicate,
            mirotrace::replay::Flag::Recovered
        ]
    );
    // The logged duplicate names its query; the rollback its tool.
    assert_eq!(
        v[1].duplicates[0].query.to_string_lossy(),
        "google_search_population of Reykjavik 2024"
    );
    assert_eq!(
        v[2].recorded.as_ref().and_then(|r| r.blamed_tool()),
        Some("python_exec")
    );
    // Content stored as a list of text parts reads as text.
    assert!(t.attempts[5].content.contains("I need that result again."));
}

#[test]
fn replay_and_log_agree_on_upstream_logs() {
    for name in [EIFFEL, REYKJAVIK] {
        let t = &traces(&fixture(name))[0];
        let d = crosscheck::check(t, &replay(t), &Policy::default());
        assert!(d.is_empty(), "{name}: {d:#?}");
    }
}

/// Rewrites a task log's text and reads it back.
fn edited_log(name: &str, edit: impl Fn(&mut Json)) -> Trace {
    let mut doc: Json =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    edit(&mut doc);
    let dir = temp_dir("edited");
    let path = dir.join("task_edited.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    traces(&path).remove(0)
}

#[test]
fn disagreements_are_listed() {
    // A policy that counts the final answer as a refusal: upstream kept that turn.
    let t = &traces(&fixture(EIFFEL))[0];
    let mut policy = Policy::default();
    policy.refusal_keywords.push("330 metres tall".into());
    let v = Replayer::new(policy.clone()).replay(t);
    let d = crosscheck::check(t, &v, &policy);
    let kinds: Vec<(DisagreementKind, Option<&str>, &str, Option<i64>)> = d
        .iter()
        .map(|d| (d.kind, d.reason, d.session.as_str(), d.turn))
        .collect();
    assert_eq!(
        kinds,
        [(
            DisagreementKind::ReplayDiffers,
            Some("refusal"),
            "main",
            Some(3)
        )]
    );
    assert!(d[0].origin.ends_with(".json:1"), "{:?}", d[0].origin);
    assert_eq!(d[0].source, Source::Replayed);

    // A tool-result rollback on a result the replay would keep.
    let t = edited_log(EIFFEL, |doc| {
        for s in doc["step_logs"].as_array_mut().unwrap() {
            if s["message"]
                .as_str()
                .unwrap()
                .starts_with("Tool result error - tool: scrape_website")
            {
                s["message"] =
                    Json::from("Tool result error - tool: scrape_website, result: 'Page is empty'");
            }
        }
    });
    let v = replay(&t);
    let mut summary = crosscheck::Summary::default();
    summary.add(
        &mirotrace::model::TracePos::of_trace(&t),
        &t,
        &v,
        &Policy::default(),
    );
    let d = summary.disagreements();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(
        (d[0].kind, d[0].reason, d[0].session.as_str(), d[0].source),
        (
            DisagreementKind::UnexplainedRollback,
            Some("empty_search"),
            "agent-browsing_1",
            Source::Recorded
        )
    );
    let json = summary.to_json();
    assert_eq!(json["traces"], 1);
    assert_eq!(json["by_kind"]["unexplained_rollback"], 1);
    assert_eq!(json["disagreements"][0]["kind"], "unexplained_rollback");
    let decided = t.attempts.iter().filter(|a| a.decided().is_some()).count();
    assert_eq!(summary.sources_json()["recorded"]["attempts"], decided);
    assert_eq!(
        summary.sources_json()["replayed"]["attempts"],
        t.attempts.len() - decided
    );
}

#[test]
fn an_unfamiliar_summary_prompt_is_still_left_out() {
    // A summary prompt worded differently from upstream's: the step log's
    // "Final Summary" step shows the last answer is the summary, not a turn.
    let t = edited_log(EIFFEL, |doc| {
        for m in doc["main_agent_message_history"]["message_history"]
            .as_array_mut()
            .unwrap()
        {
            if m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("Summarize the above conversation"))
            {
                m["content"] = Json::from("Please wrap up now and state the final answer.");
            }
        }
    });
    let main: Vec<&str> = t
        .attempts
        .iter()
        .filter(|a| &*a.session == "main" && a.decided().is_none())
        .map(|a| a.content.as_str())
        .collect();
    assert_eq!(main.len(), 3, "{main:?}");
    assert!(crosscheck::check(&t, &replay(&t), &Policy::default()).is_empty());
}

#[test]
fn chat_conversions_hold_the_task_logs_surviving_turns() {
    // The chat form keeps only the surviving turns; the task log also the
    // rolled-back ones, whose verdicts its step log gives.
    let turns = |t: &Trace| -> Vec<(String, String, Vec<String>)> {
        t.attempts
            .iter()
            .filter(|a| a.decided().is_none())
            .map(|a| {
                (
                    a.session.to_string(),
                    a.content.clone(),
                    a.tool_results
                        .iter()
                        .map(|r| r.effective_text().to_string())
                        .collect(),
                )
            })
            .collect()
    };
    let mut from_log = turns(&traces(&fixture(EIFFEL))[0]);
    let mut from_chat: Vec<_> = traces(&fixture("chat/eiffel-height.chat.jsonl"))
        .iter()
        .flat_map(turns)
        .collect();
    from_log.sort();
    from_chat.sort();
    assert_eq!(from_chat, from_log);
    // The collect-trace form (a pretty message list) is one main session named after its file.
    let chatml = traces(&fixture(
        "chat/task_eiffel-height_2025-06-03-10-12-44_main_agent_chatml.json",
    ));
    assert_eq!(chatml.len(), 1);
    assert_eq!(
        &*chatml[0].trace_id,
        "task_eiffel-height_2025-06-03-10-12-44_main_agent_chatml"
    );
    let outcomes: Vec<Outcome> = replay(&chatml[0]).iter().map(|v| v.outcome).collect();
    assert_eq!(outcomes, [Outcome::Ok, Outcome::Ok, Outcome::Final]);
}

#[test]
fn a_merged_list_of_conversations_keeps_them_apart() {
    // collect-trace's merge_chatml_msgs_to_one_json: [{"messages": [...]}, ...].
    let ts = traces(&fixture("chat/main_agent_merged.json"));
    let ids: Vec<&str> = ts.iter().map(|t| &*t.trace_id).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    // Named by the file's stem and their place, not by the path typed.
    assert_eq!(ids, ["main_agent_merged#0", "main_agent_merged#1"]);
    assert_eq!(
        ts.iter().map(|t| t.attempts.len()).collect::<Vec<_>>(),
        [3, 3]
    );
}

#[test]
fn openai_tool_messages_become_results_by_call_id() {
    let ts = traces(&fixture("chat/openai-tool-calls.jsonl"));
    assert_eq!(ts.len(), 2);
    // The first line's record has no id: the file's stem names it.
    assert_eq!(&*ts[0].trace_id, "openai-tool-calls");
    let second = &ts[1];
    assert_eq!(second.attempts[0].model.as_deref(), Some("gpt-4.1"));
    let results: Vec<&str> = second.attempts[1]
        .tool_results
        .iter()
        .map(|r| r.result.as_str())
        .collect();
    assert_eq!(results, ["391", "{\"organic\": []}"]);
}

#[test]
fn compressed_copies_read_like_the_originals() {
    let pairs = [
        (
            "mixed/ok/task_eiffel-height_2025-06-03-10-12-44.json.gz",
            EIFFEL,
        ),
        (
            "mixed/ok/task_reykjavik-pop_2025-06-03-11-02-10.json.zst",
            REYKJAVIK,
        ),
        (
            "mixed/ok/eiffel-height.chat.jsonl.gz",
            "chat/eiffel-height.chat.jsonl",
        ),
    ];
    for (compressed, plain) in pairs {
        assert_eq!(
            verdict_lines(&fixture(compressed)),
            verdict_lines(&fixture(plain)),
            "{compressed}"
        );
    }
    let gz = &traces(&fixture(pairs[0].0))[0];
    let logged = |t: &Trace| {
        t.attempts
            .iter()
            .map(|a| a.recorded.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(logged(gz), logged(&traces(&fixture(EIFFEL))[0]));
}

#[test]
fn a_truncated_stream_keeps_what_was_read() {
    let recs = records(&fixture("mixed/broken/cut-off.jsonl.gz"), InputFormat::Auto);
    let traces = recs
        .iter()
        .filter(|r| matches!(r, Record::Trace(_)))
        .count();
    assert!(
        traces > 10,
        "lines before the cut are kept ({traces} traces)"
    );
    match recs.last() {
        Some(Record::Failed(ReadError::Cut { file, lines, cause })) => {
            assert!(file.ends_with("cut-off.jsonl.gz"));
            assert!(*lines > 10, "{lines}");
            assert!(
                cause.contains("truncated or corrupt gzip stream"),
                "{cause}"
            );
        }
        other => panic!("expected a failed input, got {other:?}"),
    }
}

#[test]
fn broken_documents_and_lines_are_reported_with_their_place() {
    let recs = records(
        &fixture("mixed/broken/task_cut-short_2025-06-03-12-00-00.json"),
        InputFormat::Auto,
    );
    match recs.as_slice() {
        [Record::Bad(b)] => {
            assert!(b.reason.starts_with("not JSON: "), "{}", b.reason);
            assert!(b.origin.line > 1);
        }
        other => panic!("{other:?}"),
    }
    let recs = records(
        &fixture("mixed/broken/robot-role.chat.jsonl"),
        InputFormat::Auto,
    );
    let summary: Vec<String> = recs
        .iter()
        .map(|r| match r {
            Record::Trace(t) => t.trace_id.to_string(),
            Record::Bad(b) => b.to_string(),
            Record::Failed(e) => e.cause().to_string(),
            Record::NoAttempt(n) => n.to_string(),
            Record::NotTraces(n) => n.to_string(),
        })
        .collect();
    assert_eq!(summary.len(), 3);
    assert_eq!(summary[0], "good-chat");
    assert!(
        summary[1].ends_with(
            "robot-role.chat.jsonl:2: chat transcript: message 1 has unknown role \"robot\""
        ),
        "{}",
        summary[1]
    );
    assert_eq!(summary[2], "good-chat-2");
}

#[test]
fn a_jsonl_file_may_mix_kinds() {
    let ids: Vec<String> = traces(&fixture("mixed/ok/mixed-kinds.jsonl"))
        .into_iter()
        .map(|t| t.trace_id.to_string())
        .collect();
    assert_eq!(ids, ["native-2", "chat-in-native-file", "native-3"]);
}

#[test]
fn a_forced_format_reads_everything_as_that_format() {
    // A record of another kind is not read as the forced one: each says what it looks like.
    let recs = records(&fixture("mixed/ok/native.jsonl"), InputFormat::Chat);
    assert!(
        recs.iter().all(|r| matches!(r, Record::Bad(b)
            if b.reason.contains("not a chat transcript (--input-format chat): it looks like a native attempt line"))),
        "{recs:?}"
    );
    let recs = records(
        &fixture("chat/openai-tool-calls.jsonl"),
        InputFormat::Native,
    );
    assert!(
        recs.iter()
            .all(|r| matches!(r, Record::Bad(b) if b.reason.contains("trace_id"))),
        "{recs:?}"
    );
}

#[test]
fn foreign_atif_reads_with_raw_content_and_observations() {
    let ts = traces(&fixture("atif/vienna-river.trajectory.json"));
    let t = &ts[0];
    assert_eq!(&*t.trace_id, "b1e7c2d0-3f7a-4c55-9d0e-8a51f0a2c9e4");
    assert_eq!(t.attempts.len(), 3);
    assert!(t.attempts[0].system_prompt.is_some());
    assert!(
        t.attempts[1].content.contains("<use_mcp_tool>"),
        "raw text replaces the message"
    );
    let outcomes: Vec<(Outcome, Option<&str>)> = replay(t)
        .iter()
        .map(|v| (v.outcome, v.reason.map(|r| r.name())))
        .collect();
    assert_eq!(
        outcomes,
        [
            (Outcome::Ok, None),
            (Outcome::Rollback, Some("duplicate_query")),
            (Outcome::Final, None)
        ]
    );
}

#[test]
fn exported_atif_reads_back_to_the_same_verdicts() {
    let dir = temp_dir("atif-roundtrip");
    let inputs = [
        EIFFEL,
        REYKJAVIK,
        "chat/openai-tool-calls.jsonl",
        "mixed/ok/native.jsonl",
        "mixed/ok/mixed-kinds.jsonl",
        "atif/vienna-river.trajectory.json",
        "model-a.jsonl",
    ];
    for name in inputs {
        let path = fixture(name);
        if !path.exists() {
            continue;
        }
        for (i, t) in traces(&path).iter().enumerate() {
            let v = replay(t);
            let doc = atif::to_document(t, &v);
            let out = dir.join(format!("{i}.json"));
            std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
            let back = traces(&out);
            assert_eq!(back.len(), 1, "{name}");
            let again = replay(&back[0]);
            // `why.first_line` names a line of the file read: the same
            // attempt stands on another line of the exported document.
            let lines = |vs: &[Verdict]| {
                vs.iter()
                    .map(|v| {
                        let mut j: serde_json::Value =
                            serde_json::from_str(&v.to_json_line()).expect("verdict JSON");
                        if let Some(why) = j.get_mut("why").and_then(|w| w.as_object_mut()) {
                            why.remove("first_line");
                        }
                        j.to_string()
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(lines(&again), lines(&v), "{name} trace {i}");
            // What a task log recorded about each attempt travels along.
            let logged = |t: &Trace| {
                t.attempts
                    .iter()
                    .map(|a| a.recorded.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(logged(&back[0]), logged(t), "{name}");
        }
    }
}

#[test]
fn directories_are_walked_in_order_once() {
    let dir = temp_dir("walk");
    std::fs::create_dir_all(dir.join("b/inner")).unwrap();
    std::fs::create_dir_all(dir.join("a")).unwrap();
    for f in [
        "b/inner/z.jsonl",
        "b/y.json.gz",
        "a/x.zst",
        "a/notes.txt",
        ".hidden.jsonl",
        "c.json",
    ] {
        std::fs::write(dir.join(f), "").unwrap();
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(&dir, dir.join("b/inner/loop")).unwrap();
    let found: Vec<String> = expand(&[InputSpec::Path(dir.clone())])
        .into_iter()
        .map(|r| match r.expect("readable") {
            InputSpec::Path(p) => p.strip_prefix(&dir).unwrap().display().to_string(),
            InputSpec::Stdin => "-".into(),
        })
        .collect();
    assert_eq!(
        found,
        ["a/x.zst", "b/inner/z.jsonl", "b/y.json.gz", "c.json"]
    );
    let empty = temp_dir("walk-empty");
    let err = expand(&[InputSpec::Path(empty)]).remove(0).unwrap_err();
    assert!(err.reason.contains("no trace files"), "{}", err.reason);
}
