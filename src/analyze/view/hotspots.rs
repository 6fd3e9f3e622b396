//! Duplicate-query hotspots: the queries repeated most, and the
//! near-duplicates upstream's exact match lets through.

use super::{Block, Cell, Section, Table, Tone, QUERY_WIDTH};
use crate::analyze::aggregate::Aggregate;
use crate::analyze::hotspots::{query_text, QueryCounter, QueryKey, QueryStats};
use crate::detect::Reason;
use crate::render::format::{plural, shorten};

pub(super) fn section(a: &Aggregate, top: usize) -> Section {
    let exact = a.duplicates.top(top);
    let mut blocks = vec![Block::Note(format!(
        "{} attempt{} hit a query already made in the session ({} distinct); {} rolled back, {} let through at the limit",
        a.duplicates.total(),
        plural(a.duplicates.total()),
        a.duplicates.len(),
        a.tally.rollback_reason(Reason::DuplicateQuery),
        a.tally.limit_events.duplicate_allowed
    ))];
    if !exact.is_empty() {
        blocks.push(Block::Table(query_table(
            &exact,
            None,
            [
                "#",
                "tool",
                "query",
                "repeated",
                "traces",
                "allowed at limit",
            ],
        )));
    }
    let near = a.near_duplicates.top(top);
    blocks.push(Block::Note(format!(
        "near-duplicates (same query after case, whitespace and punctuation folding) that upstream's exact match \
         lets through: {} attempt{} ({} distinct)",
        a.near_duplicates.total(),
        plural(a.near_duplicates.total()),
        a.near_duplicates.len()
    )));
    if !near.is_empty() {
        blocks.push(Block::Table(query_table(
            &near,
            Some(Tone::Warn),
            [
                "#",
                "tool",
                "query (first missed spelling)",
                "missed repeats",
                "traces",
                "",
            ],
        )));
    }
    for (counter, what) in [
        (&a.duplicates, "duplicate"),
        (&a.near_duplicates, "near-duplicate"),
    ] {
        if !counter.is_exact() {
            blocks.push(Block::Note(approximate_note(counter, what)));
        }
    }
    Section {
        title: "Duplicate-query hotspots".into(),
        blocks,
    }
}

fn approximate_note(counter: &QueryCounter, what: &str) -> String {
    format!(
        "more than {} distinct {what} queries: only the most repeated are tracked, counts may be slightly low",
        counter.capacity()
    )
}

fn query_table(
    entries: &[(&QueryKey, &QueryStats)],
    tone: Option<Tone>,
    header: [&str; 6],
) -> Table {
    let with_allowed = !header[5].is_empty();
    let rows = entries
        .iter()
        .enumerate()
        .map(|(i, (key, stats))| {
            let mut row = vec![
                Cell::num((i + 1).to_string()),
                Cell::text(key.tool.as_str()),
                Cell::text(shorten(&query_text(key, stats), QUERY_WIDTH))
                    .tone(tone.unwrap_or(Tone::Plain)),
                Cell::count(stats.count()),
                Cell::count(stats.traces),
            ];
            if with_allowed {
                row.push(Cell::count(stats.allowed));
            }
            row
        })
        .collect();
    let header = header
        .iter()
        .filter(|h| !h.is_empty())
        .map(|h| h.to_string())
        .collect();
    Table {
        caption: None,
        // The query and how often it repeated matter most; the rank least.
        priority: vec![2, 7, 9, 9, 5, 4],
        header,
        rows,
    }
}
