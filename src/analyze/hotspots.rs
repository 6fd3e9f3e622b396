//! Counting repeated queries in bounded memory.
//!
//! Every distinct fingerprint gets a counter until there are more than
//! twice [`QueryCounter::capacity`] of them; then only the `capacity` most
//! hit are kept and the counter remembers the largest count it dropped.
//! While nothing was dropped ([`QueryCounter::is_exact`]) all counts are
//! exact; afterwards any query hit more often than that remembered count is
//! still listed, and counts may be short by at most that much.

use foldhash::{HashMap, HashMapExt};

use crate::model::TracePos;
use crate::pyjson::PyStr;

/// Fingerprints tracked exactly before the least hit are dropped.
pub const DEFAULT_CAPACITY: usize = 10_000;

/// What a query is counted under.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct QueryKey {
    pub tool: String,
    /// Upstream's fingerprint (exact duplicates) or its folded form
    /// (near-duplicates).
    pub key: PyStr,
}

/// How often one query was repeated.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct QueryStats {
    /// Attempts that rolled back on it.
    pub rolled_back: u64,
    /// Attempts that let it through (at the rollback limit, or, for
    /// near-duplicates, because upstream's exact match missed it).
    pub allowed: u64,
    /// Traces in which it was hit.
    pub traces: u64,
    /// The query as first written, for display.
    pub example: PyStr,
    /// Position of the first trace that hit it (orders ties stably).
    pub first_trace: TracePos,
    /// Serial number (within one counter's run of adds) of the last trace
    /// counted in `traces`; `u64::MAX` for none.
    #[serde(skip, default = "no_trace")]
    last_trace: u64,
}

/// Equal figures: the bookkeeping of the trace being added is not one.
impl PartialEq for QueryStats {
    fn eq(&self, o: &QueryStats) -> bool {
        (
            self.rolled_back,
            self.allowed,
            self.traces,
            &self.example,
            &self.first_trace,
        ) == (
            o.rolled_back,
            o.allowed,
            o.traces,
            &o.example,
            &o.first_trace,
        )
    }
}

/// The query as shown: the fingerprint without its `<tool>_` prefix.
pub fn query_text(key: &QueryKey, stats: &QueryStats) -> String {
    let text = stats.example.to_string_lossy();
    let prefix = format!("{}_", key.tool);
    match text.strip_prefix(prefix.as_str()).unwrap_or(&text) {
        "" => "(empty)".to_string(),
        query => query.to_string(),
    }
}

impl QueryStats {
    /// Attempts that hit it, rolled back or let through.
    pub fn count(&self) -> u64 {
        self.rolled_back + self.allowed
    }
}

/// Bounded counter of repeated queries; mergeable.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueryCounter {
    capacity: usize,
    #[serde(with = "entry_list")]
    entries: HashMap<QueryKey, QueryStats>,
    /// Largest count ever dropped; 0 while every count is exact.
    dropped_max: u64,
}

impl Default for QueryCounter {
    fn default() -> Self {
        QueryCounter::new(DEFAULT_CAPACITY)
    }
}

