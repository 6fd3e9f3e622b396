//! The one place that runs inputs through the engine for every reading
//! command: it checks that every named input can be read (before any
//! report), shows progress, reports skipped lines and inputs on stderr
//! (the first few in full, then a count per kind), stops under `--strict`
//! or `--max-errors`, refuses input that holds no trace, and says what
//! status the reading earned.

use crate::render::format::counted;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

use super::exit_codes::Status;
use super::progress::Progress;
use super::stderr::say;
use super::Error;
use crate::engine::{self, Event, Job, RunStats, Workers};
use crate::policy::Policy;
use crate::read::source::{
    describe_io, expand_once, total_bytes, InputSpec, OpenError, ReadOptions, HOLDS_NO_ATTEMPT,
};
use crate::read::{BadLine, NotTraces, ReadError};
use crate::render::skipped::Skipped;
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
    /// All of them, for the page ([`Skipped`]).
    kept: Skipped,
    /// Past [`PROBLEMS_IN_FULL`]: how many of each kind (the reason up
    /// to its first `:`, e.g. `not JSON`).
    more: BTreeMap<String, u64>,
}

impl Problems {
    /// Counts one problem; returns the line to print, if it is one of the
    /// first few.
    fn add(&mut self, message: String, reason: &str) -> Option<String> {
        self.seen += 1;
        self.kept.add(&message, reason);
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
    /// The skipped lines and inputs, as stderr reported them (for a page).
    pub skipped: Skipped,
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
        inputs: Inputs,
        workers: &Workers,
        job: &J,
        mut take: impl FnMut(Event<J::Part>) -> Result<(), Error>,
    ) -> Result<Ran, Error> {
        if !self.quiet {
            for note in &inputs.repeated {
                say(note);
            }
        }
        let inputs = inputs.streams;
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
                Event::NoAttempt(n) => {
                    skipped = true;
                    traceless.push(n.to_string());
                    None
                }
                Event::Part(_) => None,
                Event::Started { label } => {
                    progress.file_started(label);
                    None
                }
                Event::Bad(b) => Some((bad_line_message(b), b.reason.as_str())),
                Event::NotTraces(n) => Some((not_traces_message(n), n.output.what)),
                Event::Failed(e) => Some((failed_input_message(e), kind(e))),
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
            None => Ok(Ran {
                stats,
                stopped,
                skipped: problems.kept,
            }),
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

/// A command's inputs, expanded once (folders walked, a file named twice
/// read once) and checked: every named input can be read, and the
/// command's `-o` is none of them. `diff` expands both sides before
/// replaying either.
pub struct Inputs {
    streams: Vec<Result<InputSpec, OpenError>>,
    /// A note for each file left out because it was already listed.
    repeated: Vec<String>,
}

impl Inputs {
    /// Expands `named`; fails when a named input cannot be read at all, or
    /// when `output` (the command's `-o`) is one of the files it expands
    /// to: a named file or one found inside a named folder, however
    /// spelled ([`crate::output::refuse_inputs`]; exit 2, nothing read).
    pub fn expand(named: &[InputSpec], output: Option<&Path>) -> Result<Inputs, Error> {
        let expanded = expand_once(named);
        if let Some(output) = output {
            // An event folder's files are each read: none may be `-o`.
            let files: Vec<std::path::PathBuf> = expanded
                .inputs
                .iter()
                .filter_map(|spec| match spec {
                    Ok(InputSpec::Path(p)) => Some(crate::read::source::files_read(p)),
                    _ => None,
                })
                .flatten()
                .collect();
            crate::output::refuse_inputs(output, files.iter().map(|p| p.as_path()))?;
        }
        check(named, &expanded.inputs)?;
        Ok(Inputs {
            streams: expanded.inputs,
            repeated: expanded.repeated,
        })
    }

    /// No input at all (a side a partial diff leaves out).
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }
}

/// What a skipped line says (the CLI's stderr and the Python package's
/// warnings word it alike).
pub fn bad_line_message(b: &BadLine) -> String {
    format!("{b} (line skipped)")
}

/// What records of mirotrace's own output, skipped, say.
pub fn not_traces_message(n: &NotTraces) -> String {
    format!("{n} (skipped)")
}

/// What a skipped input's line says. A stream cut after some lines were
/// read is not a skipped input: those lines counted, the rest is lost.
pub fn failed_input_message(e: &ReadError) -> String {
    match e {
        ReadError::Cut { file, lines, cause } if *lines > 0 => format!(
            "{file}: {lines} lines read, then the input was cut at line {}: {cause} (the rest of the input is lost)",
            lines + 1
        ),
        _ => format!("{e} (input skipped)"),
    }
}

/// The kind a failed input is counted under past the first few problems:
/// every cut stream is one kind, whatever line it was cut at.
fn kind(e: &ReadError) -> &str {
    match e {
        ReadError::Cut { .. } => "read error",
        ReadError::Unreadable { cause, .. } => cause,
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
        let cut = |lines| ReadError::Cut {
            file: "a.gz".into(),
            lines,
            cause: "incomplete deflate stream".into(),
        };
        let message = failed_input_message(&cut(192));
        assert!(
            message.starts_with("a.gz: 192 lines read, then the input was cut at line 193"),
            "{message}"
        );
        assert!(!message.contains("input skipped"));
        let nothing = failed_input_message(&cut(0));
        assert_eq!(
            nothing,
            "a.gz: read error after line 0: incomplete deflate stream (input skipped)"
        );
        assert_eq!(kind(&cut(192)), kind(&cut(7)));
    }
}
