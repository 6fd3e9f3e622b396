//! `analyze`'s report as a [`Document`]: a headline (what to read first) and
//! sections of tables, drawn by the table and Markdown back ends of
//! [`crate::render`]. The figures are the aggregate's; this module only
//! lays them out.

pub mod blind;
pub mod cost;
mod hotspots;
pub mod mistakes;
mod reasons;
mod streaks;
pub mod traces;

pub use crate::render::{Block, Cell, Document, Section, Table, Tone};

use super::{Analysis, Scored};
use crate::metrics::figures;
use crate::metrics::tally::EARLY_ENDS;
use crate::metrics::EarlyEnd;
use crate::parse::JsonPath;
use crate::render::format::{counted, pct, percent, plural, shorten, thousands};
use crate::replay::Outcome;

/// Longest query text shown in a table cell (the JSON has it whole).
pub const QUERY_WIDTH: usize = 60;

/// The report, laid out.
pub fn build(analysis: &Analysis) -> Document {
    let overall = &analysis.overall;
    let a = &overall.aggregate;
    let limit = analysis.options.rollback_limit;
    let mut sections = Vec::new();
    // The gates' result first (docs/usage.md, "Gates").
    if !analysis.gates.is_empty() {
        sections.push(crate::render::gates::section(&analysis.gates));
    }
    sections.extend([
        overview(overall, analysis),
        reasons::section(a),
        mistakes::section(&a.mistakes, a.tally.calls.path(JsonPath::Repaired)),
    ]);
    sections.extend(blind::section(&a.tally));
    sections.extend([
        reasons::who(a),
        reasons::repairs(a),
        hotspots::section(a, analysis.options.top),
        streaks::section(a, limit),
        streaks::worst(a, analysis.options.top),
    ]);
    sections.extend(cost::section(overall, analysis.options.prices.as_deref()));
    sections.extend(cost::results(overall));
    sections.extend(super::recorded::section(analysis));
    if let Some(by) = analysis.options.group_by {
        sections.push(groups(by.name(), &analysis.groups));
    }
    let gates = crate::render::gates::result_line(&analysis.gates);
    Document {
        title: match crate::render::gates::result_words(&analysis.gates) {
            Some(words) => format!("mirotrace analyze: {words}"),
            None => "mirotrace analyze".into(),
        },
        level: 1,
        headline: {
            let mut lines: Vec<String> = gates.into_iter().collect();
            lines.extend(headline(overall, limit));
            if let Some(p) = &analysis.options.policy {
                lines.push(format!("policy: {}, not upstream's defaults", p.describe()));
            }
            lines
        },
        sections,
    }
}

