//! One trace's timeline (`replay --trace ID`): a row per attempt, in the
//! trace's line order, with what the layer did and why.

use super::doc::{Block, Cell, Document, Section, Table, Tone};
use super::format::shorten;
use crate::model::Recorded;
use crate::replay::{Outcome, Verdict};

/// The timeline of the trace whose verdicts these are; `details` says,
/// per verdict, why it went the way it did (the repeated query, the
/// matched keyword, the tool's error; empty when not known). When the
/// verdicts come from several files, a file column says which, since line
/// numbers restart in each.
pub fn timeline(verdicts: &[Verdict], details: &[Option<String>]) -> Document {
    let several_files = verdicts
        .windows(2)
        .any(|w| w[0].origin.file != w[1].origin.file);
    let mut headers = vec![
        "line",
        "session",
        "#",
        "turn",
        "outcome",
        "reason",
        "detail",
        "streak",
        "flags",
        "tool calls (repairs, json path)",
    ];
    // What survives a narrow terminal: the outcome, its reason and the
    // detail that says why, before the line numbers and flags.
    let mut priority = vec![3, 5, 4, 6, 9, 9, 8, 5, 4, 2];
    let mut detail = 6;
    if several_files {
        headers.insert(0, "file");
        priority.insert(0, 5);
        detail += 1;
    }
    let mut table = Table::new(&headers).priority(&priority).prose(&[detail]);
    table.rows = verdicts
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut cells = row(v, details.get(i).cloned().flatten());
            if several_files {
                cells.insert(0, Cell::text(v.origin.file.to_string()));
            }
            cells
        })
        .collect();
    Document {
        title: format!(
            "mirotrace replay: trace {}",
            verdicts.first().map_or("", |v| &*v.trace_id)
        ),
        level: 1,
        headline: Vec::new(),
        sections: vec![Section {
            title: String::new(),
            blocks: vec![Block::Table(table)],
        }],
    }
}

fn row(v: &Verdict, detail: Option<String>) -> Vec<Cell> {
    let calls: Vec<String> = v
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut s = format!(
                "{}{}/{}",
                if i < v.executed { "" } else { "(not run) " },
                c.server_name,
                c.tool_name
            );
            let repairs: Vec<&str> = c.repairs.iter().map(|r| r.name()).collect();
            if !repairs.is_empty() {
                s.push_str(&format!(" [{}]", repairs.join(",")));
            }
            if c.json.name() != "strict" {
                s.push_str(&format!(" json:{}", c.json.name()));
            }
            s
        })
        .collect();
    let mut extra = calls.join("\n");
    if let Some(e) = &v.error {
        extra.push_str(&format!("\n{e}"));
    }
    if let Some(r) = &v.recorded {
        extra.push_str(&logged_detail(r));
    }
    let flags: Vec<&str> = v.flags.iter().map(|f| f.name()).collect();
    vec![
        Cell::text(v.origin.line.to_string()),
        Cell::text(v.session.to_string()),
        Cell::text(v.index.to_string()),
        Cell::text(v.turn.map_or("-".into(), |t| t.to_string())),
        Cell::text(v.outcome.name()).tone(outcome_tone(v.outcome)),
        Cell::text(v.reason.map_or("", |r| r.name())),
        Cell::text(detail.unwrap_or_default()),
        Cell::text(
            v.consecutive_rollbacks
                .map_or("-".into(), |c| c.to_string()),
        ),
        Cell::text(flags.join(",")),
        Cell::text(extra),
    ]
}

/// What a task log recorded about an attempt it alone knows: the verdict
/// is the log's, so show what the log quoted.
fn logged_detail(r: &Recorded) -> String {
    if r.unjudged.is_some() {
        return "(not judged: its tool results are in no later request)".to_string();
    }
    let mut parts = vec!["(from step_logs)".to_string()];
    if let Some(tool) = r.blamed_tool() {
        parts.push(format!("tool {tool}"));
    }
    if let Some(q) = &r.query {
        parts.push(format!("query {q:?}"));
    }
    if let Some(result) = &r.result {
        parts.push(format!("result {:?}", shorten(result, 80)));
    }
    if !r.keywords.is_empty() {
        parts.push(format!("keywords {:?}", r.keywords));
    }
    if let Some(e) = r
        .error
        .as_ref()
        .filter(|_| r.outcome != Some(Outcome::Crash))
    {
        parts.push(format!("error {e:?}"));
    }
    for sid in &r.launched {
        parts.push(format!("launched {sid}"));
    }
    parts.join(" ")
}

fn outcome_tone(o: Outcome) -> Tone {
    match o {
        Outcome::Ok | Outcome::Final => Tone::Good,
        Outcome::Rollback => Tone::Warn,
        Outcome::End | Outcome::Crash | Outcome::ContextExceeded => Tone::Bad,
        Outcome::LlmFailed => Tone::Info,
        Outcome::Unreachable => Tone::Dim,
    }
}
