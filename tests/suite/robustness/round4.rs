//! Hostile input, fourth round (issue 40): folders named with their own
//! subfolders, event streams whose first record or one file is bad, text
//! before a document, span documents beside other documents, lines whose
//! model output is under a key not read, side files that never end.
//! Each case: the good records kept, the bad one reported, no hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{fixture_path, mirotrace, scratch};

/// Runs `args` and reads its JSON report (`analyze --format json`).
fn analyze(args: &[&std::ffi::OsStr]) -> (Option<i32>, serde_json::Value, String) {
    analyze_in(None, args)
}

fn analyze_in(
    cwd: Option<&Path>,
    args: &[&std::ffi::OsStr],
) -> (Option<i32>, serde_json::Value, String) {
    let mut cmd = mirotrace();
    cmd.args(["analyze", "-q", "--format", "json"]).args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let o = run_bounded(&mut cmd);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    let json = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code(), json, err)
}

/// Runs a command, failing the test (not hanging it) past 60 seconds; its
/// output is read as it comes (a full pipe would stop it).
fn run_bounded(cmd: &mut Command) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.expect("output"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{cmd:?} did not end within 60 s");
        }
    }
}

fn os<P: AsRef<std::ffi::OsStr> + ?Sized>(p: &P) -> &std::ffi::OsStr {
    p.as_ref()
}

