//! Trace text reaching a reader (issue 23): Markdown reports of hostile
//! traces, parsed by a real CommonMark/GFM parser (comrak, with GitHub's
//! autolinks, tables, strikethrough, footnotes and `$` math), hold no link,
//! image or HTML of the trace's making and show its text literally; stderr
//! never carries a file name's or key's terminal controls raw.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use comrak::nodes::NodeValue;

use crate::common;
use common::{fixture, scratch};

use crate::common::BIN;

/// A trace id with every construct that would be live in Markdown.
const HOSTILE_ID: &str = "[x](https://evil.example/i) ![p](https://evil.example/p.png) \
<img src=x> &#x202E; &amp; ``t`` *b* _u_ ~~s~~ $m$ [^1] | #h >q \
<https://evil.example/a> https://evil.example/bare www.evil.example a@evil.example";
/// A query (shown shortened in the headline).
const HOSTILE_QUERY: &str =
    "[q](https://evil.example/q) ![i](https://evil.example/i.png) <b>bold</b> &#x202E; ``x`` *em*";
/// A file name (no `/`), shown with `--group-by file` and in the command.
const HOSTILE_FILE: &str = "![p](evil.png) &amp; <b>x ``y``.jsonl";

/// `fixtures/model-a.jsonl` with every trace id and one query made hostile.
fn hostile_traces(dir: &Path) -> PathBuf {
    let good = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let query = serde_json::to_string(HOSTILE_QUERY).expect("json");
    let query = &query[1..query.len() - 1];
    let lines: Vec<String> = good
        .lines()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).expect("fixture line");
            let id = format!("{HOSTILE_ID} {}", v["trace_id"].as_str().expect("id"));
            v["trace_id"] = id.into();
            if let Some(content) = v["content"].as_str() {
                v["content"] = content
                    .replace("Eiffel Tower opening year 1889", query)
                    .into();
            }
            v.to_string()
        })
        .collect();
    let path = dir.join(HOSTILE_FILE);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

/// Runs mirotrace as a shell that found it on PATH would (`argv[0]` is
/// `mirotrace`), so suggested commands start `mirotrace replay`.
fn run(args: &[&str], dir: &Path) -> Output {
    use std::os::unix::process::CommandExt;
    Command::new(BIN)
        .arg0("mirotrace")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run")
}

/// What a GFM reader sees: the nodes that must not come from trace text,
/// and the text of every paragraph, heading and cell (code spans included).
struct Rendered {
    live: Vec<String>,
    text: String,
    code: Vec<String>,
}

fn render(md: &str) -> Rendered {
    let mut options = comrak::Options::default();
    options.extension.autolink = true;
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.footnotes = true;
    options.extension.math_dollars = true;
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, md, &options);
    let mut rendered = Rendered {
        live: Vec::new(),
        text: String::new(),
        code: Vec::new(),
    };
    for node in root.descendants() {
        let value = node.data().value.clone();
        match &value {
            NodeValue::Link(_)
            | NodeValue::Image(_)
            | NodeValue::HtmlInline(_)
            | NodeValue::FootnoteReference(_)
            | NodeValue::FootnoteDefinition(_)
            | NodeValue::Math(_)
            | NodeValue::Strikethrough
            | NodeValue::CodeBlock(_)
            | NodeValue::BlockQuote => rendered.live.push(format!("{value:?}")),
            // The one HTML the report writes: `<details><summary>…`.
            NodeValue::HtmlBlock(html) if !ours(&html.literal) => {
                rendered.live.push(html.literal.clone())
            }
            NodeValue::Paragraph | NodeValue::Heading(_) | NodeValue::TableCell => {
                for inner in node.descendants() {
                    match &inner.data().value {
                        NodeValue::Text(t) => rendered.text.push_str(t),
                        NodeValue::Code(c) => {
                            rendered.text.push_str(&c.literal);
                            rendered.code.push(c.literal.clone());
                        }
                        NodeValue::SoftBreak | NodeValue::LineBreak => rendered.text.push(' '),
                        _ => {}
                    }
                }
                rendered.text.push('\n');
            }
            _ => {}
        }
    }
    rendered
}

/// Whether an HTML block is the report's own `<details>`, its summary
/// holding no tag.
fn ours(html: &str) -> bool {
    html.lines().all(|line| {
        let line = line.trim();
        line == "</details>"
            || line.strip_prefix("<details><summary>").is_some_and(|rest| {
                rest.strip_suffix("</summary>")
                    .is_some_and(|summary| !summary.contains('<') && !summary.contains('>'))
            })
    })
}

fn assert_safe(md: &str, must_show: &[&str]) -> Rendered {
    let r = render(md);
    assert!(r.live.is_empty(), "live Markdown: {:?}\n{md}", r.live);
    for s in must_show {
        assert!(r.text.contains(s), "{s:?} not shown literally:\n{}", r.text);
    }
    r
}

