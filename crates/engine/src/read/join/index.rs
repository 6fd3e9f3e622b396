//! The recordings' calls, grouped by run (one value of the session header,
//! `{task_id}-{uuid4}`) and indexed by task id, for the task logs to claim.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::model::Origin;
use crate::read::clock;
use crate::read::recording::RecordedCall;

/// One run of a task: every call that carried its header, in the order
/// the proxy received them.
#[derive(Debug)]
pub struct Run {
    /// The header's value.
    pub header: Arc<str>,
    pub calls: Vec<RecordedCall>,
    /// When its first call arrived, in seconds since the epoch (UTC).
    pub first: Option<f64>,
    /// When its last call ended.
    pub last: Option<f64>,
}

/// The runs of every recording read, by task id.
#[derive(Debug, Default)]
pub struct Index {
    runs: HashMap<String, Vec<Arc<Run>>>,
    /// Headers of the runs a task log took.
    claimed: Mutex<HashSet<Arc<str>>>,
    /// Calls without the header (kept for the recording read alone).
    pub unlabelled: usize,
}

/// The task id of a header `{task_id}-{uuid4}`: what is before the last
/// 37 characters when they are `-` and a uuid; else the whole value.
pub fn task_id(header: &str) -> &str {
    let n = header.len();
    if n > 37 && header.is_char_boundary(n - 37) {
        let (task, tail) = header.split_at(n - 37);
        let uuid = &tail[1..];
        let dashes = [8, 13, 18, 23];
        let is_uuid = tail.starts_with('-')
            && uuid.bytes().enumerate().all(|(i, b)| {
                if dashes.contains(&i) {
                    b == b'-'
                } else {
                    b.is_ascii_hexdigit()
                }
            });
        if is_uuid && !task.is_empty() {
            return task;
        }
    }
    header
}

/// The task log's own time (`2025-06-01 09:00:01`, upstream's
/// `get_utc_plus_8_time`: UTC+8 local time, no zone) in seconds since the epoch.
pub fn utc_plus_8(local: &str) -> Option<f64> {
    let t = local.trim();
    if t.len() < 19 {
        return None;
    }
    clock::seconds(&format!("{}+08:00", &t[..19]))
}

impl Index {
    /// Groups calls by run.
    pub fn new(calls: Vec<RecordedCall>) -> Index {
        let mut by_header: HashMap<Arc<str>, Vec<RecordedCall>> = HashMap::new();
        let mut unlabelled = 0;
        for c in calls {
            match c.session.clone() {
                Some(h) => by_header.entry(h).or_default().push(c),
                None => unlabelled += 1,
            }
        }
        let mut runs: HashMap<String, Vec<Arc<Run>>> = HashMap::new();
        for (header, mut calls) in by_header {
            calls.sort_by_key(|c| c.call);
            let starts = calls
                .iter()
                .filter_map(|c| c.started.as_deref().and_then(clock::seconds));
            let first = starts.clone().reduce(f64::min);
            let last = calls
                .iter()
                .filter_map(|c| {
                    let s = c.started.as_deref().and_then(clock::seconds)?;
                    Some(s + c.seconds.unwrap_or(0.0))
                })
                .reduce(f64::max);
            let run = Run {
                header: header.clone(),
                calls,
                first,
                last,
            };
            runs.entry(task_id(&header).to_string())
                .or_default()
                .push(Arc::new(run));
        }
        for list in runs.values_mut() {
            list.sort_by(|a, b| {
                a.first
                    .partial_cmp(&b.first)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        Index {
            runs,
            claimed: Mutex::default(),
            unlabelled,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The run of `task_id` whose calls fall within the task log's start
    /// and end (UTC+8 local times, to the second), claimed; with a note
    /// when the choice is not certain. `None` when the index has no run of
    /// that task, or every one is taken.
    pub fn claim(
        &self,
        task_id: &str,
        start: Option<&str>,
        end: Option<&str>,
    ) -> Option<(Arc<Run>, Option<String>)> {
        let runs = self.runs.get(task_id)?;
        let mut claimed = self.claimed.lock().ok()?;
        let free: Vec<&Arc<Run>> = runs
            .iter()
            .filter(|r| !claimed.contains(&r.header))
            .collect();
        let (start, end) = (start.and_then(utc_plus_8), end.and_then(utc_plus_8));
        // The log's times are whole seconds: a second's slack on each side.
        let within = |r: &Run| match (start, end, r.first) {
            (Some(s), Some(e), Some(f)) => f >= s - 1.0 && f <= e + 1.0,
            (Some(s), None, Some(f)) => f >= s - 1.0,
            _ => false,
        };
        let fitting: Vec<&Arc<Run>> = free.iter().copied().filter(|r| within(r)).collect();
        let (run, note) = match (fitting.as_slice(), free.as_slice()) {
            ([one], _) => (*one, None),
            ([], [one]) => {
                let why = match (start, one.first) {
                    (Some(_), Some(_)) => {
                        "its calls fall outside the task log's start and end times"
                    }
                    _ => "the task log or the recording gives no time to check it by",
                };
                (*one, Some(format!("recording run {} taken as this task log's, the only run of task {task_id}, though {why}", one.header)))
            }
            ([], []) => return None,
            (_, _) => {
                // Several fit (or none does among several): the one that
                // started nearest the log's start.
                let pool = if fitting.is_empty() { &free } else { &fitting };
                let best = pool
                    .iter()
                    .copied()
                    .min_by(|a, b| {
                        let d = |r: &Run| match (start, r.first) {
                            (Some(s), Some(f)) => (f - s).abs(),
                            _ => f64::MAX,
                        };
                        d(a).partial_cmp(&d(b)).unwrap_or(std::cmp::Ordering::Equal)
                    })
                    .unwrap_or(pool[0]);
                let names: Vec<&str> = pool.iter().map(|r| &*r.header).collect();
                (best, Some(format!(
                    "ambiguous: {} runs of task {task_id} in the recording could be this task log's ({}); took {}, the one that started nearest the log's start time",
                    pool.len(),
                    names.join(", "),
                    best.header
                )))
            }
        };
        claimed.insert(run.header.clone());
        Some((run.clone(), note))
    }

    /// Whether a task log took this run.
    pub fn is_claimed(&self, header: &str) -> bool {
        self.claimed
            .lock()
            .map(|c| c.contains(header))
            .unwrap_or(false)
    }

    /// The origins of every call of the runs taken.
    pub fn claimed_origins(&self) -> HashSet<Origin> {
        let claimed = match self.claimed.lock() {
            Ok(c) => c.clone(),
            Err(_) => return HashSet::new(),
        };
        self.runs
            .values()
            .flatten()
            .filter(|r| claimed.contains(&r.header))
            .flat_map(|r| r.calls.iter().map(|c| c.origin.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_id_is_the_header_without_its_uuid() {
        assert_eq!(
            task_id("tld-71-0003-3f1c2a4e-9b7d-4c1e-8f00-0123456789ab"),
            "tld-71-0003"
        );
        assert_eq!(task_id("no-uuid-here"), "no-uuid-here");
        assert_eq!(
            task_id("-3f1c2a4e-9b7d-4c1e-8f00-0123456789ab"),
            "-3f1c2a4e-9b7d-4c1e-8f00-0123456789ab"
        );
    }

    #[test]
    fn upstream_local_time_is_utc_plus_8() {
        assert_eq!(
            utc_plus_8("2025-06-01 09:00:01"),
            clock::seconds("2025-06-01T01:00:01Z")
        );
        assert_eq!(utc_plus_8("yesterday"), None);
    }
}
