//! Hostile input: every case gives a documented exit code, a message naming
//! the file, no panic, no hang, and every good line in the same file kept.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const GOOD: &str = r#"{"trace_id": "good", "content": "\\boxed{1}"}"#;

fn bin() -> Command {
    crate::common::mirotrace()
}

fn dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write(tag: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir(tag).join(name);
    std::fs::write(&p, bytes).expect("write input");
    p
}

fn replay(path: &Path) -> Output {
    bin().args(["replay"]).arg(path).output().expect("run")
}

fn trace_ids(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("verdict is JSON");
            v["trace_id"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

fn assert_clean(o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(!err.contains("RUST_BACKTRACE"), "panic: {err}");
    assert!(o.status.code().is_some(), "killed by a signal: {err}");
}

/// The good line survives, the bad one is reported with file and line, exit 3.
fn assert_skips_one(o: &Output, path: &Path, line: u64) {
    assert_clean(o);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(trace_ids(o).contains(&"good".to_string()));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}:{line}:", path.display())),
        "{err}"
    );
}

/// An input without a single trace is never a silent success (issue 15):
/// one line says so, nothing is written, exit 4.
#[test]
fn empty_and_blank_files_are_refused_in_one_line() {
    for (name, bytes) in [("empty.jsonl", &b""[..]), ("blank.jsonl", b"  \n\t\n\r\n")] {
        let p = write("empty", name, bytes);
        let o = replay(&p);
        assert_clean(&o);
        assert_eq!(o.status.code(), Some(4));
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("holds no trace"), "{err}");
    }
}

#[test]
fn crlf_and_bom_are_accepted() {
    let text = format!("\u{feff}{GOOD}\r\n{}\r\n", GOOD.replace("good", "good2"));
    let p = write("crlf", "crlf.jsonl", text.as_bytes());
    let o = replay(&p);
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(trace_ids(&o), vec!["good", "good2"]);
}

#[test]
fn invalid_utf8_nul_and_garbage_lines_are_skipped() {
    let cases: [(&str, &[u8]); 4] = [
        (
            "utf8.jsonl",
            b"{\"trace_id\": \"x\", \"content\": \"\xc3\x28\"}",
        ),
        ("nul.jsonl", b"{\"trace_id\": \"x\",\0 \"content\": \"a\"}"),
        (
            "nulstr.jsonl",
            b"{\"trace_id\": \"x\", \"content\": \"a\0b\"}",
        ),
        (
            "garbage.jsonl",
            b"\x89PNG\r\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
        ),
    ];
    for (name, bad) in cases {
        let mut bytes = GOOD.as_bytes().to_vec();
        bytes.push(b'\n');
        bytes.extend_from_slice(bad);
        bytes.push(b'\n');
        let p = write("bytes", name, &bytes);
        assert_skips_one(&replay(&p), &p, 2);
    }
}

#[test]
fn truncated_last_line_is_reported() {
    let text = format!("{GOOD}\n{{\"trace_id\": \"cut\", \"content\": \"<use_mcp");
    let p = write("trunc", "trunc.jsonl", text.as_bytes());
    assert_skips_one(&replay(&p), &p, 2);
}

