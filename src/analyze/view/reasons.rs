//! The rollbacks by reason, per tool and per agent, and the repairs.

use super::{share_row, Block, Cell, Section, Table, Tone};
use crate::analyze::aggregate::Aggregate;
use crate::detect::Reason;
use crate::metrics::tally::top_reason;
use crate::parse::JsonPath;
use crate::render::format::pct;
use crate::repair::Repair;

/// Most tools listed in the per-tool table.
const MAX_TOOL_ROWS: usize = 20;

pub(super) fn section(a: &Aggregate) -> Section {
    let t = &a.tally;
    let mut order: Vec<Reason> = Reason::ALL.to_vec();
    // Most rollbacks first; the stable sort keeps the spec's order for ties.
    order.sort_by_key(|r| std::cmp::Reverse(t.rollback_reason(*r)));
    let top = t.top_reason();
    let rows = order
        .iter()
        .map(|&r| {
            let n = t.rollback_reason(r);
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
                Cell::num(pct(n, t.reached())),
                Cell::num(pct(n, t.rollbacks())),
                Cell::count(t.traces_with(r)),
                Cell::count(t.end_reason(r)),
            ]
        })
        .collect();
    let mut blocks = vec![Block::Table(Table {
        caption: None,
        priority: vec![9, 9, 6, 8, 5, 4],
        header: [
            "reason",
            "rollbacks",
            "of attempts reached",
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
    Section {
        title: "Rollbacks by reason".into(),
        blocks,
    }
}

/// The rollbacks per tool and per agent (after the mistakes: the detail).
pub(super) fn who(a: &Aggregate) -> Section {
    Section {
        title: "Per tool and agent".into(),
        blocks: vec![Block::Table(per_tool(a)), Block::Table(per_agent(a))],
    }
}

const CALL_REASONS: [Reason; 4] = [
    Reason::DuplicateQuery,
    Reason::UnknownTool,
    Reason::ToolError,
    Reason::EmptySearch,
];

fn per_tool(a: &Aggregate) -> Table {
    let tools = a.tools_by_rollbacks();
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
        // The tool, its rollbacks and rate first; the reasons before the counts of calls.
        priority: [9, 6, 3, 9, 8]
            .into_iter()
            .chain(CALL_REASONS.iter().map(|_| 5))
            .chain([4])
            .collect(),
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
            let top = top_reason(&s.rollbacks);
            vec![
                Cell::text(name.as_str()),
                Cell::count(s.traces),
                Cell::count(s.sessions),
                Cell::count(s.attempts),
                Cell::count(s.total_rollbacks()),
                Cell::num(pct(s.total_rollbacks(), s.reached)),
                Cell::text(top.map_or("–", |r| r.name())),
                Cell::count(s.ends),
                Cell::count(s.ended_early.iter().sum()),
            ]
        })
        .collect();
    Table {
        caption: Some("per agent".into()),
        priority: vec![9, 4, 3, 5, 9, 8, 7, 6, 6],
        header: [
            "agent",
            "traces",
            "sessions",
            "attempts",
            "rollbacks",
            "rate (of reached)",
            "top reason",
            "ended at limit",
            "ended early",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

pub(super) fn repairs(a: &Aggregate) -> Section {
    let c = &a.tally.calls;
    let mut rows = vec![vec![
        Cell::text("tool calls parsed"),
        Cell::count(c.parsed),
        Cell::text(""),
    ]];
    for p in JsonPath::ALL {
        let tone = match p {
            JsonPath::Failed => Tone::Bad,
            _ => Tone::Plain,
        };
        let label = format!("  json {}", p.name());
        rows.push(share_row(label, c.path(p), c.parsed, tone));
    }
    for r in Repair::ALL {
        let label = format!("  repair {}", r.name());
        rows.push(share_row(label, c.repair(r), c.parsed, Tone::Plain));
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
                priority: Vec::new(),
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
