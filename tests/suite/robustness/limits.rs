//! Limits on hostile input (issue 14, "Memory and hangs" and "Time that
//! grows faster than the input"): memory that does not grow with the count
//! of bad lines, binary and special files, caps on attempts, side files,
//! `-j` and `--iterations`. Memory is measured as the child's peak resident
//! set (`VmHWM`) while it waits for more input; nothing here times anything.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

fn bin() -> Command {
    crate::common::mirotrace()
}

fn dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("limits-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The child's peak resident set, in KiB.
fn peak_kib(child: &Child) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// Runs `args` reading stdin, with output thrown away.
fn spawn_on_stdin(args: &[&str]) -> Child {
    bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run")
}

fn bad_lines(n: usize) -> Vec<u8> {
    b"not json\n".repeat(n)
}

const GOOD: &[u8] = b"{\"trace_id\": \"a\", \"content\": \"\\\\boxed{1}\"}\n";

/// Peak memory after 200k bad lines and after 1.6 M: the same, give or take
/// a few megabytes (it grew by ~150 bytes a line when bad lines piled up).
#[test]
fn memory_does_not_grow_with_bad_lines() {
    for threads in ["1", "2"] {
        let mut child = spawn_on_stdin(&["analyze", "-j", threads, "-"]);
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(GOOD).expect("write");
        // The pipe holds 64 KiB at most: once a write returns, all but that
        // much has been read by the child.
        stdin.write_all(&bad_lines(200_000)).expect("write");
        let early = peak_kib(&child);
        for _ in 0..7 {
            stdin.write_all(&bad_lines(200_000)).expect("write");
        }
        let late = peak_kib(&child);
        drop(stdin);
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(3), "-j {threads}");
        assert!(
            late < early + 16 * 1024,
            "-j {threads}: peak grew from {early} KiB to {late} KiB over 1.4 M more bad lines"
        );
    }
}

/// `--strict` stops at the first bad line: the child stops reading, so a
/// writer offering 1 GiB of bad lines is cut off after a few megabytes.
#[test]
fn strict_stops_at_the_first_bad_line_of_an_endless_run() {
    for threads in ["1", "2"] {
        let mut child = spawn_on_stdin(&["analyze", "--strict", "-j", threads, "-"]);
        let mut stdin = child.stdin.take().expect("stdin");
        let chunk = bad_lines(1 << 16);
        let mut written = 0usize;
        let mut first = GOOD.to_vec();
        first.extend_from_slice(&chunk);
        let mut next: &[u8] = &first;
        while written < 1 << 30 {
            if stdin.write_all(next).is_err() {
                break;
            }
            written += next.len();
            next = &chunk;
        }
        drop(stdin);
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(3), "-j {threads}");
        assert!(
            written < 64 << 20,
            "-j {threads}: read {written} bytes before stopping"
        );
    }
}

/// `-j` and `--iterations` past their documented maximum are usage errors
/// (exit 2) that name the range, before any input is read.
#[test]
fn threads_and_iterations_are_capped() {
    let cases: [&[&str]; 6] = [
        &["analyze", "-j", "100000", "-"],
        &["analyze", "-j", "0", "-"],
        &["analyze", "--iterations", "18446744073709551615", "-"],
        &["analyze", "--iterations", "1000000000000", "-"],
        &[
            "diff",
            "--iterations",
            "100000000",
            "--base",
            "-",
            "--new",
            "-",
        ],
        &["merge", "-j", "257", "x.json"],
    ];
    for args in cases {
        let o = bin().args(args).stdin(Stdio::null()).output().expect("run");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("in 1..=256") || err.contains("in 0..=100000"),
            "{args:?}: {err}"
        );
    }
    let o = bin()
        .args([
            "analyze",
            "-j",
            "256",
            "--iterations",
            "100000",
            "--format",
            "json",
            "-",
        ])
        .stdin(Stdio::from(
            std::fs::File::open(write_good("maxed")).expect("open"),
        ))
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn write_good(tag: &str) -> PathBuf {
    let p = dir(tag).join("good.jsonl");
    std::fs::write(&p, GOOD).expect("write");
    p
}

fn run(args: &[&str]) -> std::process::Output {
    bin().args(args).stdin(Stdio::null()).output().expect("run")
}

