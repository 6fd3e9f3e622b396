//! The output side through the real binary (issue 14): stderr that cannot
//! be written, signals during `-o`, names longer than a file system takes,
//! output errors outranking input problems, and `--strict` never
//! committing anything.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{fixture, scratch};

use crate::common::BIN;

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
    let dir = scratch("strict-full");
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
    let dir = scratch("export-strict");
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
    let dir = scratch("long");
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
    // SIGHUP: a closed terminal or SSH session.
    for (signal, code, command) in [
        ("TERM", 143, "analyze"),
        ("INT", 130, "analyze"),
        ("HUP", 129, "analyze"),
        ("HUP", 129, "replay"),
    ] {
        let dir = scratch(&format!("signal-{signal}"));
        let out = dir.join("report.txt").display().to_string();
        let (mut child, _writer) = reading_forever(&dir, &[command, "-q", "-o", &out]);
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

fn run_in(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().expect("run")
}

#[test]
fn missing_empty_or_traceless_input_is_one_line_and_no_report() {
    let dir = scratch("missing");
    let empty_dir = dir.join("nothing-here");
    std::fs::create_dir_all(&empty_dir).expect("dir");
    let empty_file = dir.join("empty.jsonl");
    std::fs::write(&empty_file, "").expect("write");
    let good = fixture("model-a.jsonl");
    let missing = dir.join("nope.jsonl").display().to_string();
    let (empty_dir, empty_file) = (
        empty_dir.display().to_string(),
        empty_file.display().to_string(),
    );
    for (input, says) in [
        (missing.as_str(), "no such file"),
        (empty_dir.as_str(), "no trace files"),
        (empty_file.as_str(), "holds no trace"),
    ] {
        let commands: [Vec<&str>; 6] = [
            vec!["analyze", input],
            vec!["replay", input],
            vec!["keywords", input],
            vec!["export", input],
            vec!["diff", "--base", input, "--new", &good],
            vec!["diff", "--base", &good, "--new", input],
        ];
        for args in commands {
            let o = run_in(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(4), "{args:?}: {err}");
            assert!(o.stdout.is_empty(), "{args:?}: a report");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            let side_says = if input == empty_file && args[0] == "diff" {
                "nothing to compare"
            } else {
                says
            };
            assert!(err.contains(side_says), "{args:?}: {err}");
        }
    }
}

#[test]
fn many_problems_print_a_few_and_a_summary() {
    let dir = scratch("problems");
    let input = dir.join("many.jsonl");
    let mut text = first_line() + "\n";
    for i in 0..40 {
        text.push_str(if i % 4 == 0 { "[1,\n" } else { "not json\n" });
    }
    std::fs::write(&input, text).expect("write");
    let input = input.display().to_string();
    for quiet in [&["-q"][..], &[][..]] {
        let o = run_in(&[&["analyze", &input, "--format", "json"][..], quiet].concat());
        assert_eq!(o.status.code(), Some(3));
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 6, "{err}");
        assert!(
            lines[..5].iter().all(|l| l.contains("(line skipped)")),
            "{err}"
        );
        let summary = lines[5];
        assert!(summary.contains("… and 35 more problems: "), "{summary}");
        let counted: u64 = summary
            .split(": ")
            .nth(2)
            .expect("kinds")
            .split(", ")
            .map(|k| {
                k.split(" × ")
                    .next()
                    .expect("n")
                    .parse::<u64>()
                    .expect("count")
            })
            .sum();
        assert_eq!(counted, 35, "{summary}");
    }
    let out = dir.join("report.json");
    let o = Command::new(BIN)
        .args(["analyze", &input, "--max-errors", "3", "-o"])
        .arg(&out)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 4, "{err}");
    assert!(
        err.contains("stopping here: 3 problems (--max-errors)"),
        "{err}"
    );
    assert!(!out.exists(), "a stopped run commits no file");
}

/// The fixture with every trace id rewritten by `id(n)`, in a folder whose
/// name holds a space.
fn renamed_ids(tag: &str, id: impl Fn(&str) -> String) -> PathBuf {
    let dir = scratch(tag).join("a dir");
    std::fs::create_dir_all(&dir).expect("dir");
    let text = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let mut out = String::new();
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).expect("json");
        let old = v["trace_id"].as_str().expect("id").to_string();
        v["trace_id"] = id(&old).into();
        out.push_str(&v.to_string());
        out.push('\n');
    }
    let path = dir.join("runs x.jsonl");
    std::fs::write(&path, out).expect("write");
    path
}

