//! The one place that runs inputs through the engine for every reading
//! command: it checks that every named input can be read (before any
//! report), shows progress, reports skipped lines and inputs on stderr
//! (the first few in full, then a count per kind), stops under `--strict`
//! or `--max-errors`, refuses input that holds no trace, and says what
//! status the reading earned.

use crate::render::format::counted;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::exit_codes::Status;
use super::progress::Progress;
use super::stderr::say;
use super::Error;
use crate::engine::{self, Event, Job, RunStats, Workers};
use crate::policy::Policy;
use crate::read::source::{
    describe_io, expand, expand_once, total_bytes, InputSpec, OpenError, ReadOptions,
    HOLDS_NO_ATTEMPT,
};
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
    /// Stop after this many skipped lines or inputs (`--max-errors N`;
    /// `--strict` is 1).
    pub max_errors: Option<u64>,
}

/// How many problems are printed in full; the rest are counted per kind
/// and summed up in one line at the end.
pub const PROBLEMS_IN_FULL: u64 = 5;

/// The skipped lines and inputs of a run, as reported on stderr.
#[derive(Default)]
struct Problems {
    seen: u64,
    /// Past [`PROBLEMS_IN_FULL`]: how many of each kind (the reason up
    /// to its first `:`, e.g. `not JSON`).
    more: BTreeMap<String, u64>,
}

impl Problems {
    /// Counts one problem; returns the line to print, if it is one of the
    /// first few.
    fn add(&mut self, message: String, reason: &str) -> Option<String> {
        self.seen += 1;
        if self.seen <= PROBLEMS_IN_FULL {
            return Some(message);
        }
        let kind = reason.split(':').next().unwrap_or(reason).trim();
        *self.more.entry(kind.to_string()).or_default() += 1;
        None
    }

    /// `… and 3341 more problems: 3340 × not JSON, 1 × …`, when some were
    /// not printed.
    fn summary(&self) -> Option<String> {
        let more: u64 = self.more.values().sum();
        if more == 0 {
            return None;
        }
        let mut kinds: Vec<(&String, &u64)> = self.more.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} × {k}")).collect();
        let noun = if more == 1 { "problem" } else { "problems" };
        Some(format!("… and {more} more {noun}: {}", kinds.join(", ")))
    }
}

