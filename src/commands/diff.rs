//! `mirotrace diff`: replay a base and a new side, compare their rates, and
//! gate on the result. The statistics live in [`crate::diff`].

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;

use super::{report_problem, Common, Status};
use crate::diff::render::{self, Format};
use crate::diff::{gate, metrics, stats, Config, GroupBy, Report, Sample, TraceRow};
use crate::engine::{self, Item, RunStats};
use crate::output::{is_broken_pipe, Output};
use crate::replay::Replayer;

/// Options of `mirotrace diff`.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub base: Common,
    pub new: Common,
    pub group_by: Option<GroupBy>,
    /// `--fail-on` rules, as written.
    pub fail_on: Vec<String>,
    pub format: Format,
    pub config: Config,
    pub output: Option<PathBuf>,
    pub color: bool,
}

/// What one side's replay produced.
struct SideRead {
    rows: Vec<TraceRow>,
    stats: RunStats,
    stopped_strict: bool,
}

/// Replays one side, keeping only each trace's counts.
fn read_side(common: &Common, pool: &crate::engine::Workers) -> SideRead {
    let replayer = Replayer::new(common.policy.clone());
    let mut rows = Vec::new();
    let mut stopped_strict = false;
    let stats = engine::run(&common.inputs, &common.read, &replayer, pool, |item| {
        match item {
            Item::Trace { trace, verdicts } => rows.push(TraceRow {
                model: verdicts
                    .iter()
                    .find_map(|v| v.model.as_deref().map(str::to_string)),
                file: trace
                    .attempts
                    .first()
                    .map(|a| a.origin.file.to_string())
                    .unwrap_or_default(),
                counts: metrics::trace_counts(&verdicts),
                trace_id: trace.trace_id.to_string(),
            }),
            other => {
                if report_problem(&other, common.strict) {
                    stopped_strict = true;
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    SideRead {
        rows,
        stats,
        stopped_strict,
    }
}

/// How a side is named in reports: its inputs, shortened when many.
fn label(common: &Common) -> String {
    let names: Vec<String> = common
        .inputs
        .iter()
        .map(|s| s.label().to_string())
        .collect();
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{}, {} and {} more", names[0], names[1], n - 2),
    }
}

pub fn run(opts: &DiffOptions) -> Result<Status, String> {
    // Bad rules and knobs are usage errors, found before any replay.
    let gates = opts
        .fail_on
        .iter()
        .map(|g| gate::parse(g))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    opts.config.validate()?;
    let quiet = opts.base.quiet;
    let floor =
        (stats::min_bootstrap_p(opts.config.iterations) * metrics::METRICS.len() as f64).min(1.0);
    if floor >= opts.config.alpha && !quiet {
        eprintln!(
            "mirotrace: note: with {} iterations and all {} metrics tested, the smallest Holm-adjusted p-value is {floor:.3}, \
             not below alpha {}: raise --iterations",
            opts.config.iterations,
            metrics::METRICS.len(),
            opts.config.alpha
        );
    }
    let pool = opts.base.pool()?;
    let base = read_side(&opts.base, &pool);
    if base.stopped_strict {
        return Ok(Status::InputSkipped);
    }
    let new = read_side(&opts.new, &pool);
    if new.stopped_strict {
        return Ok(Status::InputSkipped);
    }
    for (name, side) in [("--base", &base), ("--new", &new)] {
        if side.rows.is_empty() {
            eprintln!("mirotrace: no trace could be read from {name}: nothing to compare");
            return Ok(Status::NothingReadable);
        }
    }
    let skipped = [&base.stats, &new.stats]
        .iter()
        .any(|s| s.bad_lines > 0 || s.failed_inputs > 0);

    let base_label = label(&opts.base);
    let new_label = label(&opts.new);
    let groups: Vec<(Option<String>, String, Vec<TraceRow>)> = match opts.group_by {
        None => vec![(None, new_label, new.rows)],
        Some(by) => crate::diff::split(new.rows, by)
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
    let base = Sample::new(base_label, base.rows, &opts.config, "base", &pool);
    let mut report = Report::build(base, groups, &opts.config, opts.group_by, &pool);
    report.gates = gate::evaluate_all(&gates, &report);

    let text = render::render(&report, opts.format, opts.color);
    let mut out = Output::open(opts.output.as_deref()).map_err(|e| e.to_string())?;
    if let Err(e) = out.write_all(text.as_bytes()) {
        if !is_broken_pipe(&e) {
            return Err(format!("writing output failed: {e}"));
        }
    }
    match out.finish() {
        Ok(()) => {}
        Err(crate::output::OutputError::Write(e)) if is_broken_pipe(&e) => {}
        Err(e) => return Err(e.to_string()),
    }
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
    Ok(if report.gate_fired() {
        // A fired gate outranks skipped input: the comparison still failed.
        Status::GateFailed
    } else if skipped {
        Status::InputSkipped
    } else {
        Status::Ok
    })
}
