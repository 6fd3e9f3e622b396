//! The `diff` page's mistakes panel: the shares of the mistake kinds that
//! occur ([`crate::diff::mistakes`]), one forest plot per family on an
//! axis shared by every family and comparison, then their table. Absent
//! when no kind occurs on either side.

use std::fmt::Write as _;

use super::chart;
use super::diff::{change_table, forest_row, tick_for};
use super::escape::Esc;
use super::page::figure;
use crate::diff::mistakes::families;
use crate::diff::{Comparison, DiffReport, MetricChange, Unit};

/// Half-width of the axis every family's plot shares.
pub(super) fn extent(report: &DiffReport) -> f64 {
    let e = report
        .comparisons
        .iter()
        .flat_map(families)
        .flat_map(|f| f.rows)
        .map(|m| super::diff::extent(m, report))
        .fold(0.0, f64::max);
    // Nothing moved: ±1 pp still reads.
    if e > 1e-12 {
        e
    } else {
        0.01
    }
}

/// The panel of comparison `i`; empty when no kind occurs.
pub(super) fn panel(i: usize, c: &Comparison, report: &DiffReport, extent: f64) -> String {
    let families = families(c);
    if families.is_empty() {
        return String::new();
    }
    let alpha = report.method.alpha;
    let confidence = report.method.confidence * 100.0;
    let mut out = format!(
        "<div class=\"mistakes\" id=\"mistakes-{i}\"><h3>Mistakes</h3><p class=\"note\">{}</p><div class=\"figs\">",
        Esc("Each kind's share of its family: of its verdicts, or (json_fixes) of the calls \
             json_repair repaired, where a call may need several fixes. Only kinds that occur \
             on a side; Holm-adjusted among the kinds.")
    );
    for f in &families {
        let rows: Vec<chart::ForestRow> = f
            .rows
            .iter()
            .map(|m| {
                let mut row = forest_row(m, report, alpha, confidence);
                // The family is the plot's caption: the kind alone reads.
                row.label = m
                    .metric
                    .split_once('.')
                    .map_or(m.metric, |(_, k)| k)
                    .to_string();
                row
            })
            .collect();
        let svg = chart::forest(
            &format!("kinds-{i}-{}", f.family),
            &format!("{}: change of each kind's share", f.family),
            &rows,
            extent,
            &*tick_for(Unit::Rate),
        );
        out.push_str(&figure(
            f.family,
            &format!(
                "{}; change in percentage points, {confidence:.0}% interval, ◆ significant",
                f.totals()
            ),
            &svg,
        ));
    }
    out.push_str("</div>");
    let shown: Vec<&MetricChange> = families
        .iter()
        .flat_map(|f| f.rows.iter().copied())
        .collect();
    let _ = write!(
        out,
        "{}</div>",
        change_table(
            &format!("kinds-{i}"),
            "mistake kind",
            &shown,
            alpha,
            confidence
        )
    );
    out
}
