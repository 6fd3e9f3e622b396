//! The parallel driver: inputs are read on one thread in batches of whole
//! traces, each batch is replayed across the worker pool, and results are
//! handed to the caller in input order. Memory holds at most a few batches.

use std::ops::ControlFlow;
use std::sync::mpsc;
use std::thread;

use rayon::prelude::*;

use crate::input::{expand, open_records, InputSpec, ReadOptions};
use crate::replay::{Replayer, Verdict};
use crate::trace::{BadLine, Record, Trace};

/// Attempts per batch: large enough to keep every worker busy, small
/// enough to bound memory.
const BATCH_ATTEMPTS: usize = 4096;
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

/// Replays every input, calling `sink` with each item in input order. The
/// sink may stop the run early with `ControlFlow::Break` (e.g. a closed pipe).
pub fn run(
    specs: &[InputSpec],
    opts: &ReadOptions,
    replayer: &Replayer,
    pool: &rayon::ThreadPool,
    mut sink: impl FnMut(Item) -> ControlFlow<()>,
) -> RunStats {
    let mut stats = RunStats::default();
    let (tx, rx) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
    let specs = specs.to_vec();
    let opts = opts.clone();
    let reader = thread::Builder::new()
        .name("mirotrace-reader".into())
        .stack_size(crate::commands::WORKER_STACK_BYTES)
        .spawn(move || read_batches(&specs, &opts, &tx));
    for batch in rx.iter() {
        let flow = match batch {
            Batch::Marker(item) => {
                match &item {
                    Item::InputStarted { .. } => stats.inputs += 1,
                    Item::InputFailed { .. } => stats.failed_inputs += 1,
                    _ => {}
                }
                sink(item)
            }
            Batch::Records(records) => {
                let replayed: Vec<Option<Vec<Verdict>>> = pool.install(|| {
                    records
                        .par_iter()
                        .map(|r| match r {
                            Record::Trace(t) => Some(replayer.replay(t)),
                            _ => None,
                        })
                        .collect()
                });
                deliver(records, replayed, &mut stats, &mut sink)
            }
        };
        if flow.is_break() {
            break;
        }
    }
    drop(rx);
    // The reader stops at its next send once the receiver is gone.
    match reader {
        Ok(handle) => {
            let _ = handle.join();
        }
        Err(e) => {
            stats.failed_inputs += 1;
            let _ = sink(Item::InputFailed {
                label: "<all inputs>".into(),
                reason: format!("cannot start the reader thread: {e}"),
            });
        }
    }
    stats
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

fn read_batches(specs: &[InputSpec], opts: &ReadOptions, tx: &mpsc::SyncSender<Batch>) {
    for spec in expand(specs) {
        let records = match spec.and_then(|s| open_records(&s, opts).map(|r| (s, r))) {
            Ok((s, records)) => {
                let started = Item::InputStarted {
                    label: s.label().to_string(),
                };
                if tx.send(Batch::Marker(started)).is_err() {
                    return;
                }
                records
            }
            Err(e) => {
                let failed = Item::InputFailed {
                    label: e.label.to_string(),
                    reason: e.reason,
                };
                if tx.send(Batch::Marker(failed)).is_err() {
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
            if size >= BATCH_ATTEMPTS {
                size = 0;
                if tx.send(Batch::Records(std::mem::take(&mut batch))).is_err() {
                    return;
                }
            }
        }
        if !batch.is_empty() && tx.send(Batch::Records(batch)).is_err() {
            return;
        }
    }
}