impl QueryCounter {
    pub fn new(capacity: usize) -> QueryCounter {
        QueryCounter {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            dropped_max: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether every count is exact (nothing was ever dropped).
    pub fn is_exact(&self) -> bool {
        self.dropped_max == 0
    }

    /// Counts one attempt of a trace hitting `key`: `trace` tells traces
    /// apart while adding, `at` is the trace's position. Call at most once
    /// per attempt and key; all hits of one trace must go to one counter.
    pub fn add(
        &mut self,
        key: QueryKey,
        example: &PyStr,
        allowed: bool,
        trace: u64,
        at: &TracePos,
    ) {
        let entry = self.entries.entry(key).or_insert_with(|| QueryStats {
            rolled_back: 0,
            allowed: 0,
            traces: 0,
            example: example.clone(),
            first_trace: at.clone(),
            last_trace: u64::MAX,
        });
        if allowed {
            entry.allowed += 1;
        } else {
            entry.rolled_back += 1;
        }
        if entry.last_trace != trace {
            entry.last_trace = trace;
            entry.traces += 1;
        }
        self.bound();
    }

    pub fn merge(&mut self, other: QueryCounter) {
        self.dropped_max = self.dropped_max.max(other.dropped_max);
        for (key, theirs) in other.entries {
            match self.entries.get_mut(&key) {
                None => {
                    // Merges happen between traces: no trace is in progress.
                    let theirs = QueryStats {
                        last_trace: u64::MAX,
                        ..theirs
                    };
                    self.entries.insert(key, theirs);
                }
                Some(ours) => {
                    ours.rolled_back += theirs.rolled_back;
                    ours.allowed += theirs.allowed;
                    ours.traces += theirs.traces;
                    // The earlier trace's spelling; at one position, the least.
                    if (&theirs.first_trace, &theirs.example) < (&ours.first_trace, &ours.example) {
                        ours.first_trace = theirs.first_trace;
                        ours.example = theirs.example;
                    }
                }
            }
        }
        self.bound();
    }

    /// Total attempts counted (over the queries still tracked).
    pub fn total(&self) -> u64 {
        self.entries.values().map(QueryStats::count).sum()
    }

    /// Distinct queries tracked.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `n` most hit queries: most attempts first, then most traces,
    /// then first seen.
    pub fn top(&self, n: usize) -> Vec<(&QueryKey, &QueryStats)> {
        let mut all: Vec<_> = self.entries.iter().collect();
        all.sort_by(|(ka, a), (kb, b)| rank(a).cmp(&rank(b)).then_with(|| ka.cmp(kb)));
        all.truncate(n);
        all
    }

    /// Drops the least hit entries once there are twice too many.
    fn bound(&mut self) {
        if self.entries.len() <= 2 * self.capacity {
            return;
        }
        let mut all: Vec<(QueryKey, QueryStats)> = self.entries.drain().collect();
        all.sort_by(|(ka, a), (kb, b)| rank(a).cmp(&rank(b)).then_with(|| ka.cmp(kb)));
        for (_, dropped) in all.drain(self.capacity..) {
            self.dropped_max = self.dropped_max.max(dropped.count());
        }
        self.entries.extend(all);
    }
}

/// Sort key: most hit first, then most traces, then first seen.
fn rank(s: &QueryStats) -> (std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, &TracePos) {
    (
        std::cmp::Reverse(s.count()),
        std::cmp::Reverse(s.traces),
        &s.first_trace,
    )
}

fn no_trace() -> u64 {
    u64::MAX
}

/// The entries as a list sorted by key (JSON maps need string keys; sorted,
/// so equal counters write equal bytes).
mod entry_list {
    use super::{HashMap, QueryKey, QueryStats};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        entries: &HashMap<QueryKey, QueryStats>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut list: Vec<(&QueryKey, &QueryStats)> = entries.iter().collect();
        list.sort_by(|a, b| a.0.cmp(b.0));
        list.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<HashMap<QueryKey, QueryStats>, D::Error> {
        let list: Vec<(QueryKey, QueryStats)> = Vec::deserialize(d)?;
        Ok(list.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(t: u64) -> TracePos {
        TracePos {
            file: "f".into(),
            line: t,
        }
    }

    fn key(q: &str) -> QueryKey {
        QueryKey {
            tool: "google_search".into(),
            key: PyStr::from(q),
        }
    }

    #[test]
    fn counts_attempts_and_traces() {
        let mut c = QueryCounter::new(10);
        let q = PyStr::from("google_search_x");
        c.add(key("x"), &q, false, 1, &pos(1));
        c.add(key("x"), &q, true, 1, &pos(1));
        c.add(key("x"), &q, false, 2, &pos(2));
        c.add(key("y"), &q, false, 2, &pos(2));
        let top = c.top(1);
        assert_eq!(top[0].0, &key("x"));
        assert_eq!(
            (
                top[0].1.count(),
                top[0].1.rolled_back,
                top[0].1.allowed,
                top[0].1.traces
            ),
            (3, 2, 1, 2)
        );
        assert!(c.is_exact());
        assert_eq!(c.total(), 4);
    }

    #[test]
    fn merge_equals_one_counter() {
        let q = PyStr::from("q");
        let mut whole = QueryCounter::new(10);
        let (mut a, mut b) = (QueryCounter::new(10), QueryCounter::new(10));
        for (t, k) in [(1, "a"), (1, "b"), (2, "a"), (3, "a"), (3, "c")] {
            whole.add(key(k), &q, false, t, &pos(t));
            if t < 3 { &mut a } else { &mut b }.add(key(k), &q, false, t, &pos(t));
        }
        b.merge(a);
        assert_eq!(b.top(10).len(), 3);
        for ((ka, sa), (kb, sb)) in b.top(10).into_iter().zip(whole.top(10)) {
            assert_eq!(
                (ka, sa.count(), sa.traces, &sa.first_trace),
                (kb, sb.count(), sb.traces, &sb.first_trace)
            );
        }
    }

    #[test]
    fn stays_bounded_and_keeps_heavy_hitters() {
        let q = PyStr::from("q");
        let mut c = QueryCounter::new(5);
        for t in 0..100u64 {
            c.add(key("hot"), &q, false, t, &pos(t));
            c.add(key(&format!("cold{t}")), &q, false, t, &pos(t));
        }
        assert!(c.len() <= 10);
        assert!(!c.is_exact());
        assert_eq!(c.top(1)[0].0, &key("hot"));
        assert_eq!(c.top(1)[0].1.count(), 100);
    }
}
