//! One side's per-trace rows, packed: `diff` keeps one row per trace (or
//! per trace and group) of each side, so a row must cost tens of bytes,
//! not hundreds (docs/limits.md). Every row lives in one byte arena: the
//! trace id (length, then its bytes), a bit mask of the non-zero counts
//! (a varint too: one bit per [`COUNT`] slot, up to 128),
//! then each non-zero count as a LEB128 varint. A trace of a few attempts
//! takes ~5 bytes of counts plus its id; one `u64` offset per row gives
//! the bootstrap random access. Decoding is exact: the counts are `u64`
//! in and out.

use super::counts::{Counts, COUNT};

/// The rows of one side (or one group of it), in arrival order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RowSet {
    bytes: Vec<u8>,
    starts: Vec<u64>,
}

// The mask of the non-zero counts is a `u128`.
const _: () = assert!(COUNT <= 128, "a row's mask holds one bit per count");

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// [`put_varint`] for the 128-bit mask.
fn put_varint128(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads one varint at `*at`, moving `*at` past it. Only bytes written by
/// [`put_varint`] are ever read here.
#[inline]
fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

/// [`get_varint`] for the 128-bit mask.
#[inline]
fn get_varint128(bytes: &[u8], at: &mut usize) -> u128 {
    let mut v = 0u128;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u128::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

impl RowSet {
    /// Appends one row.
    pub fn push(&mut self, trace_id: &str, counts: &Counts) {
        self.starts.push(self.bytes.len() as u64);
        put_varint(&mut self.bytes, trace_id.len() as u64);
        self.bytes.extend_from_slice(trace_id.as_bytes());
        let mask = counts
            .0
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .fold(0u128, |m, (i, _)| m | 1 << i);
        put_varint128(&mut self.bytes, mask);
        for &c in counts.0.iter().filter(|&&c| c != 0) {
            put_varint(&mut self.bytes, c);
        }
    }

    /// Appends every row of `other`, in order.
    pub fn append(&mut self, other: &RowSet) {
        let base = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&other.bytes);
        self.starts.extend(other.starts.iter().map(|s| s + base));
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Where row `i`'s id starts and ends.
    #[inline]
    fn id_span(&self, i: usize) -> (usize, usize) {
        let mut at = self.starts[i] as usize;
        let len = get_varint(&self.bytes, &mut at) as usize;
        (at, at + len)
    }

    /// Row `i`'s trace id, as bytes (what ids are compared by).
    pub fn id_bytes(&self, i: usize) -> &[u8] {
        let (from, to) = self.id_span(i);
        &self.bytes[from..to]
    }

    /// Row `i`'s trace id (stored from a `&str`, so always valid UTF-8).
    pub fn id(&self, i: usize) -> String {
        String::from_utf8_lossy(self.id_bytes(i)).into_owned()
    }

    /// Adds row `i`'s counts to `sum`.
    #[inline]
    pub fn add_to(&self, i: usize, sum: &mut Counts) {
        let (_, mut at) = self.id_span(i);
        let mut mask = get_varint128(&self.bytes, &mut at);
        while mask != 0 {
            let f = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let v = get_varint(&self.bytes, &mut at);
            if let Some(slot) = sum.0.get_mut(f) {
                *slot += v;
            }
        }
    }

    /// Row `i`'s counts.
    pub fn counts(&self, i: usize) -> Counts {
        let mut c = Counts([0; COUNT]);
        self.add_to(i, &mut c);
        c
    }

    /// The same rows in a canonical order: by trace id, then by counts
    /// (the rows of one side or group share their group). Built row by row
    /// into a new arena, as the old one is read.
    pub fn sorted(self) -> RowSet {
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            self.id_bytes(a)
                .cmp(self.id_bytes(b))
                .then_with(|| self.counts(a).0.cmp(&self.counts(b).0))
        });
        let mut out = RowSet {
            bytes: Vec::with_capacity(self.bytes.len()),
            starts: Vec::with_capacity(self.starts.len()),
        };
        for i in order {
            let i = i as usize;
            let from = self.starts[i] as usize;
            let to = self
                .starts
                .get(i + 1)
                .map_or(self.bytes.len(), |&s| s as usize);
            out.starts.push(out.bytes.len() as u64);
            out.bytes.extend_from_slice(&self.bytes[from..to]);
        }
        out
    }

    /// Bytes held (arena and offsets), for docs and tests.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + 8 * self.starts.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_exactly() {
        let mut a = Counts::default();
        a.0[0] = 1;
        a.0[3] = 127;
        a.0[4] = 128;
        a.0[COUNT - 1] = u64::MAX;
        let b = Counts::default();
        let mut c = Counts::default();
        c.0[12] = u64::from(u32::MAX) + 5;
        let mut set = RowSet::default();
        set.push("t\u{e9}", &a);
        set.push("", &b);
        let mut more = RowSet::default();
        more.push("x", &c);
        set.append(&more);
        assert_eq!(set.len(), 3);
        assert_eq!(
            (set.id(0), set.id(1), set.id(2)),
            ("t\u{e9}".into(), String::new(), "x".into())
        );
        assert_eq!((set.counts(0), set.counts(1), set.counts(2)), (a, b, c));
        let mut sum = c;
        set.add_to(1, &mut sum);
        assert_eq!(sum, c);
    }

    #[test]
    fn a_tiny_trace_takes_a_few_bytes() {
        let mut c = Counts::default();
        c.0[..3].fill(1);
        let mut set = RowSet::default();
        set.push("t1234567", &c);
        // id length + 8 id bytes + mask + three counts.
        assert_eq!(set.bytes.len(), 1 + 8 + 1 + 3);
    }
}
