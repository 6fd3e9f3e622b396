//! The driver: inputs are read in batches of whole traces, each trace is
//! replayed and, on the same worker right after, handed to a command's
//! [`Job`], which folds it into a part. Parts come back to the caller in
//! input order, with the skipped lines and inputs between them.
//!
//! With one thread a trace goes reader → replay → fold while it is still in
//! cache, and the part is handed on every few thousand attempts. With more,
//! reading, replaying-and-folding and handing on run as a pipeline of small
//! batches. Memory holds at most a few batches plus the parts.

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::thread;

use rayon::prelude::*;

use crate::read::reader::oversized;
use crate::read::source::{open_records, InputSpec, OpenError, ReadOptions};
use crate::read::{BadLine, NoAttempt, NotTraces, ReadError, Record, Trace};
use crate::replay::{Replayer, Verdict};

/// Stack size of worker and reader threads (and of the binary's main
/// thread): Python-compatible parsing nests up to ~1000 levels, as CPython
/// does, even in debug builds.
pub const WORKER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Most threads a run may use (`-j`): each worker reserves a
/// [`WORKER_STACK_BYTES`] stack, and the machines this runs on have far
/// fewer cores. More are refused on the command line and clamped here.
pub const MAX_THREADS: usize = 256;

/// Attempts per batch and pool worker (and per batch on one thread):
/// enough to share out, few enough that a batch is still in cache when it
/// is replayed and handed on (at 4096 per batch, `-j 2` spent twice the
/// CPU time of `-j 1`, in misses).
const BATCH_ATTEMPTS_PER_WORKER: usize = 128;
/// Batches in flight between the reader and the workers.
const BATCHES_IN_FLIGHT: usize = 2;
/// Text bytes (answers and tool results) that weigh as much as one attempt
/// in a batch: a batch of a few traces with huge tool results (an Inspect
/// sample of 25 MB) is handed on as soon as a batch of many small ones, so
/// the batches in flight hold megabytes, not gigabytes.
const TEXT_BYTES_PER_ATTEMPT: usize = 64 * 1024;
/// With one thread, a part is handed on once it holds this many attempts:
/// merging parts then costs nothing next to the replay, and a streamed
/// part (replay's JSONL) stays a megabyte or two.
const PART_ATTEMPTS_ONE_THREAD: usize = 4096;

/// A command's per-trace work, run on the worker that replayed the trace.
/// Consecutive traces are folded into a part; parts are handed to the
/// caller in input order, where the command merges or writes them.
pub trait Job: Sync {
    /// What a worker makes of consecutive traces.
    type Part: Send;

    /// An empty part.
    fn part(&self) -> Self::Part;

    /// Adds one replayed trace (verdicts in the trace's line order) to
    /// `part`. `ordinal` is the trace's position among the run's traces.
    fn fold(&self, part: &mut Self::Part, trace: Trace, verdicts: Vec<Verdict>, ordinal: u64);
}

/// What the caller is handed, in input order.
pub enum Event<P> {
    /// The job's part for a run of consecutive traces.
    Part(P),
    /// An input was opened (counted as a file).
    Started { label: String },
    /// A line that was skipped.
    Bad(BadLine),
    /// Records of mirotrace's own output (verdicts, a report, …) met in
    /// an input: not traces, skipped and counted.
    NotTraces(NotTraces),
    /// An input that could not be opened or read to its end.
    Failed(ReadError),
    /// An input without an attempt (counted as a skipped line).
    NoAttempt(NoAttempt),
}

/// What the run saw, for summaries and exit codes.
#[derive(Debug, Default, Clone)]
pub struct RunStats {
    pub inputs: usize,
    pub traces: u64,
    pub attempts: u64,
    pub bad_lines: u64,
    pub failed_inputs: u64,
    /// Records skipped as mirotrace's own output, per kind
    /// ([`crate::read::formats::ours::Output::name`]).
    pub not_traces: std::collections::BTreeMap<&'static str, u64>,
    /// Records a format knows that are not attempts (state updates, …),
    /// per `FORMAT:KIND` ([`Trace::not_attempts`]): read, not problems.
    pub not_attempts: std::collections::BTreeMap<String, u64>,
}

impl RunStats {
    /// Records skipped as mirotrace's own output, all kinds.
    pub fn not_trace_records(&self) -> u64 {
        self.not_traces.values().sum()
    }

