//! The text being repaired, indexed by code point like a Python `str`.
//!
//! json_repair reads `json_str[i]` everywhere, scans forward for delimiters
//! over and over, and once in a while inserts a `{` in the middle of the text.
//! This type keeps all of that cheap:
//!
//! - the characters live in a gap buffer, so an insertion near the cursor
//!   does not move the whole tail;
//! - forward scans ([`Text::find_unescaped`], [`Text::skip_spaces`])
//!   remember the last few spans they crossed, so a stretch of text is not
//!   rescanned for every character of a long string;
//! - the "skip quotes two by two" walk of array strings uses a precomputed
//!   index ([`super::pairs`]).

use super::pairs::PairIndex;
use super::unicode::is_space;

/// The characters `skip_to_character` looks for: one, or two (`[c, "]"]`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Targets(pub char, pub Option<char>);

impl Targets {
    pub fn matches(self, c: char) -> bool {
        c == self.0 || Some(c) == self.1
    }
}

/// A gap buffer of characters.
pub(super) struct Chars {
    buf: Vec<char>,
    gap_start: usize,
    gap_len: usize,
}

impl Chars {
    pub fn len(&self) -> usize {
        self.buf.len() - self.gap_len
    }

    /// The character at `pos`, if `pos < len`.
    pub fn get(&self, pos: usize) -> Option<char> {
        if pos < self.gap_start {
            self.buf.get(pos).copied()
        } else {
            self.buf.get(pos.checked_add(self.gap_len)?).copied()
        }
    }

    /// Python's `json_str[pos]`: a negative position counts from the end;
    /// `None` where Python raises `IndexError`.
    pub fn at(&self, pos: isize) -> Option<char> {
        let len = self.len() as isize;
        let pos = if pos < 0 { pos + len } else { pos };
        if pos < 0 {
            None
        } else {
            self.get(pos as usize)
        }
    }

    /// Whether `json_str[pos - 1] == "\\"` (position -1 is the last character).
    pub fn escaped(&self, pos: usize) -> bool {
        self.at(pos as isize - 1) == Some('\\')
    }

    fn insert(&mut self, pos: usize, c: char) {
        let pos = pos.min(self.len());
        if self.gap_len == 0 {
            let grow = self.buf.len().max(16);
            let filler = std::iter::repeat_n('\0', grow);
            self.buf.splice(self.gap_start..self.gap_start, filler);
            self.gap_len = grow;
        }
        if pos < self.gap_start {
            // Move buf[pos..gap_start] to the end of the gap.
            self.buf
                .copy_within(pos..self.gap_start, pos + self.gap_len);
        } else if pos > self.gap_start {
            let from = self.gap_start + self.gap_len;
            self.buf
                .copy_within(from..pos + self.gap_len, self.gap_start);
        }
        self.gap_start = pos;
        self.buf[pos] = c;
        self.gap_start += 1;
        self.gap_len -= 1;
    }
}

/// What one scan learned: no hit in `start..end`, and `end` is the hit (or
/// the end of the text). `skipped` lists the escaped targets in the span.
#[derive(Debug)]
struct Span {
    start: usize,
    end: usize,
    skipped: Vec<usize>,
}

/// The few most recent spans of one kind of scan.
#[derive(Default)]
struct SpanCache {
    spans: Vec<Span>,
}

const SPANS_KEPT: usize = 4;

/// What a scan sees at one position.
enum Probe {
    Hit,
    Escaped,
    Pass,
}

impl SpanCache {
    /// A character was inserted at `pos`; spans covering it are dropped when
    /// `drop_covering` (the insertion may create or reveal a hit there).
    fn shift(&mut self, pos: usize, drop_covering: bool) {
        if drop_covering {
            self.spans.retain(|s| !(s.start <= pos && pos <= s.end));
        }
        for span in &mut self.spans {
            if span.start > pos {
                span.start += 1;
            }
            if span.end >= pos {
                span.end += 1;
            }
            let from = span.skipped.partition_point(|&p| p < pos);
            for p in &mut span.skipped[from..] {
                *p += 1;
            }
        }
    }

    /// A character that is a hit was inserted at `pos` (a non-space, for
    /// the whitespace scan): spans covering it now end there.
    fn insert_hit(&mut self, pos: usize) {
        for span in &mut self.spans {
            if span.start <= pos && pos <= span.end {
                span.end = pos;
            } else if span.start > pos {
                span.start += 1;
                span.end += 1;
            }
        }
    }