fn count(json: &serde_json::Value, key: &str) -> u64 {
    json[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {json}"))
}

/// A trace of `n` attempts, one JSONL line each.
fn native_trace(id: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{{\"trace_id\": \"{id}\", \"content\": \"step {i} \\\\boxed{{1}}\"}}\n"))
        .collect()
}

#[test]
fn a_folder_named_with_its_own_subfolders_is_read_once_not_found_empty() {
    let dir = scratch("round4-subfolders");
    let runs = dir.join("runs");
    std::fs::create_dir_all(runs.join("extra/deeper")).expect("dirs");
    std::fs::write(runs.join("a.jsonl"), native_trace("a", 2)).expect("write");
    std::fs::write(runs.join("extra/b.jsonl"), native_trace("b", 3)).expect("write");
    std::fs::write(runs.join("extra/deeper/c.jsonl"), native_trace("c", 1)).expect("write");
    let (code, whole, _) = analyze(&[os(&runs)]);
    assert_eq!(code, Some(0));
    assert_eq!(count(&whole, "attempts"), 6);
    let extra = runs.join("extra");
    let deeper = extra.join("deeper");
    let spellings: [Vec<&Path>; 5] = [
        vec![&runs, &extra],
        vec![&runs, &runs],
        vec![&extra, &runs],
        vec![&runs, &deeper, &extra],
        vec![&extra, &extra, &runs],
    ];
    for named in spellings {
        let args: Vec<&std::ffi::OsStr> = named.iter().map(|p| p.as_os_str()).collect();
        let (code, json, err) = analyze(&args);
        assert_eq!(code, Some(0), "{named:?}: {err}");
        assert_eq!(count(&json, "attempts"), 6, "{named:?}: read once");
        assert_eq!(count(&json, "traces"), 3, "{named:?}");
        assert!(!err.contains("no trace files"), "{named:?}: {err}");
    }
    // The note names what was left out.
    let o = run_bounded(
        mirotrace()
            .args(["analyze", "--format", "json"])
            .arg(&runs)
            .arg(&extra),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("extra: inside a folder already named, read once"),
        "{err}"
    );
}

/// The OpenHands V1 fixture's events, one per line.
fn v1_events() -> Vec<String> {
    std::fs::read_to_string(fixture_path("harnesses/openhands-v1/events.jsonl"))
        .expect("fixture")
        .lines()
        .map(str::to_string)
        .collect()
}

const UNKNOWN_EVENT: &str = r#"{"kind": "SomeFutureEvent", "id": "f1", "timestamp": "2025-11-03T14:01:59", "source": "environment"}"#;
const CUT_EVENT: &str = r#"{"kind": "SystemPromptEvent", "id": "e0", "timest"#;

#[test]
fn an_event_stream_whose_first_event_is_unknown_or_cut_loses_that_event_only() {
    let dir = scratch("round4-v1-first");
    let events = v1_events();
    let clean = dir.join("clean.jsonl");
    std::fs::write(&clean, events.join("\n") + "\n").expect("write");
    let (code, good, _) = analyze(&[os(&clean)]);
    assert_eq!(code, Some(0));
    let attempts = count(&good, "attempts");
    assert!(attempts > 0);
    for (name, bad) in [("unknown", UNKNOWN_EVENT), ("cut", CUT_EVENT)] {
        for at in [0, 2] {
            let mut lines = events.clone();
            lines.insert(at, bad.to_string());
            let file = dir.join(format!("{name}-{at}.jsonl"));
            std::fs::write(&file, lines.join("\n") + "\n").expect("write");
            let (code, json, err) = analyze(&[os(&file)]);
            assert_eq!(code, Some(3), "{name} at {at}: {err}");
            assert_eq!(count(&json, "attempts"), attempts, "{name} at {at}: {err}");
            assert_eq!(count(&json, "bad_lines"), 1, "{name} at {at}: {err}");
            assert!(
                err.contains(&format!("{}:{}:", file.display(), at + 1)),
                "{err}"
            );
        }
    }
}

/// The fixture's events as the SDK writes them: `CONV/events/event-…json`.
fn event_folder(dir: &Path, conversation: &str) -> PathBuf {
    let events = dir.join(conversation).join("events");
    std::fs::create_dir_all(&events).expect("dir");
    for (i, event) in v1_events().iter().enumerate() {
        let name = format!("event-{i:05}-0000abcd-{i:04}.json");
        std::fs::write(events.join(name), event).expect("write");
    }
    events
}

#[test]
fn one_bad_file_in_an_events_folder_costs_its_event_only() {
    let dir = scratch("round4-v1-folder");
    let events = event_folder(&dir, "conv");
    let (code, good, _) = analyze(&[os(&events)]);
    assert_eq!(code, Some(0));
    let attempts = count(&good, "attempts");
    // An unknown first event, a dangling link, a FIFO nobody writes to, a
    // link to /dev/zero: each reported, none ends the stream or hangs.
    std::fs::write(events.join("event-00000-0000abcd-ffff.json"), UNKNOWN_EVENT).expect("write");
    std::os::unix::fs::symlink(
        dir.join("nowhere"),
        events.join("event-00002-0000abcd-eeee.json"),
    )
    .expect("symlink");
    let fifo = events.join("event-00004-0000abcd-dddd.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    std::os::unix::fs::symlink("/dev/zero", events.join("event-00006-0000abcd-cccc.json"))
        .expect("symlink");
    let (code, json, err) = analyze(&[os(&events)]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(count(&json, "attempts"), attempts, "{err}");
    assert_eq!(count(&json, "bad_lines"), 4, "{err}");
    for what in ["dangling", "not a regular file"] {
        assert!(err.contains(what), "{err}");
    }
    // An event file past --max-line-bytes is not read.
    let (code, json, err) = analyze(&[os("--max-line-bytes"), os("100"), os(&events)]);
    assert!(matches!(code, Some(3 | 4)), "{err}");
    assert!(err.contains("longer than 100 bytes"), "{err}");
    let _ = json;
}

#[test]
fn o_naming_an_event_file_of_a_folder_read_is_refused() {
    let dir = scratch("round4-v1-o");
    let events = event_folder(&dir, "conv");
    let victim = events.join("event-00001-0000abcd-0001.json");
    let before = std::fs::read(&victim).expect("read");
    for input in [events.clone(), dir.clone(), dir.join("conv")] {
        for command in ["analyze", "replay", "export"] {
            let o = mirotrace()
                .args([command, "-q", "-o"])
                .arg(&victim)
                .arg(&input)
                .output()
                .expect("run");
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{command} {input:?}: {err}");
            assert!(err.contains("refusing to write"), "{err}");
            assert_eq!(std::fs::read(&victim).expect("read"), before);
        }
    }
}

#[test]
fn an_events_folder_is_named_after_its_conversation_however_typed() {
    let dir = scratch("round4-v1-name");
    let events = event_folder(&dir, "my-conversation");
    let ids = |cwd: &Path, arg: &str| {
        let o = run_bounded(mirotrace().current_dir(cwd).args(["replay", arg]));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut ids: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).expect("JSON")["trace_id"]
                    .as_str()
                    .expect("id")
                    .to_string()
            })
            .collect();
        ids.dedup();
        ids
    };
    let want = vec!["my-conversation".to_string()];
    assert_eq!(ids(&events, "."), want);
    assert_eq!(ids(&events, "./"), want);
    assert_eq!(ids(&dir.join("my-conversation"), "events"), want);
    assert_eq!(ids(&dir, "my-conversation/events/"), want);
}

