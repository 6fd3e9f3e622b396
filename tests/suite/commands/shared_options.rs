//! The command layer through the real binary: colour decided from the
//! destination, `--strict` never commits a `-o` file, a closed pipe keeps
//! the status, options shared by every reading command (diff included),
//! and the progress line on a terminal.
//!
//! Terminal tests run the binary under util-linux `script` (a
//! pseudo-terminal); where it is missing they say so and pass.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{fixture, scratch};

use crate::common::BIN;
const ESC: u8 = 0x1b;

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run mirotrace")
}

fn has_escape(bytes: &[u8]) -> bool {
    bytes.contains(&ESC)
}

/// Single-quotes a word for `sh -c`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Runs mirotrace with stdin, stdout and stderr on a pseudo-terminal;
/// returns what the terminal showed and the exit code, or `None` when
/// `script` is not installed.
fn on_terminal(args: &[&str], env: &[(&str, &str)]) -> Option<(Vec<u8>, Option<i32>)> {
    let command: Vec<String> = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(quote)
        .collect();
    let mut cmd = Command::new("script");
    cmd.args(["-qefc", &command.join(" "), "/dev/null"])
        .stdin(Stdio::null())
        .env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    match cmd.output() {
        Ok(o) => Some((o.stdout, o.status.code())),
        Err(e) => {
            eprintln!("skipped: `script` cannot run ({e}); no pseudo-terminal test");
            None
        }
    }
}

#[test]
fn a_file_written_from_a_terminal_gets_no_colour() {
    let dir = scratch("colour");
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let shown = on_terminal(&["diff", "--base", &a, "--new", &b, "-q"], &[]);
    let Some((screen, code)) = shown else { return };
    assert_eq!(code, Some(0));
    assert!(has_escape(&screen), "a terminal gets colour");

    let file = |name: &str| dir.join(name).display().to_string();
    let runs: [(&str, Vec<&str>); 3] = [
        ("diff.txt", vec!["diff", "--base", &a, "--new", &b]),
        ("timeline.txt", vec!["replay", &a, "--trace", "task-000"]),
        ("analyze.txt", vec!["analyze", &a]),
    ];
    for (name, args) in runs {
        let out = file(name);
        let mut args = args.clone();
        args.extend(["-q", "-o", &out]);
        let (_, code) = on_terminal(&args, &[]).expect("script ran above");
        assert_eq!(code, Some(0), "{args:?}");
        let written = std::fs::read(&out).expect("output written");
        assert!(!written.is_empty());
        assert!(!has_escape(&written), "{name}: colour codes in a file");
    }
}

#[test]
fn no_color_turns_auto_off_on_a_terminal() {
    let a = fixture("model-a.jsonl");
    let args = ["replay", &a, "--trace", "task-000", "-q"];
    let Some((plain, _)) = on_terminal(&args, &[("NO_COLOR", "1")]) else {
        return;
    };
    assert!(!has_escape(&plain));
    let (forced, _) = on_terminal(
        &[&args[..], &["--color", "always"]].concat(),
        &[("NO_COLOR", "1")],
    )
    .expect("script ran above");
    assert!(has_escape(&forced), "--color always outranks NO_COLOR");
}

#[test]
fn color_always_and_never_hold_into_a_pipe() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    for args in [
        vec!["diff", "--base", &a, "--new", &b],
        vec!["replay", &a, "--trace", "task-000"],
        vec!["analyze", &a],
    ] {
        let always = run(&[&args[..], &["--color", "always"]].concat());
        assert!(has_escape(&always.stdout), "{args:?} --color always");
        for never in [&["--color", "never"][..], &["--no-color"][..]] {
            let o = run(&[&args[..], never].concat());
            assert_eq!(o.status.code(), Some(0));
            assert!(!has_escape(&o.stdout), "{args:?} {never:?}");
        }
        assert!(
            !has_escape(&run(&args).stdout),
            "{args:?}: auto into a pipe"
        );
    }
}

/// A file with one good trace, a bad line, then another good trace.
fn broken_input(dir: &Path) -> String {
    let good = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let first = good.lines().next().expect("a line");
    let path = dir.join("broken.jsonl");
    let second = first.replace("task-000", "task-late");
    std::fs::write(&path, format!("{first}\nnot json\n{second}\n")).expect("write");
    path.display().to_string()
}

