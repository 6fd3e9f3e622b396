//! Where in a session rollbacks happen, and how long their streaks get.

use crate::render::format::counted;
use std::fmt::Write as _;

use crate::analyze::aggregate::{streak_axis, Aggregate};
use crate::analyze::by_index::{ByIndex, MAX_INDEX};
use crate::html::chart::{self, Bar, Column};
use crate::html::page::figure;
use crate::html::table::{self, Td};
use crate::metrics::StreakEnd;
use crate::render::format::pct;

/// Columns drawn in a chart along the session position at most.
const MAX_COLUMNS: usize = 60;

/// Positions pooled into one column so that no chart has more than
/// [`MAX_COLUMNS`]; the same for every chart that shares a scale.
pub(super) fn bucket_width(positions: usize) -> usize {
    positions.div_ceil(MAX_COLUMNS).max(1)
}

/// Columns of `by` with `width` positions each, padded to `count` columns.
pub(super) fn index_columns(by: &ByIndex, width: usize, count: usize) -> Vec<Column> {
    let rows: Vec<(usize, u64, u64)> = by.rows().collect();
    (0..count)
        .map(|c| {
            let (first, last) = (c * width, c * width + width - 1);
            let (mut attempts, mut rollbacks) = (0u64, 0u64);
            for &(_, n, r) in rows.iter().skip(first).take(width) {
                attempts += n;
                rollbacks += r;
            }
            let name = |i: usize| {
                if i >= MAX_INDEX {
                    format!("{MAX_INDEX}+")
                } else {
                    i.to_string()
                }
            };
            let range = if width == 1 {
                name(first)
            } else {
                format!("{}–{}", first, name(last))
            };
            let rate = if attempts > 0 {
                rollbacks as f64 / attempts as f64
            } else {
                0.0
            };
            Column {
                tip: format!(
                    "position {range}: {} / {} ({})",
                    counted(rollbacks, "rollback"),
                    counted(attempts, "attempt"),
                    pct(rollbacks, attempts)
                ),
                // The axis names a column by its first position.
                label: name(first),
                value: rate,
                weight: attempts as f64,
            }
        })
        .collect()
}

pub(super) fn max_rate(cols: &[Column]) -> f64 {
    cols.iter().map(|c| c.value).fold(0.0, f64::max)
}

pub(super) fn where_in_session(a: &Aggregate) -> String {
    if a.by_index.is_empty() {
        return "<p class=\"note\">No attempts.</p>".into();
    }
    let positions = a.by_index.rows().count();
    let width = bucket_width(positions);
    let cols = index_columns(&a.by_index, width, positions.div_ceil(width));
    let sub = if width == 1 {
        "rollbacks / attempts at each position".to_string()
    } else {
        format!("rollbacks / attempts, {width} positions per column")
    };
    let svg = chart::columns(
        "by-index",
        "Rollback rate by position in the session",
        &cols,
        max_rate(&cols),
        "attempts",
        chart::WIDE,
    );
    format!(
        "<div class=\"figs one\">{}</div>",
        figure("Rollback rate by position in the session", &sub, &svg)
    )
}

/// Streak lengths 1..=`last`, with the count of each.
/// One bin per length of `axis` ([`streak_axis`]).
pub(super) fn streak_bins(a: &Aggregate, axis: &[u32]) -> Vec<(String, f64, String)> {
    let total = a.tally.streaks.count;
    axis.iter()
        .map(|&len| {
            let n = a.streak_lengths.get(&len).copied().unwrap_or(0);
            (
                len.to_string(),
                n as f64,
                format!(
                    "length {len}: {} ({} of streaks)",
                    counted(n, "streak"),
                    pct(n, total)
                ),
            )
        })
        .collect()
}

pub(super) fn streaks(a: &Aggregate, limit: u32) -> String {
    let longest_allowed = limit.saturating_sub(1).max(1);
    let axis = streak_axis(a.streak_lengths.keys().copied(), longest_allowed);
    let mut out = String::from("<div class=\"figs\">");
    if a.tally.streaks.count == 0 {
        out.push_str("<p class=\"note\">No rollback streaks.</p>");
    } else {
        let bins = streak_bins(a, &axis);
        let y_max = bins.iter().map(|b| b.1).fold(0.0, f64::max);
        out.push_str(&figure(
            "Streak lengths",
            &format!("streaks; the {limit}th problem in a row ends the loop or is let through"),
            &chart::histogram(
                "streaks",
                "Rollback streaks by length",
                &bins,
                y_max,
                limit_bin(&axis, longest_allowed),
                &format!("limit {limit}"),
            ),
        ));
        let rows: Vec<Bar> = StreakEnd::ALL
            .iter()
            .map(|&e| {
                let n = a.tally.streaks.ended(e);
                let class = match e {
                    StreakEnd::Recovered => "e-good",
                    _ if e.at_limit() => "e-bad",
                    _ => "e-plain",
                };
                Bar::single(
                    e.name().replace('_', " "),
                    n as f64,
                    class,
                    format!("{}: {}", e.name(), counted(n, "streak")),
                    format!("{n} · {}", pct(n, a.tally.streaks.count)),
                )
            })
            .collect();
        out.push_str(&figure(
            "How streaks ended",
            "red: decided by the limit",
            &chart::bars(
                "streak-ends",
                "How rollback streaks ended",
                &rows,
                &[],
                None,
            ),
        ));
    }
    out.push_str("</div>");
    let l = &a.tally.limit_events;
    let _ = write!(
        out,
        "<p class=\"note\">At the limit: loop ended {} · duplicate let through {} · bad tool result passed on {}.</p>",
        l.loop_ended, l.duplicate_allowed, l.result_passed
    );
    let ambiguous = crate::analyze::view::traces::ambiguous(a);
    let rows: Vec<(String, Vec<Td>)> = a
        .longest_streaks
        .items()
        .iter()
        .map(|s| {
            let reasons: Vec<&str> = s.reasons.iter().map(|r| r.name()).collect();
            let row_class = if s.length >= longest_allowed {
                "worse"
            } else {
                ""
            };
            (
                row_class.to_string(),
                vec![
                    Td::count(u64::from(s.length)),
                    Td::text(&crate::analyze::view::traces::label(
                        &s.trace_id,
                        &s.file,
                        &ambiguous,
                    )),
                    Td::text(&s.session),
                    Td::count(s.start_index as u64),
                    Td::text(&format!("{}:{}", s.file, s.start_line)),
                    Td::text(&reasons.join(", ")),
                    Td::text(s.end.name()),
                ],
            )
        })
        .collect();
    if !rows.is_empty() {
        out.push_str(&table::table(
            "longest-streaks",
            Some("Longest streaks"),
            &[
                "length",
                "trace",
                "session",
                "from #",
                "file:line",
                "reasons",
                "ended by",
            ],
            &[true, false, false, true, false, false, false],
            &rows,
        ));
    }
    out
}

/// The bin of the longest streak allowed, after which the limit is drawn.
pub(super) fn limit_bin(axis: &[u32], longest_allowed: u32) -> Option<usize> {
    axis.iter().position(|&l| l == longest_allowed)
}