#[test]
fn text_before_a_pretty_printed_document_costs_its_lines_only() {
    let dir = scratch("round4-banner");
    for fixture in [
        "harnesses/tau2/telecom-results.json",
        "harnesses/miroflow/task_result.json",
    ] {
        let doc = std::fs::read_to_string(fixture_path(fixture)).expect("fixture");
        let clean = dir.join("clean.json");
        std::fs::write(&clean, &doc).expect("write");
        let (code, good, _) = analyze(&[os(&clean)]);
        assert!(matches!(code, Some(0 | 3)));
        let attempts = count(&good, "attempts");
        assert!(attempts > 0, "{fixture}");
        for banner in [
            "Running tau2 run --domain telecom\n",
            "INFO starting\n\n  Loading tasks...\n",
        ] {
            let file = dir.join("banner.json");
            std::fs::write(&file, format!("{banner}{doc}")).expect("write");
            let (code, json, err) = analyze(&[os(&file)]);
            let text_lines = banner.lines().filter(|l| !l.trim().is_empty()).count() as u64;
            assert_eq!(code, Some(3), "{fixture}: {err}");
            assert_eq!(count(&json, "attempts"), attempts, "{fixture}: {err}");
            assert_eq!(
                count(&json, "bad_lines") - count(&good, "bad_lines"),
                text_lines,
                "{fixture}: {err}"
            );
            assert!(err.contains(&format!("{}:1:", file.display())), "{err}");
        }
    }
}

#[test]
fn span_documents_after_another_document_are_still_one_trace() {
    let dir = scratch("round4-spans");
    let spans = std::fs::read_to_string(fixture_path("harnesses/otel/console-exporter.spans.json"))
        .expect("fixture");
    let (_, alone, _) = analyze(&[os(&fixture_path(
        "harnesses/otel/console-exporter.spans.json",
    ))]);
    let metrics = "{\n    \"resource_metrics\": [\n        {\"scope_metrics\": []}\n    ]\n}\n";
    for text in [format!("{metrics}{spans}"), format!("{spans}{metrics}")] {
        let file = dir.join("stdout.json");
        std::fs::write(&file, text).expect("write");
        let (code, json, err) = analyze(&[os(&file)]);
        assert_eq!(code, Some(3), "{err}");
        assert_eq!(count(&json, "traces"), count(&alone, "traces"), "{err}");
        assert_eq!(count(&json, "attempts"), count(&alone, "attempts"), "{err}");
        assert_eq!(count(&json, "bad_lines"), 1, "{err}");
    }
}

#[test]
fn a_line_with_its_model_output_under_an_unread_key_is_not_an_attempt() {
    let dir = scratch("round4-unread-keys");
    let file = dir.join("other-harness.jsonl");
    let mut text = String::new();
    for i in 0..5 {
        text.push_str(&format!(
            "{{\"trace_id\": \"t{i}\", \"completion\": \"The answer is \\\\boxed{{4}}\", \"tool_results\": []}}\n"
        ));
    }
    std::fs::write(&file, &text).expect("write");
    // Nothing readable: no plausible report of empty attempts.
    let (code, json, err) = analyze(&[os(&file)]);
    assert_eq!(code, Some(4), "{err}");
    assert_eq!(json, serde_json::Value::Null);
    assert!(err.contains("\"completion\""), "the key is named: {err}");
    // Beside good lines: those read, these reported, one per line.
    text.push_str(&native_trace("good", 2));
    text.push_str("{\"trace_id\": \"r\", \"response\": \"hi\", \"tool_results\": []}\n");
    std::fs::write(&file, &text).expect("write");
    let (code, json, err) = analyze(&[os(&file)]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(count(&json, "attempts"), 2);
    assert_eq!(count(&json, "bad_lines"), 6);
    assert!(err.contains("\"response\""), "{err}");
    // `finish_reason` alone is model output (a cut response), as before.
    std::fs::write(
        &file,
        "{\"trace_id\": \"l\", \"finish_reason\": \"length\"}\n",
    )
    .expect("write");
    let (code, json, err) = analyze(&[os(&file)]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(count(&json, "attempts"), 1);
}

#[test]
fn side_files_that_never_end_are_refused_at_once() {
    let dir = scratch("round4-side-files");
    let input = dir.join("t.jsonl");
    std::fs::write(&input, native_trace("t", 1)).expect("write");
    let cases: [Vec<&std::ffi::OsStr>; 4] = [
        vec![os("analyze"), os("--prices"), os("/dev/zero"), os(&input)],
        vec![os("analyze"), os("--policy"), os("/dev/zero"), os(&input)],
        vec![os("merge"), os("/dev/zero")],
        vec![os("keywords"), os("--list"), os("/dev/zero"), os(&input)],
    ];
    for args in cases {
        let started = Instant::now();
        let o = run_bounded(mirotrace().args(&args));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(1..=4)), "{args:?}: {err}");
        assert!(err.contains("/dev/zero"), "{args:?}: {err}");
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?}");
    }
    // A stream of text past the limit: refused at the limit, not read whole.
    let big = dir.join("prices.toml");
    std::fs::write(&big, "# padding\n".repeat(300_000)).expect("write");
    let o = run_bounded(mirotrace().args([os("analyze"), os("--prices"), os(&big), os(&input)]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("larger than"), "{err}");
}

