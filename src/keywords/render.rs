//! Printing a [`KeywordsReport`]: the [`super::view`] document as tables for
//! people, JSON for tools, and bare phrases (a list file) for `--suggest
//! --format text`.

use super::suggest::Cue;
use super::KeywordsReport;
use crate::render::{markdown, table, TableStyle};

/// The report as pretty JSON.
pub fn json(report: &KeywordsReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The suggested phrases, one per line, best first: usable as a `--list`
/// file. Phrases without a refusal marker (content words such as a final
/// answer template) are for review in the table or JSON, not for a list.
pub fn phrases(report: &KeywordsReport) -> String {
    let mut out = String::new();
    for s in report.suggestions.iter().flatten() {
        if s.marker == Cue::None {
            continue;
        }
        // A list file line is trimmed and `#` starts a comment: such phrases
        // cannot be written as is.
        if s.phrase.starts_with('#') || s.phrase.contains('\n') {
            continue;
        }
        out.push_str(&s.phrase);
        out.push('\n');
    }
    out
}

/// The human-readable report; `top` caps every per-attempt listing.
pub fn tables(report: &KeywordsReport, top: usize, style: TableStyle) -> String {
    table::draw(&super::view::document(report, top), style)
}

/// The report as Markdown.
pub fn markdown(report: &KeywordsReport, top: usize) -> String {
    markdown::draw(&super::view::document(report, top))
}
