//! `mirotrace analyze`: replay everything and report, at a glance, how often
//! turns roll back and why, what repair saves, which queries repeat and how
//! long rollback streaks get.
//!
//! Each trace is folded into a [`Collector`] on the worker that replayed it;
//! the parts are merged here in input order. Memory holds the aggregates,
//! which are bounded (see [`crate::analyze::aggregate`]).

use std::path::PathBuf;

use super::{write_report, Drawing, Error, Inputs, Reading, Status};
use crate::analyze::partial::Partial;
use crate::analyze::{render_json, view, Analysis, Collector, ReportOptions};
use crate::crosscheck;
use crate::diff::gate;
use crate::diff::Counts;
use crate::engine::{Event, Job};
use crate::model::TracePos;
use crate::output::{ColorChoice, Output};
use crate::policy::Policy;
use crate::read::{InputSpec, Trace};
use crate::render::gates::GateOutcome;
use crate::render::skipped::Skipped;
use crate::render::{markdown, table};
use crate::replay::Verdict;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables for a terminal.
    Table,
    /// The machine interface (docs/json.md).
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained page (docs/html.md); use with -o.
    Html,
    /// A partial report to merge with others (`mirotrace merge`, docs/partial.md).
    Partial,
}

impl Format {
    /// The drawing this format asks for; `None` for a partial, which is
    /// written as data (docs/partial.md).
    pub fn drawing(self) -> Option<Drawing> {
        match self {
            Format::Table => Some(Drawing::Table),
            Format::Json => Some(Drawing::Json),
            Format::Markdown => Some(Drawing::Markdown),
            Format::Html => Some(Drawing::Html),
            Format::Partial => None,
        }
    }
}

/// Options of `mirotrace analyze`.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    pub reading: Reading,
    pub inputs: Vec<InputSpec>,
    pub format: Format,
    /// Built with [`ReportOptions::replaying`] under `reading.policy`.
    pub report: ReportOptions,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
    /// `--fail-on` rules, as written: a figure of the run against a number.
    pub fail_on: Vec<String>,
}

/// The per-trace work: the report's fold and the task-log cross-check
/// (public for the Python package, which runs the same fold).
pub struct Fold<'a> {
    pub report: &'a ReportOptions,
    pub policy: &'a Policy,
}

/// What [`Fold`] makes of consecutive traces.
pub struct Part {
    pub collector: Collector,
    pub crosscheck: crosscheck::Summary,
}

impl Job for Fold<'_> {
    type Part = Part;

    fn part(&self) -> Part {
        Part {
            collector: Collector::new(self.report),
            crosscheck: crosscheck::Summary::default(),
        }
    }

    fn fold(&self, part: &mut Part, trace: &Trace, verdicts: Vec<Verdict>, _: u64) {
        // Not the engine's ordinal: a position any process computes alike,
        // so partial reports merge exactly (docs/partial.md).
        let at = TracePos::of_trace(trace);
        part.crosscheck.add(&at, trace, &verdicts, self.policy);
        part.collector
            .add_trace_with_lines(&verdicts, &trace.attempts, &at);
        for (kind, n) in &trace.not_attempts {
            part.collector.add_not_traces(&at.file, kind, *n);
        }
    }
}

pub fn run(opts: &AnalyzeOptions) -> Result<Status, Error> {
    // Bad rules are usage errors, found before any replay.
    let gates = opts
        .fail_on
        .iter()
        .map(|g| gate::parse_for(g, gate::Scope::Run))
        .collect::<Result<Vec<_>, _>>()?;
    if !gates.is_empty() && opts.format == Format::Partial {
        return Err(Error::Usage(
            "--fail-on judges a report; a partial is not one yet (merge the partials, then analyze's rules apply to the report)"
                .into(),
        ));
    }
    let workers = opts.reading.workers()?;
    let mut report = opts.report.clone();
    // A partial keeps them too, so a merged page opens them (docs/partial.md).
    report.timelines = matches!(opts.format, Format::Html | Format::Partial)
        .then(|| crate::analyze::worst_timeline::WorstGate::new(report.top));
    // Open the output first: an unwritable path fails before the long run.
    let out = super::open_report_output(opts.output.as_deref(), opts.format == Format::Html)?;

    let job = Fold {
        report: &report,
        policy: &opts.reading.policy,
    };
    let mut collector = Collector::new(&report);
    let mut checked = crosscheck::Summary::default();
    let ran = opts.reading.run(
        Inputs::expand(&opts.inputs, opts.output.as_deref())?,
        &workers,
        &job,
        |event| {
            match event {
                Event::Part(part) => {
                    collector.merge(part.collector);
                    checked.merge(part.crosscheck);
                }
                Event::Started { label } => collector.add_file(&label),
                Event::Bad(bad) => collector.add_bad_line(&bad.origin.file),
                Event::NoAttempt(n) => collector.add_bad_line(&n.file),
                Event::NotTraces(n) => {
                    collector.add_not_traces(&n.origin.file, n.output.name, n.count)
                }
                Event::Failed(_) => {}
            }
            Ok(())
        },
    )?;
    if ran.stopped {
        return super::stopped(out, ran.status());
    }
    let Some(drawing) = opts.format.drawing() else {
        let partial = Partial::new(collector, checked, &report, &opts.reading.policy)
            .with_plain_reply(opts.reading.plain_reply);
        return write_report(out, &partial.to_json()?, ran.status());
    };
    let mut analysis = workers.install(|| Analysis::finish(collector, &report));
    analysis.crosscheck = checked;
    analysis.gates = evaluate_gates(&gates, &analysis);
    let status = if crate::render::gates::any_fired(&analysis.gates) {
        // A fired gate outranks skipped input, as in diff.
        Status::GateFired
    } else {
        ran.status()
    };
    let text = render(&analysis, drawing, &out, opts.color, &ran.skipped);
    let written = write_report(out, &text, status);
    // Each rule's result on stderr too, whatever the format and destination.
    super::diff::say_gates(&analysis.gates);
    written
}

/// Each rule on the whole run, then on each `--group-by` group.
fn evaluate_gates(gates: &[gate::Gate], analysis: &Analysis) -> Vec<GateOutcome> {
    if gates.is_empty() {
        return Vec::new();
    }
    let counts = |t: &crate::metrics::Tally| Counts::of(t);
    let mut out = gate::evaluate_run(gates, &counts(&analysis.overall.aggregate.tally), None);
    for (key, scored) in &analysis.groups {
        out.extend(gate::evaluate_run(
            gates,
            &counts(&scored.aggregate.tally),
            Some(key),
        ));
    }
    out
}

/// The report drawn as `drawing` for `out` (`analyze` and `merge`). A
/// page lists what the run `skipped`.
pub fn render(
    analysis: &Analysis,
    drawing: Drawing,
    out: &Output,
    color: ColorChoice,
    skipped: &Skipped,
) -> String {
    match drawing {
        Drawing::Json => render_json::render(analysis),
        Drawing::Markdown => markdown::draw(&view::build(analysis)),
        Drawing::Html => crate::html::analyze_page(analysis, skipped),
        Drawing::Table => table::draw(&view::build(analysis), out.table_style(color)),
    }
}