/// scripts/build-pgo.sh in a checkout whose path holds a space, and
/// scripts/install.sh with a relative `--root`: run with a stand-in
/// `cargo` that records what it was given (no build).
#[test]
fn the_install_scripts_take_paths_with_spaces_and_the_callers_root() {
    let dir = scratch("round4 scripts");
    let repo = dir.join("a checkout").join("mirotrace");
    std::fs::create_dir_all(repo.join("scripts")).expect("dir");
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    for name in ["build-pgo.sh", "install.sh"] {
        std::fs::copy(scripts.join(name), repo.join("scripts").join(name)).expect("copy");
    }
    let fake = dir.join("bin");
    std::fs::create_dir_all(&fake).expect("dir");
    let log = dir.join("cargo.log");
    std::fs::write(
        fake.join("cargo"),
        format!(
            "#!/usr/bin/env bash\n{{ printf '%s\\n' \"$@\"; printf 'FLAGS=%s\\n' \"${{CARGO_ENCODED_RUSTFLAGS:-}}\"; }} >> '{}'\n",
            log.display()
        ),
    )
    .expect("write");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(fake.join("cargo"), mode).expect("chmod");
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The first build gets the profile folder whole, as one flag.
    let _ = Command::new("bash")
        .arg(repo.join("scripts/build-pgo.sh"))
        .args(["release", "--features", "parquet"])
        .env("PATH", &path)
        .env("LLVM_PROFDATA", "/bin/true")
        .env("RUSTFLAGS", "-Cdebuginfo=1  -g")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("bash");
    let logged = std::fs::read_to_string(&log).expect("cargo ran");
    let flags = logged
        .lines()
        .find_map(|l| l.strip_prefix("FLAGS="))
        .expect("flags");
    let flags: Vec<&str> = flags.split('\u{1f}').collect();
    let want = format!(
        "-Cprofile-generate={}",
        repo.join("target/pgo-generate/profiles").display()
    );
    assert_eq!(
        flags,
        vec!["-Cdebuginfo=1", "-g", want.as_str()],
        "{logged}"
    );
    // install.sh --root RELATIVE: the caller's folder, not the repository.
    std::fs::remove_file(&log).expect("rm");
    let caller = dir.join("elsewhere");
    std::fs::create_dir_all(&caller).expect("dir");
    let o = Command::new("bash")
        .arg(repo.join("scripts/install.sh"))
        .args(["--plain", "--root", "my root"])
        .current_dir(&caller)
        .env("PATH", &path)
        .output()
        .expect("bash");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let logged = std::fs::read_to_string(&log).expect("cargo ran");
    let args: Vec<&str> = logged.lines().collect();
    let root = args.iter().position(|a| *a == "--root").expect("--root");
    assert_eq!(args[root + 1], caller.join("my root").display().to_string());
}

/// A partial whose `tool_error` family holds `kinds` kinds (written by
/// hand: `analyze` itself never keeps more than 100).
fn partial_with_kinds(dir: &Path, kinds: usize) -> PathBuf {
    let part = dir.join("part.json");
    let o = mirotrace()
        .args(["analyze", "-q", "--format", "partial", "-o"])
        .arg(&part)
        .arg(fixture_path("analyze/sample.jsonl"))
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&part).expect("read")).expect("JSON");
    let family = json["collector"]["overall"]["mistakes"]["tool_error"]
        .as_object_mut()
        .expect("tool_error");
    for i in 0..kinds {
        family.insert(format!("tool_x: kind {i}"), serde_json::Value::from(1));
    }
    let many = dir.join(format!("part-{kinds}.json"));
    std::fs::write(&many, serde_json::to_vec(&json).expect("JSON")).expect("write");
    many
}

