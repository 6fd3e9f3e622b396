//! Running the library for Python: inputs from paths (through the engine,
//! as the CLI reads them) or from a table of lines (read in memory), then
//! verdict columns or a report.

use std::io::Cursor;
use std::ops::ControlFlow;
use std::path::PathBuf;

use arrow_array::RecordBatch;
use mirotrace::analyze::partial::Partial;
use mirotrace::analyze::worst_timeline::WorstGate;
use mirotrace::analyze::{render_json, view, Collector, GroupBy, ReportOptions};
use mirotrace::commands::analyze::Fold;
use mirotrace::commands::reading;
use mirotrace::crosscheck;
use mirotrace::engine::{self, Event, Job, Workers};
use mirotrace::policy::Policy;
use mirotrace::read::source::{expand, reading_of, InputSpec, ReadOptions, Reading};
use mirotrace::read::{InputFormat, ReadError, Record, Trace};
use mirotrace::render::{markdown, table, TableStyle};
use mirotrace::replay::{Replayer, Verdict};
use rayon::prelude::*;

use crate::{rows, BindingError};

/// Where trace lines come from.
pub enum Source {
    /// Files and directories, read as the CLI reads them.
    Paths(Vec<String>),
    /// Rows of `text` (with optional `file`, `line`), and the inputs to
    /// count as opened (default: the distinct files of the rows).
    Table(Vec<RecordBatch>, Option<Vec<String>>),
}

/// How to read and replay.
pub struct Options {
    pub policy: Policy,
    pub read: ReadOptions,
    pub threads: Option<usize>,
}

impl Options {
    pub fn new(
        policy: Option<&str>,
        input_format: &str,
        threads: Option<usize>,
        max_line_bytes: Option<usize>,
    ) -> Result<Options, BindingError> {
        let policy = match policy {
            None => Policy::default(),
            Some(path) => Policy::load(std::path::Path::new(path))
                .map_err(|e| BindingError::Policy(e.to_string()))?,
        };
        let format = InputFormat::from_name(input_format).ok_or_else(|| {
            let names: Vec<&str> = InputFormat::all().iter().map(|f| f.name()).collect();
            BindingError::Input(format!(
                "input_format {input_format:?} is not one of {}",
                names.join(", ")
            ))
        })?;
        let mut read = ReadOptions {
            format,
            keep_meta: false,
            ..ReadOptions::default()
        };
        if let Some(max) = max_line_bytes {
            read.max_line_bytes = max;
        }
        Ok(Options {
            policy,
            read,
            threads,
        })
    }

    /// The request header a recording's calls are grouped by (default
    /// `x-upstream-session-id`).
    pub fn trace_header(mut self, name: Option<String>) -> Options {
        if let Some(name) = name {
            self.read.trace_header = name.into();
        }
        self
    }

    fn workers(&self) -> Result<Workers, BindingError> {
        Workers::new(self.threads).map_err(|e| BindingError::Threads(e.to_string()))
    }
}

/// The report options of `analyze`, under the options' policy.
pub fn report_options(
    options: &Options,
    top: usize,
    group_by: Option<&str>,
    seed: u64,
    iterations: usize,
) -> Result<ReportOptions, BindingError> {
    let group_by = match group_by {
        None => None,
        Some("file") => Some(GroupBy::File),
        Some("model") => Some(GroupBy::Model),
        Some("agent") => Some(GroupBy::Agent),
        Some(other) => {
            return Err(BindingError::Input(format!(
                "group_by {other:?} is not one of file, model, agent"
            )))
        }
    };
    Ok(ReportOptions {
        top,
        group_by,
        seed,
        iterations,
        timelines: None,
        // The report's `cost` and `task_results` keys come without money.
        prices: None,
        ..ReportOptions::default()
    }
    .replaying(&options.policy, None))
}

/// An Arrow IPC stream's batches.
pub fn read_ipc_stream(bytes: &[u8]) -> Result<Vec<RecordBatch>, BindingError> {
    let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None)?;
    Ok(reader.collect::<Result<Vec<_>, _>>()?)
}