    /// First hit at or after `start` (`start < len`), and the escaped targets
    /// stepped over on the way.
    fn scan(&mut self, start: usize, len: usize, probe: impl Fn(usize) -> Probe) -> (usize, usize) {
        if let Some(k) = self
            .spans
            .iter()
            .position(|s| s.start <= start && start <= s.end)
        {
            let span = self.spans.remove(k);
            let skipped = span.skipped.len() - span.skipped.partition_point(|&p| p < start);
            let end = span.end;
            self.spans.insert(0, span);
            return (end, skipped);
        }
        // Stop at the nearest known span ahead and take over its answer.
        let ahead = (0..self.spans.len())
            .filter(|&k| self.spans[k].start > start)
            .min_by_key(|&k| self.spans[k].start);
        let stop = ahead.map_or(len, |k| self.spans[k].start);
        let mut skipped = Vec::new();
        let mut q = start;
        while q < stop {
            match probe(q) {
                Probe::Hit => break,
                Probe::Escaped => skipped.push(q),
                Probe::Pass => {}
            }
            q += 1;
        }
        let span = match ahead {
            Some(k) if q == stop => {
                let old = self.spans.remove(k);
                skipped.extend_from_slice(&old.skipped);
                Span {
                    start,
                    end: old.end,
                    skipped,
                }
            }
            _ => Span {
                start,
                end: q,
                skipped,
            },
        };
        let result = (span.end, span.skipped.len());
        self.spans.insert(0, span);
        self.spans.truncate(SPANS_KEPT);
        result
    }
}

pub(super) struct Text {
    chars: Chars,
    target_caches: Vec<(Targets, SpanCache)>,
    space_cache: SpanCache,
    pair_indexes: Vec<PairIndex>,
}

impl Text {
    pub fn new(s: &str) -> Text {
        Text {
            chars: Chars {
                buf: s.chars().collect(),
                gap_start: 0,
                gap_len: 0,
            },
            target_caches: Vec::new(),
            space_cache: SpanCache::default(),
            pair_indexes: Vec::new(),
        }
    }

    /// Python's `len(json_str)`.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Python's `json_str[pos]` (see [`Chars::at`]).
    pub fn at(&self, pos: isize) -> Option<char> {
        self.chars.at(pos)
    }

    /// `json_str = json_str[:pos] + c + json_str[pos:]`. Cached scans are
    /// moved along rather than thrown away (json_repair inserts a `{` for
    /// every repeated key inside an array).
    pub fn insert(&mut self, pos: usize, c: char) {
        let len = self.len();
        if pos == 0 || pos >= len || is_space(c) {
            // Position 0 reads the last character for its escape: start over.
            self.chars.insert(pos, c);
            self.target_caches.clear();
            self.space_cache = SpanCache::default();
            self.pair_indexes.clear();
            return;
        }
        // The character pushed to pos + 1 gets `c` as its predecessor.
        let moved = self.chars.get(pos);
        let was_escaped = self.chars.escaped(pos);
        self.chars.insert(pos, c);
        let flips = was_escaped != (c == '\\');
        let changes = |t: Targets| t.matches(c) || (flips && moved.is_some_and(|m| t.matches(m)));
        for (targets, cache) in &mut self.target_caches {
            cache.shift(pos, changes(*targets));
        }
        self.space_cache.insert_hit(pos);
        self.pair_indexes.retain_mut(|index| {
            let keep = !changes(Targets(index.right(), Some(']')));
            if keep {
                index.shift(pos);
            }
            keep
        });
    }

    /// `skip_to_character` in absolute positions: the first `q >= start`
    /// holding a target not preceded by a backslash, else `len` (or `start`
    /// itself when `start >= len`). Also returns how many escaped targets were
    /// stepped over: Python recurses once for each of them.
    pub fn find_unescaped(&mut self, targets: Targets, start: usize) -> (usize, usize) {
        let len = self.len();
        if start >= len {
            return (start, 0);
        }
        let k = match self.target_caches.iter().position(|(t, _)| *t == targets) {
            Some(k) => k,
            None => {
                self.target_caches.push((targets, SpanCache::default()));
                self.target_caches.len() - 1
            }
        };
        let chars = &self.chars;
        self.target_caches[k]
            .1
            .scan(start, len, |q| match chars.get(q) {
                Some(c) if targets.matches(c) => {
                    if chars.escaped(q) {
                        Probe::Escaped
                    } else {
                        Probe::Hit
                    }
                }
                _ => Probe::Pass,
            })
    }