/// Runs the report's `see it with:` command (the line after it, and its
/// ` \` continuation lines) in `sh -c`, with `mirotrace` standing for this
/// build.
fn paste_suggestion(report: &str) -> std::process::Output {
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.ends_with("see it with:"))
        .unwrap_or_else(|| panic!("no suggestion in {report}"));
    let mut command = Vec::new();
    for line in &lines[at + 1..] {
        command.push(*line);
        if !line.ends_with(" \\") {
            break;
        }
    }
    let command = command
        .join("\n")
        .replacen("mirotrace", &format!("'{BIN}'"), 1);
    Command::new("sh")
        .args(["-c", &format!("{command} --color never -q")])
        .output()
        .expect("sh")
}

#[test]
fn suggested_commands_paste_and_run_and_controls_are_escaped() {
    // Run as found on PATH, so the suggestion starts `mirotrace`.
    use std::os::unix::process::CommandExt;
    for (tag, id) in [
        ("pipe", (|n: &str| format!("t|{n}")) as fn(&str) -> String),
        ("controls", |n: &str| format!("{n}\u{1b}[31m\r\u{202e}'$x")),
    ] {
        let path = renamed_ids(tag, id);
        for columns in ["40", "300"] {
            // Fitted to a narrow width, the command is broken with ` \`.
            let o = Command::new(BIN)
                .arg0("mirotrace")
                .args(["analyze", "-q", "--color", "never"])
                .arg(&path)
                .env("COLUMNS", columns)
                .output()
                .expect("run");
            let report = String::from_utf8_lossy(&o.stdout);
            let pasted = paste_suggestion(&report);
            assert_eq!(
                pasted.status.code(),
                Some(0),
                "{tag} at {columns}: {report}\n{}",
                String::from_utf8_lossy(&pasted.stderr)
            );
            assert!(String::from_utf8_lossy(&pasted.stdout).contains("rollback"));
        }
        let o = Command::new(BIN)
            .arg0("mirotrace")
            .args(["analyze", "-q", "--color", "never"])
            .arg(&path)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(0));
        for bad in [0x1bu8, b'\r'] {
            assert!(
                !o.stdout.contains(&bad),
                "{tag}: raw control {bad:#x} in the table"
            );
        }
        let report = String::from_utf8(o.stdout).expect("utf-8");
        assert!(!report.contains('\u{202e}'), "{tag}: raw bidi override");
        let pasted = paste_suggestion(&report);
        assert_eq!(
            pasted.status.code(),
            Some(0),
            "{tag}: {}",
            String::from_utf8_lossy(&pasted.stderr)
        );
        let timeline = String::from_utf8_lossy(&pasted.stdout);
        assert!(
            timeline.contains("rolled back") || timeline.contains("rollback"),
            "{timeline}"
        );
        // The Markdown report escapes them too.
        let md = Command::new(BIN)
            .arg0("mirotrace")
            .args(["analyze", "-q", "--format", "markdown"])
            .arg(&path)
            .output()
            .expect("run");
        assert!(
            !md.stdout.contains(&0x1b) && !md.stdout.contains(&b'\r'),
            "{tag}"
        );
    }
    let path = renamed_ids("stdin", |n| format!("t|{n}"));
    let o = Command::new(BIN)
        .arg0("mirotrace")
        .args(["analyze", "-q", "--color", "never", "-"])
        .stdin(File::open(&path).expect("open"))
        .output()
        .expect("run");
    let report = String::from_utf8_lossy(&o.stdout);
    let worst = report
        .lines()
        .find(|l| l.starts_with("worst trace"))
        .expect("a worst trace");
    assert!(!worst.contains("<stdin>"), "{worst}");
    assert!(worst.contains("the input was stdin"), "{worst}");
}

// Issue 23: `-o` never destroys anything.

fn run_at(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run")
}

