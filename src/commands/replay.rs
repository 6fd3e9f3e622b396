//! `mirotrace replay`: one verdict per input line, or one trace's timeline.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;

use comfy_table::{presets, Cell, Color, ContentArrangement, Table};

use super::{report_problem, Common, Status};
use crate::engine::{self, Item};
use crate::output::{is_broken_pipe, Output};
use crate::replay::{Outcome, Replayer, Verdict};

/// Options of `mirotrace replay`.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub common: Common,
    /// Show this trace's timeline instead of writing JSONL.
    pub trace: Option<String>,
    pub output: Option<PathBuf>,
    pub color: bool,
}

pub fn run(opts: &ReplayOptions) -> Result<Status, String> {
    let pool = opts.common.pool()?;
    let replayer = Replayer::new(opts.common.policy.clone());
    let mut out = Output::open(opts.output.as_deref()).map_err(|e| e.to_string())?;
    let mut write_error: Option<std::io::Error> = None;
    let mut shown: Vec<Verdict> = Vec::new();
    let mut stopped_strict = false;
    let mut line = String::new();
    let stats = engine::run(
        &opts.common.inputs,
        &opts.common.read,
        &replayer,
        &pool,
        |item| {
            match item {
                Item::Trace { verdicts, .. } => {
                    if let Some(wanted) = &opts.trace {
                        if verdicts.first().is_some_and(|v| *v.trace_id == **wanted) {
                            shown.extend(verdicts);
                        }
                        return ControlFlow::Continue(());
                    }
                    for v in &verdicts {
                        line.clear();
                        v.write_json_line(&mut line);
                        line.push('\n');
                        if let Err(e) = out.write_all(line.as_bytes()) {
                            write_error = Some(e);
                            return ControlFlow::Break(());
                        }
                    }
                }
                other => {
                    if report_problem(&other, opts.common.strict) {
                        stopped_strict = true;
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        },
    );
    if let Some(e) = write_error {
        if is_broken_pipe(&e) {
            return Ok(Status::Ok);
        }
        return Err(format!("writing output failed: {e}"));
    }
    if let Some(wanted) = &opts.trace {
        if shown.is_empty() {
            return Err(format!("no trace with id {wanted:?} in the inputs"));
        }
        let table = timeline(&shown, opts.color);
        if let Err(e) = writeln!(out, "{table}") {
            if !is_broken_pipe(&e) {
                return Err(format!("writing output failed: {e}"));
            }
        }
    }
    if stopped_strict {
        return Ok(Status::InputSkipped);
    }
    match out.finish() {
        Ok(()) => {}
        Err(crate::output::OutputError::Write(e)) if is_broken_pipe(&e) => {}
        Err(e) => return Err(e.to_string()),
    }
    Ok(Status::from_stats(&stats))
}

/// One trace as a table: a row per attempt in execution-relevant order.
pub fn timeline(verdicts: &[Verdict], color: bool) -> Table {
    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    table.set_content_arrangement(ContentArrangement::Dynamic);
    table.set_header(vec![
        "line",
        "session",
        "#",
        "turn",
        "outcome",
        "reason",
        "streak",
        "flags",
        "tool calls (repairs, json path)",
    ]);
    for v in verdicts {
        let outcome = Cell::new(v.outcome.name());
        let outcome = if color {
            outcome.fg(outcome_color(v.outcome))
        } else {
            outcome
        };
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
        table.add_row(vec![
            Cell::new(v.origin.line),
            Cell::new(&v.session),
            Cell::new(v.index),
            Cell::new(v.turn.map_or("-".into(), |t| t.to_string())),
            outcome,
            Cell::new(v.reason.map_or("", |r| r.name())),
            Cell::new(
                v.consecutive_rollbacks
                    .map_or("-".into(), |c| c.to_string()),
            ),
            Cell::new(
                v.flags
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Cell::new(extra),
        ]);
    }
    table
}

fn outcome_color(o: Outcome) -> Color {
    match o {
        Outcome::Ok | Outcome::Final => Color::Green,
        Outcome::Rollback => Color::Yellow,
        Outcome::End | Outcome::Crash | Outcome::ContextExceeded => Color::Red,
        Outcome::LlmFailed => Color::Magenta,
        Outcome::Unreachable => Color::DarkGrey,
    }
}
