//! The "Recorded by upstream" section of `analyze`: what task logs say
//! upstream did (their `step_logs`), next to what the replay of their
//! surviving turns finds, and every place where the two disagree.

use super::view::{Block, Cell, Section, Table, Tone};
use super::Analysis;
use crate::detect::Reason;
use crate::read::tasklog::recorded::{RecordedCounts, UNKNOWN_REASON};

/// The section, when some input carried a recorded view (task logs).
pub fn section(analysis: &Analysis) -> Option<Section> {
    let summary = &analysis.recorded;
    if summary.traces == 0 {
        return None;
    }
    let (rec, rep) = (&summary.counts, &summary.replayed);
    let reason =
        |c: &RecordedCounts, name: &str| c.rollback_reasons.get(name).copied().unwrap_or(0);
    let row = |label: String, recorded: u64, replayed: u64| {
        let tone = if recorded == replayed {
            Tone::Plain
        } else {
            Tone::Warn
        };
        vec![
            Cell::text(label),
            Cell::count(recorded).tone(tone),
            Cell::count(replayed),
        ]
    };
    let mut rows: Vec<Vec<Cell>> = Reason::ALL
        .iter()
        .map(|r| {
            row(
                format!("rollback: {}", r.name()),
                reason(rec, r.name()),
                reason(rep, r.name()),
            )
        })
        .collect();
    if reason(rec, UNKNOWN_REASON) > 0 {
        rows.push(row(
            "rollback: unrecognised message".into(),
            reason(rec, UNKNOWN_REASON),
            0,
        ));
    }
    rows.push(row(
        "duplicate allowed at the limit".into(),
        rec.duplicate_allowed,
        rep.duplicate_allowed,
    ));
    rows.push(row(
        "loop ended at the limit".into(),
        rec.loop_ended,
        rep.loop_ended,
    ));
    rows.push(row("recoveries".into(), rec.recoveries, rep.recoveries));
    let mut blocks = vec![
        Block::Note(format!(
            "{} task log{}: rolled-back attempts are not in upstream's message history, so the replay sees only the surviving turns",
            summary.traces,
            if summary.traces == 1 { "" } else { "s" }
        )),
        Block::Table(Table {
            caption: None,
            header: ["event", "recorded (upstream)", "replayed (surviving turns)"].map(String::from).to_vec(),
            rows,
        }),
    ];
    if summary.unaligned_sessions > 0 {
        blocks.push(Block::Note(format!(
            "{} session(s) could not be matched turn by turn with their step log; their disagreements are judged without the rollback streak",
            summary.unaligned_sessions
        )));
    }
    let all = summary.disagreements();
    if all.is_empty() {
        blocks.push(Block::Note("no disagreements: the step logs explain every recorded rollback, and every surviving turn the replay would roll back".into()));
    } else {
        let top = analysis.options.top.max(1);
        let rows = all
            .iter()
            .take(top)
            .map(|d| {
                vec![
                    Cell::text(d.trace_id.as_str()),
                    Cell::text(d.session.as_str()),
                    Cell::text(d.turn.map_or("–".to_string(), |t| t.to_string())),
                    Cell::text(d.kind.name()).tone(Tone::Warn),
                    Cell::text(d.reason.as_str()),
                    Cell::text(d.detail.as_str()),
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: Some(format!("Disagreements ({})", all.len())),
            header: ["trace", "session", "turn", "kind", "reason", "detail"]
                .map(String::from)
                .to_vec(),
            rows,
        }));
        if all.len() > top {
            blocks.push(Block::Note(format!(
                "… and {} more (all of them in --format json)",
                all.len() - top
            )));
        }
    }
    Some(Section {
        title: "Recorded by upstream".into(),
        blocks,
    })
}