#[test]
fn a_strict_stop_commits_no_file() {
    let dir = scratch("strict");
    let input = broken_input(&dir);
    for command in ["analyze", "replay", "keywords", "export"] {
        let out = dir.join(format!("{command}.out")).display().to_string();
        let o = run(&[command, &input, "--strict", "-q", "-o", &out]);
        assert_eq!(o.status.code(), Some(3), "{command}");
        assert!(!Path::new(&out).exists(), "{command}: file committed");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--strict"));
    }
    let o = run(&["diff", "--base", &input, "--new", &input, "--strict", "-q"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(o.stdout.is_empty());
    // Without --strict the same file is committed, and the status says
    // input was skipped.
    let out = dir.join("kept.json").display().to_string();
    let o = run(&["analyze", &input, "-q", "--format", "json", "-o", &out]);
    assert_eq!(o.status.code(), Some(3));
    assert!(Path::new(&out).exists());
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_status_so_far() {
    let dir = scratch("pipe");
    let good = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let mut text = String::from("not json\n");
    for i in 0..300 {
        text.push_str(&good.replace("\"task-", &format!("\"copy{i}-task-")));
    }
    let path = dir.join("many.jsonl");
    std::fs::write(&path, text).expect("write");
    let mut child = Command::new(BIN)
        .args(["replay", "-j", "1"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    out.read_exact(&mut first).expect("some output");
    drop(out);
    let o = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "the skipped line's status: {err}");
    assert_eq!(err.lines().count(), 1, "only the skipped line: {err}");
    assert!(err.contains("line skipped"));
    // 17 MB of input: not left behind.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn diff_shares_the_reading_options() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let native = run(&[
        "diff",
        "--base",
        &a,
        "--new",
        &b,
        "--input-format",
        "native",
        "-q",
    ]);
    assert_eq!(
        native.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&native.stderr)
    );
    // Read as ATIF, the JSONL lines are not traces: nothing to compare.
    let wrong = run(&[
        "diff",
        "--base",
        &a,
        "--new",
        &b,
        "--input-format",
        "atif",
        "-q",
    ]);
    assert_eq!(wrong.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("nothing to compare"));
}

/// Feeds `fifos` in turn with `text`: each in two halves with a pause
/// between them, so the reading command is still running when the
/// progress line's timer fires (a frame must be drawn: no timing luck).
/// Opening waits for the reader up to `deadline`, then gives up.
fn feed_slowly(fifos: Vec<PathBuf>, text: String) -> std::thread::JoinHandle<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    std::thread::spawn(move || {
        for fifo in fifos {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            // A non-blocking open fails until a reader has the FIFO open.
            let probe = loop {
                let opened = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(O_NONBLOCK)
                    .open(&fifo);
                match opened {
                    Ok(probe) => break probe,
                    Err(_) if std::time::Instant::now() > deadline => return,
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            };
            // A blocking handle for the writes, opened while the probe is
            // still open (closing the last writer would be an end of file).
            let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&fifo) else {
                return;
            };
            drop(probe);
            let (a, b) = text.split_at(text.len() / 2);
            let _ = f.write_all(a.as_bytes());
            let _ = f.flush();
            std::thread::sleep(std::time::Duration::from_millis(900));
            let _ = f.write_all(b.as_bytes());
        }
    })
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

#[test]
fn every_reading_command_shows_progress_on_a_terminal_only() {
    let dir = scratch("progress");
    let text = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let (a_s, b_s) = (a.display().to_string(), b.display().to_string());
    let out = dir.join("out").display().to_string();
    // merge reads partial reports: one made from the same fixture.
    let part = dir.join("part.json");
    let part_s = part.display().to_string();
    let made = run(&[
        "analyze",
        "-q",
        &fixture("model-a.jsonl"),
        "--format",
        "partial",
    ]);
    assert_eq!(made.status.code(), Some(0));
    let partial = String::from_utf8(made.stdout).expect("a partial is text");
    let commands: [Vec<&str>; 6] = [
        vec!["analyze", &a_s, "-o", &out],
        vec!["replay", &a_s, "-o", &out],
        vec!["keywords", &a_s, "-o", &out],
        vec!["export", &a_s, "-o", &out],
        vec!["diff", "--base", &a_s, "--new", &b_s, "-o", &out],
        vec!["merge", &part_s, "-o", &out],
    ];
    let now = [("MIROTRACE_PROGRESS_DELAY_MS", "0")];
    for args in &commands {
        let (fifos, feed) = match args[0] {
            "diff" => (vec![a.clone(), b.clone()], &text),
            "merge" => (vec![part.clone()], &partial),
            _ => (vec![a.clone()], &text),
        };
        for (quiet, piped) in [(false, false), (true, false), (false, true)] {
            fifos.iter().for_each(|f| mkfifo(f));
            let writer = feed_slowly(fifos.clone(), feed.clone());
            let mut args = args.clone();
            if quiet {
                args.push("-q");
            }
            let (screen, code) = if piped {
                let o = Command::new(BIN)
                    .args(&args)
                    .env(now[0].0, now[0].1)
                    .output()
                    .expect("run");
                (o.stderr, o.status.code())
            } else {
                let Some(shown) = on_terminal(&args, &now) else {
                    return;
                };
                shown
            };
            writer.join().expect("writer");
            assert_eq!(code, Some(0), "{args:?}");
            let screen = String::from_utf8_lossy(&screen);
            let shown = screen.contains("B/s") && screen.contains(" read");
            if quiet || piped {
                assert!(!shown, "{args:?} quiet={quiet} piped={piped}: {screen}");
            } else {
                assert!(shown, "{args:?}: no progress line in {screen:?}");
            }
            if piped {
                assert!(screen.is_empty(), "{args:?}: {screen}");
            }
        }
    }
}

#[test]
fn a_page_is_not_dumped_on_a_terminal() {
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let dir = scratch("page-on-terminal");
    let part = dir.join("a.part").display().to_string();
    assert!(
        run(&["analyze", &a, "--format", "partial", "-o", &part, "-q"])
            .status
            .success()
    );
    for args in [
        vec!["analyze", &a, "--format", "html"],
        vec!["diff", "--base", &a, "--new", &b, "--format", "html"],
        vec!["merge", &part, "--format", "html"],
    ] {
        let Some((screen, code)) = on_terminal(&args, &[]) else {
            return;
        };
        let text = String::from_utf8_lossy(&screen);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(text.contains("-o FILE"), "{text}");
        assert!(!text.contains("<html"), "no markup on the terminal: {text}");
        // Into a pipe, or with -o, the page is written.
        let piped = run(&args);
        assert_eq!(piped.status.code(), Some(0), "{args:?}");
        assert!(String::from_utf8_lossy(&piped.stdout).contains("<html"));
    }
}
