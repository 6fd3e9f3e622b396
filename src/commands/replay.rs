//! `mirotrace replay`: one verdict per input line, or one trace's timeline.

use std::io::Write;
use std::path::PathBuf;

use super::{write_report, Error, Reading, Status};
use crate::engine::{Event, Job};
use crate::output::{ColorChoice, Output};
use crate::read::{InputSpec, Trace};
use crate::render::{table, timeline::timeline, TableStyle};
use crate::replay::Verdict;

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
    let style = TableStyle {
        color: out.color(opts.color),
        // Sized for the content, not for the terminal `-o` was given from.
        fit_terminal: out.is_terminal(),
    };
    let text = table::draw(&timeline(&shown), style);
    write_report(out, &text, ran.status())
}
