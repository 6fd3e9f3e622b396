//! The report's layout, independent of how it is drawn: a headline (what to
//! read first) and sections of tables. The terminal and Markdown renderers
//! both draw this, so they cannot drift apart.

use super::aggregate::{Aggregate, NO_CALL};
use super::hotspots::{QueryCounter, QueryKey, QueryStats};
use super::sessions::{EarlyEnd, StreakEnd};
use super::{Analysis, Scored};
use crate::detect::Reason;
use crate::parse::JsonPath;
use crate::repair::Repair;
use crate::replay::Outcome;

/// How a cell should stand out (colour in a terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// The row to look at first.
    Strong,
    Good,
    Warn,
    Bad,
    /// Zeros and context.
    Dim,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub tone: Tone,
    /// Right-aligned.
    pub numeric: bool,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            tone: Tone::Plain,
            numeric: false,
        }
    }

    pub fn num(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            tone: Tone::Plain,
            numeric: true,
        }
    }

    /// A count, dimmed when zero.
    pub fn count(n: u64) -> Cell {
        let c = Cell::num(n.to_string());
        if n == 0 {
            c.tone(Tone::Dim)
        } else {
            c
        }
    }

    pub fn tone(mut self, tone: Tone) -> Cell {
        self.tone = tone;
        self
    }
}

/// One table, with an optional caption above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Table(Table),
    /// A sentence under or between tables.
    Note(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// Two or three lines that answer "what dominates, where to look".
    pub headline: Vec<String>,
    pub sections: Vec<Section>,
}

/// Longest query text shown in a table cell (the JSON has it whole).
pub const QUERY_WIDTH: usize = 60;
/// Most tools listed in the per-tool table.
const MAX_TOOL_ROWS: usize = 20;
/// Width of the streak histogram's bars.
const BAR_WIDTH: u64 = 30;

pub fn build(analysis: &Analysis) -> View {
    let overall = &analysis.overall;
    let a = &overall.aggregate;
    let limit = analysis.options.rollback_limit;
    let mut sections = vec![
        overview(overall, analysis),
        reasons(a),
        repairs(a),
        hotspots(a, analysis.options.top),
        streaks(a, limit),
        worst(a),
    ];
    sections.extend(super::recorded::section(analysis));
    if let Some(by) = analysis.options.group_by {
        sections.push(groups(by.name(), &analysis.groups));
    }
    View {
        headline: headline(overall, limit),
        sections,
    }
}