    /// Whether anything of the input was skipped: a line, an input, or
    /// records that are not traces.
    pub fn skipped_any(&self) -> bool {
        self.bad_lines > 0 || self.failed_inputs > 0 || self.not_trace_records() > 0
    }
}

/// The threads a run may use. With `-j 1`, reading, replaying and the
/// caller's work take turns on the calling thread; with N > 1, a reader
/// thread decodes input while N - 1 workers replay and fold, and the
/// calling thread takes the parts.
pub struct Workers {
    pool: rayon::ThreadPool,
    reader_thread: bool,
}

impl Workers {
    /// `threads`: total threads (default: all cores).
    pub fn new(threads: Option<usize>) -> Result<Workers, rayon::ThreadPoolBuildError> {
        let total = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, MAX_THREADS);
        let pool = rayon::ThreadPoolBuilder::new()
            .stack_size(WORKER_STACK_BYTES)
            .num_threads((total - 1).max(1))
            .build()?;
        Ok(Workers {
            pool,
            reader_thread: total > 1,
        })
    }

    /// Threads in the worker pool (the replay's, and a command's own
    /// parallel work).
    pub fn pool_threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Threads of the run in all (`-j`): a reader may use as many for one
    /// input (an `.eval` archive's samples).
    pub fn total_threads(&self) -> usize {
        if self.reader_thread {
            self.pool_threads() + 1
        } else {
            1
        }
    }

    /// Runs `f` inside the worker pool (for a command's own parallel work).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }
}

/// Replays every input (as [`crate::read::source::expand`] lists them),
/// folds each trace with `job` on its worker, and calls `sink` with every
/// part and skipped input in input order. The sink may stop the run with
/// `ControlFlow::Break`.
pub fn run<J: Job>(
    inputs: Vec<Result<InputSpec, OpenError>>,
    opts: &ReadOptions,
    replayer: &Replayer,
    workers: &Workers,
    job: &J,
    mut sink: impl FnMut(Event<J::Part>) -> ControlFlow<()>,
) -> RunStats {
    let mut stats = RunStats::default();
    let mut hand_on = |piece: Piece<J::Part>| -> ControlFlow<()> {
        let event = match piece {
            Piece::Part {
                part,
                traces,
                attempts,
                not_attempts,
            } => {
                stats.traces += traces;
                stats.attempts += attempts;
                for (kind, n) in not_attempts {
                    *stats.not_attempts.entry(kind).or_default() += n;
                }
                Event::Part(part)
            }
            Piece::Started(label) => {
                stats.inputs += 1;
                Event::Started { label }
            }
            Piece::Bad(b) => {
                stats.bad_lines += 1;
                Event::Bad(b)
            }
            Piece::NotTraces(n) => {
                *stats.not_traces.entry(n.output.name).or_default() += n.count;
                Event::NotTraces(n)
            }
            Piece::Failed(e) => {
                stats.failed_inputs += 1;
                Event::Failed(e)
            }
            Piece::NoAttempt(n) => {
                stats.bad_lines += 1;
                Event::NoAttempt(n)
            }
        };
        sink(event)
    };
    if !workers.reader_thread {
        run_on_one_thread(inputs, opts, replayer, job, &mut hand_on);
        return stats;
    }
    let (tx, rx) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
    let batch_attempts = BATCH_ATTEMPTS_PER_WORKER * workers.pool_threads();
    let opts = opts.clone();
    let reader = thread::Builder::new()
        .name("mirotrace-reader".into())
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || {
            read_batches(inputs, &opts, batch_attempts, &mut |batch| {
                tx.send(batch).is_ok()
            })
        });
    let mut failure = reader
        .as_ref()
        .err()
        .map(|e| format!("cannot start the reader thread: {e}"));
    if reader.is_ok() {
        // Three stages: the reader decodes batch N+2 while the pool replays
        // and folds batch N+1 and this thread hands batch N on to the sink.
        thread::scope(|scope| {
            let (done_tx, done_rx) = mpsc::sync_channel::<Vec<Piece<J::Part>>>(1);
            let stage = thread::Builder::new()
                .name("mirotrace-replay".into())
                .spawn_scoped(scope, move || {
                    for batch in rx.iter() {
                        let pieces = match batch {
                            Batch::Marker(piece) => vec![piece.into()],
                            Batch::Records(records) => workers
                                .pool
                                .install(|| replay_in_parallel(records, replayer, job)),
                        };
                        // Stops once the receiver is gone; dropping `rx`
                        // then stops the reader at its next send.
                        if done_tx.send(pieces).is_err() {
                            break;
                        }
                    }
                });
            match stage {
                Ok(_) => {
                    'handing: for pieces in done_rx.iter() {
                        for piece in pieces {
                            if hand_on(piece).is_break() {
                                break 'handing;
                            }
                        }
                    }
                }
                Err(e) => failure = Some(format!("cannot start the replay thread: {e}")),
            }
        });
    }
    if let Ok(handle) = reader {
        let _ = handle.join();
    }
    if let Some(reason) = failure {
        let _ = hand_on(Piece::Failed(ReadError::Unreadable {
            file: "<all inputs>".into(),
            cause: reason,
        }));
    }
    stats
}

