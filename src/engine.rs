//! The driver: inputs are read in batches of whole traces, each batch is
//! replayed (across the worker pool), and results are handed to the caller
//! in input order. With one thread a batch is one trace, carried from
//! reading to the caller while it is in cache; with more, reading,
//! replaying and handing on run as a pipeline of small batches. Memory
//! holds at most a few batches.

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::thread;

use rayon::prelude::*;

use crate::read::source::{expand, open_records, InputSpec, ReadOptions};
use crate::read::{BadLine, Record, Trace};
use crate::replay::{Replayer, Verdict};

/// Attempts per batch and pool worker: enough to share out, few enough
/// that a batch is still in cache when it is replayed and handed on (at
/// 4096 per batch, `-j 2` spent twice the CPU time of `-j 1`, in misses).
const BATCH_ATTEMPTS_PER_WORKER: usize = 128;
/// Batches in flight between the reader and the workers.
const BATCHES_IN_FLIGHT: usize = 2;

/// One result, in input order.
pub enum Item {
    /// A replayed trace with one verdict per attempt, in the trace's line order.
    Trace {
        trace: Trace,
        verdicts: Vec<Verdict>,
    },
    /// A line that was skipped.
    Bad(BadLine),
    /// An input that could not be opened or read to its end.
    InputFailed { label: String, reason: String },
    /// An input was opened (counted as a file).
    InputStarted { label: String },
}

/// What the run saw, for summaries and exit codes.
#[derive(Debug, Default, Clone)]
pub struct RunStats {
    pub inputs: usize,
    pub traces: u64,
    pub attempts: u64,
    pub bad_lines: u64,
    pub failed_inputs: u64,
}

enum Batch {
    Records(Vec<Record>),
    Marker(Item),
}

/// The threads a run may use. With `-j 1`, reading, replaying and the
/// caller's work take turns on the calling thread; with N > 1, a reader
/// thread decodes input while N - 1 workers replay and the calling thread
/// takes the results.
pub struct Workers {
    pool: rayon::ThreadPool,
    reader_thread: bool,
}

