//! Rankings: keeping the few largest items of a stream in bounded memory
//! ([`TopK`]), and the items `analyze` ranks (the longest streaks, the
//! worst traces).

use std::cmp::Reverse;
use std::sync::Arc;

use crate::detect::Reason;
use crate::metrics::{EarlyEnd, StreakEnd};
use crate::model::TracePos;

/// The `capacity` greatest items seen, greatest first. Items order
/// themselves (`Ord`), ties included, so the kept set is the same whatever
/// order items arrive in or however partial rankings are merged.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TopK<T> {
    capacity: usize,
    /// Sorted, greatest first; never longer than `capacity`.
    items: Vec<T>,
}

impl<T: Ord> TopK<T> {
    pub fn new(capacity: usize) -> TopK<T> {
        TopK {
            capacity,
            items: Vec::new(),
        }
    }

    pub fn offer(&mut self, item: T) {
        if self.items.len() == self.capacity && self.items.last().is_none_or(|least| &item <= least)
        {
            return;
        }
        let at = self.items.partition_point(|kept| kept > &item);
        self.items.insert(at, item);
        self.items.truncate(self.capacity);
    }

    pub fn merge(&mut self, other: TopK<T>) {
        for item in other.items {
            self.offer(item);
        }
    }

    /// Whether an item would be kept, asked before building it:
    /// `beats_least` compares the candidate with the least item kept, and
    /// is only called when the ranking is full.
    pub fn admits(&self, beats_least: impl FnOnce(&T) -> bool) -> bool {
        match self.items.last() {
            _ if self.capacity == 0 => false,
            Some(least) if self.items.len() == self.capacity => beats_least(least),
            _ => true,
        }
    }

    /// Greatest first.
    pub fn items(&self) -> &[T] {
        &self.items
    }
}

/// A streak worth jumping to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StreakRecord {
    pub length: u32,
    /// Where its trace starts.
    pub at: TracePos,
    pub trace_id: String,
    pub file: Arc<str>,
    pub session: String,
    pub start_index: usize,
    pub start_line: u64,
    /// The reasons of its rollbacks (`length` of them).
    pub reasons: Vec<Reason>,
    pub end: StreakEnd,
    /// What met the limit, when the limit ended it (see [`Streak`]).
    pub limit_reason: Option<Reason>,
}

/// A longest-streak ranking key: longer first, then earlier trace, line,
/// session and index.
pub(super) type StreakRank<'a> = (
    u32,
    Reverse<&'a TracePos>,
    Reverse<u64>,
    Reverse<&'a str>,
    Reverse<usize>,
);

impl StreakRecord {
    /// A total order (every line of a task log or ATIF document is line 1,
    /// so session and index break the remaining ties): the kept streaks
    /// then never depend on how partial rankings were merged.
    pub(super) fn rank(&self) -> StreakRank<'_> {
        (
            self.length,
            Reverse(&self.at),
            Reverse(self.start_line),
            Reverse(&self.session),
            Reverse(self.start_index),
        )
    }
}

impl Ord for StreakRecord {
    /// By [`StreakRecord::rank`]; records of two traces at one position
    /// (several traces of one document) are settled by what they show.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        fn shown(
            r: &StreakRecord,
        ) -> (
            Reverse<&String>,
            Reverse<&Vec<Reason>>,
            StreakEnd,
            Option<Reason>,
        ) {
            (
                Reverse(&r.trace_id),
                Reverse(&r.reasons),
                r.end,
                r.limit_reason,
            )
        }
        self.rank()
            .cmp(&other.rank())
            .then_with(|| shown(self).cmp(&shown(other)))
    }
}

impl PartialOrd for StreakRecord {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A trace in the "worst traces" ranking.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceRecord {
    pub rollbacks: u64,
    /// Where the trace starts.
    pub at: TracePos,
    pub trace_id: String,
    pub file: Arc<str>,
    pub attempts: u64,
    pub reached: u64,
    /// The most frequent rollback reason (ties: the first in [`Reason::ALL`]).
    pub top_reason: Option<Reason>,
    pub longest_streak: u32,
    /// Why the main agent's loop stopped early, if it did.
    pub ended_early: Option<EarlyEnd>,
    /// Its attempts, when the aggregate keeps timelines (see
    /// [`super::Aggregate::keeping_timelines`]); partial reports carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Box<super::worst_timeline::Timeline>>,
}

impl TraceRecord {
    /// Rollbacks / reached attempts.
    pub fn rate(&self) -> Option<f64> {
        crate::metrics::tally::ratio(self.rollbacks, self.reached)
    }
}

impl Ord for TraceRecord {
    /// More rollbacks first, then the earlier trace; two traces at one
    /// position (several traces of one document) are settled by what the
    /// ranking shows of them.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        type Key<'r> = (
            u64,
            Reverse<&'r TracePos>,
            Reverse<&'r String>,
            u64,
            u64,
            Option<Reason>,
            u32,
            Option<EarlyEnd>,
        );
        fn key(r: &TraceRecord) -> Key<'_> {
            (
                r.rollbacks,
                Reverse(&r.at),
                Reverse(&r.trace_id),
                r.attempts,
                r.reached,
                r.top_reason,
                r.longest_streak,
                r.ended_early,
            )
        }
        key(self).cmp(&key(other))
    }
}

impl PartialOrd for TraceRecord {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_largest_in_order() {
        let mut top = TopK::new(3);
        for x in [5, 1, 9, 3, 7, 9] {
            top.offer(x);
        }
        assert_eq!(top.items(), &[9, 9, 7]);
    }

    #[test]
    fn merging_equals_one_pass() {
        let xs = [4, 8, 15, 16, 23, 42, 1, 2];
        let mut whole = TopK::new(4);
        xs.iter().for_each(|&x| whole.offer(x));
        let (mut a, mut b) = (TopK::new(4), TopK::new(4));
        xs[..3].iter().for_each(|&x| a.offer(x));
        xs[3..].iter().for_each(|&x| b.offer(x));
        b.merge(a);
        assert_eq!(b, whole);
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut top = TopK::new(0);
        top.offer(1);
        assert!(top.items().is_empty());
    }
}
