//! Rollback streaks (how long, how they ended, the longest) and the worst
//! traces.

use super::{Block, Cell, Section, Table, Tone};
use crate::analyze::aggregate::{streak_axis, Aggregate};
use crate::detect::Reason;
use crate::metrics::StreakEnd;
use crate::render::format::{pct, plural};

/// Width of the streak histogram's bars.
const BAR_WIDTH: u64 = 30;

/// What happened at the limit, in words: `the loop ended (refusal)`.
pub(super) fn limit_event(end: StreakEnd, reason: Option<Reason>) -> String {
    match (end, reason) {
        (StreakEnd::LoopEnded, Some(r)) => format!("the loop ended ({})", r.name()),
        (StreakEnd::LoopEnded, None) => "the loop ended".into(),
        (_, Some(Reason::DuplicateQuery)) => "a duplicate query was let through".into(),
        _ => "a bad tool result was passed on".into(),
    }
}

pub(super) fn section(a: &Aggregate, limit: u32) -> Section {
    let s = &a.tally.streaks;
    let total = s.count;
    let most = a.streak_lengths.values().copied().max().unwrap_or(0);
    // Upstream rolls back only while fewer than limit − 1 are in a row.
    let most_allowed = limit.saturating_sub(1);
    let lengths = streak_axis(a.streak_lengths.keys().copied(), most_allowed);
    let sparse = lengths.len() < lengths.last().copied().unwrap_or(0) as usize;
    let rows = lengths
        .iter()
        .map(|&len| {
            let n = a.streak_lengths.get(&len).copied().unwrap_or(0);
            let label = if len == most_allowed {
                format!("{len} (most allowed)")
            } else {
                len.to_string()
            };
            let bar = if most == 0 {
                0
            } else {
                (n * BAR_WIDTH).div_ceil(most)
            };
            vec![
                Cell::text(label).tone(if len == most_allowed && n > 0 {
                    Tone::Warn
                } else {
                    Tone::Plain
                }),
                Cell::count(n),
                Cell::num(pct(n, total)),
                Cell::text("█".repeat(bar as usize)),
            ]
        })
        .collect();
    let ends: Vec<String> = StreakEnd::ALL
        .iter()
        .map(|e| format!("{} {}", e.name().replace('_', " "), s.ended(*e)))
        .collect();
    let l = &a.tally.limit_events;
    let mut caption = format!(
        "{total} streak{}; length = rollbacks in a row (the highest consecutive_rollbacks); with a limit of \
         {limit}, upstream rolls back at most {most_allowed} times in a row: the next problem meets the limit",
        plural(total)
    );
    if sparse {
        caption.push_str("; lengths no streak has are left out");
    }
    let mut histogram = Table::new(&["length", "streaks", "share", ""]).caption(caption);
    histogram.rows = rows;
    let mut blocks = vec![
        Block::Table(histogram),
        Block::Note(format!("streaks ended by: {}", ends.join(" · "))),
        Block::Note(format!(
            "at the limit: loop ended {} · duplicate allowed {} · bad result passed on {}",
            l.loop_ended, l.duplicate_allowed, l.result_passed
        )),
    ];
    let ambiguous = super::traces::ambiguous(a);
    if !a.longest_streaks.items().is_empty() {
        let mut longest = Table::new(&[
            "length", "trace", "session", "from", "line", "reasons", "ended by",
        ])
        // Which session and why before where in the file.
        .priority(&[9, 9, 7, 3, 2, 8, 6])
        .caption("longest streaks");
        longest.rows = a
            .longest_streaks
            .items()
            .iter()
            .map(|r| {
                let reasons: Vec<&str> = r.reasons.iter().map(|x| x.name()).collect();
                let ended = match r.limit_reason {
                    Some(reason) => format!("{} ({})", r.end.name(), reason.name()),
                    None => r.end.name().to_string(),
                };
                vec![
                    Cell::count(u64::from(r.length)).tone(if r.length >= most_allowed {
                        Tone::Warn
                    } else {
                        Tone::Plain
                    }),
                    Cell::text(super::traces::label(&r.trace_id, &r.file, &ambiguous)),
                    Cell::text(r.session.as_str()),
                    Cell::num(format!("#{}", r.start_index)),
                    Cell::text(format!("{}:{}", r.file, r.start_line)),
                    Cell::text(compress_reasons(&reasons)),
                    Cell::text(ended).tone(if r.end.at_limit() {
                        Tone::Bad
                    } else {
                        Tone::Plain
                    }),
                ]
            })
            .collect();
        blocks.push(Block::Table(longest));
    }
    Section {
        title: "Rollback streaks".into(),
        blocks,
    }
}

/// `a, a, b` → `a×2, b`.
fn compress_reasons(reasons: &[&str]) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for r in reasons {
        match out.last_mut() {
            Some((last, n)) if last == r => *n += 1,
            _ => out.push((r.to_string(), 1)),
        }
    }
    out.iter()
        .map(|(r, n)| {
            if *n > 1 {
                format!("{r}×{n}")
            } else {
                r.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The worst traces; with `--top 0` the list was turned off, which is
/// said as such (not as "no trace rolled back").
/// Its file column says which file an id is from (kept at any width, see
/// the column priorities).
pub(super) fn worst(a: &Aggregate, top: usize) -> Section {
    let rows: Vec<Vec<Cell>> = a
        .worst_traces
        .items()
        .iter()
        .filter(|t| t.rollbacks > 0)
        .enumerate()
        .map(|(i, t)| {
            vec![
                Cell::num((i + 1).to_string()),
                Cell::text(t.trace_id.as_str()),
                Cell::text(t.file.to_string()),
                Cell::count(t.attempts),
                Cell::count(t.reached),
                Cell::count(t.rollbacks).tone(Tone::Warn),
                Cell::num(pct(t.rollbacks, t.reached)),
                Cell::text(t.top_reason.map_or("–", |r| r.name())),
                Cell::count(u64::from(t.longest_streak)),
                Cell::text(t.ended_early.map_or("", |e| e.name())).tone(Tone::Bad),
            ]
        })
        .collect();
    let blocks = if top == 0 {
        vec![Block::Note("not listed (--top 0)".into())]
    } else if rows.is_empty() {
        vec![Block::Note("no trace rolled back".into())]
    } else {
        let mut table = Table::new(&[
            "#",
            "trace",
            "file",
            "attempts",
            "reached",
            "rollbacks",
            "rate (of reached)",
            "top reason",
            "longest streak",
            "main ended early",
        ])
        // The file tells apart ids that several files hold.
        .priority(&[2, 9, 8, 3, 4, 9, 7, 6, 5, 6]);
        table.rows = rows;
        vec![Block::Table(table)]
    };
    Section {
        title: "Worst traces".into(),
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_runs_of_reasons() {
        assert_eq!(
            compress_reasons(&["refusal", "refusal", "format_error"]),
            "refusal×2, format_error"
        );
        assert_eq!(compress_reasons(&[]), "");
    }

    #[test]
    fn limit_events_in_words() {
        assert_eq!(
            limit_event(StreakEnd::LoopEnded, Some(Reason::Refusal)),
            "the loop ended (refusal)"
        );
        assert_eq!(
            limit_event(StreakEnd::LetThrough, Some(Reason::DuplicateQuery)),
            "a duplicate query was let through"
        );
    }
}
