//! Reports at a terminal's width: analyze, diff and keywords on the
//! fixtures at 60, 80, 100 and 200 columns (`COLUMNS`, stdout piped).
//!
//! Each output is parsed, not only compared: no line is wider than the
//! width, and every identifier-like word (reason, tool and metric names,
//! file paths: a run of `[A-Za-z0-9_./-]` holding `_` or `/`) of the
//! report drawn at its natural width appears whole, and no fragment of one
//! appears. The outputs are also kept as snapshots,
//! tests/snapshots/terminal__*.snap (`INSTA_UPDATE=always` rewrites them),
//! so a change of layout shows in review.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use unicode_width::UnicodeWidthStr;

const WIDTHS: [usize; 5] = [60, 80, 100, 120, 200];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs mirotrace in the crate root with stdout piped, as found on PATH
/// (`argv[0]` is `mirotrace`); `columns` sets `COLUMNS`.
fn run(args: &[&str], columns: Option<usize>) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = crate::common::mirotrace();
    cmd.arg0("mirotrace")
        .current_dir(root())
        .args(args)
        .env_remove("COLUMNS");
    cmd.env("NO_COLOR", "1");
    if let Some(w) = columns {
        cmd.env("COLUMNS", w.to_string());
    }
    cmd.output().expect("mirotrace runs")
}