/// `/dev/urandom` and `/dev/zero` are binary: skipped at once with a
/// message, counted as a skipped input (exit 4: nothing was readable).
#[test]
fn binary_inputs_are_skipped_not_read_forever() {
    for device in ["/dev/urandom", "/dev/zero"] {
        let o = run(&["analyze", "--format", "json", device]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "{device}: {err}");
        assert!(
            err.contains(&format!("{device}: binary file (NUL byte at offset")),
            "{err}"
        );
    }
    // A binary file among good ones costs only itself.
    let d = dir("binary");
    let png = d.join("image.jsonl");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR").expect("write");
    let o = run(&[
        "replay",
        png.to_str().expect("utf-8"),
        write_good("binary2").to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}

/// A good line, then NUL bytes that never end: the good line is kept and
/// the input ends with an error, not a hang.
#[test]
fn an_endless_binary_line_after_good_ones_ends_the_input() {
    let mut child = bin()
        .args(["replay", "--max-line-bytes", "1000000", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(GOOD);
        let zeros = vec![0u8; 1 << 16];
        // Stops when the child closes the pipe; 1 GiB at most.
        for _ in 0..(1 << 14) {
            if stdin.write_all(&zeros).is_err() {
                return false;
            }
        }
        true
    });
    let o = child.wait_with_output().expect("wait");
    let wrote_everything = writer.join().expect("writer");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!wrote_everything, "the child read all the zeros: {err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("binary data"), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}

/// In a folder scan, FIFOs and links to devices are reported and skipped
/// (reading them could block or never end); named on the command line, a
/// FIFO is read (process substitution).
#[test]
fn special_files_are_skipped_in_folder_scans_but_read_when_named() {
    let d = dir("special");
    std::fs::write(d.join("good.jsonl"), GOOD).expect("write");
    let fifo = d.join("pipe.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.jsonl")).expect("symlink");
    let o = run(&["replay", d.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("pipe.jsonl: a FIFO, not a regular file"),
        "{err}"
    );
    assert!(
        err.contains("zero.jsonl: a device, not a regular file"),
        "{err}"
    );

    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, GOOD).expect("write to the FIFO"))
    };
    let o = run(&["replay", fifo.to_str().expect("utf-8")]);
    writer.join().expect("writer");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}

