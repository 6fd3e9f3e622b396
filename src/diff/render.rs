//! `diff` output: the [`super::view`] document as a terminal table or a
//! Markdown PR comment, or the report's figures as JSON.

use super::DiffReport;
use crate::render::{markdown, table, TableStyle};

/// The output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

/// Renders the report in `format`; `style` only affects the table.
pub fn render(report: &DiffReport, format: Format, style: TableStyle) -> String {
    match format {
        Format::Table => table::draw(&super::view::document(report), style),
        Format::Markdown => markdown::draw(&super::view::document(report)),
        Format::Json => json(report),
    }
}

/// The report as pretty JSON (rates are fractions; see docs/diff.md).
pub fn json(report: &DiffReport) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