fn stdout(args: &[&str], columns: Option<usize>) -> String {
    let out = run(args, columns);
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Identifier-like words: runs of `[A-Za-z0-9_./-]` that hold `_` or `/`.
fn identifiers(text: &str) -> BTreeSet<String> {
    let is_part = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    text.split(|c: char| !is_part(c))
        .map(|w| w.trim_end_matches(['.', '-']))
        .filter(|w| w.contains('_') || w.contains('/'))
        .map(str::to_string)
        .collect()
}

fn check_fits(name: &str, natural: &str, fitted: &str, width: usize) {
    for (n, line) in fitted.lines().enumerate() {
        assert!(
            line.width() <= width,
            "{name} at {width}: line {} is {} columns:\n{line}",
            n + 1,
            line.width()
        );
    }
    let want = identifiers(natural);
    let got = identifiers(fitted);
    // Headers (the report's own words) may break after `_`: `duplicate_`
    // over `query`. Names from traces never break, but in a column of free
    // text (a verdict's detail) a word wider than the column is cut: each
    // piece is then part of a word of the unfitted report, in replay's
    // timeline only.
    let header_piece = |w: &str| w.ends_with('_') && want.iter().any(|n| n.starts_with(w));
    let prose_piece = |w: &str| name == "replay-trace" && natural.contains(w);
    let broken: Vec<_> = got
        .difference(&want)
        .filter(|w| !header_piece(w) && !prose_piece(w))
        .collect();
    assert!(
        broken.is_empty(),
        "{name} at {width}: words not in the unfitted report (cut?): {broken:?}"
    );
    // A column left out at this width is named under its table; anything
    // else that is missing was cut.
    let lost: Vec<_> = want.difference(&got).collect();
    assert!(
        lost.is_empty() || fitted.contains("not shown at this width:") || name == "replay-trace",
        "{name} at {width}: identifiers no longer whole: {lost:?}"
    );
}

/// `tests/snapshots/terminal__<name>-<width>.snap`.
fn snapshot(name: &str, width: usize, text: &str) {
    crate::common::snapshot::assert_text("terminal", &format!("{name}-{width}"), text);
}

fn check_command(name: &str, args: &[&str]) {
    let natural = stdout(args, None);
    assert!(
        natural.lines().any(|l| l.width() > 100),
        "{name}: the fixture should need fitting at 100 columns"
    );
    for width in WIDTHS {
        let fitted = stdout(args, Some(width));
        check_fits(name, &natural, &fitted, width);
        if width >= 80 {
            let stacked: Vec<&str> = fitted.lines().filter(|l| is_stacked_record(l)).collect();
            assert!(
                stacked.is_empty(),
                "{name} at {width}: tables drawn as stacked records: {stacked:?}"
            );
        }
        snapshot(name, width, &fitted);
    }
}

/// A table row drawn as a record: `- key: value · key: value`.
fn is_stacked_record(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("- ") else {
        return false;
    };
    let pairs = rest.split(" · ").filter(|p| p.contains(": ")).count();
    pairs >= 2
}

/// The line (counted from 1) of the first line starting with `prefix`.
fn line_of(text: &str, prefix: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .map(|n| n + 1)
}

#[test]
fn the_answer_comes_first() {
    let analyze = stdout(
        &[
            "analyze",
            "fixtures/model-a.jsonl",
            "fixtures/model-b.jsonl",
        ],
        Some(80),
    );
    let at = line_of(&analyze, "rollback rate ").expect("the headline");
    assert!(at <= 8, "analyze's headline at line {at}");
    let diff = stdout(
        &[
            "diff",
            "--base",
            "fixtures/model-a.jsonl",
            "--new",
            "fixtures/model-b.jsonl",
            "--iterations",
            "200",
        ],
        Some(80),
    );
    let at = line_of(&diff, "verdict: ").expect("the verdict");
    assert!(at <= 12, "diff's verdict at line {at}:\n{diff}");
}

#[test]
fn the_checker_catches_a_stacked_table() {
    assert!(is_stacked_record(
        "- tool: google_search · calls: 752 · run: 734"
    ));
    assert!(!is_stacked_record("- a list item · with a dot"));
    assert!(!is_stacked_record("google_search  752"));
}

#[test]
fn replay_trace_fits_every_width() {
    check_command(
        "replay-trace",
        &[
            "replay",
            "fixtures/model-a.jsonl",
            "fixtures/model-b.jsonl",
            "--trace",
            "task-001",
        ],
    );
}

#[test]
fn analyze_fits_every_width() {
    check_command("analyze", &["analyze", "fixtures/model-a.jsonl"]);
}

#[test]
fn diff_fits_every_width() {
    check_command(
        "diff",
        &[
            "diff",
            "--base",
            "fixtures/model-a.jsonl",
            "--new",
            "fixtures/model-b.jsonl",
            "--iterations",
            "200",
        ],
    );
}

/// The mistakes block: kind shares of two families, one capped.
#[test]
fn diff_kinds_fits_every_width() {
    check_command(
        "diff-kinds",
        &[
            "diff",
            "--base",
            "fixtures/diff-kinds/base.jsonl",
            "--new",
            "fixtures/diff-kinds/new.jsonl",
            "--iterations",
            "1000",
        ],
    );
}

#[test]
fn keywords_fits_every_width() {
    check_command(
        "keywords",
        &[
            "keywords",
            "fixtures/keywords/traces.jsonl",
            "--list",
            "fixtures/keywords/candidates.txt",
            "--labels",
            "fixtures/keywords/labels.jsonl",
            "--suggest",
        ],
    );
}

#[test]
fn the_checker_catches_a_cut_identifier() {
    let natural = "reason duplicate_query\n";
    let cut = "reason duplicate_q\nuery\n";
    let caught = std::panic::catch_unwind(|| check_fits("t", natural, cut, 60));
    assert!(caught.is_err());
}

#[test]
fn help_wraps_to_the_width() {
    for width in WIDTHS {
        for args in [
            &["--help"][..],
            &["analyze", "--help"],
            &["diff", "--help"],
            &["keywords", "--help"],
        ] {
            let text = stdout(args, Some(width));
            for line in text.lines() {
                assert!(line.width() <= width, "{args:?} at {width}: {line}");
            }
        }
    }
}

#[test]
fn list_metrics_names_every_metric_and_fits() {
    let text = stdout(&["diff", "--list-metrics"], Some(60));
    for m in mirotrace::diff::counts::METRICS.iter() {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(m.id)),
            "{} not listed",
            m.id
        );
    }
    assert!(text.lines().all(|l| l.width() <= 60), "{text}");
}