#[cfg(unix)]
#[test]
fn a_device_or_fifo_is_written_into_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::fs::MetadataExt;
    let input = fixture("model-a.jsonl");
    let before = std::fs::metadata("/dev/null").expect("/dev/null");
    for args in [
        vec!["analyze", "-q", &input, "-o", "/dev/null"],
        vec!["replay", &input, "-o", "/dev/null"],
        vec![
            "analyze",
            "-q",
            "--format",
            "html",
            &input,
            "-o",
            "/dev/null",
        ],
    ] {
        let o = run_in(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
    }
    let after = std::fs::metadata("/dev/null").expect("/dev/null");
    assert!(after.file_type().is_char_device(), "/dev/null replaced");
    assert_eq!(before.rdev(), after.rdev());
    assert_eq!(before.ino(), after.ino());

    // /dev/stdout: the report arrives on stdout, as with `>`.
    let o = run_in(&[
        "analyze",
        "-q",
        "--format",
        "json",
        &input,
        "-o",
        "/dev/stdout",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(report["traces"], 12);

    // A FIFO: its reader gets the report; the FIFO stays a FIFO.
    let dir = scratch("fifo-out");
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(&fifo).expect("read the FIFO"))
    };
    let o = run_in(&[
        "analyze",
        "-q",
        "--format",
        "json",
        &input,
        "-o",
        fifo.to_str().expect("utf-8"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = reader.join().expect("reader");
    assert!(got.contains("\"traces\": 12"), "{got}");
    let kind = std::fs::symlink_metadata(&fifo).expect("fifo").file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced");
    assert_eq!(entries(&dir), ["pipe"], "no temporary file left");

    // A socket cannot be opened for writing: exit 2, still a socket.
    let socket = dir.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    let o = run_in(&[
        "analyze",
        "-q",
        &input,
        "-o",
        socket.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let kind = std::fs::symlink_metadata(&socket)
        .expect("socket")
        .file_type();
    assert!(kind.is_socket(), "the socket was replaced");
}

#[cfg(unix)]
#[test]
fn a_symlinked_output_writes_the_file_it_names_and_keeps_the_link() {
    let dir = scratch("link-out");
    let target = dir.join("report.txt");
    std::fs::write(&target, "old").expect("write");
    std::os::unix::fs::symlink("report.txt", dir.join("link.txt")).expect("symlink");
    let input = fixture("model-a.jsonl");
    let o = run_at(&dir, &["analyze", "-q", &input, "-o", "link.txt"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let link = std::fs::symlink_metadata(dir.join("link.txt")).expect("link");
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let written = std::fs::read_to_string(&target).expect("target");
    assert!(written.starts_with("rollback rate"), "{written}");
    assert_eq!(entries(&dir), ["link.txt", "report.txt"]);
}

/// Every spelling of an input as `-o`, for every command that writes:
/// refused with exit 2 before reading, the input unchanged.
#[cfg(unix)]
#[test]
fn an_output_naming_an_input_is_refused_however_spelled() {
    let dir = scratch("o-input");
    std::fs::create_dir_all(dir.join("d")).expect("mkdir");
    let traces = std::fs::read(fixture("model-a.jsonl")).expect("fixture");
    std::fs::write(dir.join("x.jsonl"), &traces).expect("write");
    std::fs::write(dir.join("d/y.jsonl"), &traces).expect("write");
    std::os::unix::fs::symlink("x.jsonl", dir.join("link.jsonl")).expect("symlink");
    std::fs::hard_link(dir.join("x.jsonl"), dir.join("hard.jsonl")).expect("hard link");
    std::fs::copy(fixture("keywords/candidates.txt"), dir.join("list.txt")).expect("copy");
    std::fs::write(
        dir.join("prices.toml"),
        "[models.\"gpt-4o\"]\ninput = 2.5\noutput = 10.0\n",
    )
    .expect("write");
    let partial = run_at(
        &dir,
        &[
            "analyze", "-q", "--format", "partial", "x.jsonl", "-o", "p.json",
        ],
    );
    assert_eq!(partial.status.code(), Some(0));
    let policy = run_at(&dir, &["policy", "-o", "policy.toml"]);
    assert_eq!(policy.status.code(), Some(0));
    let snapshot = |name: &str| std::fs::read(dir.join(name)).expect("input");
    let kept: Vec<(&str, Vec<u8>)> = [
        "x.jsonl",
        "d/y.jsonl",
        "list.txt",
        "p.json",
        "policy.toml",
        "prices.toml",
    ]
    .into_iter()
    .map(|n| (n, snapshot(n)))
    .collect();

    let spellings = [
        "x.jsonl",
        "./x.jsonl",
        "d/../x.jsonl",
        "link.jsonl",
        "hard.jsonl",
    ];
    let mut cases: Vec<Vec<&str>> = Vec::new();
    for out in spellings {
        cases.push(vec!["analyze", "-q", "x.jsonl", "-o", out]);
        cases.push(vec!["replay", "x.jsonl", "-o", out]);
        cases.push(vec!["export", "-q", "x.jsonl", "-o", out]);
        cases.push(vec!["keywords", "-q", "x.jsonl", "-o", out]);
        cases.push(vec![
            "diff",
            "-q",
            "--base",
            "d/y.jsonl",
            "--new",
            "x.jsonl",
            "-o",
            out,
        ]);
        cases.push(vec![
            "diff",
            "-q",
            "--base",
            "x.jsonl",
            "--new",
            "d/y.jsonl",
            "-o",
            out,
        ]);
    }
    // A file inside an input folder, a partial, a list, a policy.
    cases.push(vec!["analyze", "-q", "d", "-o", "d/y.jsonl"]);
    cases.push(vec!["replay", "d/", "-o", "./d/y.jsonl"]);
    cases.push(vec!["merge", "-q", "p.json", "-o", "p.json"]);
    cases.push(vec!["merge", "-q", "p.json", "-o", "./p.json"]);
    cases.push(vec![
        "keywords", "-q", "x.jsonl", "--list", "list.txt", "-o", "list.txt",
    ]);
    cases.push(vec![
        "analyze",
        "-q",
        "x.jsonl",
        "--policy",
        "policy.toml",
        "-o",
        "policy.toml",
    ]);
    cases.push(vec![
        "analyze",
        "-q",
        "x.jsonl",
        "--prices",
        "prices.toml",
        "-o",
        "prices.toml",
    ]);
    for args in &cases {
        let o = run_at(&dir, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("refusing to write"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        for (name, bytes) in &kept {
            assert!(snapshot(name) == *bytes, "{args:?} changed {name}");
        }
    }
    let link = std::fs::symlink_metadata(dir.join("link.jsonl")).expect("link");
    assert!(link.file_type().is_symlink());
    // Another file is fine.
    let o = run_at(&dir, &["replay", "x.jsonl", "-o", "verdicts.jsonl"]);
    assert_eq!(o.status.code(), Some(0));
}

/// A file the command finds inside a folder input (never named itself) is
/// one of its inputs: every reading command refuses it as `-o`, however
/// spelled, with exit 2 and the file unchanged; the same folder's other
/// names are fine.
#[cfg(unix)]
#[test]
fn a_file_found_inside_a_folder_input_is_refused_as_output() {
    let dir = scratch("o-in-folder");
    std::fs::create_dir_all(dir.join("runs/deep")).expect("mkdir");
    let traces = std::fs::read(fixture("model-a.jsonl")).expect("fixture");
    std::fs::write(dir.join("runs/deep/z.jsonl"), &traces).expect("write");
    std::fs::write(dir.join("other.jsonl"), &traces).expect("write");
    std::os::unix::fs::symlink("runs/deep/z.jsonl", dir.join("alias.jsonl")).expect("symlink");
    for out in [
        "runs/deep/z.jsonl",
        "./runs/../runs/deep/z.jsonl",
        "alias.jsonl",
    ] {
        let cases: [Vec<&str>; 6] = [
            vec!["analyze", "-q", "runs", "-o", out],
            vec!["replay", "runs/", "-o", out],
            vec!["keywords", "-q", "runs", "-o", out],
            vec!["export", "-q", "runs", "-o", out],
            vec![
                "diff",
                "-q",
                "--base",
                "other.jsonl",
                "--new",
                "runs",
                "-o",
                out,
            ],
            vec![
                "diff", "-q", "--format", "partial", "--base", "runs", "-o", out,
            ],
        ];
        for args in &cases {
            let o = run_at(&dir, args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains("refusing to write") && err.contains("z.jsonl"),
                "{args:?}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
            assert!(
                std::fs::read(dir.join("runs/deep/z.jsonl")).expect("input") == traces,
                "{args:?} changed the input"
            );
        }
    }
    let o = run_at(&dir, &["analyze", "-q", "runs", "-o", "runs/report.txt"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn export_never_overwrites_a_file_it_did_not_write() {
    let dir = scratch("export-keep");
    let input = fixture("model-a.jsonl");
    let first = run_at(&dir, &["export", "-q", &input, "-o", "out/"]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let out = dir.join("out");
    let written = entries(&out);
    assert_eq!(written.len(), 12, "{written:?}");
    // The exported folder as input and output: every name is taken.
    let before: Vec<Vec<u8>> = written
        .iter()
        .map(|n| std::fs::read(out.join(n)).expect("read"))
        .collect();
    for args in [
        vec!["export", "-q", &input, "-o", "out/"],
        vec!["export", "-q", "out/", "-o", "out/"],
        vec!["export", "-q", "out", "-o", "out"],
    ] {
        let o = run_at(&dir, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("refusing to overwrite out/"),
            "{args:?}: {err}"
        );
        assert_eq!(entries(&out), written, "{args:?}: nothing added or left");
        let now: Vec<Vec<u8>> = written
            .iter()
            .map(|n| std::fs::read(out.join(n)).expect("read"))
            .collect();
        assert!(now == before, "{args:?}: a file was overwritten");
    }
    // One unrelated file in the folder does not stop the others.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("notes.txt"), "mine").expect("write");
    let o = run_at(&dir, &["export", "-q", &input, "-o", "other"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(other.join("notes.txt")).expect("kept"),
        "mine"
    );
}

/// Many traces, one line each (`t00000`, …), as JSONL text.
fn many_traces(n: usize) -> String {
    (0..n)
        .map(|i| format!("{{\"trace_id\": \"t{i:05}\", \"content\": \"\\\\boxed{{1}}\"}}\n"))
        .collect()
}

/// A signal while `export -o DIR/` writes thousands of files: the
/// handler's removal and the files still being created are one step each,
/// so no temporary file of the run stays behind, whenever the signal
/// comes.
#[test]
fn a_signal_during_export_into_a_folder_leaves_no_temporary_file() {
    let dir = scratch("signal-export");
    let input = dir.join("many.jsonl");
    std::fs::write(&input, many_traces(20_000)).expect("write");
    for (round, signal) in ["INT", "TERM", "INT"].iter().enumerate() {
        let out = dir.join(format!("out{round}"));
        let mut child = Command::new(BIN)
            .args(["export", "-q", "-o"])
            .arg(format!("{}/", out.display()))
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let started = Instant::now();
        // Some files written (a different moment each round).
        let wanted = 50 + round * 400;
        loop {
            let n = std::fs::read_dir(&out).map_or(0, |d| d.count());
            if n >= wanted || started.elapsed() > Duration::from_secs(30) {
                break;
            }
            if child.try_wait().expect("try_wait").is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status();
        let status = child.wait().expect("wait");
        let left: Vec<String> = entries(&out)
            .into_iter()
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(
            left.is_empty(),
            "SIG{signal} ({status:?}): {} left, {:?}",
            left.len(),
            left.first()
        );
    }
}

/// Two `export -o DIR/` runs into one folder at once: the one that
/// commits second finds a name taken after its own check and is refused
/// (exit 2), never renaming its file over the other run's; it takes back
/// the files it had put in place.
#[test]
fn two_exports_into_one_folder_never_write_over_each_other() {
    let dir = scratch("export-race");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("dir");
    // The slow run: `shared` first, then many more traces, all committed
    // only at the end.
    let slow_input = dir.join("slow.jsonl");
    let line =
        |id: &str, text: &str| format!("{{\"trace_id\": \"{id}\", \"content\": \"{text}\"}}\n");
    std::fs::write(&slow_input, line("shared", "slow") + &many_traces(30_000)).expect("write");
    let slow = Command::new(BIN)
        .args(["export", "-q", "-o"])
        .arg(format!("{}/", out.display()))
        .arg(&slow_input)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let started = Instant::now();
    while !entries(&out).iter().any(|n| n.starts_with(".shared.json")) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The quick run writes `shared.json` meanwhile and ends well.
    let quick_input = dir.join("quick.jsonl");
    std::fs::write(&quick_input, line("shared", "quick")).expect("write");
    let quick = Command::new(BIN)
        .args(["export", "-q", "-o"])
        .arg(format!("{}/", out.display()))
        .arg(&quick_input)
        .output()
        .expect("run");
    assert_eq!(
        quick.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&quick.stderr)
    );
    let theirs = std::fs::read_to_string(out.join("shared.json")).expect("quick's file");
    assert!(theirs.contains("quick"), "{theirs}");
    // The slow run ends refused, the quick run's file kept, nothing of
    // its own left: neither its other files nor temporaries.
    let slow_out = slow.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&slow_out.stderr);
    assert_eq!(slow_out.status.code(), Some(2), "{err}");
    assert!(err.contains("shared.json"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("shared.json")).expect("kept"),
        theirs
    );
    assert_eq!(entries(&out), vec!["shared.json".to_string()]);
}