/// One thread: each batch is replayed and folded as soon as it is read,
/// while it is still in cache, and freed by the thread that allocated it.
fn run_on_one_thread<J: Job>(
    inputs: Vec<Result<InputSpec, OpenError>>,
    opts: &ReadOptions,
    replayer: &Replayer,
    job: &J,
    hand_on: &mut dyn FnMut(Piece<J::Part>) -> ControlFlow<()>,
) {
    let mut pieces: Vec<Piece<J::Part>> = Vec::new();
    let mut stopped = false;
    read_batches(inputs, opts, BATCH_ATTEMPTS_PER_WORKER, &mut |batch| {
        match batch {
            Batch::Marker(marker) => pieces.push(marker.into()),
            Batch::Records(records) => {
                // Stage by stage: the whole batch is read, then replayed,
                // then folded, so each stage's code stays in the instruction
                // cache for many traces (8% fewer misses than trace by trace).
                let replayed: Vec<_> = records
                    .into_iter()
                    .map(|(ordinal, record)| {
                        let verdicts = replay_record(replayer, &record);
                        (ordinal, record, verdicts)
                    })
                    .collect();
                for (ordinal, record, verdicts) in replayed {
                    fold_replayed(&mut pieces, ordinal, record, verdicts, job);
                }
            }
        }
        // Hand on at every skipped line or input (so the caller sees them
        // in order), and when the open part has grown large.
        let due = match pieces.as_slice() {
            [] => false,
            [Piece::Part { attempts, .. }] => *attempts as usize >= PART_ATTEMPTS_ONE_THREAD,
            _ => true,
        };
        if due {
            for piece in pieces.drain(..) {
                if hand_on(piece).is_break() {
                    stopped = true;
                    return false;
                }
            }
        }
        true
    });
    if !stopped {
        for piece in pieces {
            if hand_on(piece).is_break() {
                return;
            }
        }
    }
}

/// Replays and folds one batch across the pool. Each worker folds a
/// contiguous run of records into parts; the runs come back in order.
fn replay_in_parallel<J: Job>(
    records: Vec<(u64, Record)>,
    replayer: &Replayer,
    job: &J,
) -> Vec<Piece<J::Part>> {
    let runs: Vec<Vec<Piece<J::Part>>> = records
        .into_par_iter()
        .fold(Vec::new, |mut pieces, (ordinal, record)| {
            absorb(&mut pieces, ordinal, record, replayer, job);
            pieces
        })
        .collect();
    runs.into_iter().flatten().collect()
}

/// Replays a trace and folds it into the open part (a new one after a
/// skipped line), or records a skipped line or input as its own piece.
fn absorb<J: Job>(
    pieces: &mut Vec<Piece<J::Part>>,
    ordinal: u64,
    record: Record,
    replayer: &Replayer,
    job: &J,
) {
    let verdicts = replay_record(replayer, &record);
    fold_replayed(pieces, ordinal, record, verdicts, job);
}

/// A trace's verdicts (none for a skipped line or input).
fn replay_record(replayer: &Replayer, record: &Record) -> Vec<Verdict> {
    match record {
        Record::Trace(trace) => replayer.replay(trace),
        _ => Vec::new(),
    }
}