#[test]
fn merge_bounds_the_kinds_of_a_partial_even_alone() {
    let dir = scratch("round4-merge-kinds");
    let many = partial_with_kinds(&dir, 20_000);
    let plain = partial_with_kinds(&dir, 0);
    for parts in [vec![&many], vec![&many, &plain], vec![&plain, &many]] {
        let o = run_bounded(mirotrace().args(["merge", "--format", "json"]).args(&parts));
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let family = json["mistakes"]["tool_error"]
            .as_object()
            .expect("tool_error");
        // 100 kinds and `other`, the counts still all there.
        assert_eq!(family.len(), 101, "{parts:?}");
        assert!(family["other"].as_u64().expect("other") >= 19_900);
    }
}

/// Native lines of model `m` (or of no model), some with usage.
fn priced_traces(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let with_usage = dir.join("usage.jsonl");
    let mut text = String::new();
    for i in 0..6 {
        text.push_str(&format!(
            "{{\"trace_id\": \"u{i}\", \"meta\": {{\"model\": \"m\"}}, \"content\": \"{}\", \"usage\": {{\"input_tokens\": {}, \"output_tokens\": 50}}}}\n",
            if i % 2 == 0 { "\\\\boxed{1}" } else { "<use_mcp_tool>" },
            1000 * (i + 1)
        ));
    }
    std::fs::write(&with_usage, text).expect("write");
    let without = dir.join("no-usage.jsonl");
    std::fs::write(
        &without,
        "{\"trace_id\": \"n\", \"meta\": {\"model\": \"m\"}, \"content\": \"\\\\boxed{1}\"}\n",
    )
    .expect("write");
    let prices = dir.join("prices.toml");
    std::fs::write(&prices, "[models.m]\ninput = 2.0\noutput = 8.0\n").expect("write");
    (with_usage, without, prices)
}

#[test]
fn money_no_attempt_recorded_is_unknown_not_zero() {
    let dir = scratch("round4-money");
    let (with_usage, without, prices) = priced_traces(&dir);
    let (code, json, err) = analyze(&[os("--prices"), os(&prices), os(&without)]);
    assert_eq!(code, Some(0), "{err}");
    let money = &json["cost"]["money"];
    for key in ["total", "discarded", "failed"] {
        assert!(money[key].is_null(), "{key}: {money}");
    }
    let table = run_bounded(mirotrace().args([
        os("analyze"),
        os("-q"),
        os("--prices"),
        os(&prices),
        os(&without),
    ]));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("money (--prices): – in all"), "{text}");
    assert!(!text.contains("0.00"), "{text}");
    // Recorded usage: known sums.
    let (_, json, _) = analyze(&[os("--prices"), os(&prices), os(&with_usage)]);
    let total = json["cost"]["money"]["total"]
        .as_f64()
        .expect("a known total");
    assert!(total > 0.0);
}

