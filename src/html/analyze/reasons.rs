//! Which reasons dominate, for which tool, agent and group.

use crate::render::format::counted;
use std::fmt::Write as _;

use crate::analyze::aggregate::{Aggregate, NO_CALL};
use crate::analyze::Analysis;
use crate::detect::Reason;
use crate::html::chart::{self, Bar, Series};
use crate::html::escape::Esc;
use crate::html::page::figure;
use crate::render::format::pct;
use crate::replay::Outcome;

/// Tools drawn in the per-tool chart at most.
const MAX_TOOLS: usize = 12;

pub(super) fn reason_series(present: impl Fn(Reason) -> bool) -> Vec<Series> {
    Reason::ALL
        .iter()
        .filter(|r| present(**r))
        .map(|r| (r.name().to_string(), format!("r-{}", r.name())))
        .collect()
}

pub(super) fn rollbacks(a: &Aggregate) -> String {
    let mut out = String::from("<div class=\"figs\">");
    if a.tally.rollbacks() == 0 {
        out.push_str("<p class=\"note\">No attempt rolled back.</p>");
    } else {
        let mut order = Reason::ALL.to_vec();
        order.sort_by_key(|r| std::cmp::Reverse(a.tally.rollback_reason(*r)));
        let rows: Vec<Bar> = order
            .iter()
            .map(|&r| {
                let n = a.tally.rollback_reason(r);
                Bar::single(
                    r.name(),
                    n as f64,
                    &format!("r-{}", r.name()),
                    format!(
                        "{}: {} ({} of attempts reached) in {}; ended the loop at the limit {}",
                        r.name(),
                        counted(n, "rollback"),
                        pct(n, a.tally.reached()),
                        counted(a.tally.traces_with(r), "trace"),
                        counted(a.tally.end_reason(r), "time")
                    ),
                    format!("{n} · {}", pct(n, a.tally.rollbacks())),
                )
            })
            .collect();
        out.push_str(&figure(
            "Rollbacks by reason",
            "count · share of rollbacks",
            &chart::bars("reasons", "Rollbacks by reason", &rows, &[], None),
        ));
    }
    let rows: Vec<Bar> = Outcome::ALL
        .iter()
        .map(|&o| {
            let n = a.tally.outcome(o);
            Bar::single(
                o.name(),
                n as f64,
                &format!("o-{}", o.name()),
                format!(
                    "{}: {} ({} of all attempts)",
                    o.name(),
                    counted(n, "attempt"),
                    pct(n, a.tally.attempts)
                ),
                format!("{n} · {}", pct(n, a.tally.attempts)),
            )
        })
        .collect();
    if a.tally.attempts > 0 {
        out.push_str(&figure(
            "Outcomes",
            "attempts · share of attempts",
            &chart::bars("outcomes", "Attempts by outcome", &rows, &[], None),
        ));
    }
    out.push_str("</div>");
    if !a.refusal_keywords.is_empty() {
        let words: Vec<String> = a
            .refusal_keywords
            .iter()
            .map(|(k, n)| format!("\"{k}\" ×{n}"))
            .collect();
        let _ = write!(
            out,
            "<p class=\"note\">Refusal keywords matched: {}</p>",
            Esc(&words.join(", "))
        );
    }
    out
}

pub(super) fn who(analysis: &Analysis) -> String {
    let a = &analysis.overall.aggregate;
    let mut out = String::from("<div class=\"figs\">");
    // Tools: the most rolled-back first; the format errors and refusals
    // that came without a call last.
    let mut tools = a.tools_by_rollbacks();
    tools.retain(|(_, t)| t.total_rollbacks() > 0);
    let hidden = tools.len().saturating_sub(MAX_TOOLS);
    let mut rows: Vec<Bar> = tools
        .iter()
        .take(MAX_TOOLS)
        .map(|(name, t)| {
            reason_bar(
                name,
                &t.rollbacks,
                1.0,
                format!(
                    "{} · {} run",
                    counted(t.total_rollbacks(), "rollback"),
                    counted(t.executed, "call")
                ),
            )
        })
        .collect();
    if let Some(t) = a.tools.get(NO_CALL).filter(|t| t.total_rollbacks() > 0) {
        rows.push(reason_bar(
            NO_CALL,
            &t.rollbacks,
            1.0,
            counted(t.total_rollbacks(), "rollback"),
        ));
    }
    if rows.is_empty() {
        out.push_str("<p class=\"note\">No rollbacks to attribute.</p>");
    } else {
        let legend = reason_series(|r| a.tally.rollback_reason(r) > 0);
        let sub = if hidden > 0 {
            format!("rollbacks by reason; {hidden} more tools in the tables below")
        } else {
            "rollbacks by reason".to_string()
        };
        out.push_str(&figure(
            "Per tool",
            &sub,
            &chart::bars(
                "tools",
                "Rollbacks per tool, by reason",
                &rows,
                &legend,
                None,
            ),
        ));
    }
    let mut agents: Vec<_> = a.agents.iter().collect();
    agents.sort_by_key(|(name, _)| (name.as_str() != "main", name.as_str()));
    let rows: Vec<Bar> = agents
        .iter()
        .map(|(name, s)| {
            reason_bar(
                name,
                &s.rollbacks,
                s.reached.max(1) as f64,
                format!(
                    "{} of {} attempts reached",
                    pct(s.total_rollbacks(), s.reached),
                    s.reached
                ),
            )
        })
        .collect();
    // A chart only where something rolled back: bars of nothing draw nothing.
    if rows.iter().any(|r| !r.parts.is_empty()) {
        let legend = reason_series(|r| a.tally.rollback_reason(r) > 0);
        out.push_str(&figure(
            "Per agent",
            "rollback rate, split by reason",
            &chart::bars(
                "agents",
                "Rollback rate per agent, by reason",
                &rows,
                &legend,
                None,
            ),
        ));
    }
    if let Some(by) = analysis.options.group_by {
        let rows: Vec<Bar> = analysis
            .groups
            .iter()
            .map(|(key, g)| {
                let a = &g.aggregate;
                reason_bar(
                    key,
                    &a.tally.rollbacks_by_reason,
                    a.tally.reached().max(1) as f64,
                    format!(
                        "{} of {} attempts reached",
                        pct(a.tally.rollbacks(), a.tally.reached()),
                        a.tally.reached()
                    ),
                )
            })
            .collect();
        if rows.iter().any(|r| !r.parts.is_empty()) {
            let legend = reason_series(|r| a.tally.rollback_reason(r) > 0);
            out.push_str(&figure(
                &format!("Per {}", by.name()),
                "rollback rate, split by reason",
                &chart::bars(
                    "groups-rate",
                    &format!("Rollback rate per {}, by reason", by.name()),
                    &rows,
                    &legend,
                    None,
                ),
            ));
        }
    }
    out.push_str("</div>");
    out
}

/// A bar stacked by reason: `counts / per` for each reason.
pub(super) fn reason_bar(
    label: &str,
    counts: &[u64; Reason::ALL.len()],
    per: f64,
    note: String,
) -> Bar {
    let rate = per != 1.0;
    Bar {
        label: label.to_string(),
        parts: Reason::ALL
            .iter()
            .filter(|r| counts[**r as usize] > 0)
            .map(|r| {
                let n = counts[*r as usize];
                let tip = if rate {
                    format!(
                        "{label}: {} {n} ({:.1}% of attempts reached)",
                        r.name(),
                        n as f64 / per * 100.0
                    )
                } else {
                    format!("{label}: {} {n}", r.name())
                };
                (n as f64 / per, format!("r-{}", r.name()), tip)
            })
            .collect(),
        note,
    }
}
