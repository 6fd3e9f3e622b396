//! The cost and task-results sections of `analyze`'s document. Shown only
//! when the input recorded usage, durations or task results (or prices were
//! given): a run without them says so in one note instead of a table of
//! unknowns.

use super::{Block, Cell, Section, Table, Tone};
use crate::analyze::Scored;
use crate::detect::Reason;
use crate::metrics::cost::CostSums;
use crate::metrics::prices::Prices;
use crate::metrics::tally::ratio;
use crate::metrics::task_results::Split;
use crate::render::format::{pct, percent, thousands};

/// The cost section, when anything about cost was recorded.
pub fn section(scored: &Scored, prices: Option<&Prices>) -> Option<Section> {
    let a = &scored.aggregate;
    let c = &a.tally.cost;
    if !c.total.any_known() && prices.is_none() {
        return None;
    }
    let total = &c.total;
    let mut rows = vec![row("all attempts made", total, total)];
    rows.push(row("discarded (rollback or end)", &c.discarded, total));
    for r in Reason::ALL {
        let part = c.reason(r);
        if part.attempts > 0 {
            rows.push(row(&format!("  {}", r.name()), part, total));
        }
    }
    rows.push(row("failed calls (llm_failed)", &c.failed, total));
    let mut blocks = vec![
        Block::Table(Table {
            caption: None,
            priority: Vec::new(),
            header: [
                "",
                "attempts",
                "input tokens",
                "output tokens",
                "seconds",
                "share (out tok / s)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }),
        Block::Note(coverage(total)),
    ];
    let mut agents = Table::new(&[
        "agent / model",
        "attempts",
        "discarded",
        "out tok discarded",
        "s discarded",
    ]);
    for (kind, map) in [("agent", &a.cost.by_agent), ("model", &a.cost.by_model)] {
        for (name, t) in map {
            agents.rows.push(vec![
                Cell::text(format!("{kind} {name}")),
                Cell::count(t.total.attempts),
                Cell::num(pct(t.discarded.attempts, t.total.attempts)),
                Cell::num(share(
                    t.discarded.output_tokens,
                    t.total.output_tokens,
                    t.total.output_known,
                )),
                Cell::num(share(
                    t.discarded.nanos,
                    t.total.nanos,
                    t.total.seconds_known,
                )),
            ]);
        }
    }
    blocks.push(Block::Table(agents));
    let mut tools = Table::new(&[
        "rolled back at tool",
        "attempts",
        "output tokens",
        "seconds",
    ]);
    for (name, s) in &a.cost.by_tool {
        tools.rows.push(vec![
            Cell::text(name.as_str()),
            Cell::count(s.attempts),
            Cell::num(tokens(s.output_tokens, s.output_known)),
            Cell::num(seconds(s)),
        ]);
    }
    if !tools.rows.is_empty() {
        blocks.push(Block::Table(tools));
    }
    if let Some(p) = prices {
        let m = p.money(&a.cost.by_model);
        // A sum no attempt recorded tokens for is unknown: `–`, never 0.00.
        let money = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"));
        let share = match (m.discarded, m.total) {
            (Some(part), Some(total)) => ratio_text(part, total),
            _ => "–".into(),
        };
        let mut line = format!(
            "money (--prices): {} in all, {} discarded ({share}), {} on failed calls",
            money(m.total),
            money(m.discarded),
            money(m.failed)
        );
        if !m.unpriced_models.is_empty() {
            line.push_str(&format!(
                "; not priced (in no sum): {}",
                m.unpriced_models.join(", ")
            ));
        }
        blocks.push(Block::Note(line));
    }
    if c.unreachable_recorded > 0 {
        blocks.push(Block::Note(format!(
            "{} attempts upstream never made carry usage; they are in no sum",
            c.unreachable_recorded
        )));
    }
    Some(Section {
        title: "Cost".into(),
        blocks,
    })
}

fn row(label: &str, part: &CostSums, total: &CostSums) -> Vec<Cell> {
    vec![
        Cell::text(label),
        Cell::count(part.attempts),
        Cell::num(tokens(part.input_tokens, part.input_known)),
        Cell::num(tokens(part.output_tokens, part.output_known)),
        Cell::num(seconds(part)),
        Cell::num(format!(
            "{} / {}",
            share(part.output_tokens, total.output_tokens, total.output_known),
            share(part.nanos, total.nanos, total.seconds_known)
        ))
        .tone(Tone::Plain),
    ]
}

fn tokens(n: u64, known: u64) -> String {
    if known == 0 {
        "–".into()
    } else if n == u64::MAX {
        // Held at 2^64 − 1 (docs/limits.md): at least that, not exactly.
        format!("≥ {}", thousands(n))
    } else {
        thousands(n)
    }
}

fn seconds(s: &CostSums) -> String {
    if s.seconds_known == 0 {
        "–".into()
    } else {
        format!("{:.1}", s.seconds())
    }
}

fn share(part: u64, total: u64, known: u64) -> String {
    if known == 0 {
        "–".into()
    } else {
        pct(part, total)
    }
}

fn ratio_text(part: f64, total: f64) -> String {
    if total > 0.0 {
        percent(part / total, 1)
    } else {
        "–".into()
    }
}

/// The run's totals and the discarded and failed shares in one sentence,
/// so a reader has the absolute figures before the per-reason ones (the
/// page's cost section opens with it).
pub fn summary(c: &crate::metrics::cost::CostTally) -> String {
    let t = &c.total;
    format!(
        "{} attempts made: {} input and {} output tokens, {} s of LLM time. \
         Discarded attempts (rollback or end) took {} of the output tokens and {} of the time; \
         failed calls {} and {}.",
        thousands(t.attempts),
        tokens(t.input_tokens, t.input_known),
        tokens(t.output_tokens, t.output_known),
        seconds(t),
        share(c.discarded.output_tokens, t.output_tokens, t.output_known),
        share(c.discarded.nanos, t.nanos, t.seconds_known),
        share(c.failed.output_tokens, t.output_tokens, t.output_known),
        share(c.failed.nanos, t.nanos, t.seconds_known),
    )
}

/// "usage known for 3 340 of 3 340 attempts made; durations for …".
fn coverage(total: &CostSums) -> String {
    format!(
        "usage known for {} of {} attempts made (output tokens {}), durations for {}; \
         attempts upstream never made cost nothing and are left out",
        thousands(total.input_known),
        thousands(total.attempts),
        thousands(total.output_known),
        thousands(total.seconds_known)
    )
}

/// The task-results section, when some trace recorded a result.
pub fn results(scored: &Scored) -> Option<Section> {
    let a = &scored.aggregate;
    let t = &a.tally.results;
    let r = &a.task_results;
    if t.tasks == 0 && t.score_only == 0 {
        return None;
    }
    let interval = |i: Option<(f64, f64)>| match i {
        Some((lo, hi)) => format!("95% CI [{}–{}]", percent(lo, 1), percent(hi, 1)),
        None => "no interval (fewer than 2 tasks)".into(),
    };
    let rate = |x: Option<f64>| x.map_or("–".into(), |v| percent(v, 1));
    let mut rows = vec![
        vec![
            Cell::text("tasks with a result"),
            Cell::count(t.tasks),
            Cell::text(format!(
                "{} passed, {} failed ({} passed)",
                t.success,
                t.failure,
                pct(t.success, t.tasks)
            )),
        ],
        vec![
            Cell::text("rollback rate, passed tasks"),
            Cell::num(rate(r.rate_success.ratio())),
            Cell::text(interval(scored.result_intervals[0])),
        ],
        vec![
            Cell::text("rollback rate, failed tasks"),
            Cell::num(rate(r.rate_failure.ratio())),
            Cell::text(interval(scored.result_intervals[1])),
        ],
        success_row("tasks that hit the rollback limit", r.hit_limit),
        success_row("tasks that crashed", r.crashed),
    ];
    if t.score_only > 0 {
        rows.push(vec![
            Cell::text("tasks with only a score"),
            Cell::count(t.score_only),
            Cell::text("no pass/fail recorded: left out of the rates"),
        ]);
    }
    let mut reasons = Table::new(&[
        "reason",
        "tasks with it",
        "failed (with)",
        "failed (without)",
        "ratio [95% CI]",
    ]);
    for reason in Reason::ALL {
        let risk = r.reason_risk(reason, t);
        if risk.with[0] + risk.with[1] == 0 {
            continue;
        }
        reasons.rows.push(vec![
            Cell::text(reason.name()),
            Cell::count(risk.with[0] + risk.with[1]),
            Cell::num(rate(risk.rate_with)),
            Cell::num(rate(risk.rate_without)),
            Cell::num(risk.ratio.map_or("–".into(), |(v, lo, hi)| {
                format!("{v:.2} [{lo:.2}–{hi:.2}]")
            })),
        ]);
    }
    let bases: Vec<String> = r.bases.iter().map(|(k, n)| format!("{k} ({n})")).collect();
    let mut blocks = vec![Block::Table(Table {
        caption: None,
        priority: Vec::new(),
        header: vec!["".into(), "value".into(), "detail".into()],
        rows,
    })];
    if !reasons.rows.is_empty() {
        blocks.push(Block::Table(reasons));
    }
    blocks.push(Block::Note(format!(
        "results read from: {}",
        bases.join(", ")
    )));
    Some(Section {
        title: "Task results".into(),
        blocks,
    })
}

fn success_row(label: &str, s: Split) -> Vec<Cell> {
    let n = s[0] + s[1];
    vec![
        Cell::text(label),
        Cell::count(n),
        Cell::text(match ratio(s[0], n) {
            Some(x) => format!("{} passed ({})", s[0], percent(x, 1)),
            None => "–".into(),
        }),
    ]
}