#[test]
fn merged_partials_keep_the_money_and_refuse_other_rules() {
    let dir = scratch("round4-partial-options");
    let (with_usage, without, prices) = priced_traces(&dir);
    let partial = |name: &str, input: &Path, extra: &[&str]| {
        let out = dir.join(name);
        let o = mirotrace()
            .args(["analyze", "-q", "--format", "partial", "-o"])
            .arg(&out)
            .args(extra)
            .arg(input)
            .output()
            .expect("run");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    };
    let p = prices.to_str().expect("utf-8");
    let a = partial("a.json", &with_usage, &["--prices", p]);
    let b = partial("b.json", &without, &["--prices", p]);
    for format in ["json", "table", "markdown"] {
        let whole = run_bounded(
            mirotrace()
                .args([
                    "analyze", "-q", "-j", "1", "--format", format, "--prices", p,
                ])
                .arg(&with_usage)
                .arg(&without),
        );
        let merged = run_bounded(
            mirotrace()
                .args(["merge", "-q", "--format", format])
                .arg(&a)
                .arg(&b),
        );
        assert_eq!(
            merged.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&merged.stderr)
        );
        if format == "json" {
            // Only where the inputs were read differs (files).
            let mut w: serde_json::Value = serde_json::from_slice(&whole.stdout).expect("JSON");
            let m: serde_json::Value = serde_json::from_slice(&merged.stdout).expect("JSON");
            assert!(
                m["cost"]["money"]["total"].as_f64().is_some(),
                "{}",
                m["cost"]
            );
            w["files"] = m["files"].clone();
            assert_eq!(w["cost"], m["cost"]);
        } else {
            let (w, m) = (
                String::from_utf8_lossy(&whole.stdout),
                String::from_utf8_lossy(&merged.stdout),
            );
            let money = |t: &str| t.lines().find(|l| l.contains("money")).map(str::to_string);
            assert!(money(&w).is_some(), "{w}");
            assert_eq!(money(&w), money(&m), "{format}");
        }
    }
    // Partials made with another rule, or other prices (or none), are refused.
    let continue_rule = partial(
        "c.json",
        &without,
        &["--prices", p, "--plain-reply", "continue"],
    );
    let unpriced = partial("d.json", &without, &[]);
    for other in [&continue_rule, &unpriced] {
        let o = run_bounded(mirotrace().args(["merge", "-q"]).arg(&a).arg(other));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("cannot merge"), "{err}");
    }
    // Partial diffs alike.
    let diff_partial = |name: &str, rule: &str| {
        let out = dir.join(name);
        let o = mirotrace()
            .args([
                "diff",
                "-q",
                "--format",
                "partial",
                "--plain-reply",
                rule,
                "-o",
            ])
            .arg(&out)
            .arg("--base")
            .arg(&with_usage)
            .arg("--new")
            .arg(&without)
            .output()
            .expect("run");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    };
    let (f, c) = (
        diff_partial("df.json", "final"),
        diff_partial("dc.json", "continue"),
    );
    let o = run_bounded(mirotrace().args(["merge", "-q"]).arg(&f).arg(&c));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--plain-reply continue"), "{err}");
}

#[test]
fn export_selects_the_kinds_analyze_counts_as_other() {
    let dir = scratch("round4-other");
    let file = dir.join("kinds.jsonl");
    // 300 distinct tool errors (letters only: nothing masked).
    let letters = b"abcdefgh";
    let mut text = String::new();
    for i in 0..300usize {
        let word: String = (0..4)
            .map(|d| letters[(i >> (3 * d)) % 8] as char)
            .collect();
        text.push_str(&format!(
            "{{\"trace_id\": \"t{i}\", \"system_prompt\": \"## Server name: tool-python\\n### Tool name: run_python_code\\n\", \"content\": \"<use_mcp_tool>\\n<server_name>tool-python</server_name>\\n<tool_name>run_python_code</tool_name>\\n<arguments>\\n{{\\\"code\\\": \\\"x\\\"}}\\n</arguments>\\n</use_mcp_tool>\", \"tool_results\": [{{\"result\": \"Error executing tool run_python_code: failure {word}\"}}]}}\n"
        ));
    }
    std::fs::write(&file, text).expect("write");
    let (code, json, err) = analyze(&[os(&file)]);
    assert_eq!(code, Some(0), "{err}");
    let other = json["mistakes"]["tool_error"]["other"]
        .as_u64()
        .expect("other");
    assert_eq!(other, 200);
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let o = run_bounded(
            mirotrace()
                .args([
                    "export",
                    "-q",
                    "-j",
                    threads,
                    "--format",
                    "examples",
                    "--kind",
                    "tool_error.other",
                ])
                .arg(&file),
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        assert_eq!(lines.len() as u64, other);
        assert!(lines.iter().all(|l| l["kind"] == "tool_error.other"));
        outputs.push(o.stdout);
    }
    assert_eq!(
        outputs[0], outputs[1],
        "the same lines whatever the threads"
    );
    // The kept kinds are not in it: one of them, exported by name, is not.
    let kept = json["mistakes"]["tool_error"]
        .as_object()
        .expect("kinds")
        .keys()
        .find(|k| *k != "other")
        .expect("a kept kind")
        .clone();
    let o = run_bounded(
        mirotrace()
            .args(["export", "-q", "--format", "examples", "--kind"])
            .arg(format!("tool_error.{kept}"))
            .arg(&file),
    );
    let kept_lines = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(kept_lines.lines().count(), 1);
    let trace = serde_json::from_str::<serde_json::Value>(kept_lines.trim()).expect("JSON")
        ["trace_id"]
        .clone();
    let others = String::from_utf8_lossy(&outputs[0]).to_string();
    assert!(
        !others.contains(&format!("\"trace_id\": {trace}")),
        "{trace}"
    );
}