fn headline(scored: &Scored, limit: u32) -> Vec<String> {
    let a = &scored.aggregate;
    let t = &a.tally;
    if t.attempts == 0 {
        return vec!["no attempts were read".to_string()];
    }
    let mut first = format!(
        "rollback rate {} of {} attempts reached",
        pct(t.rollbacks(), t.reached()),
        thousands(t.reached())
    );
    if let Some((lo, hi)) = scored.interval {
        first.push_str(&format!(" [95% CI {:.1}–{:.1}]", 100.0 * lo, 100.0 * hi));
    }
    match t.top_reason() {
        Some(r) => first.push_str(&format!(
            "; top reason: {} ({} of rollbacks, in {} of traces)",
            r.name(),
            pct(t.rollback_reason(r), t.rollbacks()),
            pct(t.traces_with(r), t.traces)
        )),
        None => first.push_str("; no rollbacks"),
    }
    let ambiguous = traces::ambiguous(a);
    if let Some(s) = a.longest_streaks.items().first() {
        first.push_str(&format!(
            "; longest streak {} at trace {} session {} #{}",
            s.length,
            traces::in_sentence(&s.trace_id, &s.file, &ambiguous),
            s.session,
            s.start_index
        ));
        if s.end.at_limit() {
            first.push_str(&format!(
                ", then the limit of {limit}: {}",
                streaks::limit_event(s.end, s.limit_reason)
            ));
        }
    }
    let c = &t.calls;
    let mut second = format!(
        "calls repaired: {} of {} tool calls ({})",
        thousands(c.repaired),
        thousands(c.parsed),
        pct(c.repaired, c.parsed)
    );
    if let Some((key, stats)) = a.duplicates.top(1).first() {
        second.push_str(&format!(
            "; most repeated query: {} \"{}\" ×{} in {} trace{}",
            key.tool,
            shorten(&crate::analyze::hotspots::query_text(key, stats), 40),
            stats.count(),
            stats.traces,
            plural(stats.traces)
        ));
    }
    let near = a.near_duplicates.total();
    if near > 0 {
        second.push_str(&format!(
            "; {near} near-duplicate{} slipped past upstream",
            plural(near)
        ));
    }
    let mut lines = vec![first];
    lines.extend(layer_duplicates(a));
    let unreachable = t.outcome(crate::replay::Outcome::Unreachable);
    if 2 * unreachable > t.attempts {
        lines.push(format!(
            "{unreachable} of {} attempts ({}) are unreachable: their sessions ended before them, \
             most often at a reply without a tool call (upstream's rule); a conversational agent \
             replays turn by turn with --plain-reply continue",
            t.attempts,
            pct(unreachable, t.attempts)
        ));
    }
    lines.push(second);
    lines.extend(blind::headline(t));
    lines.extend(blind::owners_headline(t));
    if let Some(t) = a.worst_traces.items().first().filter(|t| t.rollbacks > 0) {
        let (see, command) = crate::render::shell::see_it_with(&t.file, &t.trace_id);
        lines.push(format!(
            "worst trace: {} ({} in {} reached); {see}",
            traces::in_sentence(&t.trace_id, &t.file, &ambiguous),
            counted(t.rollbacks, "rollback"),
            counted(t.reached, "attempt"),
        ));
        // The command on a line of its own, so it is copied whole.
        lines.extend(command);
    }
    lines
}

/// The headline's line on the duplicate-query rollbacks the layer caused
/// itself (`after_rolled_back`), when there are any: how many, and what
/// would prevent them.
pub fn layer_duplicates(a: &super::Aggregate) -> Option<String> {
    use crate::detect::cause::After;
    let family = &a.mistakes.duplicate_query;
    let layer = family.get(After::RolledBack.name()).copied().unwrap_or(0);
    if layer == 0 {
        return None;
    }
    let all: u64 = family.values().sum();
    Some(format!(
        "the layer caused {layer} of {all} duplicate_query rollback{} itself ({}): \
         each repeats a query whose every earlier run was in a turn that was \
         rolled back, so the model never saw its result; recording queries per turn \
         (policy query_commit = \"per_turn\", upstream pull request #121) would \
         prevent them",
        plural(all),
        pct(layer, all),
    ))
}

