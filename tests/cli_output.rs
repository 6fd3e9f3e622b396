//! The output side through the real binary (issue 14): stderr that cannot
//! be written, signals during `-o`, names longer than a file system takes,
//! output errors outranking input problems, and `--strict` never
//! committing anything.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mirotrace");

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .display()
        .to_string()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mirotrace-output-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn dev_full() -> Stdio {
    Stdio::from(
        File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full"),
    )
}

fn first_line() -> String {
    let good = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    good.lines().next().expect("a line").to_string()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_full_stderr_keeps_the_exit_code() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let cases: [(Vec<&str>, i32); 3] = [
        (vec!["analyze", "--no-such-option"], 2),
        (
            vec!["analyze", &a, "--policy", "/nonexistent/policy.toml"],
            2,
        ),
        (
            vec![
                "diff",
                "--base",
                &a,
                "--new",
                &b,
                "-q",
                "--fail-on",
                "rollback_rate>+0pp",
            ],
            1,
        ),
    ];
    for (args, code) in cases {
        let o = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(dev_full())
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(code), "{args:?}");
    }
}

#[test]
fn a_failed_write_outranks_a_strict_stop() {
    let dir = temp_dir("strict-full");
    let line = first_line();
    let input = dir.join("broken.jsonl");
    // Enough verdicts before the bad line to fill the output buffer.
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&line.replace("task-000", &format!("t{i}")));
        text.push('\n');
    }
    text.push_str("not json\n");
    std::fs::write(&input, text).expect("write");
    let o = Command::new(BIN)
        .args(["replay", "--strict", "-q", "-j", "1"])
        .arg(&input)
        .stdout(dev_full())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("writing output failed"), "{err}");
    // The same without the stop: still the write error's code.
    let o = Command::new(BIN)
        .args(["analyze", "-q"])
        .arg(&input)
        .stdout(dev_full())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn export_into_a_directory_commits_nothing_under_a_strict_stop() {
    let dir = temp_dir("export-strict");
    let line = first_line();
    let input = dir.join("broken.jsonl");
    let second = line.replace("task-000", "task-late");
    std::fs::write(&input, format!("{line}\nnot json\n{second}\n")).expect("write");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out");
    let o = Command::new(BIN)
        .args(["export", "--strict", "-q", "-j", "1", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        entries(&out),
        Vec::<String>::new(),
        "files left in the directory"
    );
}

#[test]
fn long_trace_ids_and_long_output_names_are_written() {
    let dir = temp_dir("long");
    let line = first_line();
    let ids = ["x".repeat(240) + "1", "x".repeat(240) + "2", "a/b".into()];
    let text: String = ids
        .iter()
        .map(|id| line.replace("task-000", id) + "\n")
        .collect();
    let input = dir.join("long.jsonl");
    std::fs::write(&input, text).expect("write");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out");
    let o = Command::new(BIN)
        .args(["export", "-q", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let names = entries(&out);
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| n.len() <= 255 && n.ends_with(".json")));
    // Each file holds its own trace.
    for name in &names {
        let doc = std::fs::read_to_string(out.join(name)).expect("read");
        assert!(ids.iter().filter(|id| doc.contains(id.as_str())).count() >= 1);
    }

    let long = dir.join("r".repeat(245));
    let o = Command::new(BIN)
        .args(["analyze", "-q", "-o"])
        .arg(&long)
        .arg(&input)
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(long.exists());
}

/// Starts `args` reading from a FIFO that gets one line and then stays
/// open; returns the child and the writer (dropping it ends the input).
fn reading_forever(
    dir: &Path,
    args: &[&str],
) -> (std::process::Child, std::thread::JoinHandle<()>) {
    let fifo = dir.join("slow.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let child = Command::new(BIN)
        .args(args)
        .arg(&fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let line = first_line();
    let writer = std::thread::spawn(move || {
        if let Ok(mut f) = File::options().write(true).open(&fifo) {
            let _ = writeln!(f, "{line}");
            std::thread::sleep(Duration::from_secs(20));
        }
    });
    (child, writer)
}

#[test]
fn a_signal_during_o_removes_the_temporary_file_and_exits_128_plus_n() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let dir = temp_dir(&format!("signal-{signal}"));
        let out = dir.join("report.txt").display().to_string();
        let (mut child, _writer) = reading_forever(&dir, &["analyze", "-q", "-o", &out]);
        let started = Instant::now();
        while !entries(&dir).iter().any(|n| n.ends_with(".tmp")) {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no temporary file"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let killed = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert_eq!(entries(&dir), vec!["slow.jsonl".to_string()], "SIG{signal}");
    }
}