/// Side files are read up to a documented size: a wrong file given as a
/// policy, keyword list or labels is a usage error that names the limit,
/// not gigabytes of memory; `/dev/zero` is refused at its first block, a
/// NUL byte no text file holds (issue 40).
#[test]
fn side_files_are_capped() {
    let good = write_good("side");
    let good = good.to_str().expect("utf-8");
    let big = dir("side").join("big.txt");
    std::fs::write(&big, "a phrase\n".repeat(600_000)).expect("write");
    let big = big.to_str().expect("utf-8");
    let cases: [(&[&str], &str); 5] = [
        (
            &["analyze", "--policy", "/dev/zero", good],
            "binary data (a NUL byte at offset 0)",
        ),
        (
            &["keywords", "--list", "/dev/zero", good],
            "binary data (a NUL byte at offset 0)",
        ),
        (&["keywords", "--list", big, good], "larger than 4 MiB"),
        (
            &["keywords", "--labels", "/dev/zero", good],
            "binary data (a NUL byte at offset 0)",
        ),
        (
            &[
                "diff",
                "--policy",
                "/dev/zero",
                "--base",
                good,
                "--new",
                good,
            ],
            "binary data (a NUL byte at offset 0)",
        ),
    ];
    for (args, want) in cases {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

fn lines_of(trace: &str, session: &str, n: usize) -> Vec<u8> {
    format!("{{\"trace_id\": \"{trace}\", \"session\": \"{session}\", \"content\": \"x\"}}\n")
        .repeat(n)
        .into_bytes()
}

/// A trace past 200 000 attempts is reported once and skipped; its
/// further lines are dropped as they come, so memory stops growing; the
/// next trace is read. A session past 100 000 attempts skips its trace.
#[test]
fn oversized_traces_and_sessions_are_skipped() {
    let mut child = bin()
        .args(["analyze", "-j", "1", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(&lines_of("big", "main", 210_000))
        .expect("write");
    let early = peak_kib(&child);
    for _ in 0..3 {
        stdin
            .write_all(&lines_of("big", "main", 200_000))
            .expect("write");
    }
    let late = peak_kib(&child);
    stdin
        .write_all(&lines_of("sub", "agent-browsing_1", 100_001))
        .expect("write");
    stdin.write_all(GOOD).expect("write");
    drop(stdin);
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        late < early + 16 * 1024,
        "peak grew from {early} KiB to {late} KiB"
    );
    let big = "trace \"big\" skipped: the trace has more than 200000 attempts";
    assert_eq!(err.matches(big).count(), 1, "{err}");
    assert!(err.contains("<stdin>:200001:"), "{err}");
    let sub = "trace \"sub\" skipped: the session \"agent-browsing_1\" of the trace has more than 100000 attempts";
    assert_eq!(err.matches(sub).count(), 1, "{err}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["traces"], 1, "{report}");
}

/// `n` one-attempt traces with ids `t{from}`… (as bench/limits.sh builds them).
fn tiny_traces(from: usize, n: usize) -> Vec<u8> {
    (from..from + n)
        .map(|i| format!("{{\"trace_id\": \"t{i}\", \"content\": \"x\"}}\n"))
        .collect::<String>()
        .into_bytes()
}

/// `diff` keeps one row per trace of a side: 300k more tiny traces may add
/// ~15 MB (50 bytes a trace, so 4 M traces stay well under 300 MB); rows of
/// ~310 bytes added ~90 MB, and ~0.9 KB before that.
#[test]
fn diff_memory_per_trace_is_small() {
    let base = write_good("diff-rows");
    let base = base.to_str().expect("utf-8 temp path");
    for threads in ["1", "2"] {
        let mut child = bin()
            .args(["diff", "-q", "-j", threads, "--iterations", "1"])
            .args(["--format", "json", "--base", base, "--new", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&tiny_traces(0, 300_000)).expect("write");
        let early = peak_kib(&child);
        stdin
            .write_all(&tiny_traces(300_000, 300_000))
            .expect("write");
        let late = peak_kib(&child);
        drop(stdin);
        let o = child.wait_with_output().expect("wait");
        assert_eq!(o.status.code(), Some(0), "-j {threads}");
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(report["comparisons"][0]["new"]["traces"], 600_000);
        assert!(
            late < early + 300_000 * 50 / 1024,
            "-j {threads}: peak grew from {early} KiB to {late} KiB over 300k more traces"
        );
    }
}

/// A trace of `n` attempts that each leak an MCP tag: one streak of `n`
/// rollbacks under a large enough limit.
fn leaking_trace(n: usize) -> Vec<u8> {
    b"{\"trace_id\": \"t\", \"content\": \"<use_mcp_tool>\"}\n".repeat(n)
}

/// Issue 23: a report's size follows the streak lengths that occur, not
/// the policy's `rollback_limit`: with a limit of 10^9 (it used to abort;
/// 10^6 made an 87 MB table and a 366 MB page) every format, and a merge
/// of partials, stays small, and the table still names the most allowed.
#[test]
fn report_size_follows_the_streaks_not_the_rollback_limit() {
    let d = dir("streak-axis");
    let input = d.join("t.jsonl");
    // 40 rollbacks in a row: past the dense axis, so lengths are sparse.
    std::fs::write(&input, leaking_trace(40)).expect("write");
    let policy = d.join("policy.toml");
    std::fs::write(&policy, "rollback_limit = 1000000000\n").expect("write");
    let (input, policy) = (input.to_str().unwrap(), policy.to_str().unwrap());
    for format in ["table", "markdown", "json", "html", "partial"] {
        let o = run(&[
            "analyze", "-q", "--policy", policy, "--format", format, input,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stdout.len() < 400_000,
            "{format}: {} bytes",
            o.stdout.len()
        );
        if format == "table" {
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(text.contains("999999999 (most allowed)"), "{text}");
            assert!(
                text.contains("lengths no streak has are left out"),
                "{text}"
            );
        }
        if format == "partial" {
            let part = d.join("p.json");
            std::fs::write(&part, &o.stdout).expect("write");
            for merged in ["table", "html"] {
                let m = run(&["merge", "--format", merged, part.to_str().unwrap()]);
                assert_eq!(m.status.code(), Some(0), "merge {merged}");
                assert!(
                    m.stdout.len() < 400_000,
                    "merge {merged}: {} bytes",
                    m.stdout.len()
                );
            }
        }
    }
}

/// Issue 23: `meta.max_turns` of Python's `sys.maxsize` used to overflow
/// `max_turns + 200` (a panic under overflow checks, as these tests are
/// built; every attempt `unreachable` without): every attempt is run.
#[test]
fn max_turns_of_sys_maxsize_runs_every_attempt() {
    let d = dir("max-turns");
    let input = d.join("t.jsonl");
    let line = "{\"trace_id\": \"t\", \"meta\": {\"max_turns\": 9223372036854775807}, \"content\": \"<use_mcp_tool>\"}\n";
    std::fs::write(&input, line.repeat(3)).expect("write");
    let o = run(&["replay", "-q", "--format", "jsonl", input.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(!out.contains("unreachable"), "{out}");
    assert_eq!(out.matches("\"rollback\"").count(), 3, "{out}");
}

/// Issue 23: one regex per `server_fix_tools` entry made 200 000 tools
/// (3.9 MB, under the side-file cap) take 22.5 GB; the tools are a set
/// and one matcher serves them all.
#[test]
fn many_server_fix_tools_take_little_memory() {
    let d = dir("server-fix");
    let policy = d.join("policy.toml");
    let tools: Vec<String> = (0..200_000).map(|i| format!("\"tool_{i}\"")).collect();
    std::fs::write(
        &policy,
        format!("server_fix_tools = [{}]\n", tools.join(", ")),
    )
    .expect("write");
    let mut child = spawn_on_stdin(&[
        "analyze",
        "-j",
        "1",
        "--policy",
        policy.to_str().unwrap(),
        "-",
    ]);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(GOOD).expect("write");
    stdin.write_all(&bad_lines(100_000)).expect("write");
    let peak = peak_kib(&child);
    drop(stdin);
    assert_eq!(child.wait().expect("wait").code(), Some(3));
    assert!(
        peak < 300 * 1024,
        "peak {peak} KiB with 200 000 server_fix_tools"
    );
}

/// Issue 23: `merge` reads a part within a cap, as `--policy` is read:
/// `/dev/zero` is refused at once (issue 40: its first block holds a NUL
/// byte), not read until memory runs out; a stream of text is refused at
/// the limit.
#[test]
fn merge_parts_are_capped() {
    let o = run(&["merge", "/dev/zero"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/zero: binary data (a NUL byte at offset 0)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Polls a running child's peak resident set until it exits; returns the
/// last peak read (KiB) and its output.
fn peak_until_exit(mut child: Child) -> (u64, std::process::Output) {
    let mut peak = 0;
    loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", child.id())) {
            if let Some(kib) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    (peak, child.wait_with_output().expect("output"))
}

/// An `.eval` archive of these `(entry, text)` members, zstd-compressed as
/// current Inspect releases write them.
fn eval_archive(path: &std::path::Path, members: &[(String, String)]) {
    let file = std::fs::File::create(path).expect("archive");
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Zstd)
        .large_file(true);
    for (name, text) in members {
        zip.start_file(name.as_str(), options).expect("member");
        zip.write_all(text.as_bytes()).expect("write");
    }
    zip.finish().expect("finish");
}

/// Issue 23: 1000 `attachment://` references to one 1 MB attachment would
/// be 1 GB of copies; past the documented bound the sample is reported and
/// skipped, the other samples read, and memory stays tens of megabytes.
#[test]
fn attachment_references_are_bounded() {
    let d = dir("attachments");
    let page = "x".repeat(1 << 20);
    let mut messages = vec![serde_json::json!({"role": "user", "content": "read"})];
    for n in 0..1000 {
        messages.push(
            serde_json::json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": format!("c{n}"), "function": "read", "arguments": {"n": n}}]}),
        );
        messages.push(
            serde_json::json!({"role": "tool", "tool_call_id": format!("c{n}"),
                                         "content": "attachment://h1"}),
        );
    }
    let hostile = serde_json::json!({"id": 1, "epoch": 1, "messages": messages,
                                     "attachments": {"h1": page}});
    let plain = serde_json::json!({"id": 2, "epoch": 1, "messages": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]});
    let path = d.join("refs.eval");
    eval_archive(
        &path,
        &[
            ("header.json".into(), r#"{"eval": {"model": "m"}}"#.into()),
            ("samples/1_epoch_1.json".into(), hostile.to_string()),
            ("samples/2_epoch_1.json".into(), plain.to_string()),
        ],
    );
    let child = bin()
        .args(["analyze", "-j", "1", "--format", "json", "-q"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let (peak, out) = peak_until_exit(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("samples/1_epoch_1.json")
            && stderr.contains("attachment:// references expand to more than"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["traces"], 1);
    assert!(peak < 150 * 1024, "peak {peak} KiB");
}

/// Issue 23: an archive's samples are unpacked one at a time (per thread),
/// not the whole archive first: 40 samples of 8 MB (320 MB unpacked).
#[test]
fn eval_samples_are_unpacked_one_at_a_time() {
    let d = dir("eval-samples");
    let big = "y".repeat(8 << 20);
    let sample = |id: usize| {
        serde_json::json!({"id": id, "epoch": 1, "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "function": "cat", "arguments": {"f": "x"}}]},
            {"role": "tool", "tool_call_id": "c", "content": big},
            {"role": "assistant", "content": "done"}]})
        .to_string()
    };
    let mut members = vec![(
        "header.json".to_string(),
        r#"{"eval": {"model": "m"}}"#.to_string(),
    )];
    members.extend((1..=40).map(|i| (format!("samples/{i}_epoch_1.json"), sample(i))));
    let path = d.join("big.eval");
    eval_archive(&path, &members);
    drop(members);
    for threads in ["1", "2"] {
        let child = bin()
            .args(["analyze", "-j", threads, "--format", "json", "-q"])
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run");
        let (peak, out) = peak_until_exit(child);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
        assert_eq!(report["traces"], 40);
        // The unpacked archive is 320 MB; a few samples' worth is fine.
        assert!(peak < 160 * 1024, "-j {threads}: peak {peak} KiB");
    }
}
