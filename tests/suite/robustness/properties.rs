//! Property tests that run in CI: the parsers never panic, valid JSON
//! survives repair unchanged, and replay does not depend on thread count.

use std::ops::ControlFlow;

use mirotrace::engine::{self, Event, Job};
use mirotrace::parse::json_repair::repair_and_load;
use mirotrace::parse::toolcalls::{mcp_blocks, mcp_blocks_by_regex, parse_tool_calls};
use mirotrace::policy::Policy;
use mirotrace::pyjson::{self, Dict, Int, PyStr, Value};
use mirotrace::read::native::parse_line;
use mirotrace::read::source::{expand, InputSpec, ReadOptions};
use mirotrace::read::{Origin, Trace};
use mirotrace::replay::{Replayer, Verdict};
use proptest::prelude::*;

/// JSON-ish text: the characters that steer a JSON parser, plus some text.
fn jsonish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just(":".to_string()),
            Just(",".to_string()),
            Just("\\".to_string()),
            Just("\\u".to_string()),
            Just("```json".to_string()),
            Just("//".to_string()),
            Just("/*".to_string()),
            Just("True".to_string()),
            Just("None".to_string()),
            Just("NaN".to_string()),
            Just("-".to_string()),
            Just("1e".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            "[a-z0-9_.]{1,4}",
            "\\PC{1,2}",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

/// Valid JSON values without non-finite floats (which are not JSON).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| Value::Int(Int::Small(i))),
        (-1e12f64..1e12).prop_map(Value::Float),
        "[^\"\\\\]{0,12}".prop_map(|s| Value::str(&s)),
        "\\PC{0,8}".prop_map(|s| Value::str(&s)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::List),
            proptest::collection::vec(("[a-z]{1,6}", inner), 0..5).prop_map(|kv| Value::Dict(
                kv.into_iter()
                    .map(|(k, v)| (PyStr::from(k), v))
                    .collect::<Dict>()
            )),
        ]
    })
}

/// Text made of MCP tag fragments, to stress the tool-call scanner.
fn mcp_soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("<use_mcp_tool>"),
            Just("</use_mcp_tool>"),
            Just("<server_name>"),
            Just("</server_name>"),
            Just("<tool_name>"),
            Just("</tool_name>"),
            Just("<arguments>"),
            Just("</arguments>"),
            Just(" "),
            Just("\n"),
            Just("\u{1f}"),
            Just("x"),
            Just("{}"),
            Just("<"),
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// The literal walk finds exactly what upstream's regex finds.
    #[test]
    fn mcp_walk_matches_the_regex(text in mcp_soup()) {
        prop_assert_eq!(mcp_blocks(&text), mcp_blocks_by_regex(&text));
    }

    #[test]
    fn repair_never_panics(text in jsonish()) {
        let _ = repair_and_load(&text);
        let _ = pyjson::loads(&text);
    }

    /// json_repair only reads a top level that opens with `{` or `[` (a bare
    /// scalar becomes `""`, as upstream), so containers are what must survive.
    #[test]
    fn repair_of_valid_json_returns_it_unchanged(items in proptest::collection::vec(json_value(), 0..4)) {
        let v = Value::List(items);
        let text = pyjson::dump(&v);
        let strict = pyjson::loads(&text).expect("dump gives valid JSON");
        prop_assert!(strict.py_eq(&v));
        let repaired = repair_and_load(&text).expect("valid JSON repairs");
        prop_assert!(repaired.py_eq(&v), "{} became {}", text, pyjson::dump(&repaired));
    }

    #[test]
    fn line_and_call_parsers_never_panic(text in jsonish(), args in jsonish()) {
        let origin = Origin { file: "p".into(), line: 1 };
        let _ = parse_line(&text, origin.clone());
        let content = format!("<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{args}</arguments></use_mcp_tool>{text}");
        let _ = parse_tool_calls(&content, None, None);
        let calls = serde_json::json!([{"id": "c", "type": "function", "function": {"name": text, "arguments": args}}]);
        let _ = parse_tool_calls("", Some(&calls), None);
        let output = serde_json::json!([{"type": "function_call", "name": text, "arguments": args, "call_id": "x"}]);
        let _ = parse_tool_calls("", None, Some(&output));
    }
}

