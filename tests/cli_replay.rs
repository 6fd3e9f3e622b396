//! `mirotrace replay` through the real binary: fixtures, broken input, exit codes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mirotrace"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mirotrace-test-{tag}-{}", std::process::id()));
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
    let mut child = bin()
        .args(["replay", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"trace_id\": \"s\", \"content\": \"I\xe2\x80\x99m sorry, but I can\xe2\x80\x99t\"}\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let v = stdout_lines(&o);
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
