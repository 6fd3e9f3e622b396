//! `mirotrace replay` through the real binary: fixtures, broken input, exit codes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    crate::common::mirotrace()
}

use crate::common::fixture_path as fixture;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("test-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mirotrace")
}

fn stdout_lines(o: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("verdict line is JSON"))
        .collect()
}

fn input_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

#[test]
fn one_verdict_per_line_in_input_order() {
    let path = fixture("model-a.jsonl");
    let o = run(&["replay", path.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let verdicts = stdout_lines(&o);
    assert_eq!(verdicts.len(), input_lines(&path));
    let inputs: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (v, i) in verdicts.iter().zip(&inputs) {
        assert_eq!(v["trace_id"], i["trace_id"]);
        assert_eq!(
            v["session"],
            *i.get("session").unwrap_or(&serde_json::json!("main"))
        );
    }
    let outcomes: std::collections::HashSet<_> = verdicts
        .iter()
        .map(|v| v["outcome"].as_str().unwrap().to_string())
        .collect();
    for expected in ["ok", "final", "rollback", "end", "llm_failed"] {
        assert!(
            outcomes.contains(expected),
            "fixture should exercise {expected}"
        );
    }
}

#[test]
fn thread_count_does_not_change_output() {
    let path = fixture("model-b.jsonl");
    let p = path.to_str().unwrap();
    let one = run(&["replay", p, "-j", "1"]);
    let many = run(&["replay", p, "-j", "4"]);
    assert_eq!(one.stdout, many.stdout);
    assert!(!one.stdout.is_empty());
}

#[test]
fn bad_lines_are_reported_and_the_rest_is_kept() {
    let dir = temp_dir("bad");
    let path = dir.join("broken.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, r#"{{"trace_id": "t1", "content": "\\boxed{{1}}"}}"#).unwrap();
    writeln!(f, "{{not json").unwrap();
    writeln!(f, r#"["an", "array"]"#).unwrap();
    writeln!(f, r#"{{"content": "no trace id"}}"#).unwrap();
    f.write_all(b"{\"trace_id\": \"t2\", \"content\": \"\xff\"}\n")
        .unwrap();
    writeln!(f, r#"{{"trace_id": "t3", "content": "\\boxed{{3}}"}}"#).unwrap();
    drop(f);
    let o = run(&["replay", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "skipped input gives exit code 3");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let name = path.display().to_string();
    for line in [2, 3, 4, 5] {
        assert!(
            stderr.contains(&format!("{name}:{line}: ")),
            "line {line} not reported in:\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"));
    let ids: Vec<_> = stdout_lines(&o)
        .iter()
        .map(|v| v["trace_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, vec!["t1", "t3"]);
}

#[test]
fn strict_stops_at_the_first_bad_line() {
    let dir = temp_dir("strict");
    let path = dir.join("s.jsonl");
    std::fs::write(
        &path,
        "{\"trace_id\": \"a\"}\nnope\n{\"trace_id\": \"b\"}\n",
    )
    .unwrap();
    let o = run(&["replay", "--strict", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let ids: Vec<_> = stdout_lines(&o)
        .iter()
        .map(|v| v["trace_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.contains(&"b".to_string()));
}

#[test]
fn missing_input_is_nothing_readable() {
    let o = run(&["replay", "/nonexistent/mirotrace/x.jsonl"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/mirotrace/x.jsonl"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["replay"]).status.code(), Some(2));
    assert_eq!(
        run(&["replay", "--no-such-flag", "x"]).status.code(),
        Some(2)
    );
}

#[test]
fn stdin_is_read_with_a_dash() {
    let v = replay_stdin(
        "{\"trace_id\": \"s\", \"content\": \"I\u{2019}m sorry, but I can\u{2019}t\"}\n",
    );
    assert_eq!(v[0]["outcome"], "rollback");
    assert_eq!(v[0]["reason"], "refusal");
}

#[test]
fn output_file_is_written_whole_or_not_at_all() {
    let dir = temp_dir("out");
    let dest = dir.join("verdicts.jsonl");
    let o = run(&[
        "replay",
        fixture("model-a.jsonl").to_str().unwrap(),
        "-o",
        dest.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(input_lines(&dest), input_lines(&fixture("model-a.jsonl")));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    let o = run(&[
        "replay",
        fixture("model-a.jsonl").to_str().unwrap(),
        "-o",
        "/nonexistent-dir/x.jsonl",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not exist"));
}

#[test]
fn trace_timeline_shows_each_attempt() {
    let o = run(&[
        "replay",
        fixture("model-b.jsonl").to_str().unwrap(),
        "--trace",
        "task-005",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("crash"));
    assert!(text.contains("AttributeError"));
    assert!(text.contains("unreachable"));
    let o = run(&[
        "replay",
        fixture("model-b.jsonl").to_str().unwrap(),
        "--trace",
        "no-such-trace",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn closed_stdout_exits_quietly() {
    let mut child = bin()
        .args(["replay", fixture("model-b.jsonl").to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    assert!(o.status.code().is_some(), "not killed by a signal");
}

/// The verdict lines `replay -` writes (jsonl, the default) for `input` on
/// stdin; the run must succeed.
fn replay_stdin(input: &str) -> Vec<serde_json::Value> {
    let o = crate::common::run_with_stdin(bin().args(["replay", "-"]), input.as_bytes());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout_lines(&o)
}

/// The examples of `docs/trace-format.md` are what `replay` writes: each
/// block of verdict lines, for the block of input lines before it, and the
/// worked example's table.
#[test]
fn trace_format_examples_are_what_replay_writes() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/trace-format.md"))
            .expect("docs/trace-format.md");
    let blocks: Vec<&str> = doc
        .split("```json\n")
        .skip(1)
        .map(|b| &b[..b.find("```").expect("a closed code block")])
        .collect();
    let is_verdicts = |b: &str| b.contains("\"outcome\"");
    let mut pairs = 0;
    for w in blocks.windows(2) {
        if !is_verdicts(w[0]) && is_verdicts(w[1]) {
            let documented: Vec<serde_json::Value> = w[1]
                .lines()
                .map(|l| serde_json::from_str(l).expect("a documented verdict"))
                .collect();
            assert_eq!(replay_stdin(w[0]), documented, "for input:\n{}", w[0]);
            pairs += 1;
        }
    }
    assert_eq!(pairs, 2, "the documented input/verdict pairs");

    let worked = blocks
        .iter()
        .find(|b| b.contains("\"oslo-1\"") && b.lines().count() > 1)
        .expect("the worked example");
    let verdicts = replay_stdin(worked);
    let rows: Vec<Vec<String>> = doc
        .lines()
        .skip_while(|l| !l.starts_with("| line | session |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    assert_eq!(rows.len(), verdicts.len(), "one table row per verdict");
    for (row, v) in rows.iter().zip(&verdicts) {
        let text = |f: &str| match &v[f] {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|x| x.as_str().expect("a flag"))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        let fields = [
            "session",
            "index",
            "turn",
            "outcome",
            "reason",
            "consecutive_rollbacks",
            "flags",
        ];
        let ours: Vec<String> = fields.iter().map(|f| text(f)).collect();
        assert_eq!(row[2..9], ours[..], "table row {}", row[1]);
    }
}

/// A run whose tables are drawn as tables, however wide (at a narrow
/// width the render layer stacks rows instead; tests/suite/output/terminal.rs checks that).
fn run_wide(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env("COLUMNS", "1000")
        .output()
        .expect("run mirotrace")
}

#[test]
fn trace_timeline_names_the_file_when_several_hold_the_trace() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = run_wide(&["replay", a, b, "--trace", "task-001"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    let header = text.lines().next().expect("header row");
    assert!(header.contains("file"), "{header}");
    // Rows start under the header's rule; a row's first word is its file.
    let rows: Vec<&str> = text
        .lines()
        .skip(2)
        .filter(|l| l.starts_with("fixtures/") || l.contains("/fixtures/"))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    assert!(rows.iter().any(|r| r.contains("model-a.jsonl")));
    assert!(rows.iter().any(|r| r.contains("model-b.jsonl")));
    assert!(
        rows.iter()
            .all(|r| r.contains("model-a.jsonl") || r.contains("model-b.jsonl")),
        "every row says its file"
    );
    // One file: no file column.
    let o = run_wide(&["replay", a, "--trace", "task-001"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.lines().next().expect("header").contains("file"));
}

#[test]
fn trace_timeline_says_why_each_attempt_went_as_it_did() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = run_wide(&["replay", a, b, "--trace", "task-001"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let row = |reason: &str| -> String {
        text.lines()
            .find(|l| l.contains(&format!(" {reason} ")))
            .unwrap_or_else(|| panic!("no {reason} row in\n{text}"))
            .to_string()
    };
    assert!(text.lines().next().unwrap().contains("detail"));
    assert!(row("format_error").contains("leaked <use_mcp_tool> in:"));
    let dup = row("duplicate_query");
    assert!(dup.contains("repeats google_search query"), "{dup}");
    assert!(dup.contains("first woman Nobel Prize"), "{dup}");
    // Where it was first made: the line of the first row that ran it.
    let first = dup
        .split("first made at line ")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .expect("first made at line N");
    let made = text
        .lines()
        .find(|l| {
            let mut words = l.split_whitespace();
            words.next().is_some_and(|f| f.ends_with("model-b.jsonl"))
                && words.next() == Some(first)
        })
        .expect("the row of that line");
    assert!(
        made.contains("google_search") && made.contains(" ok "),
        "{made}"
    );
    assert!(row("tool_error").contains("returned: Error executing tool"));
    assert!(row("tool_error").contains("timeout after 60s"));
    // Repairs: before → after.
    assert!(
        text.contains("tool-google-search/google_search → search_and_scrape_webpage/google_search"),
        "{text}"
    );
    assert!(row("empty_search").contains("google_search returned"));
    assert!(row("llm_failed").contains("APIConnectionError"));
    let o = run_wide(&["replay", a, b, "--trace", "task-003"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let refusal = text
        .lines()
        .find(|l| l.contains(" refusal "))
        .expect("a refusal row");
    assert!(refusal.contains("keyword \""), "{refusal}");
}

#[test]
fn trace_honours_jsonl_and_json() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let all = stdout_lines(&run(&["replay", a, b]));
    let wanted: Vec<serde_json::Value> = all
        .into_iter()
        .filter(|v| v["trace_id"] == "task-001")
        .collect();
    assert!(wanted.len() > 8);
    let o = run(&["replay", a, b, "--trace", "task-001", "--format", "jsonl"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout_lines(&o), wanted);
    let o = run(&["replay", a, b, "--trace", "task-001", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(doc, serde_json::Value::Array(wanted));

    // json and table need --trace; the columnar formats do not take it.
    let o = run(&["replay", a, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--trace"));
    let o = run(&["replay", a, "--trace", "task-001", "--format", "parquet"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn an_unknown_trace_id_suggests_the_closest() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = run_wide(&["replay", a, b, "--trace", "task-03"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(r#"did you mean "task-003"?"#), "{err}");
    assert!(!err.contains("task-000"), "only the closest: {err}");
    // Nothing near: no suggestion.
    let o = run_wide(&["replay", a, "--trace", "completely-else"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("did you mean"));
}
