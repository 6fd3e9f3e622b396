//! The "Task logs" section of `analyze`: how many verdicts the replay made
//! from the text and how many upstream's `step_logs` gave (turns popped
//! from the history), and every place where the log and the replay
//! disagree.

use super::view::{Block, Cell, Section, Table, Tone};
use super::Analysis;
use crate::model::{Outcome, Source};

/// The section, when some input was a task log.
pub fn section(analysis: &Analysis) -> Option<Section> {
    let summary = &analysis.crosscheck;
    if summary.traces == 0 {
        return None;
    }
    let (replayed, recorded) = (
        summary.source(Source::Replayed),
        summary.source(Source::Recorded),
    );
    let row = |label: &str, r: u64, l: u64| {
        vec![
            Cell::text(label),
            Cell::count(r),
            Cell::count(l),
            Cell::count(r + l),
        ]
    };
    let mut rows = vec![row("attempts", replayed.attempts, recorded.attempts)];
    for o in Outcome::ALL {
        let (r, l) = (replayed.outcomes[o as usize], recorded.outcomes[o as usize]);
        if r + l > 0 {
            rows.push(row(o.name(), r, l));
        }
    }
    let mut blocks = vec![
        Block::Note(format!(
            "{} task log{}: every figure of this report counts the whole run. Upstream pops rolled-back turns from its message history, so their verdicts come from step_logs (recorded); the surviving turns are replayed from their text",
            summary.traces,
            if summary.traces == 1 { "" } else { "s" }
        )),
        Block::Table(Table {
            caption: None,
            priority: Vec::new(),
            header: ["", "replayed", "recorded (step_logs)", "total"]
                .map(String::from)
                .to_vec(),
            rows,
        }),
    ];
    let all = summary.disagreements();
    if all.is_empty() {
        blocks.push(Block::Note("no disagreements: the replay judges every surviving turn as upstream did, reaches every logged attempt in the loop state the log states, and can reproduce every logged rollback from its message".into()));
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
                    Cell::text(d.detail.as_str()),
                ]
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: Some(format!(
                "Where the log and the replay disagree ({})",
                all.len()
            )),
            priority: Vec::new(),
            header: ["trace", "session", "turn", "kind", "detail"]
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
        title: "Task logs: replayed and recorded verdicts".into(),
        blocks,
    })
}
