//! Keeping the few largest items of a stream in bounded memory.

/// The `capacity` greatest items seen, greatest first. Items order
/// themselves (`Ord`), ties included, so the kept set is the same whatever
/// order items arrive in or however partial rankings are merged.
#[derive(Debug, Clone, PartialEq)]
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