    /// `skip_whitespaces_at` in absolute positions: the first non-space
    /// position `>= start`, else `len` (or `start` when `start >= len`).
    pub fn skip_spaces(&mut self, start: usize) -> usize {
        let len = self.len();
        if start >= len {
            return start;
        }
        let chars = &self.chars;
        let probe = |q| match chars.get(q) {
            Some(c) if is_space(c) => Probe::Pass,
            _ => Probe::Hit,
        };
        self.space_cache.scan(start, len, probe).0
    }

    /// The two-by-two walk over `[right, "]"]` hits that starts at the hit
    /// `from` (see [`PairIndex::walk`]).
    pub fn pair_walk(&mut self, right: char, from: usize) -> (bool, usize) {
        let k = match self.pair_indexes.iter().position(|p| p.right() == right) {
            Some(k) => k,
            None => {
                self.pair_indexes.push(PairIndex::build(&self.chars, right));
                self.pair_indexes.len() - 1
            }
        };
        self.pair_indexes[k].walk(from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(t: &Text) -> String {
        (0..t.len()).filter_map(|i| t.chars.get(i)).collect()
    }

    #[test]
    fn python_indexing_by_code_point() {
        let t = Text::new("a中😀b");
        assert_eq!(t.len(), 4);
        assert_eq!(t.at(1), Some('中'));
        assert_eq!(t.at(-1), Some('b'));
        assert_eq!(t.at(-4), Some('a'));
        assert_eq!(t.at(-5), None);
        assert_eq!(t.at(4), None);
    }

    #[test]
    fn insertions_keep_order() {
        let mut t = Text::new("abcdef");
        t.insert(2, '{');
        t.insert(5, '{');
        t.insert(1, '{');
        t.insert(9, '}');
        assert_eq!(collect(&t), "a{b{cd{ef}");
        assert_eq!(t.at(-1), Some('}'));
    }

    #[test]
    fn escaped_targets_are_counted_and_skipped() {
        let mut t = Text::new(r#"ab\"c\"d"e"#);
        let q = Targets('"', None);
        assert_eq!(t.find_unescaped(q, 0), (8, 2));
        // Cached answers for later starts.
        assert_eq!(t.find_unescaped(q, 4), (8, 1));
        assert_eq!(t.find_unescaped(q, 8), (8, 0));
        assert_eq!(t.find_unescaped(q, 9), (10, 0));
        // Earlier start reuses the span ahead.
        assert_eq!(t.find_unescaped(q, 0), (8, 2));
        assert_eq!(t.find_unescaped(q, 12), (12, 0));
    }

    #[test]
    fn first_position_looks_at_last_char_for_escape() {
        // json_str[-1] is the last character: Python treats the hit as escaped.
        let mut t = Text::new("\"x\\");
        assert_eq!(t.find_unescaped(Targets('"', None), 0), (3, 1));
    }

    #[test]
    fn spaces_use_python_isspace() {
        let mut t = Text::new(" \u{1c}\u{3000}x  ");
        assert_eq!(t.skip_spaces(0), 3);
        assert_eq!(t.skip_spaces(4), 6);
        assert_eq!(t.skip_spaces(1), 3);
        assert_eq!(t.skip_spaces(9), 9);
    }

    #[test]
    fn insert_updates_cached_scans() {
        let text = "a\\\"b \"c] d\\]e";
        let all = [
            Targets('"', None),
            Targets('"', Some(']')),
            Targets(']', None),
            Targets('{', None),
        ];
        for pos in 0..=text.chars().count() {
            for c in ['{', '\\', '"', ' '] {
                let mut cached = Text::new(text);
                cached.pair_walk('"', 3);
                for start in 0..12 {
                    for t in all {
                        cached.find_unescaped(t, start);
                    }
                    cached.skip_spaces(start);
                }
                cached.insert(pos, c);
                let fresh_text: String = (0..cached.len())
                    .filter_map(|i| cached.chars.get(i))
                    .collect();
                let mut fresh = Text::new(&fresh_text);
                for start in 0..14 {
                    for t in all {
                        assert_eq!(
                            cached.find_unescaped(t, start),
                            fresh.find_unescaped(t, start),
                            "{fresh_text:?} {t:?} from {start}"
                        );
                    }
                    assert_eq!(cached.skip_spaces(start), fresh.skip_spaces(start));
                    if fresh.at(start as isize) == Some('"') && !fresh.chars.escaped(start) {
                        assert_eq!(cached.pair_walk('"', start), fresh.pair_walk('"', start));
                    }
                }
            }
        }
    }
}
