//! `mirotrace keywords`: score refusal keyword lists and mine new phrases.
//! Each trace is scored on the worker that replayed it; the findings are
//! added up here in input order.

use std::path::PathBuf;

use super::{write_report, Error, Inputs, Reading, Status};
use crate::engine::{Event, Job};
use crate::keywords::evaluate::{Evaluator, TraceFindings};
use crate::keywords::labels::Labels;
use crate::keywords::lists::KeywordList;
use crate::keywords::{self, render, Plan, SuggestOptions};
use crate::output::{ColorChoice, Output};
use crate::read::{InputSpec, Trace};
use crate::replay::Verdict;

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    /// With `--suggest`: the phrases only, one per line (a list file).
    Text,
}

/// Options of `mirotrace keywords`.
#[derive(Debug, Clone)]
pub struct KeywordsOptions {
    pub reading: Reading,
    pub inputs: Vec<InputSpec>,
    pub lists: Vec<PathBuf>,
    pub labels: Option<PathBuf>,
    pub suggest: bool,
    pub format: Format,
    pub top: usize,
    pub min_support: usize,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
}

/// Scores each trace with every list.
struct Score<'a>(&'a Evaluator);

impl Job for Score<'_> {
    type Part = Vec<TraceFindings>;

    fn part(&self) -> Vec<TraceFindings> {
        Vec::new()
    }

    /// The evaluator replays each list itself (the current list observed,
    /// so it knows what the layer saw of each attempt).
    fn fold(&self, part: &mut Vec<TraceFindings>, trace: &Trace, _: Vec<Verdict>, _: u64) {
        part.push(self.0.trace(trace));
    }
}

pub fn run(opts: &KeywordsOptions) -> Result<Status, Error> {
    if opts.format == Format::Text && !opts.suggest {
        return Err(Error::Usage(
            "--format text prints suggested phrases: use it with --suggest".into(),
        ));
    }
    let candidates = opts
        .lists
        .iter()
        .map(|p| KeywordList::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let labels = match &opts.labels {
        None => None,
        Some(p) => Some((p.display().to_string(), Labels::load(p)?)),
    };
    let (evaluator, mut findings) = keywords::prepare(Plan {
        policy: opts.reading.policy.clone(),
        plain_reply: opts.reading.plain_reply,
        candidates,
        labels,
        suggest: opts.suggest.then_some(SuggestOptions {
            top: opts.top,
            min_support: opts.min_support,
        }),
    });
    let workers = opts.reading.workers()?;
    // Open the output first: an unwritable path fails before the long run.
    let out = Output::open(opts.output.as_deref())?;
    let ran = opts.reading.run(
        Inputs::expand(&opts.inputs, opts.output.as_deref())?,
        &workers,
        &Score(&evaluator),
        |event| {
            if let Event::Part(part) = event {
                part.into_iter().for_each(|f| findings.add(f));
            }
            Ok(())
        },
    )?;
    if ran.stopped {
        return super::stopped(out, ran.status());
    }
    let report = findings.finish(&evaluator);
    if let Some(l) = &report.labels {
        if l.not_found > 0 && !opts.reading.quiet {
            super::stderr::say(format_args!(
                "{} of {} labels name attempts not in the inputs (not scored)",
                l.not_found, l.labels
            ));
        }
    }
    let text = match opts.format {
        Format::Json => render::json(&report) + "\n",
        Format::Text => render::phrases(&report),
        Format::Table => render::tables(&report, opts.top, out.table_style(opts.color)),
    };
    write_report(out, &text, ran.status())
}
