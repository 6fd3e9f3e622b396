//! What repair saves, and which queries repeat.

use crate::render::format::counted;
use std::fmt::Write as _;

use crate::analyze::aggregate::Aggregate;
use crate::analyze::hotspots::{query_text, QueryCounter};
use crate::detect::Reason;
use crate::html::chart::{self, Bar};
use crate::html::page::figure;
use crate::html::table::{self, cell_bar, Td};
use crate::parse::JsonPath;
use crate::render::format::{pct, shorten};
use crate::repair::Repair;

/// Longest query shown in a hotspot table (the JSON has it whole).
const QUERY_CHARS: usize = 300;

pub(super) fn repairs(a: &Aggregate) -> String {
    let c = &a.tally.calls;
    if c.parsed == 0 {
        return "<p class=\"note\">No tool calls were parsed.</p>".into();
    }
    let kinds: Vec<Bar> = Repair::ALL
        .iter()
        .map(|&r| {
            let n = c.repair(r);
            Bar::single(
                r.name(),
                n as f64,
                "c-repair",
                format!(
                    "{}: {} ({} of calls)",
                    r.name(),
                    counted(n, "call"),
                    pct(n, c.parsed)
                ),
                format!("{n} · {}", pct(n, c.parsed)),
            )
        })
        .collect();
    let paths: Vec<Bar> = JsonPath::ALL
        .iter()
        .map(|&p| {
            let n = c.path(p);
            Bar::single(
                p.name(),
                n as f64,
                &format!("c-json-{}", p.name()),
                format!(
                    "arguments {}: {} ({})",
                    p.name(),
                    counted(n, "call"),
                    pct(n, c.parsed)
                ),
                format!("{n} · {}", pct(n, c.parsed)),
            )
        })
        .collect();
    format!(
        "<p>{} of {} tool calls ({}) would have reached the tool broken, or not at all, without the layer's fixes.</p>\
         <div class=\"figs\">{}{}</div>",
        c.repaired,
        c.parsed,
        pct(c.repaired, c.parsed),
        figure("Repairs by kind", "calls", &chart::bars("repairs", "Calls by repair kind", &kinds, &[], None)),
        figure("How arguments parsed", "calls", &chart::bars("json-paths", "Calls by JSON path", &paths, &[], None)),
    )
}

pub(super) fn duplicates(a: &Aggregate, top: usize) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<p>{} attempts hit a query already made in their session ({} distinct): {} rolled back, {} let through at the limit.</p>",
        a.duplicates.total(),
        a.duplicates.len(),
        a.tally.rollback_reason(Reason::DuplicateQuery),
        a.tally.limit_events.duplicate_allowed
    );
    out.push_str(&hotspot_table(&a.duplicates, top, true));
    let _ = write!(
        out,
        "<h3>Near-duplicates</h3><p class=\"note\">The same query after case, whitespace and punctuation folding: upstream's exact match lets these through. \
         {} attempts, {} distinct.</p>",
        a.near_duplicates.total(),
        a.near_duplicates.len()
    );
    out.push_str(&hotspot_table(&a.near_duplicates, top, false));
    for (counter, what) in [
        (&a.duplicates, "duplicate"),
        (&a.near_duplicates, "near-duplicate"),
    ] {
        if !counter.is_exact() {
            let _ = write!(
                out,
                "<p class=\"note\">More than {} distinct {what} queries: only the most repeated are tracked, counts may be slightly low.</p>",
                counter.capacity()
            );
        }
    }
    out
}

pub(super) fn hotspot_table(counter: &QueryCounter, top: usize, exact: bool) -> String {
    let entries = counter.top(top);
    if entries.is_empty() {
        return "<p class=\"note\">None.</p>".into();
    }
    let max = entries.iter().map(|(_, s)| s.count()).max().unwrap_or(0) as f64;
    let rows: Vec<(String, Vec<Td>)> = entries
        .iter()
        .enumerate()
        .map(|(i, (key, s))| {
            let mut cells = vec![
                Td::count(i as u64 + 1),
                Td::text(&key.tool),
                Td::text(&shorten(&query_text(key, s), QUERY_CHARS)).class("text wrap"),
                Td::markup(format!("{}{}", s.count(), cell_bar(s.count() as f64, max)))
                    .class("num"),
                Td::count(s.traces),
            ];
            if exact {
                cells.push(Td::count(s.rolled_back));
                cells.push(Td::count(s.allowed));
            }
            (String::new(), cells)
        })
        .collect();
    let (id, header): (&str, &[&str]) = if exact {
        (
            "duplicate-hotspots",
            &[
                "#",
                "tool",
                "query",
                "repeated",
                "traces",
                "rolled back",
                "let through",
            ],
        )
    } else {
        (
            "near-duplicate-hotspots",
            &[
                "#",
                "tool",
                "query (first missed spelling)",
                "missed repeats",
                "traces",
            ],
        )
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<input class=\"filter\" type=\"search\" data-for=\"{id}\" placeholder=\"filter queries…\" aria-label=\"filter queries\">"
    );
    out.push_str(&table::table(
        id,
        None,
        header,
        &[true, false, false, true, true, true, true],
        &rows,
    ));
    out
}