#[test]
fn deep_nesting_neither_overflows_nor_hangs() {
    let deep_line = format!(
        "{{\"trace_id\": \"deep\", \"meta\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let args_deep = "[".repeat(100_000);
    let args_obj = "{\"a\":".repeat(100_000);
    let call = |args: &str| {
        serde_json::json!({"trace_id": "deepargs", "content": format!("<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{args}</arguments></use_mcp_tool>")})
            .to_string()
    };
    let text = format!(
        "{GOOD}\n{deep_line}\n{}\n{}\n",
        call(&args_deep),
        call(&args_obj)
    );
    let p = write("deep", "deep.jsonl", text.as_bytes());
    let o = replay(&p);
    assert_clean(&o);
    // The over-deep line is skipped (Python could not read it either); the
    // deep arguments are a parse failure of that attempt, not of the run.
    let ids = trace_ids(&o);
    assert!(ids.contains(&"good".to_string()));
    assert_eq!(ids.iter().filter(|i| *i == "deepargs").count(), 2);
}

#[test]
fn a_100_mb_line_is_read() {
    let content = "x".repeat(100 * 1024 * 1024);
    let line = format!("{{\"trace_id\": \"huge\", \"content\": \"{content}\"}}\n{GOOD}\n");
    let p = write("huge", "huge.jsonl", line.as_bytes());
    let o = replay(&p);
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(trace_ids(&o), vec!["huge", "good"]);
    std::fs::remove_file(&p).ok();
}

#[test]
fn line_size_cap_is_enforced_with_a_clear_message() {
    let text = format!(
        "{{\"trace_id\": \"big\", \"content\": \"{}\"}}\n{GOOD}\n",
        "y".repeat(5000)
    );
    let p = write("cap", "cap.jsonl", text.as_bytes());
    let o = bin()
        .args(["replay", "--max-line-bytes", "1000"])
        .arg(&p)
        .output()
        .unwrap();
    assert_skips_one(&o, &p, 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--max-line-bytes"));
}

#[test]
fn adversarial_runs_finish() {
    for (tag, unit) in [("quotes", "\""), ("backslashes", "\\\\"), ("braces", "{")] {
        let args = unit.repeat(200_000);
        let line = serde_json::json!({"trace_id": tag, "content": format!("<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{args}</arguments></use_mcp_tool>")});
        let p = write(
            "adv",
            &format!("{tag}.jsonl"),
            format!("{line}\n").as_bytes(),
        );
        let o = replay(&p);
        assert_clean(&o);
        assert_eq!(trace_ids(&o), vec![tag.to_string()]);
    }
}

/// A missing input is an error before anything is read or written
/// (issue 15), even beside a good one.
#[test]
fn a_directory_given_as_a_file_is_reported() {
    let d = dir("isdir");
    let good = write("isdir", "ok.jsonl", format!("{GOOD}\n").as_bytes());
    let o = bin()
        .args(["replay"])
        .arg(&good)
        .arg(d.join("nope.jsonl"))
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nope.jsonl: no such file"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn an_unreadable_file_is_reported() {
    // /proc/self/mem fails to read at offset 0 even for root.
    let good = write("unreadable", "ok.jsonl", format!("{GOOD}\n").as_bytes());
    let o = bin()
        .args(["replay"])
        .arg(&good)
        .arg("/proc/self/mem")
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/proc/self/mem"));
    assert_eq!(trace_ids(&o), vec!["good"]);
}

/// Runs `mirotrace ARGS FILE` on `lines` good traces, reading `read_first`
/// bytes of its output before closing the pipe (as `| head` does), and checks
/// that it exits 0 without a word on stderr.
fn assert_quiet_when_pipe_closes(tag: &str, args: &[&str], lines: usize, read_first: usize) {
    let mut text = String::new();
    for i in 0..lines {
        text.push_str(&GOOD.replace("good", &format!("t{i}")));
        text.push('\n');
    }
    let p = write(tag, "many.jsonl", text.as_bytes());
    let mut child = bin()
        .args(args)
        .arg(&p)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = vec![0u8; read_first];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn closed_stdout_exits_quietly() {
    assert_quiet_when_pipe_closes("pipe", &["replay"], 20_000, 64);
}

#[test]
fn stdin_garbage_is_contained() {
    let input = [&b"\xff\xfe\x00garbage\n"[..], GOOD.as_bytes(), b"\n"].concat();
    let o = crate::common::run_with_stdin(bin().args(["replay", "-"]), &input);
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("<stdin>:1:"));
    assert_eq!(trace_ids(&o), vec!["good"]);
}

/// Found by fuzzing: json_repair 0.50.0 loops for ever on these arguments
/// (in Python too). The replay must finish and call it a failed parse.
#[test]
fn json_repair_non_termination_is_contained() {
    let args = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuzz/json_repair-no-termination.txt"),
    )
    .expect("fuzz fixture");
    let line = serde_json::json!({"trace_id": "loop", "content": format!("<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{args}</arguments></use_mcp_tool>")});
    let p = write("loop", "loop.jsonl", format!("{line}\n{GOOD}\n").as_bytes());
    let o = replay(&p);
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(0));
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["calls"][0]["json"], "failed");
}

/// `mirotrace analyze big.jsonl | head -1` exits quietly.
#[test]
fn analyze_into_a_closed_pipe_exits_quietly() {
    assert_quiet_when_pipe_closes("apipe", &["analyze", "--no-color"], 5_000, 0);
}

/// A file named as a folder (`x.jsonl/`) is reported, not a panic.
#[test]
fn a_file_given_as_a_directory_is_reported() {
    let good = write("asdir", "ok.jsonl", format!("{GOOD}\n").as_bytes());
    let o = bin()
        .args(["replay"])
        .arg(format!("{}/", good.display()))
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ok.jsonl/"));
}
