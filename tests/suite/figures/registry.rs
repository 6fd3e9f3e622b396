//! The figure registry (`crates/engine/src/metrics/figures.rs`) is the one definition
//! every place reads: docs/metrics.md's table is generated from it, and
//! `diff --list-metrics`, docs/metrics.md and docs/diff.md agree on every
//! figure's unit; docs/python.md lists every input format.

use std::collections::BTreeMap;
use std::path::Path;

use mirotrace::metrics::figures::{markdown_table, FIGURES};

const BEGIN: &str = "<!-- figures:begin -->\n";
const END: &str = "<!-- figures:end -->";

fn doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// docs/metrics.md holds the registry's table verbatim between its
/// markers; `INSTA_UPDATE=always` writes it there (common/snapshot.rs).
#[test]
fn docs_metrics_table_is_the_registry() {
    crate::common::snapshot::doc_section("docs/metrics.md", BEGIN, END, &markdown_table());
}

/// docs/metrics.md holds the kind-share table verbatim between its markers.
#[test]
fn docs_kind_share_table_is_the_registry() {
    const BEGIN: &str = "<!-- kind-figures:begin -->\n";
    const END: &str = "<!-- kind-figures:end -->";
    let want = mirotrace::metrics::figures::kind_markdown_table();
    crate::common::snapshot::doc_section("docs/metrics.md", BEGIN, END, &want);
    for f in mirotrace::metrics::figures::KIND_FIGURES.iter() {
        let (prefix, kind) = f.id.split_once('.').expect("<family>_share.<kind>");
        assert!(
            want.contains(&format!("`{prefix}.<kind>`")) && want.contains(&format!("`{kind}`")),
            "{}",
            f.id
        );
    }
}

/// Unit per figure id, as `diff --list-metrics` prints them.
fn listed_units() -> BTreeMap<String, String> {
    let out = crate::common::mirotrace()
        .args(["diff", "--list-metrics"])
        .env("COLUMNS", "400")
        .output()
        .expect("run mirotrace");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let id = words.next()?;
            let unit = words.next()?;
            FIGURES
                .iter()
                .any(|f| f.id == id)
                .then(|| (id.to_string(), unit.to_string()))
        })
        .collect()
}

/// Unit per figure id in a Markdown table whose first column names figures
/// in backticks and whose `unit` column is `unit_column`.
fn table_units(text: &str, unit_column: usize) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let Some(unit) = cells.get(unit_column) else {
            continue;
        };
        for id in cells[0].split('`').skip(1).step_by(2) {
            if FIGURES.iter().any(|f| f.id == id) {
                out.insert(id.to_string(), unit.trim().replace(' ', "_"));
            }
        }
    }
    out
}

#[test]
fn list_metrics_and_both_docs_agree_on_every_unit() {
    let registry: BTreeMap<String, String> = FIGURES
        .iter()
        .map(|f| (f.id.to_string(), f.unit.name().to_string()))
        .collect();
    assert_eq!(listed_units(), registry, "diff --list-metrics");
    assert_eq!(
        table_units(&doc("metrics.md"), 1),
        registry,
        "docs/metrics.md"
    );
    assert_eq!(table_units(&doc("diff.md"), 2), registry, "docs/diff.md");
}

/// docs/python.md lists every input format `input_format` takes, as the
/// CLI names them (`InputFormat::all()`).
#[test]
fn docs_python_lists_every_input_format() {
    let text = doc("python.md");
    let listed = text
        .split_once("<!-- input-formats -->")
        .and_then(|(_, rest)| rest.split_once("<!-- /input-formats -->"))
        .map(|(list, _)| list)
        .expect("docs/python.md marks its list of input formats");
    let listed: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
    let all: Vec<&str> = mirotrace::read::InputFormat::all()
        .iter()
        .map(|f| f.name())
        .collect();
    assert_eq!(listed, all);
}