#[test]
fn a_shell_mangled_fail_on_is_told_to_quote_and_where_metrics_are() {
    let out = run(
        &[
            "diff",
            "--base",
            "fixtures/model-a.jsonl",
            "--new",
            "fixtures/model-b.jsonl",
            "--fail-on",
            "rollback_rate",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--fail-on 'sig:rollback_rate>+1pp'"), "{err}");
    assert!(err.contains("mirotrace diff --list-metrics"), "{err}");
    let help = stdout(&["diff", "--help"], Some(200));
    assert!(
        help.contains("--fail-on 'sig:rollback_rate>+1pp'"),
        "{help}"
    );
}

#[test]
fn completions_and_man_page_name_every_command() {
    let commands = [
        "analyze",
        "replay",
        "diff",
        "keywords",
        "policy",
        "export",
        "merge",
        "completions",
        "man",
    ];
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = stdout(&["completions", shell], None);
        for c in commands {
            assert!(script.contains(c), "{shell} completion lacks {c}");
        }
        // Options of a command are completed too.
        assert!(
            script.contains("fail-on"),
            "{shell} completion lacks --fail-on"
        );
    }
    let page = stdout(&["man"], None);
    assert!(page.contains(".TH mirotrace 1"), "{page}");
    for c in commands {
        assert!(page.contains(c), "the man page lacks {c}");
    }
    let diff = stdout(&["man", "diff"], None);
    assert!(diff.contains(".TH mirotrace-diff 1"), "{diff}");
    // Every page carries the version it documents.
    let version = format!("\"mirotrace {}\"", env!("CARGO_PKG_VERSION"));
    for p in [&page, &diff] {
        let th = p
            .lines()
            .find(|l| l.starts_with(".TH "))
            .unwrap_or_default();
        assert!(th.contains(&version), "{th}");
    }
    assert!(diff.contains("list\\-metrics"), "{diff}");
    assert_eq!(run(&["man", "nope"], None).status.code(), Some(2));
}

#[test]
fn top_zero_says_the_list_is_off_not_that_nothing_rolled_back() {
    let text = stdout(&["analyze", "fixtures/model-a.jsonl", "--top", "0"], None);
    assert!(!text.contains("no trace rolled back"), "{text}");
    assert!(text.contains("not listed (--top 0)"), "{text}");
}

#[test]
fn markdown_keeps_the_indentation_of_outcome_rows() {
    let md = stdout(
        &["analyze", "fixtures/model-a.jsonl", "--format", "markdown"],
        None,
    );
    assert!(md.contains("| &nbsp;&nbsp;rollback |"), "{md}");
}

#[test]
fn a_custom_policy_is_named_in_every_format() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("terminal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let default = stdout(&["policy"], None);
    let custom = dir.join("strict.toml");
    std::fs::write(
        &custom,
        default.replace("rollback_limit = 5", "rollback_limit = 4"),
    )
    .expect("write");
    let restated = dir.join("same.toml");
    std::fs::write(&restated, &default).expect("write");
    let custom = custom.to_str().expect("utf-8");
    for format in ["table", "markdown", "json", "html"] {
        let args = [
            "analyze",
            "fixtures/model-a.jsonl",
            "--format",
            format,
            "--policy",
        ];
        let text = stdout(&[&args[..], &[custom]].concat(), None);
        // Markdown escapes its punctuation (docs/limits.md, "Robustness").
        let dot = if format == "markdown" { "\\." } else { "." };
        assert!(
            text.contains(&format!("strict{dot}toml")),
            "{format} does not name the policy"
        );
        if format != "json" {
            assert!(text.contains("not upstream"), "{format}");
        }
        // A file that restates the defaults is the default: nothing said.
        let same = stdout(
            &[&args[..], &[restated.to_str().expect("utf-8")]].concat(),
            None,
        );
        assert!(!same.contains(&format!("same{dot}toml")), "{format}");
        assert!(!same.contains("not upstream"), "{format}");
    }
    let json = stdout(
        &["analyze", "fixtures/model-a.jsonl", "--format", "json"],
        None,
    );
    assert!(json.contains("\"policy\": null"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn chinese_suggestions_end_on_word_boundaries() {
    let text = stdout(
        &[
            "keywords",
            "fixtures/keywords/traces.jsonl",
            "--suggest",
            "--format",
            "text",
        ],
        None,
    );
    let phrases: Vec<&str> = text.lines().collect();
    for cut in ["不能继", "我无法访"] {
        assert!(!phrases.contains(&cut), "{cut} suggested: {phrases:?}");
    }
    assert!(phrases.contains(&"不能继续"), "{phrases:?}");
}

/// Issue 26: the 80- and 120-column layouts of the commands the tests
/// above do not draw: `replay` (its verdict lines), `merge` of two
/// partials, and `policy` (`export` writes a file's worth of JSON and
/// prints no summary). `analyze`, `diff`, `replay --trace` and
/// `keywords` are snapshotted by their `*_fits_every_width` tests.
#[test]
fn every_other_command_has_80_and_120_column_snapshots() {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("snapshots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut partials = Vec::new();
    for f in ["model-a", "model-b"] {
        let p = dir.join(format!("{f}.partial.json"));
        let p = p.to_str().expect("UTF-8").to_string();
        let input = format!("fixtures/{f}.jsonl");
        stdout(&["analyze", &input, "--format", "partial", "-o", &p], None);
        partials.push(p);
    }
    for width in [80, 120] {
        let replay = stdout(&["replay", "fixtures/model-a.jsonl"], Some(width));
        let first: Vec<&str> = replay.lines().take(12).collect();
        snapshot("replay", width, &(first.join("\n") + "\n"));
        let merged = stdout(&["merge", &partials[0], &partials[1]], Some(width));
        for line in merged.lines() {
            assert!(line.width() <= width, "merge at {width}: {line}");
        }
        assert!(!merged.lines().any(is_stacked_record), "merge at {width}");
        snapshot("merge", width, &merged);
        snapshot("policy", width, &stdout(&["policy"], Some(width)));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The header line of the table under `caption` (the line after it).
fn header_under<'t>(text: &'t str, caption: &str) -> &'t str {
    let mut lines = text.lines().skip_while(|l| *l != caption);
    lines.next();
    lines
        .next()
        .unwrap_or_else(|| panic!("no table {caption:?}:\n{text}"))
}

/// Columns go by importance at a short width, not by position: the
/// longest streaks keep how they ended, the worst traces their file.
#[test]
fn narrow_tables_keep_their_most_important_columns() {
    for width in [60, 80] {
        let one = stdout(&["analyze", "fixtures/model-a.jsonl"], Some(width));
        let text = stdout(
            &[
                "analyze",
                "fixtures/model-a.jsonl",
                "fixtures/model-b.jsonl",
            ],
            Some(width),
        );
        let streaks = header_under(&text, "longest streaks");
        // Which session and why (issue 41), before where in the file; at
        // 60 columns, why.
        let keep: &[&str] = if width >= 80 {
            &["length", "trace", "session", "reasons"]
        } else {
            &["length", "trace", "reasons"]
        };
        for column in keep {
            assert!(
                streaks.contains(column),
                "at {width}: {column} in {streaks}"
            );
        }
        assert!(
            !streaks.contains("from") && !streaks.contains("line"),
            "at {width} the start index and line go first: {streaks}"
        );
        let worst = text
            .lines()
            .skip_while(|l| *l != "WORST TRACES")
            .nth(1)
            .expect("the worst traces' header");
        assert!(
            worst.contains("trace") && worst.contains("file"),
            "at {width}: {worst}"
        );
        assert!(worst.contains("rollbacks"), "at {width}: {worst}");
        // One input: every row's file is the same, and that column goes
        // first (issue 41), whatever its priority.
        let worst = one
            .lines()
            .skip_while(|l| *l != "WORST TRACES")
            .nth(1)
            .expect("the worst traces' header");
        if width == 60 {
            assert!(!worst.contains("file"), "at {width}: {worst}");
        }
    }
}

/// Suggested commands name the program as it was run (issue 26): as
/// found on PATH, by the path typed, or as `cargo run` under Cargo.
#[test]
fn suggested_commands_name_the_program_as_invoked() {
    let command = |out: Output| -> String {
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        text.lines()
            .find(|l| l.contains(" replay fixtures/model-a.jsonl --trace "))
            .unwrap_or_else(|| panic!("no suggested command:\n{text}"))
            .to_string()
    };
    let args = ["analyze", "fixtures/model-a.jsonl"];
    assert!(command(run(&args, None)).starts_with("mirotrace replay "));
    let bin = env!("CARGO_BIN_EXE_mirotrace");
    let plain = Command::new(bin)
        .current_dir(root())
        .args(args)
        .env_remove("CARGO")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let typed = command(plain);
    assert!(typed.starts_with(&format!("{bin} replay ")), "{typed}");
    let under_cargo = Command::new(bin)
        .current_dir(root())
        .args(args)
        .env("CARGO", "cargo")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let cargo = command(under_cargo);
    assert!(
        cargo.starts_with("cargo run --") && cargo.contains("-- replay fixtures/model-a.jsonl"),
        "{cargo}"
    );
}

/// At 80 columns each table keeps what answers its question (issue 41):
/// a timeline its detail (the why), a scored keyword list its precision,
/// recall and F1; a column of one value (task logs' `line`, all 1) goes
/// before them.
#[test]
fn at_80_columns_the_answer_survives() {
    let trace = stdout(
        &[
            "replay",
            "fixtures/model-a.jsonl",
            "fixtures/model-b.jsonl",
            "--trace",
            "task-001",
        ],
        Some(80),
    );
    let header = trace.lines().next().unwrap_or_default();
    for column in ["outcome", "reason", "detail"] {
        assert!(header.contains(column), "{column} in {header}");
    }
    let keywords = stdout(
        &[
            "keywords",
            "fixtures/keywords/traces.jsonl",
            "--list",
            "fixtures/keywords/candidates.txt",
            "--labels",
            "fixtures/keywords/labels.jsonl",
        ],
        Some(80),
    );
    let lists = header_under(&keywords, "KEYWORD LISTS");
    for column in ["list", "precision", "recall", "F1"] {
        assert!(lists.contains(column), "{column} in {lists}");
    }
    // A task log: every attempt's line is 1, and that column goes first.
    let file = std::fs::read_dir(crate::common::fixture_path("tasklog"))
        .expect("fixtures/tasklog")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a task log")
        .display()
        .to_string();
    let verdicts = run(&["replay", &file, "--format", "jsonl"], None);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&verdicts.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(lines.len() > 2, "a timeline of several attempts");
    let id = lines[0]["trace_id"].as_str().expect("trace_id").to_string();
    let text = stdout(&["replay", &file, "--trace", &id], Some(80));
    let header = text.lines().next().unwrap_or_default();
    assert!(header.contains("detail"), "{header}");
    assert!(
        !header.split_whitespace().any(|w| w == "line"),
        "{header}\n{text}"
    );
}

/// The README's sample ("What it prints") is the binary's own output: the
/// command it names, at 80 columns, begins with exactly those lines.
#[test]
fn the_readme_sample_is_the_binarys_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let section = readme
        .split("## What it prints")
        .nth(1)
        .expect("a 'What it prints' section");
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("its text block");
    let out = stdout(
        &[
            "analyze",
            "fixtures/model-a.jsonl",
            "fixtures/model-b.jsonl",
        ],
        Some(80),
    );
    let got: Vec<&str> = out.lines().collect();
    let want: Vec<&str> = block.lines().collect();
    assert!(want.len() > 20, "the sample shows the report's start");
    assert_eq!(
        got.get(..want.len()),
        Some(&want[..]),
        "README.md's sample drifted from the binary's output; it now starts:\n{}",
        got.iter()
            .take(want.len())
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // It says so, and names the command.
    assert!(section.contains("`mirotrace analyze` on the two bundled model runs, at 80"));
}

/// docs/usage.md's `--input-format` values are the format registry's,
/// every one and in its order; the README shows `--plain-reply continue`
/// and says how long the first build takes.
#[test]
fn the_docs_name_every_input_format_and_the_first_build() {
    let usage = std::fs::read_to_string(root().join("docs/usage.md")).expect("docs/usage.md");
    let listed = usage
        .split("`--input-format auto\\|")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("the --input-format row");
    let listed: Vec<&str> = listed.split("\\|").collect();
    let registry: Vec<&str> = mirotrace::read::formats::FORMATS
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(listed, registry, "docs/usage.md's --input-format list");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(readme.contains("--plain-reply continue"));
    assert!(readme.contains("2-core machine"));
}