fn headline(scored: &Scored, limit: u32) -> Vec<String> {
    let a = &scored.aggregate;
    if a.attempts == 0 {
        return vec!["no attempts were read".to_string()];
    }
    let mut first = format!("rollback rate {}", rate_with_interval(scored));
    match a.top_reason() {
        Some(r) => first.push_str(&format!(
            "; top reason: {} ({} of rollbacks, in {} of traces)",
            r.name(),
            pct(a.rollback_reason(r), a.rollbacks()),
            pct(a.traces_with(r), a.traces)
        )),
        None => first.push_str("; no rollbacks"),
    }
    if let Some(s) = a.streaks.longest.items().first() {
        first.push_str(&format!(
            "; longest streak {}{} at trace {} session {} #{}",
            s.length,
            if s.length + 1 >= limit {
                " (the limit)"
            } else {
                ""
            },
            s.trace_id,
            s.session,
            s.start_index
        ));
    }
    let mut second = format!(
        "repairs fixed {} of {} tool calls ({})",
        a.calls.repaired,
        a.calls.parsed,
        pct(a.calls.repaired, a.calls.parsed)
    );
    if let Some((key, stats)) = a.duplicates.top(1).first() {
        second.push_str(&format!(
            "; most repeated query: {} \"{}\" ×{} in {} trace{}",
            key.tool,
            shorten(&query_text(key, stats), 40),
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
    let mut lines = vec![first, second];
    if let Some(t) = a.worst_traces.items().first().filter(|t| t.rollbacks > 0) {
        lines.push(format!(
            "worst trace: {} ({} rollbacks in {} attempts); see it with: mirotrace replay {} --trace {}",
            t.trace_id, t.rollbacks, t.attempts, t.file, t.trace_id
        ));
    }
    lines
}

fn overview(scored: &Scored, analysis: &Analysis) -> Section {
    let a = &scored.aggregate;
    let mut rows = vec![
        vec![Cell::text("files"), Cell::count(a.files), Cell::text("")],
        vec![Cell::text("traces"), Cell::count(a.traces), Cell::text("")],
        vec![
            Cell::text("sessions (main / sub-agent)"),
            Cell::count(a.main_sessions + a.sub_agent_sessions),
            Cell::text(format!("{} / {}", a.main_sessions, a.sub_agent_sessions)),
        ],
        vec![
            Cell::text("attempts"),
            Cell::count(a.attempts),
            Cell::text(""),
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
    for o in Outcome::ALL {
        let n = a.outcome(o);
        let tone = match o {
            _ if n == 0 => Tone::Dim,
            Outcome::Rollback => Tone::Warn,
            Outcome::End | Outcome::Crash | Outcome::ContextExceeded => Tone::Bad,
            _ => Tone::Plain,
        };
        rows.push(vec![
            Cell::text(format!("  {}", o.name())),
            Cell::count(n).tone(tone),
            Cell::num(pct(n, a.attempts)).tone(if n == 0 { Tone::Dim } else { Tone::Plain }),
        ]);
    }
    rows.push(vec![
        Cell::text("rollback rate (rollbacks / attempts)").tone(Tone::Strong),
        Cell::num(pct(a.rollbacks(), a.attempts)).tone(Tone::Strong),
        Cell::text(match scored.interval {
            Some((lo, hi)) => format!(
                "95% CI [{}–{}], bootstrap over traces ({} resamples, seed {})",
                pct_f(lo),
                pct_f(hi),
                analysis.options.iterations,
                analysis.options.seed
            ),
            None => "no interval (fewer than 2 traces)".to_string(),
        }),
    ]);
    rows.push(vec![
        Cell::text("traces with a rollback"),
        Cell::count(a.traces_with_rollback),
        Cell::num(pct(a.traces_with_rollback, a.traces)),
    ]);
    let early: u64 = a.main_ended_early.iter().sum();
    rows.push(vec![
        Cell::text("traces ended early (main agent)"),
        Cell::count(early).tone(if early > 0 { Tone::Bad } else { Tone::Dim }),
        Cell::text(early_breakdown(&a.main_ended_early)),
    ]);
    let sub_early: u64 = a.sub_agent_ended_early.iter().sum();
    rows.push(vec![
        Cell::text("sub-agent sessions ended early"),
        Cell::count(sub_early),
        Cell::text(early_breakdown(&a.sub_agent_ended_early)),
    ]);
    Section {
        title: "Overview".into(),
        blocks: vec![Block::Table(Table {
            caption: None,
            header: vec!["".into(), "count".into(), "share / detail".into()],
            rows,
        })],
    }
}

fn early_breakdown(counts: &[u64; EarlyEnd::ALL.len()]) -> String {
    EarlyEnd::ALL
        .iter()
        .map(|e| format!("{} {}", e.name().replace('_', " "), counts[*e as usize]))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn reasons(a: &Aggregate) -> Section {
    let mut order: Vec<Reason> = Reason::ALL.to_vec();
    // Most rollbacks first; the stable sort keeps the spec's order for ties.
    order.sort_by_key(|r| std::cmp::Reverse(a.rollback_reason(*r)));
    let top = a.top_reason();
    let rows = order
        .iter()
        .map(|&r| {
            let n = a.rollback_reason(r);
            let name = Cell::text(r.name());
            vec![
                if Some(r) == top {
                    name.tone(Tone::Strong)
                } else {
                    name
                },
                Cell::count(n).tone(if Some(r) == top {
                    Tone::Strong
                } else if n == 0 {
                    Tone::Dim
                } else {
                    Tone::Plain
                }),
                Cell::num(pct(n, a.attempts)),
                Cell::num(pct(n, a.rollbacks())),
                Cell::count(a.traces_with(r)),
                Cell::count(a.end_reason(r)),
            ]
        })
        .collect();
    let mut blocks = vec![Block::Table(Table {
        caption: None,
        header: [
            "reason",
            "rollbacks",
            "of attempts",
            "of rollbacks",
            "traces affected",
            "ended loop at limit",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })];
    if !a.refusal_keywords.is_empty() {
        let words: Vec<String> = a
            .refusal_keywords
            .iter()
            .map(|(k, n)| format!("\"{k}\" ×{n}"))
            .collect();
        blocks.push(Block::Note(format!(
            "refusal keywords matched: {}",
            words.join(", ")
        )));
    }
    blocks.push(Block::Table(per_tool(a)));
    blocks.push(Block::Table(per_agent(a)));
    Section {
        title: "Rollbacks by reason".into(),
        blocks,
    }
}

const CALL_REASONS: [Reason; 4] = [
    Reason::DuplicateQuery,
    Reason::UnknownTool,
    Reason::ToolError,
    Reason::EmptySearch,
];

fn per_tool(a: &Aggregate) -> Table {
    let mut tools: Vec<_> = a
        .tools
        .iter()
        .filter(|(name, _)| name.as_str() != NO_CALL)
        .collect();
    tools.sort_by(|(na, x), (nb, y)| {
        (y.total_rollbacks(), y.calls)
            .cmp(&(x.total_rollbacks(), x.calls))
            .then_with(|| na.cmp(nb))
    });
    let hidden = tools.len().saturating_sub(MAX_TOOL_ROWS);
    let mut rows: Vec<Vec<Cell>> = tools
        .iter()
        .take(MAX_TOOL_ROWS)
        .map(|(name, t)| {
            let mut row = vec![
                Cell::text(name.as_str()),
                Cell::count(t.calls),
                Cell::count(t.executed),
                Cell::count(t.total_rollbacks()),
                Cell::num(pct(t.total_rollbacks(), t.executed)),
            ];
            row.extend(
                CALL_REASONS
                    .iter()
                    .map(|r| Cell::count(t.rollbacks[*r as usize])),
            );
            row.push(Cell::count(t.repaired));
            row
        })
        .collect();
    if hidden > 0 {
        rows.push(vec![Cell::text(format!(
            "… {hidden} more tools (see --format json)"
        ))
        .tone(Tone::Dim)]);
    }
    let mut header: Vec<String> = ["tool", "calls", "run", "rollbacks", "per call run"]
        .map(String::from)
        .to_vec();
    header.extend(CALL_REASONS.iter().map(|r| r.name().to_string()));
    header.push("repaired".into());
    Table {
        caption: Some("per tool (format errors and refusals have no tool call)".into()),
        header,
        rows,
    }
}

fn per_agent(a: &Aggregate) -> Table {
    let mut agents: Vec<_> = a.agents.iter().collect();
    // `main` first, then the sub-agents by name.
    agents.sort_by_key(|(name, _)| (name.as_str() != "main", name.as_str()));
    let rows = agents
        .iter()
        .map(|(name, s)| {
            let top = super::aggregate::top_reason(&s.rollbacks);
            vec![
                Cell::text(name.as_str()),
                Cell::count(s.traces),
                Cell::count(s.sessions),
                Cell::count(s.attempts),
                Cell::count(s.total_rollbacks()),
                Cell::num(pct(s.total_rollbacks(), s.attempts)),
                Cell::text(top.map_or("–", |r| r.name())),
                Cell::count(s.ends),
                Cell::count(s.ended_early.iter().sum()),
            ]
        })
        .collect();
    Table {
        caption: Some("per agent".into()),
        header: [
            "agent",
            "traces",
            "sessions",
            "attempts",
            "rollbacks",
            "rate",
            "top reason",
            "ended at limit",
            "ended early",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

fn repairs(a: &Aggregate) -> Section {
    let c = &a.calls;
    let mut rows = vec![vec![
        Cell::text("tool calls parsed"),
        Cell::count(c.parsed),
        Cell::text(""),
    ]];
    for p in JsonPath::ALL {
        let n = c.path(p);
        let tone = match p {
            _ if n == 0 => Tone::Dim,
            JsonPath::Failed => Tone::Bad,
            _ => Tone::Plain,
        };
        rows.push(vec![
            Cell::text(format!("  json {}", p.name())),
            Cell::count(n).tone(tone),
            Cell::num(pct(n, c.parsed)),
        ]);
    }
    for r in Repair::ALL {
        let n = c.repair(r);
        rows.push(vec![
            Cell::text(format!("  repair {}", r.name())),
            Cell::count(n),
            Cell::num(pct(n, c.parsed)),
        ]);
    }
    rows.push(vec![
        Cell::text("calls that would have failed without repair").tone(Tone::Strong),
        Cell::count(c.repaired).tone(Tone::Good),
        Cell::num(pct(c.repaired, c.parsed)).tone(Tone::Good),
    ]);
    Section {
        title: "Repairs".into(),
        blocks: vec![
            Block::Table(Table {
                caption: None,
                header: ["", "calls", "per call"].map(String::from).to_vec(),
                rows,
            }),
            Block::Note(
                "a call counts as saved when a repair kind fired or its arguments only parsed after JSON repair or \
                 the lenient fallback"
                    .into(),
            ),
        ],
    }
}

fn hotspots(a: &Aggregate, top: usize) -> Section {
    let exact = a.duplicates.top(top);
    let mut blocks = vec![Block::Note(format!(
        "{} attempt{} hit a query already made in the session ({} distinct); {} rolled back, {} let through at the limit",
        a.duplicates.total(),
        plural(a.duplicates.total()),
        a.duplicates.len(),
        a.rollback_reason(Reason::DuplicateQuery),
        a.limit_events.duplicate_allowed
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
        header,
        rows,
    }
}

/// The query as shown: the fingerprint without its `<tool>_` prefix.
fn query_text(key: &QueryKey, stats: &QueryStats) -> String {
    let text = stats.example.to_string_lossy();
    let prefix = format!("{}_", key.tool);
    match text.strip_prefix(prefix.as_str()).unwrap_or(&text) {
        "" => "(empty)".to_string(),
        query => query.to_string(),
    }
}

fn streaks(a: &Aggregate, limit: u32) -> Section {
    let s = &a.streaks;
    let total = s.count();
    let most = s.histogram.values().copied().max().unwrap_or(0);
    let longest_possible = limit.saturating_sub(1);
    let mut lengths: Vec<u32> = (1..=longest_possible).collect();
    lengths.extend(s.histogram.keys().filter(|k| **k > longest_possible));
    let rows = lengths
        .iter()
        .map(|&len| {
            let n = s.histogram.get(&len).copied().unwrap_or(0);
            let label = if len == longest_possible {
                format!("{len} (limit)")
            } else {
                len.to_string()
            };
            let bar = if most == 0 {
                0
            } else {
                (n * BAR_WIDTH).div_ceil(most)
            };
            vec![
                Cell::text(label).tone(if len == longest_possible && n > 0 {
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
    let l = &a.limit_events;
    let mut blocks = vec![
        Block::Table(Table {
            caption: Some(format!(
                "{total} streak{}; length = highest consecutive_rollbacks reached",
                plural(total)
            )),
            header: ["length", "streaks", "share", ""]
                .map(String::from)
                .to_vec(),
            rows,
        }),
        Block::Note(format!("streaks ended by: {}", ends.join(" · "))),
        Block::Note(format!(
            "at the limit: loop ended {} · duplicate allowed {} · bad result passed on {}",
            l.loop_ended, l.duplicate_allowed, l.result_passed
        )),
    ];
    if !s.longest.items().is_empty() {
        let rows = s
            .longest
            .items()
            .iter()
            .map(|r| {
                let reasons: Vec<&str> = r.reasons.iter().map(|x| x.name()).collect();
                vec![
                    Cell::count(u64::from(r.length)).tone(if r.length >= longest_possible {
                        Tone::Warn
                    } else {
                        Tone::Plain
                    }),
                    Cell::text(r.trace_id.as_str()),
                    Cell::text(r.session.as_str()),
                    Cell::num(format!("#{}", r.start_index)),
                    Cell::text(format!("{}:{}", r.file, r.start_line)),
                    Cell::text(compress_reasons(&reasons)),
                    Cell::text(r.end.name()).tone(if r.end.at_limit() {
                        Tone::Bad
                    } else {
                        Tone::Plain
                    }),
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: Some("longest streaks".into()),
            header: [
                "length", "trace", "session", "from", "line", "reasons", "ended by",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
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

fn worst(a: &Aggregate) -> Section {
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
                Cell::count(t.rollbacks).tone(Tone::Warn),
                Cell::num(pct(t.rollbacks, t.attempts)),
                Cell::text(t.top_reason.map_or("–", |r| r.name())),
                Cell::count(u64::from(t.max_streak)),
                Cell::text(t.ended_early.map_or("", |e| e.name())).tone(Tone::Bad),
            ]
        })
        .collect();
    let blocks = if rows.is_empty() {
        vec![Block::Note("no trace rolled back".into())]
    } else {
        vec![Block::Table(Table {
            caption: None,
            header: [
                "#",
                "trace",
                "file",
                "attempts",
                "rollbacks",
                "rate",
                "top reason",
                "longest streak",
                "main ended early",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        })]
    };
    Section {
        title: "Worst traces".into(),
        blocks,
    }
}

fn groups(by: &str, groups: &[(String, Scored)]) -> Section {
    let rows = groups
        .iter()
        .map(|(key, scored)| {
            let a = &scored.aggregate;
            vec![
                Cell::text(key.as_str()),
                Cell::count(a.traces),
                Cell::count(a.attempts),
                Cell::num(rate_with_interval(scored)),
                Cell::text(a.top_reason().map_or("–".to_string(), |r| {
                    format!(
                        "{} ({})",
                        r.name(),
                        pct(a.rollback_reason(r), a.rollbacks())
                    )
                })),
                Cell::num(pct(a.calls.repaired, a.calls.parsed)),
                Cell::count(
                    a.rollback_reason(Reason::DuplicateQuery) + a.limit_events.duplicate_allowed,
                ),
                Cell::count(u64::from(a.streaks.max())),
                Cell::count(a.main_ended_early.iter().sum()),
            ]
        })
        .collect();
    Section {
        title: format!("By {by}"),
        blocks: vec![Block::Table(Table {
            caption: None,
            header: [
                by,
                "traces",
                "attempts",
                "rollback rate [95% CI]",
                "top reason (of rollbacks)",
                "calls repaired",
                "duplicate hits",
                "longest streak",
                "traces ended early",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        })],
    }
}

fn rate_with_interval(scored: &Scored) -> String {
    let a = &scored.aggregate;
    let rate = pct(a.rollbacks(), a.attempts);
    match scored.interval {
        Some((lo, hi)) => format!("{rate} [{}–{}]", pct_number(lo), pct_number(hi)),
        None => rate,
    }
}

/// `n / d` as a percentage with one decimal; `–` when `d` is 0.
pub fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "–".to_string()
    } else {
        pct_f(n as f64 / d as f64)
    }
}

fn pct_f(x: f64) -> String {
    format!("{}%", pct_number(x))
}

fn pct_number(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// At most `width` characters on one line, with `…` where it was cut.
pub fn shorten(text: &str, width: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= width {
        return flat;
    }
    let mut cut: String = flat.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortens_on_characters_not_bytes() {
        assert_eq!(shorten("深圳 2022年 GDP", 5), "深圳 2…");
        assert_eq!(shorten("a\nb", 10), "a b");
        assert_eq!(shorten("abc", 3), "abc");
    }

    #[test]
    fn compresses_runs_of_reasons() {
        assert_eq!(
            compress_reasons(&["refusal", "refusal", "format_error"]),
            "refusal×2, format_error"
        );
        assert_eq!(compress_reasons(&[]), "");
    }

    #[test]
    fn percentages() {
        assert_eq!(pct(1, 3), "33.3%");
        assert_eq!(pct(0, 0), "–");
    }
}
