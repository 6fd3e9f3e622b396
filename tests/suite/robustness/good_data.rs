//! Issue 14, "good data lost or wrong": every good record of an input is
//! read whatever the first line, the file's name or the stream around it,
//! and what is bad is reported once, at its place.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    crate::common::mirotrace()
}

fn write(tag: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("good-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    let p = d.join(name);
    std::fs::write(&p, bytes).expect("write input");
    p
}

/// Seven good native lines, one trace each.
fn seven_good_lines() -> String {
    (1..=7)
        .map(|i| format!("{{\"trace_id\": \"good-{i}\", \"content\": \"\\\\boxed{{{i}}}\"}}\n"))
        .collect()
}

fn replay(args: &[&str], path: &Path) -> Output {
    bin()
        .arg("replay")
        .args(args)
        .arg(path)
        .output()
        .expect("run")
}

fn trace_ids(o: &Output) -> Vec<String> {
    let mut ids: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("verdict is JSON");
            v["trace_id"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    ids.dedup();
    ids
}

fn good_ids() -> Vec<String> {
    (1..=7).map(|i| format!("good-{i}")).collect()
}

/// The bad first line costs that line: the seven good lines after it are
/// read, the first line is reported with its file and line, and counted.
fn assert_first_line_costs_one_line(tag: &str, first: &[u8], args: &[&str]) {
    let mut bytes = first.to_vec();
    bytes.extend(seven_good_lines().as_bytes());
    let path = write(tag, "input.jsonl", &bytes);
    let o = replay(args, &path);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(trace_ids(&o), good_ids(), "{tag}: {err}");
    assert_eq!(o.status.code(), Some(3), "{tag}: {err}");
    assert!(err.contains("input.jsonl:1: "), "{tag}: {err}");
    assert_eq!(
        err.matches("(line skipped)").count(),
        1,
        "{tag}: one bad line: {err}"
    );
}

#[test]
fn a_first_line_cut_after_a_comma_does_not_make_the_file_a_document() {
    assert_first_line_costs_one_line("comma", b"{\"trace_id\": \"cut\",\n", &[]);
}

#[test]
fn a_first_line_cut_at_a_bracket_does_not_make_the_file_a_document() {
    assert_first_line_costs_one_line("bracket", b"[\n", &[]);
    assert_first_line_costs_one_line(
        "open-list",
        b"{\"trace_id\": \"cut\", \"tool_results\": [\n",
        &[],
    );
}

#[test]
fn an_over_long_first_line_followed_by_a_comma_is_one_bad_line() {
    let mut first = format!("{{\"trace_id\": \"{}\"", "x".repeat(200)).into_bytes();
    // The byte just past the cap is a comma.
    let cap = first.len();
    first.extend(b", \"content\": \"\"}\n");
    let cap = cap.to_string();
    assert_first_line_costs_one_line("long", &first, &["--max-line-bytes", &cap]);
}

#[test]
fn a_pretty_printed_document_is_still_read_as_one() {
    let doc = b"[\n  {\"trace_id\": \"a\", \"content\": \"x\"},\n  {\"trace_id\": \"b\", \"content\": \"y\"}\n]\n";
    let path = write("pretty", "list.json", doc);
    let o = replay(&[], &path);
    assert_eq!(trace_ids(&o), ["a", "b"], "{o:?}");
    assert_eq!(o.status.code(), Some(0));
}

fn fixture(name: &str) -> PathBuf {
    crate::common::fixture_path("tasklog").join(name)
}

#[test]
fn concatenated_task_logs_yield_every_complete_one_and_report_the_cut_one_in_place() {
    let first = std::fs::read_to_string(fixture("task_eiffel-height_2025-06-03-10-12-44.json"))
        .expect("fixture");
    let second = std::fs::read_to_string(fixture("task_reykjavik-pop_2025-06-03-11-02-10.json"))
        .expect("fixture");
    let first_lines = first.lines().count();
    let kept: Vec<&str> = second.lines().take(second.lines().count() / 2).collect();
    let stdin = format!("{first}{}\n", kept.join("\n"));
    let last_line = first_lines + kept.len();
    let o = crate::common::run_with_stdin(bin().args(["replay", "-"]), stdin.as_bytes());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(trace_ids(&o), ["eiffel-height", "reykjavik-pop"], "{err}");
    assert_eq!(o.status.code(), Some(3), "{err}");
    // The cut is past the first log, where the second one stops.
    let place = err
        .lines()
        .find(|l| l.contains("not JSON"))
        .and_then(|l| l.split(':').nth(2))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no report of the cut: {err}"));
    assert!(
        place > first_lines && place <= last_line + 1,
        "reported at line {place}, the second log spans {}..={last_line}: {err}",
        first_lines + 1
    );
    assert!(
        err.contains("read as a task log cut off after line"),
        "{err}"
    );
}

#[test]
fn the_content_decides_compression_not_the_name() {
    let good = seven_good_lines();
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(good.as_bytes()).expect("gzip");
        e.finish().expect("gzip")
    };
    let zst = zstd::encode_all(good.as_bytes(), 3).expect("zstd");
    for (name, bytes) in [
        ("plain.jsonl.gz", good.as_bytes().to_vec()),
        ("zstd.jsonl.gz", zst.clone()),
        ("gzip.jsonl", gz.clone()),
        ("gzip.jsonl.zst", gz),
        ("plain.jsonl.zst", good.as_bytes().to_vec()),
    ] {
        let path = write("magic", name, &bytes);
        let o = replay(&[], &path);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(trace_ids(&o), good_ids(), "{name}: {err}");
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
    }
}

/// Verdicts per trace id, in order.
fn verdict_counts(o: &Output) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("verdict is JSON");
        let id = v["trace_id"].as_str().unwrap_or_default().to_string();
        match out.last_mut() {
            Some((last, n)) if *last == id => *n += 1,
            _ => out.push((id, 1)),
        }
    }
    out
}