/// Folds a replayed trace into the open part (a new one after a skipped
/// line), or records a skipped line or input as its own piece.
fn fold_replayed<J: Job>(
    pieces: &mut Vec<Piece<J::Part>>,
    ordinal: u64,
    record: Record,
    verdicts: Vec<Verdict>,
    job: &J,
) {
    let trace = match record {
        Record::Trace(trace) => trace,
        Record::Bad(b) => return pieces.push(Piece::Bad(b)),
        Record::NotTraces(n) => return pieces.push(Piece::NotTraces(n)),
        Record::Failed(e) => return pieces.push(Piece::Failed(e)),
        Record::NoAttempt(n) => return pieces.push(Piece::NoAttempt(n)),
    };
    if !matches!(pieces.last(), Some(Piece::Part { .. })) {
        pieces.push(Piece::Part {
            part: job.part(),
            traces: 0,
            attempts: 0,
            not_attempts: Vec::new(),
        });
    }
    if let Some(Piece::Part {
        part,
        traces,
        attempts,
        not_attempts,
    }) = pieces.last_mut()
    {
        *traces += 1;
        *attempts += trace.attempts.len() as u64;
        not_attempts.extend(trace.not_attempts.iter().cloned());
        job.fold(part, trace, verdicts, ordinal);
    }
}

/// A step of the run, in input order, before it is handed on.
enum Piece<P> {
    Part {
        part: P,
        traces: u64,
        attempts: u64,
        /// The traces' [`Trace::not_attempts`], summed when handed on.
        not_attempts: Vec<(String, u64)>,
    },
    Started(String),
    Bad(BadLine),
    NotTraces(NotTraces),
    Failed(ReadError),
    NoAttempt(NoAttempt),
}

/// What the reader sends: records (each trace with its ordinal), or an
/// input opened or failed.
enum Batch {
    Records(Vec<(u64, Record)>),
    Marker(Marker),
}

enum Marker {
    Started(String),
    Failed(ReadError),
}

impl<P> From<Marker> for Piece<P> {
    fn from(m: Marker) -> Piece<P> {
        match m {
            Marker::Started(label) => Piece::Started(label),
            Marker::Failed(e) => Piece::Failed(e),
        }
    }
}

/// Reads every input in batches of whole traces, numbering the traces;
/// `send` returns false to stop.
fn read_batches(
    inputs: Vec<Result<InputSpec, OpenError>>,
    opts: &ReadOptions,
    batch_attempts: usize,
    send: &mut dyn FnMut(Batch) -> bool,
) {
    let mut ordinal = 0u64;
    for spec in inputs {
        let records = match spec.and_then(|s| open_records(&s, opts).map(|r| (s, r))) {
            Ok((s, records)) => {
                if !send(Batch::Marker(Marker::Started(s.label().to_string()))) {
                    return;
                }
                records
            }
            Err(e) => {
                if !send(Batch::Marker(Marker::Failed(e.into()))) {
                    return;
                }
                continue;
            }
        };
        let mut batch = Vec::new();
        let mut size = 0;
        for record in records {
            let this = ordinal;
            // A skipped line weighs one attempt, so a file of nothing but
            // bad lines is still handed on batch by batch (and `--strict`
            // sees its first problem at once).
            size += 1;
            // Every reader's traces meet the same limits (a document or
            // a task log is read whole before it can be looked at).
            let record = match record {
                Record::Trace(t) => match oversized(&t) {
                    Some(reason) => Record::Bad(BadLine {
                        origin: t.attempts[0].origin.clone(),
                        reason,
                    }),
                    None => Record::Trace(t),
                },
                other => other,
            };
            if let Record::Trace(t) = &record {
                size += weight(t).saturating_sub(1);
                ordinal += 1;
            }
            batch.push((this, record));
            if size >= batch_attempts {
                size = 0;
                if !send(Batch::Records(std::mem::take(&mut batch))) {
                    return;
                }
            }
        }
        if !batch.is_empty() && !send(Batch::Records(batch)) {
            return;
        }
    }
}

/// How much of a batch a trace fills: its attempts, and its text in
/// [`TEXT_BYTES_PER_ATTEMPT`] units.
fn weight(t: &Trace) -> usize {
    let text: usize = t
        .attempts
        .iter()
        .map(|a| {
            a.content.len()
                + a.tool_results
                    .iter()
                    .map(|r| r.result.len() + r.error.as_ref().map_or(0, String::len))
                    .sum::<usize>()
        })
        .sum();
    t.attempts.len() + text / TEXT_BYTES_PER_ATTEMPT
}
