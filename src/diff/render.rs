//! `diff` output: the [`super::view`] document as a terminal table or a
//! Markdown PR comment, or the report's figures as JSON.

use super::DiffReport;
use crate::render::TableStyle;

/// The report as a terminal table (a `commands::Drawing` picks one of
/// these back ends for `diff` and `merge`).
pub fn table(report: &DiffReport, style: TableStyle) -> String {
    crate::render::table::draw(
        &super::view::document(report, Some(super::mistakes::TERMINAL_ROWS)),
        style,
    )
}

/// The report as a Markdown PR comment.
pub fn markdown(report: &DiffReport) -> String {
    crate::render::markdown::draw(&super::view::document(report, None))
}

/// The report as pretty JSON (rates are fractions; see docs/diff.md).
pub fn json(report: &DiffReport) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