#[test]
fn a_native_line_with_a_message_list_is_native_wherever_it_stands() {
    let native = concat!(
        r#"{"trace_id": "m", "content": "a", "messages": [{"role": "user", "content": "q"}]}"#,
        "\n",
        r#"{"trace_id": "m", "content": "b", "messages": [{"role": "user", "content": "q"}]}"#,
        "\n"
    );
    let chat = concat!(
        r#"{"trace_id": "c", "messages": [{"role": "user", "content": "q"}, "#,
        r#"{"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}, "#,
        r#"{"role": "assistant", "content": "y"}]}"#,
        "\n"
    );
    let plain = "{\"trace_id\": \"z\", \"content\": \"x\"}\n";
    for (name, text, expected) in [
        ("top", native.to_string(), vec![("m", 2)]),
        (
            "later",
            format!("{plain}{native}"),
            vec![("z", 1), ("m", 2)],
        ),
        ("chat-top", chat.to_string(), vec![("c", 2)]),
        (
            "chat-later",
            format!("{plain}{chat}"),
            vec![("z", 1), ("c", 2)],
        ),
    ] {
        let path = write("messages", &format!("{name}.jsonl"), text.as_bytes());
        let o = replay(&[], &path);
        let expected: Vec<(String, usize)> = expected
            .into_iter()
            .map(|(i, n)| (i.to_string(), n))
            .collect();
        assert_eq!(verdict_counts(&o), expected, "{name}: {o:?}");
    }
}

#[test]
fn ids_differing_only_in_lone_surrogates_stay_apart() {
    let native = concat!(
        r#"{"trace_id": "t\udc00", "content": "a"}"#,
        "\n",
        r#"{"trace_id": "t\udc01", "content": "b"}"#,
        "\n",
        r#"{"trace_id": "s", "session": "agent-x_\udc00", "content": "c"}"#,
        "\n",
        r#"{"trace_id": "s", "session": "agent-x_\udc01", "content": "d"}"#,
        "\n",
    );
    let chat = concat!(
        r#"{"trace_id": "c\udc00", "messages": [{"role": "assistant", "content": "a"}]}"#,
        "\n",
        r#"{"trace_id": "c\udc01", "messages": [{"role": "assistant", "content": "a"}]}"#,
        "\n",
    );
    for (name, text, traces, sessions) in [("native", native, 3, 4), ("chat", chat, 2, 2)] {
        let path = write("surrogates", &format!("{name}.jsonl"), text.as_bytes());
        let o = replay(&[], &path);
        assert_eq!(o.status.code(), Some(0), "{name}: {o:?}");
        let verdicts: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("verdict is JSON"))
            .collect();
        let ids: std::collections::BTreeSet<String> =
            verdicts.iter().map(|v| v["trace_id"].to_string()).collect();
        let pairs: std::collections::BTreeSet<String> = verdicts
            .iter()
            .map(|v| format!("{}/{}", v["trace_id"], v["session"]))
            .collect();
        assert_eq!(ids.len(), traces, "{name}: {ids:?}");
        assert_eq!(pairs.len(), sessions, "{name}: {pairs:?}");
    }
}