/// A random but well-formed corpus: every kind of attempt, several sessions.
fn corpus(seed: u64, traces: usize) -> String {
    let mut state = seed;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let call = |server: &str, tool: &str, args: &str| {
        format!("<use_mcp_tool><server_name>{server}</server_name><tool_name>{tool}</tool_name><arguments>{args}</arguments></use_mcp_tool>")
    };
    let mut out = String::new();
    for t in 0..traces {
        for i in 0..(5 + next(20)) {
            let q = format!("q{}", next(4));
            let (content, results) = match next(9) {
                0 => ("\\boxed{done}".to_string(), "[]".to_string()),
                1 => ("<use_mcp_tool> broken".to_string(), "[]".to_string()),
                2 => (
                    "I\u{2019}m sorry, but I can\u{2019}t".to_string(),
                    "[]".to_string(),
                ),
                3 => (
                    call("s", "google_search", &format!("{{\"q\": \"{q}\"}}")),
                    r#"[{"result": "{\"organic\": []}"}]"#.to_string(),
                ),
                4 => (
                    call("s", "google_search", &format!("{{'q': '{q}'}}")),
                    r#"[{"result": "{\"organic\": [1]}"}]"#.to_string(),
                ),
                5 => (
                    call("s", "x", "{}"),
                    r#"[{"result": "Unknown tool: x"}]"#.to_string(),
                ),
                6 => (
                    call(
                        "agent-browsing",
                        "search_and_browse",
                        "{\"subtask\": \"s\"}",
                    ),
                    "[]".to_string(),
                ),
                7 => (
                    call("p", "python", "{\"code\": \"1\"}"),
                    r#"[{"error": "Error executing tool"}]"#.to_string(),
                ),
                _ => (call("p", "run_python_code", "null"), "[]".to_string()),
            };
            let session = if next(4) == 0 {
                format!("agent-browsing_{}", 1 + next(2))
            } else {
                "main".into()
            };
            let line = serde_json::json!({
                "trace_id": format!("t{t}"), "session": session, "content": content,
                "tool_results": serde_json::from_str::<serde_json::Value>(&results).unwrap(),
                "system_prompt": if i == 0 { "## Server name: p\n### Tool name: run_python_code\n" } else { "" },
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    out
}

/// Each trace's verdict lines, serialised on the worker.
struct Lines;

impl Job for Lines {
    type Part = Vec<String>;

    fn part(&self) -> Vec<String> {
        Vec::new()
    }

    fn fold(&self, part: &mut Vec<String>, _: &Trace, verdicts: Vec<Verdict>, _: u64) {
        part.extend(verdicts.iter().map(|v| v.to_json_line()));
    }
}

fn replay_all(path: &std::path::Path, threads: usize) -> Vec<String> {
    let pool = engine::Workers::new(Some(threads)).unwrap();
    let replayer = Replayer::new(Policy::default());
    let mut lines = Vec::new();
    engine::run(
        expand(&[InputSpec::Path(path.to_path_buf())]),
        &ReadOptions::default(),
        &replayer,
        &pool,
        &Lines,
        |event| {
            if let Event::Part(part) = event {
                lines.extend(part);
            }
            ControlFlow::Continue(())
        },
    );
    lines
}

#[test]
fn replay_is_deterministic_and_independent_of_thread_count() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for seed in [1u64, 7, 42] {
        let path = dir.join(format!("corpus-{seed}.jsonl"));
        std::fs::write(&path, corpus(seed, 300)).unwrap();
        let one = replay_all(&path, 1);
        assert!(one.len() > 1000);
        assert_eq!(one, replay_all(&path, 1), "same input, same output");
        assert_eq!(
            one,
            replay_all(&path, 3),
            "thread count changed the verdicts"
        );
    }
}

/// Good native lines, one trace each (`after-1` …), that follow a cut.
fn lines_after_the_cut() -> String {
    (1..=7)
        .map(|i| format!("{{\"trace_id\": \"after-{i}\", \"content\": \"\\\\boxed{{{i}}}\"}}\n"))
        .collect()
}

/// Good files of each layout: JSONL, a pretty task log, a pretty chat
/// list, and the files read whole (a Claude Code session, OTLP spans).
fn good_files() -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let task_log =
        std::fs::read(root.join("fixtures/tasklog/task_eiffel-height_2025-06-03-10-12-44.json"))
            .expect("task log fixture");
    let chat = serde_json::to_vec_pretty(&serde_json::json!([
        {"id": "c1", "messages": [
            {"role": "system", "content": "sys ünïcode"},
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"}
        ]},
        {"id": "c2", "messages": [{"role": "assistant", "content": "b"}]}
    ]))
    .expect("JSON");
    let native = corpus(3, 4).into_bytes();
    let session = std::fs::read(root.join("fixtures/harnesses/claude-code/session.jsonl"))
        .expect("Claude Code fixture");
    let spans = std::fs::read(root.join("fixtures/harnesses/otel/openinference.otlp.jsonl"))
        .expect("OTLP fixture");
    vec![native, task_log, chat, session, spans]
}

/// What an input reads to, through sniffing as a file would be read:
/// the trace ids, and the bad lines' numbers.
fn read_input(bytes: Vec<u8>) -> (Vec<String>, Vec<u64>) {
    use mirotrace::read::source::open_stream;
    use mirotrace::read::Record;
    let mut ids = Vec::new();
    let mut bad = Vec::new();
    let records = open_stream(
        Box::new(std::io::Cursor::new(bytes)),
        "cut.jsonl".into(),
        &ReadOptions::default(),
    )
    .expect("opens");
    for r in records {
        match r {
            Record::Trace(t) => ids.push(t.trace_id.to_string()),
            Record::Bad(b) => bad.push(b.origin.line),
            Record::Failed(e) => panic!("failed: {e}"),
            Record::NoAttempt(n) => panic!("{n}"),
            Record::NotTraces(n) => panic!("not traces: {n}"),
        }
    }
    (ids, bad)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any prefix of a good file (cut at any byte, inside a character too),
    /// then good lines: every one of those lines is read.
    #[test]
    fn a_cut_file_loses_no_later_good_line(which in 0usize..5, at in 0.0f64..=1.0) {
        let files = good_files();
        let file = &files[which];
        let cut = ((file.len() as f64) * at) as usize;
        let mut bytes = file[..cut.min(file.len())].to_vec();
        bytes.push(b'\n');
        bytes.extend(lines_after_the_cut().as_bytes());
        let (ids, _) = read_input(bytes);
        for i in 1..=7 {
            let id = format!("after-{i}");
            prop_assert!(ids.contains(&id), "cut at {cut} of file {which}: {id} lost; read {ids:?}");
        }
    }

    /// Any line of a file read whole (a Claude Code session line, OTLP
    /// spans) as the first line, then good lines, chat lines among them:
    /// every one of those is read.
    #[test]
    fn a_whole_file_first_line_loses_no_later_good_line(which in 3usize..5, pick in any::<prop::sample::Index>()) {
        let files = good_files();
        let text = String::from_utf8(files[which].clone()).expect("UTF-8 fixture");
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut bytes = format!("{}\n", pick.get(&lines)).into_bytes();
        bytes.extend(lines_after_the_cut().as_bytes());
        bytes.extend(br#"{"id": "chat-after", "messages": [{"role": "assistant", "content": "a"}]}"#);
        bytes.push(b'\n');
        let (ids, bad) = read_input(bytes);
        prop_assert!(bad.is_empty(), "bad lines {bad:?}");
        for i in 1..=7 {
            let id = format!("after-{i}");
            prop_assert!(ids.contains(&id), "{id} lost; read {ids:?}");
        }
        prop_assert!(ids.contains(&"chat-after".to_string()), "{ids:?}");
    }

    /// A line cut anywhere (first or later) is reported at its place, and
    /// the lines around it are read.
    #[test]
    fn a_line_cut_anywhere_is_reported(line in 0usize..3, at in 0.0f64..1.0, first in any::<bool>()) {
        let lines = [
            r#"{"trace_id": "x", "session": "agent-browsing_1", "content": "<use_mcp_tool>\n<server_name>s</server_name>\n<tool_name>google_search</tool_name>\n<arguments>\n{\"q\": \"é\"}\n</arguments>\n</use_mcp_tool>", "tool_results": [{"result": "{\"organic\": []}"}]}"#,
            r#"{"id": "c", "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "日本語の答え"}]}"#,
            r#"{"trace_id": "x", "content": null, "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}], "finish_reason": "tool_calls", "meta": {"model": "m"}}"#,
        ];
        let text = lines[line].as_bytes();
        let cut = 1 + ((text.len() - 1) as f64 * at) as usize;
        prop_assume!(cut < text.len());
        let good = "{\"trace_id\": \"good\", \"content\": \"fine\"}\n";
        let mut bytes = Vec::new();
        if !first {
            bytes.extend(good.as_bytes());
        }
        bytes.extend(&text[..cut]);
        bytes.push(b'\n');
        bytes.extend(good.replace("good", "later").as_bytes());
        let (ids, bad) = read_input(bytes);
        let place = if first { 1 } else { 2 };
        prop_assert_eq!(&bad, &vec![place], "line {} cut at {}: {:?}", line, cut, ids);
        prop_assert!(ids.contains(&"later".to_string()), "{:?}", ids);
        prop_assert!(first || ids.contains(&"good".to_string()), "{:?}", ids);
    }
}
