//! `--group-by`: the groups side by side, on shared scales.

use std::fmt::Write as _;

use super::session::{bucket_width, index_columns, limit_bin, max_rate, streak_bins};
use crate::analyze::aggregate::streak_axis;
use crate::analyze::Analysis;
use crate::detect::Reason;
use crate::html::chart::{self, Bar, Column};
use crate::html::escape::Esc;
use crate::html::page::figure;
use crate::render::format::pct;

/// The groups side by side, every chart on a scale shared by all groups.
pub(super) fn groups(analysis: &Analysis) -> String {
    let groups = &analysis.groups;
    if groups.is_empty() {
        return "<p class=\"note\">No groups.</p>".into();
    }
    let limit = analysis.options.rollback_limit;
    let positions = groups
        .iter()
        .map(|(_, g)| g.aggregate.by_index.rows().count())
        .max()
        .unwrap_or(0);
    let width = bucket_width(positions);
    let count = positions.div_ceil(width);
    let columns: Vec<Vec<Column>> = groups
        .iter()
        .map(|(_, g)| index_columns(&g.aggregate.by_index, width, count))
        .collect();
    let rate_max = columns.iter().map(|c| max_rate(c)).fold(0.0, f64::max);
    let reason_max = groups
        .iter()
        .flat_map(|(_, g)| {
            let a = &g.aggregate;
            Reason::ALL.map(|r| a.tally.rollback_reason(r) as f64 / a.tally.reached().max(1) as f64)
        })
        .fold(0.0, f64::max);
    let longest_allowed = limit.saturating_sub(1).max(1);
    let axis = streak_axis(
        groups
            .iter()
            .flat_map(|(_, g)| g.aggregate.streak_lengths.keys().copied()),
        longest_allowed,
    );
    let streak_max = groups
        .iter()
        .flat_map(|(_, g)| g.aggregate.streak_lengths.values().copied())
        .max()
        .unwrap_or(0) as f64;
    let mut out = String::from("<div class=\"small-multiples\">");
    for (i, ((key, g), cols)) in groups.iter().zip(&columns).enumerate() {
        let a = &g.aggregate;
        let interval = g
            .interval
            .map(|(lo, hi)| format!(" [{:.1}–{:.1}%]", lo * 100.0, hi * 100.0))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<div class=\"group\" id=\"group-{i}\"><h3>{}</h3><p class=\"note\">{} traces · {} attempts · rollback rate {}{}</p>",
            Esc(key),
            a.tally.traces,
            a.tally.attempts,
            pct(a.tally.rollbacks(), a.tally.reached()),
            interval
        );
        let rows: Vec<Bar> = Reason::ALL
            .iter()
            .map(|&r| {
                let n = a.tally.rollback_reason(r);
                Bar::single(
                    r.name(),
                    n as f64 / a.tally.reached().max(1) as f64,
                    &format!("r-{}", r.name()),
                    format!(
                        "{key}: {} {n} ({} of attempts reached)",
                        r.name(),
                        pct(n, a.tally.reached())
                    ),
                    format!("{} ({n})", pct(n, a.tally.reached())),
                )
            })
            .collect();
        out.push_str(&figure(
            "Rollbacks by reason",
            "share of attempts",
            &chart::bars(
                &format!("group-{i}-reasons"),
                &format!("{key}: rollbacks by reason"),
                &rows,
                &[],
                Some(reason_max),
            ),
        ));
        out.push_str(&figure(
            "By position in the session",
            "",
            &chart::columns(
                &format!("group-{i}-by-index"),
                &format!("{key}: rollback rate by position"),
                cols,
                rate_max,
                "attempts",
                chart::WIDTH,
            ),
        ));
        out.push_str(&figure(
            "Streak lengths",
            "",
            &chart::histogram(
                &format!("group-{i}-streaks"),
                &format!("{key}: rollback streaks by length"),
                &streak_bins(a, &axis),
                streak_max,
                limit_bin(&axis, longest_allowed),
                &format!("limit {limit}"),
            ),
        ));
        out.push_str("</div>");
    }
    out.push_str("</div>");
    out
}