impl Workers {
    /// `threads`: total threads (default: all cores).
    pub fn new(threads: Option<usize>) -> Result<Workers, String> {
        let total = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        // Python-compatible parsing nests up to ~1000 levels (as CPython
        // does); give workers room for that even in debug builds.
        let pool = rayon::ThreadPoolBuilder::new()
            .stack_size(crate::commands::WORKER_STACK_BYTES)
            .num_threads((total - 1).max(1))
            .build()
            .map_err(|e| format!("cannot start worker threads: {e}"))?;
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

    /// Runs `f` inside the worker pool (for a command's own parallel work).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }
}

/// Replays every input, calling `sink` with each item in input order. The
/// sink may stop the run early with `ControlFlow::Break` (e.g. a closed pipe).
pub fn run(
    specs: &[InputSpec],
    opts: &ReadOptions,
    replayer: &Replayer,
    workers: &Workers,
    mut sink: impl FnMut(Item) -> ControlFlow<()>,
) -> RunStats {
    let mut stats = RunStats::default();
    let replay = |r: &Record| match r {
        Record::Trace(t) => Some(replayer.replay(t)),
        _ => None,
    };
    let mut hand_on = |replayed: Replayed| -> ControlFlow<()> {
        match replayed {
            Replayed::Marker(item) => {
                match &item {
                    Item::InputStarted { .. } => stats.inputs += 1,
                    Item::InputFailed { .. } => stats.failed_inputs += 1,
                    _ => {}
                }
                sink(item)
            }
            Replayed::Records(records, verdicts) => {
                deliver(records, verdicts, &mut stats, &mut sink)
            }
        }
    };
    if !workers.reader_thread {
        // One thread: each trace is replayed (and handed on) as soon as it
        // is read, while it is still in cache, and freed by the thread that
        // allocated it.
        read_batches(specs, opts, 1, &mut |batch| {
            let replayed = match batch {
                Batch::Marker(item) => Replayed::Marker(item),
                Batch::Records(records) => {
                    let verdicts = records.iter().map(replay).collect();
                    Replayed::Records(records, verdicts)
                }
            };
            hand_on(replayed).is_continue()
        });
        return stats;
    }
    let (tx, rx) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
    let batch_attempts = BATCH_ATTEMPTS_PER_WORKER * workers.pool_threads();
    let specs = specs.to_vec();
    let opts = opts.clone();
    let reader = thread::Builder::new()
        .name("mirotrace-reader".into())
        .stack_size(crate::commands::WORKER_STACK_BYTES)
        .spawn(move || {
            read_batches(&specs, &opts, batch_attempts, &mut |batch| {
                tx.send(batch).is_ok()
            })
        });
    let mut failure = reader
        .as_ref()
        .err()
        .map(|e| format!("cannot start the reader thread: {e}"));
    if reader.is_ok() {
        // Three stages: the reader decodes batch N+2 while the pool replays
        // batch N+1 and this thread hands batch N on to the sink.
        thread::scope(|scope| {
            let (done_tx, done_rx) = mpsc::sync_channel::<Replayed>(1);
            let stage = thread::Builder::new()
                .name("mirotrace-replay".into())
                .spawn_scoped(scope, move || {
                    for batch in rx.iter() {
                        let replayed = match batch {
                            Batch::Marker(item) => Replayed::Marker(item),
                            Batch::Records(records) => {
                                let verdicts = workers
                                    .pool
                                    .install(|| records.par_iter().map(replay).collect());
                                Replayed::Records(records, verdicts)
                            }
                        };
                        // Stops once the receiver is gone; dropping `rx`
                        // then stops the reader at its next send.
                        if done_tx.send(replayed).is_err() {
                            break;
                        }
                    }
                });
            match stage {
                Ok(_) => {
                    for replayed in done_rx.iter() {
                        if hand_on(replayed).is_break() {
                            break;
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
        stats.failed_inputs += 1;
        let _ = sink(Item::InputFailed {
            label: "<all inputs>".into(),
            reason,
        });
    }
    stats
}

/// A batch after the replay.
enum Replayed {
    Records(Vec<Record>, Vec<Option<Vec<Verdict>>>),
    Marker(Item),
}

fn deliver(
    records: Vec<Record>,
    replayed: Vec<Option<Vec<Verdict>>>,
    stats: &mut RunStats,
    sink: &mut impl FnMut(Item) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for (record, verdicts) in records.into_iter().zip(replayed) {
        let item = match record {
            Record::Trace(trace) => {
                stats.traces += 1;
                stats.attempts += trace.attempts.len() as u64;
                Item::Trace {
                    trace,
                    verdicts: verdicts.unwrap_or_default(),
                }
            }
            Record::Bad(b) => {
                stats.bad_lines += 1;
                Item::Bad(b)
            }
            Record::Failed { file, reason } => {
                stats.failed_inputs += 1;
                Item::InputFailed {
                    label: file.to_string(),
                    reason,
                }
            }
        };
        sink(item)?;
    }
    ControlFlow::Continue(())
}

/// Reads every input in batches of whole traces; `send` returns false to stop.
fn read_batches(
    specs: &[InputSpec],
    opts: &ReadOptions,
    batch_attempts: usize,
    send: &mut dyn FnMut(Batch) -> bool,
) {
    for spec in expand(specs) {
        let records = match spec.and_then(|s| open_records(&s, opts).map(|r| (s, r))) {
            Ok((s, records)) => {
                let started = Item::InputStarted {
                    label: s.label().to_string(),
                };
                if !send(Batch::Marker(started)) {
                    return;
                }
                records
            }
            Err(e) => {
                let failed = Item::InputFailed {
                    label: e.label.to_string(),
                    reason: e.reason,
                };
                if !send(Batch::Marker(failed)) {
                    return;
                }
                continue;
            }
        };
        let mut batch = Vec::new();
        let mut size = 0;
        for record in records {
            if let Record::Trace(t) = &record {
                size += t.attempts.len();
            }
            batch.push(record);
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