#[test]
fn claude_code_sub_agents_are_each_their_own_conversation() {
    let dir = scratch("round4-subagents");
    let line = |v: serde_json::Value| serde_json::to_string(&v).expect("JSON") + "\n";
    let s = "sess";
    let side = |agent: &str, kind: &str, message: serde_json::Value| {
        line(
            serde_json::json!({"type": kind, "sessionId": s, "isSidechain": true, "agentId": agent, "message": message}),
        )
    };
    let ask = |text: &str| serde_json::json!({"role": "user", "content": text});
    let call = |id: &str, n: usize| {
        serde_json::json!({"id": format!("m-{id}-{n}"), "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": format!("{id}-{n}"), "name": "Bash", "input": {"command": "ls"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 10}})
    };
    let result = |id: &str, n: usize| serde_json::json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("{id}-{n}"), "content": "ok"}]});
    let answer = |id: &str| {
        serde_json::json!({"id": format!("m-{id}-end"), "role": "assistant", "content": [{"type": "text", "text": "done"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 100, "output_tokens": 10}})
    };
    let mut text = line(serde_json::json!({"type": "user", "sessionId": s, "message": ask("go")}));
    text +=
        &line(serde_json::json!({"type": "assistant", "sessionId": s, "message": answer("main")}));
    // Two sub-agents, interleaved as parallel Task calls write them.
    for agent in ["a1", "a2"] {
        text += &side(agent, "user", ask("sub task"));
    }
    for n in 0..2 {
        for agent in ["a1", "a2"] {
            text += &side(agent, "assistant", call(agent, n));
            text += &side(agent, "user", result(agent, n));
        }
    }
    for agent in ["a1", "a2"] {
        text += &side(agent, "assistant", answer(agent));
    }
    let file = dir.join("session.jsonl");
    std::fs::write(&file, text).expect("write");
    let o = run_bounded(mirotrace().args(["replay", "-q"]).arg(&file));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let verdicts: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let mut traces: Vec<&str> = verdicts
        .iter()
        .map(|v| v["trace_id"].as_str().expect("id"))
        .collect();
    traces.dedup();
    assert_eq!(
        traces,
        vec!["sess", "sess/sidechain/a1", "sess/sidechain/a2"]
    );
    assert_eq!(verdicts.len(), 1 + 2 * 3);
    for v in &verdicts {
        assert_ne!(v["outcome"], "unreachable", "{v}");
    }
    let finals = verdicts.iter().filter(|v| v["outcome"] == "final").count();
    assert_eq!(finals, 3);
}

/// Token sums past 2^64 − 1: held there by `analyze` and by `merge` alike
/// (one rule), and shown as at least that, not as an exact figure.
#[test]
fn token_sums_past_the_limit_are_held_alike_by_analyze_and_merge() {
    let dir = scratch("round4-held-sums");
    let line = |id: &str| {
        format!("{{\"trace_id\": \"{id}\", \"content\": \"\\\\boxed{{1}}\", \"usage\": {{\"input_tokens\": 10000000000000000000, \"output_tokens\": 5}}}}\n")
    };
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, line("a")).expect("write");
    std::fs::write(&b, line("b")).expect("write");
    let (code, whole, err) = analyze(&[os(&a), os(&b)]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        whole["cost"]["total"]["input_tokens"].as_u64(),
        Some(u64::MAX)
    );
    let mut parts = Vec::new();
    for input in [&a, &b] {
        let out = dir.join(format!("{}.part", input.display()));
        let o = mirotrace()
            .args(["analyze", "-q", "--format", "partial", "-o"])
            .arg(&out)
            .arg(input)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(0));
        parts.push(out);
    }
    let o = run_bounded(
        mirotrace()
            .args(["merge", "-q", "--format", "json"])
            .args(&parts),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let merged: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(merged["cost"], whole["cost"]);
    let table = run_bounded(mirotrace().args(["analyze", "-q"]).arg(&a).arg(&b));
    assert!(
        String::from_utf8_lossy(&table.stdout).contains("≥ 18"),
        "{}",
        String::from_utf8_lossy(&table.stdout)
    );
}