/// What a run hands over, in input order.
enum Step<P> {
    Part(P),
    File(String),
    Bad {
        file: String,
        message: String,
    },
    /// Records that are mirotrace's own output (`input.skipped` in the report).
    NotTraces {
        file: String,
        kind: &'static str,
        count: u64,
        message: String,
    },
    Failed(String),
}

/// Reads and replays `source`, folding traces with `job` (on the workers
/// for paths), and calls `each` in input order.
fn for_each_step<J: Job>(
    source: &Source,
    options: &Options,
    job: &J,
    mut each: impl FnMut(Step<J::Part>),
) -> Result<(), BindingError> {
    let replayer = Replayer::new(options.policy.clone());
    let workers = options.workers()?;
    match source {
        Source::Paths(paths) => {
            let specs: Vec<InputSpec> = paths
                .iter()
                .map(|p| InputSpec::Path(PathBuf::from(p)))
                .collect();
            engine::run(
                expand(&specs),
                &options.read,
                &replayer,
                &workers,
                job,
                |event| {
                    each(match event {
                        Event::Part(part) => Step::Part(part),
                        Event::Started { label } => Step::File(label),
                        Event::Bad(b) => Step::Bad {
                            file: b.origin.file.to_string(),
                            message: reading::bad_line_message(&b),
                        },
                        Event::NotTraces(n) => Step::NotTraces {
                            file: n.origin.file.to_string(),
                            kind: n.output.name,
                            count: n.count,
                            message: reading::not_traces_message(&n),
                        },
                        Event::Failed(e) => Step::Failed(reading::failed_input_message(&e)),
                        Event::NoAttempt(n) => Step::Bad {
                            file: n.file.to_string(),
                            message: n.to_string(),
                        },
                    });
                    ControlFlow::Continue(())
                },
            );
        }
        Source::Table(batches, opened) => {
            let records = rows::records(batches, options.read.format, options.read.max_line_bytes)?;
            let mut files: Vec<&str> = Vec::new();
            for r in &records {
                let file = match r {
                    Record::Trace(t) => t.attempts.first().map(|a| &*a.origin.file),
                    Record::Bad(b) => Some(&*b.origin.file),
                    Record::NotTraces(n) => Some(&*n.origin.file),
                    Record::Failed(e) => Some(&**e.file()),
                    Record::NoAttempt(n) => Some(&*n.file),
                };
                if let Some(f) = file {
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
            }
            match opened {
                Some(labels) => labels.iter().for_each(|f| each(Step::File(f.clone()))),
                None => files
                    .into_iter()
                    .for_each(|f| each(Step::File(f.to_string()))),
            }
            let verdicts: Vec<Option<Vec<Verdict>>> = workers.install(|| {
                records
                    .par_iter()
                    .map(|r| match r {
                        Record::Trace(t) => Some(replayer.replay(t)),
                        _ => None,
                    })
                    .collect()
            });
            let mut part = job.part();
            let mut ordinal = 0u64;
            for (record, verdicts) in records.into_iter().zip(verdicts) {
                match record {
                    Record::Trace(t) => {
                        job.fold(&mut part, &t, verdicts.unwrap_or_default(), ordinal);
                        ordinal += 1;
                    }
                    Record::Bad(b) => each(Step::Bad {
                        file: b.origin.file.to_string(),
                        message: reading::bad_line_message(&b),
                    }),
                    Record::NotTraces(n) => each(Step::NotTraces {
                        file: n.origin.file.to_string(),
                        kind: n.output.name,
                        count: n.count,
                        message: reading::not_traces_message(&n),
                    }),
                    Record::Failed(e) => each(Step::Failed(reading::failed_input_message(&e))),
                    Record::NoAttempt(n) => each(Step::Bad {
                        file: n.file.to_string(),
                        message: n.to_string(),
                    }),
                }
            }
            each(Step::Part(part));
        }
    }
    Ok(())
}

/// One input as the CLI's expansion lists it, for a job that spreads
/// inputs over machines.
pub struct Input {
    /// How it is named in the report and in messages.
    pub label: String,
    /// Where it is read from (a file, or a folder of events).
    pub path: PathBuf,
    /// Read line by line (its traces may be read apart), or whole.
    pub by_lines: bool,
}

/// The inputs `paths` expand to, in the CLI's order (folders walked as it
/// walks them), each with how the CLI reads it; and the inputs that cannot
/// be read, as `partial` of the paths would report them.
pub fn inputs(paths: &[PathBuf], options: &Options) -> (Vec<Input>, Vec<String>) {
    let specs: Vec<InputSpec> = paths.iter().cloned().map(InputSpec::Path).collect();
    let mut listed = Vec::new();
    let mut problems = Vec::new();
    for spec in expand(&specs) {
        match spec {
            Ok(spec @ InputSpec::Path(_)) => {
                let by_lines = reading_of(&spec, &options.read) == Reading::Lines;
                let label = spec.label().to_string();
                if let InputSpec::Path(path) = spec {
                    listed.push(Input {
                        label,
                        path,
                        by_lines,
                    });
                }
            }
            // Only `-` is stdin, and paths are never `-` here.
            Ok(InputSpec::Stdin) => {}
            Err(e) => problems.push(reading::failed_input_message(&ReadError::from(e))),
        }
    }
    (listed, problems)
}

/// Hands each batch's verdicts over as they are.
struct Verdicts;

impl Job for Verdicts {
    type Part = Vec<Verdict>;

    fn part(&self) -> Vec<Verdict> {
        Vec::new()
    }

    fn fold(&self, part: &mut Vec<Verdict>, _: &Trace, verdicts: Vec<Verdict>, _: u64) {
        part.extend(verdicts);
    }
}

/// Every verdict as an Arrow IPC stream, and the lines or inputs skipped.
pub fn replay(source: &Source, options: &Options) -> Result<(Vec<u8>, Vec<String>), BindingError> {
    let mut verdicts = Vec::new();
    let mut problems = Vec::new();
    for_each_step(source, options, &Verdicts, |step| match step {
        Step::Part(v) => verdicts.extend(v),
        Step::Bad { message, .. } | Step::NotTraces { message, .. } => problems.push(message),
        Step::Failed(m) => problems.push(m),
        Step::File(_) => {}
    })?;
    Ok((mirotrace::columnar::ipc_stream(&verdicts)?, problems))
}

/// The partial report of `source`: what one `analyze` run over it
/// folds, before the bootstrap (see `mirotrace::analyze::partial`).
pub fn partial(
    source: &Source,
    options: &Options,
    report: &ReportOptions,
) -> Result<(Partial, Vec<String>), BindingError> {
    // The worst traces keep their timelines, as `analyze --format partial`'s do.
    let report = &ReportOptions {
        timelines: Some(WorstGate::new(report.top)),
        ..report.clone()
    };
    let mut collector = Collector::new(report);
    let mut checked = crosscheck::Summary::default();
    let mut problems = Vec::new();
    let job = Fold {
        report,
        policy: &options.policy,
    };
    for_each_step(source, options, &job, |step| match step {
        Step::Part(part) => {
            collector.merge(part.collector);
            checked.merge(part.crosscheck);
        }
        Step::File(label) => collector.add_file(&label),
        Step::Bad { file, message } => {
            collector.add_bad_line(&file);
            problems.push(message);
        }
        Step::NotTraces {
            file,
            kind,
            count,
            message,
        } => {
            collector.add_not_traces(&file, kind, count);
            problems.push(message);
        }
        Step::Failed(m) => problems.push(m),
    })?;
    Ok((
        Partial::new(collector, checked, report, &options.policy),
        problems,
    ))
}

/// The finished report of a partial, in an `analyze` format.
pub fn render(
    partial: Partial,
    format: &str,
    threads: Option<usize>,
) -> Result<String, BindingError> {
    let workers = Workers::new(threads).map_err(|e| BindingError::Threads(e.to_string()))?;
    let analysis = workers.install(|| partial.finish());
    Ok(match format {
        "json" => render_json::render(&analysis),
        "markdown" => markdown::draw(&view::build(&analysis)),
        "table" => table::draw(
            &view::build(&analysis),
            TableStyle {
                color: false,
                width: None,
            },
        ),
        "html" => mirotrace::html::analyze_page(&analysis, &analysis.skipped_counts()),
        other => {
            return Err(BindingError::Input(format!(
                "format {other:?} is not one of json, table, markdown, html"
            )))
        }
    })
}
