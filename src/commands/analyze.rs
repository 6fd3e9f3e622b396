//! `mirotrace analyze`: replay everything and report, at a glance, how often
//! turns roll back and why, what repair saves, which queries repeat and how
//! long rollback streaks get.
//!
//! Traces are replayed by [`engine::run`]; their verdicts are buffered in
//! small batches and folded into [`Collector`]s across the same worker pool,
//! then merged. Memory holds a batch of verdicts plus the aggregates, which
//! are bounded (see [`crate::report::aggregate`]).

use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use super::{report_problem, Common, Status};
use crate::engine::{self, Item};
use crate::output::{is_broken_pipe, Output, OutputError};
use crate::read::{RecordedSummary, Trace};
use crate::replay::{Replayer, Verdict};
use crate::report::render_table::TableStyle;
use crate::report::{
    render_json, render_markdown, render_table, view, Analysis, Collector, ReportOptions,
};

/// Attempts buffered before they are folded in parallel: enough to give
/// every worker a share, few enough to keep memory small.
const FOLD_ATTEMPTS: usize = 8192;
/// A run shorter than this never shows a progress bar.
const PROGRESS_DELAY: Duration = Duration::from_millis(700);

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// comfy-table tables for a terminal.
    Table,
    /// The machine interface (see [`crate::report::render_json`]).
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// Options of `mirotrace analyze`.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    pub common: Common,
    pub format: Format,
    pub report: ReportOptions,
    pub output: Option<PathBuf>,
    /// Colour is allowed (no `--no-color`); it is used only on a terminal.
    pub color: bool,
}

pub fn run(opts: &AnalyzeOptions) -> Result<Status, String> {
    let pool = opts.common.pool()?;
    let replayer = Replayer::new(opts.common.policy.clone());
    let mut report = opts.report.clone();
    report.rollback_limit = opts.common.policy.rollback_limit;
    let out = Output::open(opts.output.as_deref()).map_err(|e| e.to_string())?;

    let mut progress = Progress::new(opts.common.quiet);
    let mut collector = Collector::new(&report);
    let mut pending: Vec<(u64, Trace, Vec<Verdict>)> = Vec::new();
    let mut pending_attempts = 0;
    let mut ordinal = 0u64;
    let mut recorded = RecordedSummary::default();
    let mut stopped_strict = false;
    let stats = engine::run(
        &opts.common.inputs,
        &opts.common.read,
        &replayer,
        &pool,
        |item| {
            match item {
                Item::Trace { trace, verdicts } => {
                    pending_attempts += verdicts.len();
                    progress.traced(verdicts.len());
                    // The trace goes along so that it is freed by the workers too.
                    recorded.add(ordinal, &trace, &verdicts, &opts.common.policy);
                    if pool.pool_threads() == 1 {
                        // A single worker is busy replaying (or, with -j 1,
                        // this is the only thread): fold here, at once,
                        // while the trace is hot in cache.
                        collector.add_trace(&verdicts, ordinal);
                        ordinal += 1;
                        return ControlFlow::Continue(());
                    }
                    pending.push((ordinal, trace, verdicts));
                    ordinal += 1;
                    if pending_attempts >= FOLD_ATTEMPTS {
                        collector.merge(fold(&pool, &mut pending, &report));
                        pending_attempts = 0;
                    }
                }
                Item::InputStarted { label } => {
                    collector.add_file(&label);
                    progress.file_started(&label);
                }
                other => {
                    if let Item::Bad(bad) = &other {
                        collector.add_bad_line(&bad.origin.file);
                    }
                    if progress.suspend(|| report_problem(&other, opts.common.strict)) {
                        stopped_strict = true;
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        },
    );
    collector.merge(fold(&pool, &mut pending, &report));
    progress.finish();

    let mut analysis = pool.install(|| Analysis::finish(collector, &report));
    analysis.recorded = recorded;
    let status = if stopped_strict {
        Status::InputSkipped
    } else {
        Status::from_stats(&stats)
    };
    write_report(out, &analysis, opts, status)
}

/// Folds the buffered traces into one collector across the pool.
fn fold(
    pool: &crate::engine::Workers,
    pending: &mut Vec<(u64, Trace, Vec<Verdict>)>,
    report: &ReportOptions,
) -> Collector {
    pool.install(|| {
        pending
            .par_drain(..)
            .fold(
                || Collector::new(report),
                |mut c, (ordinal, trace, verdicts)| {
                    c.add_trace(&verdicts, ordinal);
                    drop(trace);
                    c
                },
            )
            .reduce(
                || Collector::new(report),
                |mut a, b| {
                    a.merge(b);
                    a
                },
            )
    })
}

fn write_report(
    mut out: Output,
    analysis: &Analysis,
    opts: &AnalyzeOptions,
    status: Status,
) -> Result<Status, String> {
    let text = match opts.format {
        Format::Json => render_json::render(analysis),
        Format::Markdown => render_markdown::render(&view::build(analysis)),
        Format::Table => {
            let terminal = out.is_terminal();
            let style = TableStyle {
                color: opts.color && terminal,
                fit_terminal: terminal,
            };
            render_table::render(&view::build(analysis), style)
        }
    };
    let written = out
        .write_all(text.as_bytes())
        .map_err(OutputError::Write)
        .and_then(|()| out.finish());
    match written {
        Ok(()) => Ok(status),
        // The reader went away (`| head`): stop quietly with the run's status.
        Err(OutputError::Write(e)) if is_broken_pipe(&e) => Ok(status),
        Err(e) => Err(e.to_string()),
    }
}

/// The progress line on stderr: only on a terminal, only without
/// `--quiet`, and only once the run has taken more than a moment. Inputs
/// are streams, so it counts traces and attempts rather than guessing a
/// percentage.
struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
    file: String,
    files: u64,
    traces: u64,
    attempts: u64,
}

impl Progress {
    fn new(quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} {elapsed_precise} {wide_msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
            file: String::new(),
            files: 0,
            traces: 0,
            attempts: 0,
        }
    }

    fn file_started(&mut self, label: &str) {
        self.files += 1;
        self.file = label.to_string();
        self.update();
    }

    fn traced(&mut self, attempts: usize) {
        let before = self.attempts;
        self.attempts += attempts as u64;
        self.traces += 1;
        // Redraw about every thousand attempts, not on every trace.
        if before / 1024 != self.attempts / 1024 {
            self.update();
        }
    }

    fn update(&mut self) {
        let Some(bar) = &self.bar else {
            return;
        };
        if !self.shown {
            if self.started.elapsed() < PROGRESS_DELAY {
                return;
            }
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
            self.shown = true;
        }
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        bar.set_message(format!(
            "{} traces · {} attempts · {:.0} attempts/s · file {}: {}",
            self.traces,
            self.attempts,
            self.attempts as f64 / secs,
            self.files,
            self.file
        ));
    }

    /// Runs `f` (which writes to stderr) with the bar out of the way.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) if self.shown => bar.suspend(f),
            _ => f(),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