#[test]
fn non_utf8_file_names_are_read_and_kept_apart() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = write("names", "keep", b"").with_file_name("");
    let ff = dir.join(OsStr::from_bytes(b"x\xff.jsonl"));
    let fe = dir.join(OsStr::from_bytes(b"x\xfe.jsonl"));
    std::fs::write(&ff, "{\"trace_id\": \"a\", \"content\": \"x\"}\n").expect("write");
    std::fs::write(
        &fe,
        "{\"trace_id\": \"b\", \"content\": \"<use_mcp_tool>\"}\n",
    )
    .expect("write");
    let o = bin().arg("replay").arg(&ff).output().expect("run");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(trace_ids(&o), ["a"]);
    let o = bin()
        .args(["analyze", "--group-by", "file", "--format", "json"])
        .arg(&ff)
        .arg(&fe)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let keys: Vec<&str> = report["groups"]["items"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["key"].as_str())
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("x\\xff.jsonl")), "{keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("x\\xfe.jsonl")), "{keys:?}");
}

/// The reasons an input's bad lines are reported with, by line number.
fn bad_reasons(text: &str) -> Vec<(u64, String)> {
    use mirotrace::read::source::{open_stream, ReadOptions};
    use mirotrace::read::Record;
    let stream = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
    open_stream(stream, "x.jsonl".into(), &ReadOptions::default())
        .expect("opens")
        .filter_map(|r| match r {
            Record::Bad(b) => Some((b.origin.line, b.reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_bad_line_gets_one_message_wherever_it_stands() {
    let native = r#"{"trace_id": "n", "content": "x"}"#;
    let chat = r#"{"id": "c", "messages": [{"role": "assistant", "content": "x"}]}"#;
    let bad_lines = [
        "garbage",
        "not json",
        "[1, 2]",
        "\"text\"",
        "123",
        "null",
        r#"{"x": 1}"#,
        r#"{"trace_id": 5, "content": "x"}"#,
        r#"{"trace_id": "a", "content": }"#,
        r#"{"trace_id": "a"} x"#,
        r#"{"trace_id": "a", "session": 3, "content": "x"}"#,
        r#"{"trace_id": "a", "content": 5}"#,
        r#"{"trace_id": "a", "content": "x", "tool_results": 3}"#,
        r#"{"messages": [{"role": "assistant", "content": 5}]}"#,
        r#"{"step_logs": 3}"#,
        r#"{"trace_id": "a", "content": "x""#,
        r#"{"trace_id": "a", "content": "x","#,
    ];
    for bad in bad_lines {
        let first = bad_reasons(&format!("{bad}\n{native}\n{native}\n"));
        let after_native = bad_reasons(&format!("{native}\n{bad}\n{native}\n"));
        let after_chat = bad_reasons(&format!("{chat}\n{bad}\n{native}\n"));
        assert_eq!(first.len(), 1, "{bad}: {first:?}");
        assert_eq!(first[0].0, 1, "{bad}: {first:?}");
        for (place, other) in [
            ("after a native line", &after_native),
            ("after a chat line", &after_chat),
        ] {
            assert_eq!(other.len(), 1, "{bad} {place}: {other:?}");
            assert_eq!(other[0].0, 2, "{bad} {place}: {other:?}");
            assert_eq!(other[0].1, first[0].1, "{bad}: first line vs {place}");
        }
    }
}

/// A file whose first line is a Claude Code session line or OTLP spans is
/// read whole, but native and chat lines in it are still read as such:
/// the fixture's own traces, and every good line besides.
#[test]
fn native_and_chat_lines_in_a_session_or_span_file_are_read() {
    let chat = "{\"id\": \"chat-1\", \"messages\": [{\"role\": \"user\", \"content\": \"q\"}, {\"role\": \"assistant\", \"content\": \"\\\\boxed{a}\"}]}\n";
    for (tag, name) in [
        ("cc-mixed", "harnesses/claude-code/session.jsonl"),
        ("otlp-mixed", "harnesses/otel/openinference.otlp.jsonl"),
    ] {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        let own = trace_ids(&replay(&[], &fixture));
        assert!(!own.is_empty(), "{name} reads to traces");
        let text = std::fs::read_to_string(&fixture).expect("fixture");
        let (first, rest) = text.split_once('\n').expect("several lines");
        let mut bytes = format!("{first}\n{}{chat}{rest}", seven_good_lines());
        bytes.push_str("{\"trace_id\": \"good-8\", \"content\": \"\\\\boxed{8}\"}\n");
        let path = write(tag, "input.jsonl", bytes.as_bytes());
        let o = replay(&[], &path);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {err}");
        let ids = trace_ids(&o);
        let mut want = good_ids();
        want.push("chat-1".into());
        want.push("good-8".into());
        want.extend(own);
        for id in &want {
            assert!(ids.contains(id), "{name}: {id} lost; read {ids:?}; {err}");
        }
    }
}

/// Pretty chat documents one after another, the second one only Python's
/// JSON rules accept (`NaN`, `Infinity`): each is read, as the single
/// document would be; a cut one after them is reported where it breaks off.
#[test]
fn a_python_only_document_among_concatenated_ones_is_read() {
    let doc = |id: &str, extra: &str| {
        format!(
            "{{\n  \"id\": \"{id}\",{extra}\n  \"messages\": [\n    {{\"role\": \"user\", \"content\": \"q\"}},\n    {{\"role\": \"assistant\", \"content\": \"a\"}}\n  ]\n}}\n"
        )
    };
    let text = format!(
        "{}{}{}",
        doc("doc-1", ""),
        doc("doc-2", "\n  \"score\": NaN, \"max\": -Infinity,"),
        doc("doc-3", "")
    );
    let path = write("py-docs", "runs.json", text.as_bytes());
    let o = replay(&[], &path);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(trace_ids(&o), ["doc-1", "doc-2", "doc-3"], "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");

    // A cut fourth document is reported at its own line, not earlier.
    let whole = text.lines().count();
    let cut = format!("{text}{{\n  \"id\": \"doc-4\",\n  \"messages\": [\n");
    let path = write("py-docs-cut", "runs.json", cut.as_bytes());
    let o = replay(&[], &path);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(trace_ids(&o), ["doc-1", "doc-2", "doc-3"], "{err}");
    let place = err
        .lines()
        .find(|l| l.contains("not JSON"))
        .and_then(|l| l.split(':').nth(2))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no report of the cut: {err}"));
    assert!(
        place > whole,
        "reported at line {place}, the cut document starts after {whole}: {err}"
    );
    assert!(err.contains(&format!("at line {place} column")), "{err}");
}

/// Forcing the session's format reads no native line as native: each is
/// reported at its place and counted.
#[test]
fn a_forced_session_format_reports_native_lines() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/harnesses/claude-code/session.jsonl");
    let text = std::fs::read_to_string(&fixture).expect("fixture");
    let path = write(
        "cc-forced",
        "input.jsonl",
        format!("{text}{}", seven_good_lines()).as_bytes(),
    );
    let o = replay(&["--input-format", "claude-code"], &path);
    let err = String::from_utf8_lossy(&o.stderr);
    let ids = trace_ids(&o);
    assert!(!ids.iter().any(|i| i.starts_with("good-")), "{ids:?}");
    // The first problems are printed in full, the rest counted per kind.
    let first = text.lines().count() + 1;
    for line in first..first + 5 {
        assert!(
            err.contains(&format!(
                "input.jsonl:{line}: not a line of a Claude Code session"
            )),
            "line {line}: {err}"
        );
    }
    assert!(
        err.contains("and 2 more problems: 2 × not a line of a Claude Code session"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(3), "{err}");
}
