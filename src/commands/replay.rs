//! `mirotrace replay`: one verdict per input line, or one trace's timeline.

use std::io::Write;
use std::path::PathBuf;

use comfy_table::{presets, Cell, Color, ContentArrangement, Table};

use super::{write_report, Error, Reading, Status};
use crate::engine::{Event, Job};
use crate::output::{ColorChoice, Output};
use crate::read::{InputSpec, Trace};
use crate::replay::{Outcome, Verdict};

/// `--format`: what `replay` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// One verdict per input line (the verdict format of the spec).
    #[default]
    Jsonl,
}

/// Options of `mirotrace replay`.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub reading: Reading,
    pub inputs: Vec<InputSpec>,
    /// Show this trace's timeline instead of writing JSONL.
    pub trace: Option<String>,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
}

/// Serialises each trace's verdicts on the worker that replayed it.
struct Jsonl;

impl Job for Jsonl {
    type Part = String;

    fn part(&self) -> String {
        String::new()
    }

    fn fold(&self, part: &mut String, _: Trace, verdicts: Vec<Verdict>, _: u64) {
        for v in &verdicts {
            v.write_json_line(part);
            part.push('\n');
        }
    }
}

/// Keeps the verdicts of the traces with one id.
struct Find<'a>(&'a str);

impl Job for Find<'_> {
    type Part = Vec<Verdict>;

    fn part(&self) -> Vec<Verdict> {
        Vec::new()
    }

    fn fold(&self, part: &mut Vec<Verdict>, _: Trace, verdicts: Vec<Verdict>, _: u64) {
        if verdicts.first().is_some_and(|v| *v.trace_id == *self.0) {
            part.extend(verdicts);
        }
    }
}

pub fn run(opts: &ReplayOptions) -> Result<Status, Error> {
    let workers = opts.reading.workers()?;
    let mut out = Output::open(opts.output.as_deref())?;
    let Some(wanted) = &opts.trace else {
        let ran = opts.reading.run(&opts.inputs, &workers, &Jsonl, |event| {
            if let Event::Part(lines) = event {
                out.write_all(lines.as_bytes())?;
            }
            Ok(())
        })?;
        if ran.stopped {
            return Ok(ran.status());
        }
        out.finish()
            .map_err(|e| Error::from_output(e, ran.status()))?;
        return Ok(ran.status());
    };
    let mut shown = Vec::new();
    let ran = opts
        .reading
        .run(&opts.inputs, &workers, &Find(wanted), |event| {
            if let Event::Part(verdicts) = event {
                shown.extend(verdicts);
            }
            Ok(())
        })?;
    if ran.stopped {
        return Ok(ran.status());
    }
    if shown.is_empty() {
        return Err(Error::NoSuchTrace(wanted.clone()));
    }
    let mut table = timeline(&shown, out.color(opts.color));
    if !out.is_terminal() {
        // Sized for the content, not for the terminal `-o` was given from.
        table.force_no_tty();
    }
    write_report(out, &format!("{table}\n"), ran.status())
}

/// One trace as a table: a row per attempt in execution-relevant order.
pub fn timeline(verdicts: &[Verdict], color: bool) -> Table {
    let mut table = Table::new();
    if color {
        table.enforce_styling();
    }
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
        if let Some(r) = &v.recorded {
            extra.push_str(&logged_detail(r));
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

/// What a task log recorded about an attempt it alone knows: the verdict
/// is the log's, so show what the log quoted.
fn logged_detail(r: &crate::model::Recorded) -> String {
    let mut parts = vec!["(from step_logs)".to_string()];
    if let Some(tool) = r.blamed_tool() {
        parts.push(format!("tool {tool}"));
    }
    if let Some(q) = &r.query {
        parts.push(format!("query {q:?}"));
    }
    if let Some(result) = &r.result {
        parts.push(format!(
            "result {:?}",
            crate::report::view::shorten(result, 80)
        ));
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

fn outcome_color(o: Outcome) -> Color {
    match o {
        Outcome::Ok | Outcome::Final => Color::Green,
        Outcome::Rollback => Color::Yellow,
        Outcome::End | Outcome::Crash | Outcome::ContextExceeded => Color::Red,
        Outcome::LlmFailed => Color::Magenta,
        Outcome::Unreachable => Color::DarkGrey,
    }
}