/// Named inputs that cannot be read at all: missing, unreadable, or a
/// directory without trace files. Checked before reading, so a typo ends
/// the run with one line and no report. A FIFO or other special file is
/// not opened here (opening would wait for a writer).
fn unreadable(named: &[InputSpec], expanded: &[Result<InputSpec, OpenError>]) -> Vec<String> {
    let mut out = Vec::new();
    for spec in named {
        let InputSpec::Path(path) = spec else {
            continue;
        };
        let label = spec.label();
        if let Some(Err(e)) = expanded
            .iter()
            .find(|r| matches!(r, Err(e) if e.label == label))
        {
            out.push(e.to_string());
            continue;
        }
        match std::fs::metadata(path) {
            Err(e) => out.push(format!("{label}: {}", describe_io(&e))),
            Ok(m) if m.is_file() => {
                if let Err(e) = std::fs::File::open(path) {
                    out.push(format!("{label}: {}", describe_io(&e)));
                }
            }
            Ok(_) => {}
        }
    }
    out
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
        let skipped = self.stats.skipped_any();
        if self.stopped {
            Status::InputSkipped
        } else if skipped && self.stats.attempts == 0 {
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
        let named = inputs;
        let expanded = expand_once(inputs);
        let inputs = expanded.inputs;
        check(named, &inputs)?;
        if !self.quiet {
            for note in &expanded.repeated {
                say(note);
            }
        }
        let limit = self.max_errors.or(self.strict.then_some(1));
        let mut problems = Problems::default();
        let mut progress = Progress::new(self.quiet, total_bytes(&inputs));
        let read = ReadOptions {
            bytes_read: progress.bytes_read(),
            threads: workers.total_threads(),
            ..self.read.clone()
        };
        let replayer = Replayer::new(self.policy.clone()).with_plain_reply(self.plain_reply);
        let mut failure = None;
        let mut skipped = false;
        // Inputs without an attempt, said at the end: when no input has
        // one, the run's one line says so instead.
        let mut traceless: Vec<String> = Vec::new();
        let mut stopped = false;
        let stats = engine::run(inputs, &read, &replayer, workers, job, |event| {
            let problem = match &event {
                Event::Bad(b) if b.reason.starts_with(HOLDS_NO_ATTEMPT) => {
                    skipped = true;
                    traceless.push(b.to_string());
                    None
                }
                Event::Part(_) => None,
                Event::Started { label } => {
                    progress.file_started(label);
                    None
                }
                Event::Bad(b) => Some((format!("{b} (line skipped)"), b.reason.as_str())),
                Event::NotTraces(n) => Some((format!("{n} (skipped)"), n.output.what)),
                Event::Failed { label, reason } => {
                    Some((format!("{label}: {}", failed(reason)), reason.as_str()))
                }
            };
            progress.tick();
            let mut stop = false;
            if let Some((message, reason)) = problem {
                skipped = true;
                let shown = problems.add(message, reason);
                stop = limit.is_some_and(|n| problems.seen >= n);
                progress.suspend(|| {
                    if let Some(line) = &shown {
                        say(line);
                    }
                    if stop {
                        say(stop_line(self.strict, problems.seen));
                    }
                });
            }
            if let Err(e) = take(event) {
                failure = Some(e);
                return ControlFlow::Break(());
            }
            if stop {
                stopped = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        progress.finish();
        if stats.attempts > 0 {
            for line in traceless {
                if let Some(shown) = problems.add(line, HOLDS_NO_ATTEMPT) {
                    say(shown);
                }
            }
        }
        if let Some(line) = problems.summary() {
            say(line);
        }
        if !self.quiet {
            if let Some(line) = not_attempts_line(&stats) {
                say(line);
            }
        }
        match failure {
            Some(e) => {
                let so_far = if skipped {
                    Status::InputSkipped
                } else {
                    Status::Ok
                };
                Err(e.at_status(so_far))
            }
            // Traces without one attempt are no report either.
            None if !stopped && stats.attempts == 0 => Err(Error::NoTraces {
                problems: problems.seen,
            }),
            None => Ok(Ran { stats, stopped }),
        }
    }
}

/// The reading summary's line for the records read that are not
/// attempts (`input.skipped` in the JSON report): none is lost unsaid.
fn not_attempts_line(stats: &RunStats) -> Option<String> {
    if stats.not_attempts.is_empty() {
        return None;
    }
    let kinds: Vec<String> = stats
        .not_attempts
        .iter()
        .map(|(kind, n)| format!("{n} × {kind}"))
        .collect();
    Some(format!(
        "records read that are not attempts (counted, not replayed): {}",
        kinds.join(", ")
    ))
}

/// Fails when a named input cannot be read at all.
fn check(named: &[InputSpec], expanded: &[Result<InputSpec, OpenError>]) -> Result<(), Error> {
    let missing = unreadable(named, expanded);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Unreadable(missing.join("; ")))
    }
}

/// Checks, before any reading, that every named input can be read (`diff`
/// checks both sides before replaying either).
pub fn check_inputs(named: &[InputSpec]) -> Result<(), Error> {
    check(named, &expand(named))
}

/// What a skipped input's line says. A stream cut after some lines were
/// read is not a skipped input: those lines counted, the rest is lost.
fn failed(reason: &str) -> String {
    let after = reason
        .strip_prefix("read error after line ")
        .and_then(|rest| rest.split_once(": "))
        .and_then(|(n, why)| n.parse::<u64>().ok().map(|n| (n, why)));
    match after {
        Some((lines, why)) if lines > 0 => format!(
            "{lines} lines read, then the input was cut at line {}: {why} (the rest of the input is lost)",
            lines + 1
        ),
        _ => format!("{reason} (input skipped)"),
    }
}

/// Why the run stopped early.
fn stop_line(strict: bool, seen: u64) -> String {
    if strict && seen == 1 {
        "stopping here (--strict)".into()
    } else {
        format!("stopping here: {} (--max-errors)", counted(seen, "problem"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_problems_are_shown_then_counted_per_kind() {
        let mut p = Problems::default();
        let shown: Vec<_> = (0..PROBLEMS_IN_FULL + 4)
            .filter_map(|i| {
                let reason = if i % 2 == 0 {
                    "not JSON: x"
                } else {
                    "too long"
                };
                p.add(format!("line {i}"), reason)
            })
            .collect();
        assert_eq!(shown.len() as u64, PROBLEMS_IN_FULL);
        assert_eq!(
            p.summary().as_deref(),
            Some("… and 4 more problems: 2 × not JSON, 2 × too long")
        );
    }

    #[test]
    fn a_cut_stream_says_how_much_was_read() {
        let cut = failed("read error after line 192: incomplete deflate stream");
        assert!(
            cut.starts_with("192 lines read, then the input was cut at line 193"),
            "{cut}"
        );
        assert!(!cut.contains("input skipped"));
        let nothing = failed("read error after line 0: bad header");
        assert!(nothing.ends_with("(input skipped)"));
    }
}
