//! The "quotes two by two" walk of `parse_string` in array context.
//!
//! At a quote inside an array string, json_repair calls
//! `skip_to_character([quote, "]"])` twice per step for as long as it lands
//! on a quote, to learn whether an even number of quotes comes before the
//! next `]`. Done literally that is quadratic in the number of quotes, so the
//! walk's outcome is precomputed for every hit in one backward pass.

use super::text::{Chars, Targets};

pub(super) struct PairIndex {
    right: char,
    /// Positions of the unescaped `[right, "]"]` hits, in order.
    hits: Vec<usize>,
    /// Whether the walk from each hit stops on a `]` (else at the end).
    lands_on_bracket: Vec<bool>,
    /// The most escaped hits any single skip of that walk steps over (each
    /// one is a recursive Python call).
    max_skipped: Vec<usize>,
}

impl PairIndex {
    pub fn build(chars: &Chars, right: char) -> PairIndex {
        let targets = Targets(right, Some(']'));
        let mut hits = Vec::new();
        // Escaped hits between the previous unescaped hit and this one.
        let mut gaps = Vec::new();
        let mut run = 0usize;
        for q in 0..chars.len() {
            if chars.get(q).is_some_and(|c| targets.matches(c)) {
                if chars.escaped(q) {
                    run += 1;
                } else {
                    hits.push(q);
                    gaps.push(run);
                    run = 0;
                }
            }
        }
        let tail = run;
        let n = hits.len();
        let is_bracket: Vec<bool> = hits.iter().map(|&q| chars.get(q) == Some(']')).collect();
        let mut lands_on_bracket = vec![false; n];
        let mut max_skipped = vec![0; n];
        for k in (0..n).rev() {
            (lands_on_bracket[k], max_skipped[k]) = if k + 1 >= n {
                (false, tail)
            } else if k + 2 >= n {
                (false, gaps[k + 1].max(tail))
            } else {
                let step = gaps[k + 1].max(gaps[k + 2]);
                if is_bracket[k + 2] {
                    (true, step)
                } else {
                    (lands_on_bracket[k + 2], step.max(max_skipped[k + 2]))
                }
            };
        }
        PairIndex {
            right,
            hits,
            lands_on_bracket,
            max_skipped,
        }
    }

    /// A character that is not a hit was inserted at `pos`, and no hit
    /// changed its escaped status.
    pub fn shift(&mut self, pos: usize) {
        let from = self.hits.partition_point(|&q| q < pos);
        for q in &mut self.hits[from..] {
            *q += 1;
        }
    }

    pub fn right(&self) -> char {
        self.right
    }

    /// From the hit at `from` (a quote): repeat "skip to the next hit twice"
    /// while on a quote. Returns whether that stops on a `]`, and the most
    /// escaped hits one skip stepped over.
    pub fn walk(&self, from: usize) -> (bool, usize) {
        match self.hits.binary_search(&from) {
            Ok(k) => (self.lands_on_bracket[k], self.max_skipped[k]),
            Err(_) => (false, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_repair::text::Text;

    /// The walk done literally, as Python does it.
    fn literal_walk(s: &str, from: usize) -> (bool, usize) {
        let mut text = Text::new(s);
        let t = Targets('"', Some(']'));
        let mut i = from;
        let mut most = 0;
        while text.at(i as isize) == Some('"') {
            for _ in 0..2 {
                let (next, skipped) = text.find_unescaped(t, i + 1);
                most = most.max(skipped);
                i = next;
            }
        }
        (text.at(i as isize) == Some(']'), most)
    }

    #[test]
    fn matches_the_literal_walk() {
        let samples = [
            r#"["a "b" c "d" e"]"#,
            r#"["a "b" c" ]"#,
            r#"["a \"b "c" \" d"  ] x "#,
            r#"["a "b" "c" "d"#,
            r#"[""""""]"""#,
            r#"["x\"\"\"" ] "" ]"#,
        ];
        for s in samples {
            let chars: Vec<char> = s.chars().collect();
            let mut text = Text::new(s);
            for (p, &c) in chars.iter().enumerate() {
                let unescaped = p == 0 || chars[p - 1] != '\\';
                if c == '"' && unescaped {
                    assert_eq!(text.pair_walk('"', p), literal_walk(s, p), "{s} at {p}");
                }
            }
        }
    }
}
