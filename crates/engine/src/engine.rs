//! The driver: inputs are read in batches of whole traces, each trace is
//! replayed and, on the same worker right after, handed to a command's
//! [`Job`], which folds it into a part. Parts come back to the caller in
//! input order, with the skipped lines and inputs between them.
//!
//! With one thread a batch goes reader → replay → fold while it is still in
//! cache, and the part is handed on every few thousand attempts. With more,
//! reading, replaying-and-folding and handing on run as a pipeline of small
//! batches; a reader that is ahead of the workers helps them while it
//! waits (it frees what they are done with and parses traces ahead).
//! Memory holds at most a few batches plus the parts.

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::thread;

use rayon::prelude::*;

use crate::read::join::Joining;
use crate::read::reader::oversized;
use crate::read::source::{open_records, InputSpec, OpenError, ReadOptions};
use crate::read::{BadLine, NoAttempt, NotTraces, ReadError, Record, Trace};
use crate::replay::{Parsed, Replayer, Verdict};

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
/// Batches of folded traces waiting for the reader to free them, and the
/// most text one may hold: at most a few megabytes wait.
const FREED_IN_FLIGHT: usize = 8;
const FREED_TEXT_BYTES: usize = 512 * 1024;
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
    /// The trace is lent: with a reader thread, the engine hands it back
    /// to the reader to be freed where it was allocated.
    fn fold(&self, part: &mut Self::Part, trace: &Trace, verdicts: Vec<Verdict>, ordinal: u64);
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
    /// ([`crate::read::ours::Output::name`]).
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
    let (freed_tx, freed_rx) = mpsc::sync_channel::<Vec<Trace>>(FREED_IN_FLIGHT);
    let batch_attempts = BATCH_ATTEMPTS_PER_WORKER * workers.pool_threads();
    let mut failure = None;
    thread::scope(|scope| {
        let reader = thread::Builder::new()
            .name("mirotrace-reader".into())
            .stack_size(WORKER_STACK_BYTES)
            .spawn_scoped(scope, move || {
                read_batches(inputs, opts, batch_attempts, &mut |batch| {
                    send_helping_while_full(&tx, batch, &freed_rx, replayer)
                })
            });
        if let Err(e) = reader {
            failure = Some(format!("cannot start the reader thread: {e}"));
            return;
        }
        // Three stages: the reader decodes batch N+2 while the pool replays
        // and folds batch N+1 and this thread hands batch N on to the sink.
        let (done_tx, done_rx) = mpsc::sync_channel::<Vec<Piece<J::Part>>>(1);
        let stage = thread::Builder::new()
            .name("mirotrace-replay".into())
            .spawn_scoped(scope, move || {
                for batch in rx.iter() {
                    let pieces = match batch {
                        Batch::Marker(piece) => vec![piece.into()],
                        Batch::Records(items) => workers
                            .pool
                            .install(|| replay_in_parallel(items, replayer, job, &freed_tx)),
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
        // Leaving the scope drops `done_rx` (the replay stage stops at its
        // next send, dropping `rx`) and joins both threads.
        drop(done_rx);
    });
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
            Batch::Records(items) => {
                // Stage by stage: the whole batch is read, then replayed,
                // then folded, so each stage's code stays in the instruction
                // cache for many traces (8% fewer misses than trace by trace).
                let replayed: Vec<_> = items
                    .into_iter()
                    .map(|item| {
                        let verdicts = replay_item(replayer, &item.record, None);
                        (item.ordinal, item.record, verdicts)
                    })
                    .collect();
                for (ordinal, record, verdicts) in replayed {
                    drop(fold_replayed(&mut pieces, ordinal, record, verdicts, job));
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

/// Hands a batch to the workers. While they are busy (the channel is
/// full), the reader helps instead of waiting: it frees the traces the
/// workers are done with (`freed`, memory it allocated: a free from another
/// thread is several times dearer), then parses the batch's traces ahead
/// ([`Replayer::parse`]). With few workers the replay is the slower stage
/// and this moves part of it onto the reader; with many, the workers keep
/// up and the reader, then the slower stage, does only its own work. False
/// once the workers are gone.
fn send_helping_while_full(
    tx: &mpsc::SyncSender<Batch>,
    batch: Batch,
    freed: &mpsc::Receiver<Vec<Trace>>,
    replayer: &Replayer,
) -> bool {
    let mut batch = batch;
    let mut next = 0;
    loop {
        match tx.try_send(batch) {
            Ok(()) => return true,
            Err(mpsc::TrySendError::Disconnected(_)) => return false,
            Err(mpsc::TrySendError::Full(full)) => batch = full,
        }
        if let Ok(traces) = freed.try_recv() {
            drop(traces);
            continue;
        }
        let Batch::Records(items) = &mut batch else {
            return tx.send(batch).is_ok();
        };
        let unparsed = items[next..]
            .iter()
            .position(|item| matches!(item.record, Record::Trace(_)) && item.parsed.is_none());
        let Some(at) = unparsed else {
            return tx.send(batch).is_ok();
        };
        let item = &mut items[next + at];
        if let Record::Trace(trace) = &item.record {
            item.parsed = Some(replayer.parse(trace));
        }
        next += at + 1;
    }
}

/// Replays and folds one batch across the pool. Each worker folds a
/// contiguous run of records into parts; the runs come back in order.
/// The folded traces go to `freed`, for the reader to free where they
/// were allocated when it has time ([`send_helping_while_full`]; freeing
/// them here was a tenth of `-j 2`'s time); when it has not, here.
fn replay_in_parallel<J: Job>(
    items: Vec<Item>,
    replayer: &Replayer,
    job: &J,
    freed: &mpsc::SyncSender<Vec<Trace>>,
) -> Vec<Piece<J::Part>> {
    let runs: Vec<Run<J::Part>> = items
        .into_par_iter()
        .fold(
            || (Vec::new(), Vec::new(), 0),
            |(mut pieces, mut traces, mut text), item| {
                let verdicts = replay_item(replayer, &item.record, item.parsed);
                let trace = fold_replayed(&mut pieces, item.ordinal, item.record, verdicts, job);
                traces.extend(trace);
                text += item.text;
                (pieces, traces, text)
            },
        )
        .collect();
    let mut all = Vec::new();
    for (pieces, traces, text) in runs {
        all.extend(pieces);
        // Freed here: traces holding much text (a few big blocks cost as
        // little to free from here, and memory is not held for them), and
        // any the reader has no room or time for.
        if text <= FREED_TEXT_BYTES {
            let _ = freed.try_send(traces);
        }
    }
    all
}

/// What a worker made of a contiguous run of a batch's records: its
/// pieces, the traces it folded (to be freed) and their text in bytes.
type Run<P> = (Vec<Piece<P>>, Vec<Trace>, usize);

/// A trace's verdicts (none for a skipped line or input), from what the
/// reader parsed of it when it did.
fn replay_item(replayer: &Replayer, record: &Record, parsed: Option<Parsed>) -> Vec<Verdict> {
    match (record, parsed) {
        (Record::Trace(trace), Some(parsed)) => replayer.replay_parsed(trace, parsed),
        (Record::Trace(trace), None) => replayer.replay(trace),
        _ => Vec::new(),
    }
}

/// Folds a replayed trace into the open part (a new one after a skipped
/// line), or records a skipped line or input as its own piece. Gives the
/// trace back, to be freed by the caller's choice of thread.
fn fold_replayed<J: Job>(
    pieces: &mut Vec<Piece<J::Part>>,
    ordinal: u64,
    record: Record,
    verdicts: Vec<Verdict>,
    job: &J,
) -> Option<Trace> {
    let skipped = match record {
        Record::Trace(trace) => return Some(fold_trace(pieces, ordinal, trace, verdicts, job)),
        Record::Bad(b) => Piece::Bad(b),
        Record::NotTraces(n) => Piece::NotTraces(n),
        Record::Failed(e) => Piece::Failed(e),
        Record::NoAttempt(n) => Piece::NoAttempt(n),
    };
    pieces.push(skipped);
    None
}

/// [`fold_replayed`] for a trace: into the open part, or a new one.
fn fold_trace<J: Job>(
    pieces: &mut Vec<Piece<J::Part>>,
    ordinal: u64,
    trace: Trace,
    verdicts: Vec<Verdict>,
    job: &J,
) -> Trace {
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
        job.fold(part, &trace, verdicts, ordinal);
    }
    trace
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

/// What the reader sends: records, or an input opened or failed.
enum Batch {
    Records(Vec<Item>),
    Marker(Marker),
}

/// A record of a batch: a trace with its ordinal (its position among the
/// run's traces) and, when the reader had time, its attempts parsed ahead.
struct Item {
    ordinal: u64,
    record: Record,
    parsed: Option<Parsed>,
    /// The trace's answers and tool results, in bytes ([`text_bytes`]).
    text: usize,
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
    let (inputs, joining) = Joining::prepare(inputs, &opts.trace_header);
    for (position, spec) in inputs.into_iter().enumerate() {
        let is_recording = joining.as_ref().is_some_and(|j| j.is_recording(position));
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
        let records: Box<dyn Iterator<Item = Record> + Send> = match &joining {
            Some(j) => Box::new(j.records(records, is_recording)),
            None => records,
        };
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
            let mut text = 0;
            if let Record::Trace(t) = &record {
                text = text_bytes(t);
                // A trace weighs its attempts, and its text in
                // TEXT_BYTES_PER_ATTEMPT units.
                size += (t.attempts.len() + text / TEXT_BYTES_PER_ATTEMPT).saturating_sub(1);
                ordinal += 1;
            }
            batch.push(Item {
                ordinal: this,
                record,
                parsed: None,
                text,
            });
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

/// A trace's answers and tool results, in bytes.
fn text_bytes(t: &Trace) -> usize {
    t.attempts
        .iter()
        .map(|a| {
            a.content.len()
                + a.tool_results
                    .iter()
                    .map(|r| r.result.len() + r.error.as_ref().map_or(0, String::len))
                    .sum::<usize>()
        })
        .sum()
}
