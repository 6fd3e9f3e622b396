//! The one place that runs inputs through the engine for every reading
//! command: it expands the inputs, shows progress, reports each skipped
//! line or input on stderr, stops at the first one under `--strict`, and
//! says what status the reading earned.

use std::io::Write;
use std::ops::ControlFlow;

use super::exit_codes::Status;
use super::progress::Progress;
use super::Error;
use crate::engine::{self, Event, Job, RunStats, Workers};
use crate::policy::Policy;
use crate::read::source::{expand, total_bytes, InputSpec, ReadOptions};
use crate::replay::{PlainReply, Replayer};

/// The options every reading command shares (`--threads`, `--policy`,
/// `--plain-reply`, `--input-format`, `--max-line-bytes`, `--strict`,
/// `--quiet`).
#[derive(Debug, Clone)]
pub struct Reading {
    pub threads: Option<usize>,
    pub policy: Policy,
    /// What a reply without a tool call does to its session.
    pub plain_reply: PlainReply,
    pub read: ReadOptions,
    /// No progress line and no notes (skipped input is still reported).
    pub quiet: bool,
    /// Stop at the first skipped line or input.
    pub strict: bool,
}

/// How reading ended.
#[derive(Debug, Clone)]
pub struct Ran {
    pub stats: RunStats,
    /// `--strict` stopped the run at a skipped line or input. The command
    /// then writes nothing more: no report, and a `-o` file is not
    /// committed (what already went to stdout stays).
    pub stopped: bool,
}

impl Ran {
    /// The status the reading earned.
    pub fn status(&self) -> Status {
        let skipped = self.stats.bad_lines > 0 || self.stats.failed_inputs > 0;
        if self.stopped {
            Status::InputSkipped
        } else if skipped && self.stats.traces == 0 {
            Status::NothingReadable
        } else if skipped {
            Status::InputSkipped
        } else {
            Status::Ok
        }
    }
}

impl Reading {
    /// The threads of a run (`-j N` in total, default all cores).
    pub fn workers(&self) -> Result<Workers, Error> {
        Workers::new(self.threads).map_err(|e| Error::Threads(e.to_string()))
    }

    /// Replays `inputs`, folds each trace with `job` on the workers, and
    /// hands every event to `take` in input order. Skipped lines and inputs
    /// are reported here (and handed on too, for commands that count them).
    /// An error from `take` ends the run; a closed pipe becomes
    /// [`Error::Closed`] with the status earned so far.
    pub fn run<J: Job>(
        &self,
        inputs: &[InputSpec],
        workers: &Workers,
        job: &J,
        mut take: impl FnMut(Event<J::Part>) -> Result<(), Error>,
    ) -> Result<Ran, Error> {
        let inputs = expand(inputs);
        let mut progress = Progress::new(self.quiet, total_bytes(&inputs));
        let read = ReadOptions {
            bytes_read: progress.bytes_read(),
            ..self.read.clone()
        };
        let replayer = Replayer::new(self.policy.clone()).with_plain_reply(self.plain_reply);
        let mut failure = None;
        let mut skipped = false;
        let mut stopped = false;
        let stats = engine::run(inputs, &read, &replayer, workers, job, |event| {
            let problem = match &event {
                Event::Part(_) => None,
                Event::Started { label } => {
                    progress.file_started(label);
                    None
                }
                Event::Bad(b) => Some(format!("mirotrace: {b} (line skipped)")),
                Event::Failed { label, reason } => {
                    Some(format!("mirotrace: {label}: {reason} (input skipped)"))
                }
            };
            progress.tick();
            if let Some(message) = &problem {
                skipped = true;
                progress.suspend(|| {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "{message}");
                    if self.strict {
                        let _ = writeln!(err, "mirotrace: stopping here (--strict)");
                    }
                });
            }
            if let Err(e) = take(event) {
                failure = Some(e);
                return ControlFlow::Break(());
            }
            if problem.is_some() && self.strict {
                stopped = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        progress.finish();
        match failure {
            Some(e) => {
                let so_far = if skipped {
                    Status::InputSkipped
                } else {
                    Status::Ok
                };
                Err(e.at_status(so_far))
            }
            None => Ok(Ran { stats, stopped }),
        }
    }
}
