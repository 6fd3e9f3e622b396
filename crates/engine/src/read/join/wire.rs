//! The join in a run over many inputs: the recordings are read first and
//! indexed ([`scan`](super::scan)), then read in their turn after every
//! other input, so that what they hold that no task log claimed is read
//! as a recording alone and what a task log took is not counted twice.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use super::scan::{scan, Scanned};
use crate::model::Origin;
use crate::read::error::OpenError;
use crate::read::source::InputSpec;
use crate::read::{BadLine, Record};

/// The recordings of a run, for its task logs to join with.
#[derive(Debug)]
pub struct Joining {
    scanned: Scanned,
}

impl Joining {
    /// Scans the inputs for recordings (only when there is more than one
    /// input: a recording alone is read as such). Returns the inputs to
    /// read, the recordings moved last, and the join, when there is one.
    pub fn prepare(
        inputs: Vec<Result<InputSpec, OpenError>>,
        trace_header: &str,
    ) -> (Vec<Result<InputSpec, OpenError>>, Option<Arc<Joining>>) {
        if inputs.len() < 2 {
            return (inputs, None);
        }
        let Some(mut scanned) = scan(&inputs, trace_header) else {
            return (inputs, None);
        };
        let recordings: HashSet<usize> = scanned.recordings.iter().copied().collect();
        let (mut first, mut last) = (Vec::new(), Vec::new());
        for (i, spec) in inputs.into_iter().enumerate() {
            if recordings.contains(&i) {
                last.push(spec);
            } else {
                first.push(spec);
            }
        }
        let n = first.len();
        scanned.recordings = (n..n + last.len()).collect();
        first.extend(last);
        (first, Some(Arc::new(Joining { scanned })))
    }

    /// Whether the input at `position` (in the order returned by
    /// [`Joining::prepare`]) is a recording.
    pub fn is_recording(&self, position: usize) -> bool {
        self.scanned.recordings.contains(&position)
    }

    /// An input's records, joined: a task log's trace takes its run's
    /// text (its disagreements follow it as problems); a recording's
    /// records that belong to a run a task log took are left out.
    pub fn records(
        self: &Arc<Self>,
        inner: Box<dyn Iterator<Item = Record> + Send>,
        is_recording: bool,
    ) -> Joined {
        let taken = if is_recording {
            self.scanned.index.claimed_origins()
        } else {
            HashSet::new()
        };
        Joined {
            inner,
            joining: self.clone(),
            is_recording,
            taken,
            pending: VecDeque::new(),
        }
    }
}

/// The records of one input, joined.
pub struct Joined {
    inner: Box<dyn Iterator<Item = Record> + Send>,
    joining: Arc<Joining>,
    is_recording: bool,
    /// The recording's calls that task logs took.
    taken: HashSet<Origin>,
    pending: VecDeque<Record>,
}

impl Iterator for Joined {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Some(r);
            }
            let record = self.inner.next()?;
            let index = &self.joining.scanned.index;
            match record {
                Record::Trace(mut t) if t.call_log.is_some() => {
                    let origin = t.attempts.first().map(|a| a.origin.clone());
                    let problems = super::join(&mut t, index);
                    self.pending.push_back(Record::Trace(t));
                    if let Some(origin) = origin {
                        self.pending.extend(problems.into_iter().map(|reason| {
                            Record::Bad(BadLine {
                                origin: origin.clone(),
                                reason,
                            })
                        }));
                    }
                }
                // A recording's trace keeps the attempts no task log took
                // (each attempt stands at its first call's line).
                Record::Trace(mut t) if self.is_recording && !self.taken.is_empty() => {
                    let before = t.attempts.len();
                    t.attempts.retain(|a| !self.taken.contains(&a.origin));
                    match t.attempts.len() {
                        0 => {}
                        n if n == before => return Some(Record::Trace(t)),
                        _ => {
                            t.not_attempts.clear();
                            return Some(Record::Trace(t));
                        }
                    }
                }
                Record::Bad(b) if self.is_recording && self.taken.contains(&b.origin) => {}
                Record::NoAttempt(_) if self.is_recording && !self.taken.is_empty() => {}
                other => return Some(other),
            }
        }
    }
}
