//! `mirotrace diff`: replay a base and a new side, compare their rates, and
//! gate on the result. Each trace's counts are taken on the worker that
//! replayed it; the statistics live in [`crate::diff`].

use std::path::PathBuf;

use super::{write_report, Error, Reading, Status};
use crate::diff::render;
use crate::diff::{
    gate, trace_rows, CompareOptions, DiffReport, GroupBy, GroupNames, Sample, TraceRow, METRICS,
};
use crate::engine::{Event, Job, Workers};
use crate::metrics::stats;
use crate::output::{ColorChoice, Output};
use crate::read::{InputSpec, Trace};
use crate::replay::Verdict;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
    /// One self-contained page (README, "`--format html`"); use with -o.
    Html,
}

/// Options of `mirotrace diff`.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub reading: Reading,
    pub base: Vec<InputSpec>,
    pub new: Vec<InputSpec>,
    pub group_by: Option<GroupBy>,
    /// `--fail-on` rules, as written.
    pub fail_on: Vec<String>,
    pub format: Format,
    pub config: CompareOptions,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
}

/// Each trace's counts: one row, or one per group its lines are in.
struct Rows(Option<GroupBy>, GroupNames);

impl Job for Rows {
    type Part = Vec<TraceRow>;

    fn part(&self) -> Vec<TraceRow> {
        Vec::new()
    }

    fn fold(&self, part: &mut Vec<TraceRow>, trace: Trace, verdicts: Vec<Verdict>, _: u64) {
        part.extend(trace_rows(&trace.trace_id, &verdicts, self.0, &self.1));
    }
}

/// What one side's replay produced.
struct Side {
    rows: Vec<TraceRow>,
    skipped: bool,
    stopped: bool,
}

/// Replays one side, keeping only each trace's rows (split by `by`).
fn read_side(
    reading: &Reading,
    inputs: &[InputSpec],
    workers: &Workers,
    by: Option<GroupBy>,
) -> Result<Side, Error> {
    let mut rows = Vec::new();
    let ran = reading.run(inputs, workers, &Rows(by, GroupNames::default()), |event| {
        if let Event::Part(part) = event {
            rows.extend(part);
        }
        Ok(())
    })?;
    Ok(Side {
        rows,
        skipped: ran.stats.bad_lines > 0 || ran.stats.failed_inputs > 0,
        stopped: ran.stopped,
    })
}

/// How a side is named in reports: its inputs, shortened when many.
fn label(inputs: &[InputSpec]) -> String {
    let names: Vec<String> = inputs.iter().map(|s| s.label().to_string()).collect();
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{}, {} and {} more", names[0], names[1], n - 2),
    }
}

pub fn run(opts: &DiffOptions) -> Result<Status, Error> {
    // Bad rules and knobs are usage errors, found before any replay.
    let gates = opts
        .fail_on
        .iter()
        .map(|g| gate::parse(g))
        .collect::<Result<Vec<_>, _>>()?;
    opts.config.validate().map_err(Error::Usage)?;
    let quiet = opts.reading.quiet;
    let floor = (stats::min_bootstrap_p(opts.config.iterations) * METRICS.len() as f64).min(1.0);
    if floor >= opts.config.alpha && !quiet {
        eprintln!(
            "mirotrace: note: with {} iterations and all {} metrics tested, the smallest Holm-adjusted p-value is {floor:.3}, \
             not below alpha {}: raise --iterations",
            opts.config.iterations,
            METRICS.len(),
            opts.config.alpha
        );
    }
    let workers = opts.reading.workers()?;
    // Open the output first: an unwritable path fails before the long run.
    let out = Output::open(opts.output.as_deref())?;
    let base = read_side(&opts.reading, &opts.base, &workers, None)?;
    if base.stopped {
        return Ok(Status::InputSkipped);
    }
    let new = read_side(&opts.reading, &opts.new, &workers, opts.group_by)?;
    if new.stopped {
        return Ok(Status::InputSkipped);
    }
    for (side, read) in [("--base", &base), ("--new", &new)] {
        if read.rows.is_empty() {
            return Err(Error::NothingToCompare { side });
        }
    }
    let skipped = base.skipped || new.skipped;

    let base_label = label(&opts.base);
    let new_label = label(&opts.new);
    let groups: Vec<(Option<String>, String, Vec<TraceRow>)> = match opts.group_by {
        None => vec![(None, new_label, new.rows)],
        Some(by) => crate::diff::split(new.rows)
            .into_iter()
            .map(|(key, rows)| {
                (
                    Some(key.clone()),
                    format!("{new_label} [{}={key}]", by.name()),
                    rows,
                )
            })
            .collect(),
    };
    let base = Sample::new(base_label, base.rows, &opts.config, "base", &workers);
    let mut report = DiffReport::build(base, groups, &opts.config, opts.group_by, &workers);
    report.gates = gate::evaluate_all(&gates, &report);

    let status = if report.gate_fired() {
        // A fired gate outranks skipped input: the comparison still failed.
        Status::GateFired
    } else if skipped {
        Status::InputSkipped
    } else {
        Status::Ok
    };
    let style = out.table_style(opts.color);
    let text = match opts.format {
        Format::Html => crate::html::diff_page(&report),
        Format::Table => render::render(&report, render::Format::Table, style),
        Format::Markdown => render::render(&report, render::Format::Markdown, style),
        Format::Json => render::render(&report, render::Format::Json, style),
    };
    let written = write_report(out, &text, status);
    // The gate verdicts also go to stderr, so a CI log shows why a job failed
    // whatever the output format or destination.
    for g in report.gates.iter().filter(|g| g.fired) {
        let group = g
            .group
            .as_ref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default();
        eprintln!("mirotrace: gate fired: {}{group}: {}", g.rule, g.message);
    }
    written
}
