//! Where in a session things go wrong: attempts and rollbacks by the
//! attempt's position within its session (the verdict's `index`).
//!
//! Every session that reaches position `k` also has positions `0..k`, so
//! the attempt counts never rise with the index; the rate at a late index
//! rests on the sessions that got that far.

/// Positions counted one by one; later attempts are pooled at this index.
pub const MAX_INDEX: usize = 500;

/// Attempts and rollbacks per session index; mergeable, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByIndex {
    /// `[attempts, rollbacks]` at index `i` (the last slot may pool later ones).
    counts: Vec<[u64; 2]>,
}

impl ByIndex {
    /// Counts one attempt at session position `index`.
    pub fn add(&mut self, index: usize, rolled_back: bool) {
        let slot = index.min(MAX_INDEX);
        if self.counts.len() <= slot {
            self.counts.resize(slot + 1, [0, 0]);
        }
        self.counts[slot][0] += 1;
        self.counts[slot][1] += u64::from(rolled_back);
    }

    pub fn merge(&mut self, other: &ByIndex) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), [0, 0]);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            a[0] += b[0];
            a[1] += b[1];
        }
    }

    /// `(index, attempts, rollbacks)` for every index up to the last one
    /// seen; the entry at [`MAX_INDEX`] holds that index and all later ones.
    pub fn rows(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, [attempts, rollbacks])| (i, *attempts, *rollbacks))
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_index_and_pools_the_tail() {
        let mut a = ByIndex::default();
        a.add(0, false);
        a.add(1, true);
        a.add(MAX_INDEX + 7, true);
        let rows: Vec<_> = a.rows().collect();
        assert_eq!(rows.len(), MAX_INDEX + 1);
        assert_eq!(rows[0], (0, 1, 0));
        assert_eq!(rows[1], (1, 1, 1));
        assert_eq!(rows[2], (2, 0, 0));
        assert_eq!(rows[MAX_INDEX], (MAX_INDEX, 1, 1));
    }

    #[test]
    fn merge_adds_and_extends() {
        let (mut a, mut b, mut whole) =
            (ByIndex::default(), ByIndex::default(), ByIndex::default());
        for (i, r) in [(0, false), (3, true), (1, true), (3, false)] {
            whole.add(i, r);
            if i < 2 { &mut a } else { &mut b }.add(i, r);
        }
        a.merge(&b);
        assert_eq!(a, whole);
    }
}