fn overview(scored: &Scored, analysis: &Analysis) -> Section {
    let a = &scored.aggregate;
    let t = &a.tally;
    let mut rows = vec![
        vec![Cell::text("files"), Cell::count(a.files), Cell::text("")],
        vec![Cell::text("traces"), Cell::count(t.traces), Cell::text("")],
        vec![
            Cell::text("sessions (main / sub-agent)"),
            Cell::count(t.main_sessions + t.sub_agent_sessions),
            Cell::text(format!("{} / {}", t.main_sessions, t.sub_agent_sessions)),
        ],
        vec![
            Cell::text("attempts"),
            Cell::count(t.attempts),
            Cell::text(format!("{} reached by the loops", t.reached())),
        ],
        vec![
            Cell::text("bad lines (skipped)"),
            Cell::count(a.bad_lines).tone(if a.bad_lines > 0 {
                Tone::Warn
            } else {
                Tone::Dim
            }),
            Cell::text(""),
        ],
    ];
    rows.push(vec![
        Cell::text("outcomes (share of all attempts)"),
        Cell::text(""),
        Cell::text(""),
    ]);
    for o in Outcome::ALL {
        let tone = match o {
            Outcome::Rollback => Tone::Warn,
            Outcome::End | Outcome::Crash | Outcome::ContextExceeded => Tone::Bad,
            _ => Tone::Plain,
        };
        rows.push(share_row(
            format!("  {}", o.name()),
            t.outcome(o),
            t.attempts,
            tone,
        ));
    }
    let rate = figures::get("rollback_rate");
    rows.push(vec![
        Cell::text(rate.map_or_else(String::new, |f| f.label())).tone(Tone::Strong),
        Cell::num(pct(t.rollbacks(), t.reached())).tone(Tone::Strong),
        Cell::text(format!(
            "of {} attempts reached; {}",
            thousands(t.reached()),
            match scored.interval {
                Some((lo, hi)) => format!(
                    "95% CI [{}–{}], bootstrap over traces ({} resamples, seed {})",
                    percent(lo, 1),
                    percent(hi, 1),
                    analysis.options.iterations,
                    analysis.options.seed
                ),
                None => "no interval (fewer than 2 traces)".to_string(),
            }
        )),
    ]);
    rows.push(vec![
        Cell::text("traces with a rollback"),
        Cell::count(t.traces_with_rollback),
        Cell::num(pct(t.traces_with_rollback, t.traces)),
    ]);
    let early = t.traces_ended_early();
    rows.push(vec![
        Cell::text("traces ended early (main agent)"),
        Cell::count(early).tone(if early > 0 { Tone::Bad } else { Tone::Dim }),
        Cell::text(early_breakdown(&t.main_ended_early)),
    ]);
    let sub_early: u64 = t.sub_agent_ended_early.iter().sum();
    rows.push(vec![
        Cell::text("sub-agent sessions ended early"),
        Cell::count(sub_early),
        Cell::text(early_breakdown(&t.sub_agent_ended_early)),
    ]);
    Section {
        title: "Overview".into(),
        blocks: vec![Block::Table(Table {
            caption: None,
            priority: Vec::new(),
            header: vec!["".into(), "count".into(), "share / detail".into()],
            rows,
        })],
    }
}

/// A labelled count and its share of `of`: dimmed when zero, in `tone`
/// otherwise.
fn share_row(label: String, n: u64, of: u64, tone: Tone) -> Vec<Cell> {
    let tone = if n == 0 { Tone::Dim } else { tone };
    vec![
        Cell::text(label),
        Cell::count(n).tone(tone),
        Cell::num(pct(n, of)).tone(if n == 0 { Tone::Dim } else { Tone::Plain }),
    ]
}

fn early_breakdown(counts: &[u64; EARLY_ENDS]) -> String {
    EarlyEnd::ALL
        .iter()
        .map(|e| format!("{} {}", e.name().replace('_', " "), counts[*e as usize]))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn groups(by: &str, groups: &[(String, Scored)]) -> Section {
    let rows = groups
        .iter()
        .map(|(key, scored)| {
            let a = &scored.aggregate;
            let t = &a.tally;
            vec![
                Cell::text(key.as_str()),
                Cell::count(t.traces),
                Cell::count(t.attempts),
                Cell::count(t.reached()),
                Cell::num(rate_with_interval(scored)),
                Cell::text(t.top_reason().map_or("–".to_string(), |r| {
                    format!(
                        "{} ({})",
                        r.name(),
                        pct(t.rollback_reason(r), t.rollbacks())
                    )
                })),
                Cell::num(pct(t.calls.repaired, t.calls.parsed)),
                Cell::count(t.attempts_with_duplicate),
                Cell::count(u64::from(t.streaks.longest)),
                Cell::count(t.traces_ended_early()),
            ]
        })
        .collect();
    let mut table = Table::new(&[
        by,
        "traces",
        "attempts",
        "reached",
        "rollback rate of reached [95% CI]",
        "top reason (of rollbacks)",
        "calls repaired",
        "duplicate hits",
        "longest streak",
        "traces ended early",
    ]);
    table.rows = rows;
    Section {
        title: format!("By {by}"),
        blocks: vec![Block::Table(table)],
    }
}

fn rate_with_interval(scored: &Scored) -> String {
    let t = &scored.aggregate.tally;
    let rate = pct(t.rollbacks(), t.reached());
    match scored.interval {
        Some((lo, hi)) => format!("{rate} [{:.1}–{:.1}]", 100.0 * lo, 100.0 * hi),
        None => rate,
    }
}
