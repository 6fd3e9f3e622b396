//! `diff`'s mistakes block (the kind shares) and the `json_fixes_share.<fix>`
//! figures, on `fixtures/diff-kinds/` (fixtures/diff-kinds/make.py): the
//! base's format errors are 10% cut off and its repaired arguments all
//! have a trailing comma; the new side's are 50% cut off and broken in
//! ten ways, 10% each (4 of 40 calls).

use std::process::Output;

use serde_json::Value;

use crate::common::{fixture, mirotrace};

fn diff(extra: &[&str]) -> Output {
    mirotrace()
        .args(["diff", "-q", "--iterations", "1000", "--base"])
        .arg(fixture("diff-kinds/base.jsonl"))
        .arg("--new")
        .arg(fixture("diff-kinds/new.jsonl"))
        .args(extra)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .expect("mirotrace runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

fn kind_shares(report: &Value) -> &Vec<Value> {
    report["comparisons"][0]["kind_shares"]
        .as_array()
        .expect("kind_shares")
}

/// The ids of the kind shares that occur on a side, in JSON order.
fn occurring(report: &Value) -> Vec<String> {
    let nonzero = |v: &Value| v.as_f64().is_some_and(|x| x != 0.0);
    kind_shares(report)
        .iter()
        .filter(|m| nonzero(&m["base"]) || nonzero(&m["new"]))
        .map(|m| m["metric"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn json_fixes_shares_are_compared() {
    let report: Value = serde_json::from_slice(&diff(&["--format", "json"]).stdout).expect("JSON");
    let share = |id: &str| {
        kind_shares(&report)
            .iter()
            .find(|m| m["metric"] == id)
            .unwrap_or_else(|| panic!("{id} compared"))
            .clone()
    };
    let quotes = share("json_fixes_share.single_quotes");
    assert_eq!(quotes["base_counts"], serde_json::json!([0, 40]));
    assert_eq!(quotes["new_counts"], serde_json::json!([4, 40]));
    assert_eq!(quotes["new"], serde_json::json!(0.1));
    let comma = share("json_fixes_share.trailing_comma");
    assert_eq!(
        (&comma["base"], &comma["new"]),
        (&serde_json::json!(1.0), &serde_json::json!(0.1))
    );
    assert_eq!(
        comma["assessment"], "better",
        "a fall of 90 pp over 40 traces"
    );
    let fence = share("json_fixes_share.code_fence");
    assert_eq!(
        (&fence["base"], &fence["new"]),
        (&serde_json::json!(0.0), &serde_json::json!(0.0))
    );
    // 2 format-error kinds and 10 fixes occur.
    assert_eq!(occurring(&report).len(), 12, "{:?}", occurring(&report));
}

#[test]
fn a_gate_on_a_json_fix_share_fires_when_it_crosses() {
    let code = |rule: &str| diff(&["--fail-on", rule]).status.code();
    assert_eq!(code("json_fixes_share.single_quotes>+5pp"), Some(1));
    assert_eq!(code("json_fixes_share.single_quotes>+20pp"), Some(0));
    assert_eq!(code("sig:json_fixes_share.trailing_comma<-50pp"), Some(1));
    assert_eq!(code("json_fixes_share.code_fence>+1pp"), Some(0));
    let bad = diff(&["--fail-on", "json_fixes_share.fence>+1pp"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("json_fixes_share.<kind>"));
}

#[test]
fn list_metrics_names_the_json_fixes() {
    let out = mirotrace()
        .args(["diff", "--list-metrics"])
        .env("COLUMNS", "400")
        .output()
        .expect("runs");
    let text = stdout(&out);
    assert!(text.contains("json_fixes_share.<kind>"), "{text}");
    assert!(text.contains("single_quotes") && text.contains("python_literals"));
}

/// Every kind that occurs has its row, family by family, each family's
/// largest first; kinds at zero on both sides have none.
#[test]
fn markdown_has_a_row_per_kind_that_occurs() {
    let report: Value = serde_json::from_slice(&diff(&["--format", "json"]).stdout).expect("JSON");
    let md = stdout(&diff(&["--format", "markdown"]));
    let escaped = |id: &str| id.replace('_', "\\_").replace('.', "\\.");
    // Table rows (the headline names kinds that changed significantly too).
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("\\_share\\."))
        .collect();
    let want = occurring(&report);
    assert_eq!(rows.len(), want.len(), "{md}");
    for id in &want {
        assert!(md.contains(&escaped(id)), "{id} in:\n{md}");
    }
    assert!(!md.contains(&escaped("json_fixes_share.code_fence")));
    assert!(md.contains("*Mistakes"), "the block's caption");
    // format_error first; in it, stray_tag (90% → 50%) before cut_off (10% → 50%).
    // In the table (the headline names the kinds that changed, too).
    let table = &md[md.find("| mistake kind").expect("the kinds' table")..];
    let at = |id: &str| table.find(&escaped(id)).expect(id);
    assert!(at("format_error_share.stray_tag") < at("format_error_share.cut_off"));
    assert!(at("format_error_share.cut_off") < at("json_fixes_share.trailing_comma"));
    assert!(
        !md.contains("in --format json"),
        "Markdown shows every kind"
    );
}

/// The terminal shows a family's first rows and says how many are left.
#[test]
fn the_terminal_caps_a_family_and_says_so() {
    let text = stdout(&diff(&[]));
    let rows = text
        .lines()
        .filter(|l| l.starts_with("json_fixes_share."))
        .count();
    assert_eq!(rows, mirotrace::diff::mistakes::TERMINAL_ROWS);
    assert!(
        text.contains("2 more json_fixes kinds in --format json"),
        "{text}"
    );
    assert!(
        text.contains("40 → 40 calls json_repair repaired"),
        "{text}"
    );
}

/// Sides without a format error, a cause or a repaired call have no block.
#[test]
fn no_block_without_kinds() {
    let dir = crate::common::scratch("diff-no-kinds");
    let side = dir.join("plain.jsonl");
    let lines: String = (0..10)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"trace_id": format!("t{i}"), "content": "done"})
            )
        })
        .collect();
    std::fs::write(&side, lines).expect("write");
    for format in ["table", "markdown"] {
        let out = mirotrace()
            .args([
                "diff",
                "-q",
                "--iterations",
                "50",
                "--format",
                format,
                "--base",
            ])
            .arg(&side)
            .arg("--new")
            .arg(&side)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0));
        let text = stdout(&out);
        assert!(
            text.contains("rollback_rate")
                || text.contains("rollback\\_rate")
                || text.contains("zero on both sides"),
            "{text}"
        );
        assert!(
            !text.contains("Mistakes") && !text.contains("_share."),
            "{format}: {text}"
        );
    }
}
