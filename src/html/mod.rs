//! `--format html`: one self-contained page per report, for a browser, a
//! CI artefact or a pull request.
//!
//! The page needs no network and no script to read: charts are inline SVG
//! drawn here ([`chart`]), styles are inline with a light and a dark scheme
//! and a print layout, and a strict Content-Security-Policy ([`csp`]) lets
//! nothing load and only the page's own scripts run (sorting, filtering,
//! opening a trace from the address). Every figure is also embedded as the
//! `--format json` report in a data island ([`page::DATA_ID`]), so the page
//! and the JSON cannot disagree. Trace content is always escaped ([`escape`]);
//! sizes are bounded by the report's top-N lists.
//!
//! The back end reads the finished report types ([`crate::analyze::Analysis`],
//! [`crate::diff::DiffReport`]) and draws; it computes no figure of its own.

mod analyze;
pub mod chart;
pub mod csp;
mod diff;
mod diff_mistakes;
pub mod escape;
pub mod page;
mod skipped;
mod table;
mod worst_traces;

/// The `analyze` report as a page. The worst traces' timelines appear when
/// the analysis kept them ([`crate::analyze::ReportOptions::timelines`]).
/// `skipped`: what the run skipped, listed on the page.
pub fn analyze_page(
    analysis: &crate::analyze::Analysis,
    skipped: &crate::render::skipped::Skipped,
) -> String {
    analyze::page(analysis, skipped)
}

/// The `diff` report as a page; `skipped`: what both sides' runs skipped.
pub fn diff_page(
    report: &crate::diff::DiffReport,
    skipped: &crate::render::skipped::Skipped,
) -> String {
    diff::page(report, skipped)
}