#[test]
fn the_renderer_would_see_the_attack() {
    // The check is real: raw, the same strings are live.
    let raw = render(&format!("{HOSTILE_ID}\n\n`` {HOSTILE_QUERY}\n"));
    assert!(raw.live.len() >= 4, "{:?}", raw.live);
}

#[test]
fn an_analyze_report_shows_hostile_text_literally() {
    let dir = scratch("md-analyze");
    hostile_traces(&dir);
    let o = run(
        &[
            "analyze",
            "-q",
            "--format",
            "markdown",
            "--group-by",
            "file",
            HOSTILE_FILE,
        ],
        &dir,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let md = String::from_utf8(o.stdout).expect("UTF-8");
    let worst = format!("{HOSTILE_ID} task-000");
    let r = assert_safe(
        &md,
        &[
            &worst,
            HOSTILE_FILE,
            "[q](https://evil.example/q) ![i](https:",
        ],
    );
    // The suggested command is one code span holding the whole command.
    let command = r
        .code
        .iter()
        .find(|c| c.starts_with("mirotrace replay "))
        .unwrap_or_else(|| panic!("no command span:\n{md}"));
    assert!(
        command.contains(&format!("'{worst}'")) && command.contains(&format!("'{HOSTILE_FILE}'")),
        "{command}"
    );
}

#[test]
fn a_diff_report_shows_hostile_text_literally() {
    let dir = scratch("md-diff");
    hostile_traces(&dir);
    let new = fixture("model-b.jsonl");
    let o = run(
        &[
            "diff",
            "-q",
            "--base",
            HOSTILE_FILE,
            "--new",
            &new,
            "--format",
            "markdown",
            "--iterations",
            "50",
        ],
        &dir,
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let md = String::from_utf8(o.stdout).expect("UTF-8");
    assert_safe(&md, &[HOSTILE_FILE]);
}

/// A file name that retitles the terminal and clears it.
const CONTROL_NAME: &str = "a\u{1b}]0;owned\u{7}\u{1b}[2Jb.jsonl";

fn assert_no_controls(o: &Output, what: &str) {
    assert_no_raw_controls(o, what);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("\\e]0;owned"),
        "{what}: the name is shown escaped: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn assert_no_raw_controls(o: &Output, what: &str) {
    let err = &o.stderr;
    assert!(!err.is_empty(), "{what}: nothing said");
    assert!(
        !err.contains(&0x1b) && !err.contains(&0x07),
        "{what}: raw controls on stderr: {:?}",
        String::from_utf8_lossy(err)
    );
}

#[test]
fn stderr_never_carries_terminal_controls_from_names() {
    let dir = scratch("stderr");
    std::fs::write(dir.join(CONTROL_NAME), "not json\n").expect("write");
    let bad_line = run(&["analyze", CONTROL_NAME], &dir);
    assert_eq!(bad_line.status.code(), Some(4));
    assert_no_controls(&bad_line, "a skipped line");

    let missing = format!("{CONTROL_NAME}.missing");
    let o = run(&["replay", &missing], &dir);
    assert_eq!(o.status.code(), Some(4));
    assert_no_controls(&o, "a missing input");

    // Argument errors quote what was typed.
    let o = run(&["analyze", "--top", CONTROL_NAME, "x.jsonl"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert_no_controls(&o, "an argument error");
    let o = run(&[CONTROL_NAME], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert_no_controls(&o, "an unknown command");

    // A trace id asked for and not found.
    let good = fixture("model-a.jsonl");
    let o = run(&["replay", &good, "--trace", CONTROL_NAME], &dir);
    assert_eq!(o.status.code(), Some(2));
    // (quoted as a Rust string: `\u{1b}`)
    assert_no_raw_controls(&o, "a trace id");

    // Unrecognised JSON keys are named in the message.
    let keys = dir.join("keys.json");
    std::fs::write(&keys, r#"{"\u001b]0;owned\u0007": 1, "x\u202e": 2}"#).expect("write");
    let o = run(&["analyze", "--input-format", "atif", "keys.json"], &dir);
    assert_eq!(o.status.code(), Some(4));
    assert_no_controls(&o, "JSON keys");
    assert!(!String::from_utf8_lossy(&o.stderr).contains('\u{202e}'));

    // A name with a line feed cannot forge a line of its own.
    let forged = "x\nmirotrace: all good.jsonl";
    let o = run(&["analyze", forged], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .all(|l| l.starts_with("mirotrace: ") || l.starts_with("  ")),
        "{err}"
    );
    assert_eq!(err.matches("\nmirotrace: all good").count(), 0, "{err}");
}
