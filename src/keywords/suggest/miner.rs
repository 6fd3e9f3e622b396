//! Ranking candidate phrases: a smoothed log-ratio of foreground vs
//! background document frequency, weighted by length, edges and refusal
//! cue, then a greedy pass that favours phrases finding new documents.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, HashSet};

use serde::Serialize;

use super::cues::{refusal_cue, Cue};
use super::text::{grams, is_word_char, key_hash, Gram, GramKind, STOPWORDS};
use crate::detect::refusal::find_keyword;
use crate::keywords::excerpt;
use crate::keywords::labels::LineKey;
use crate::policy::MatchMode;

/// Foreground texts are kept (for examples) up to this many bytes.
const KEEP_TEXT_BYTES: usize = 4000;
/// Additive smoothing of the document frequencies.
const SMOOTHING: f64 = 0.5;

/// How much the phrase's length says "phrase" rather than "word".
fn length_weight(len: usize, kind: GramKind) -> f64 {
    match (kind, len) {
        (GramKind::Words, 1) => 0.4,
        (GramKind::Words, 2) => 0.95,
        (GramKind::Words, 3) => 0.98,
        (GramKind::Words, 4) => 1.0,
        (GramKind::Words, 5) => 0.97,
        (GramKind::Words, _) => 0.8,
        (GramKind::Chars, 2) => 0.7,
        (GramKind::Chars, _) => 1.0,
    }
}

/// Phrases that start or end on a function word ("the time constraint, I")
/// read worse than the same words trimmed or extended to content words.
fn edge_weight(key: &str, kind: GramKind) -> f64 {
    if kind == GramKind::Chars {
        return 1.0;
    }
    let words: Vec<&str> = key
        .split(|c: char| !(is_word_char(c) || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let stop = |w: Option<&&str>| w.is_some_and(|w| STOPWORDS.contains(w));
    let mut weight = 1.0;
    if stop(words.first()) {
        weight *= 0.95;
    }
    if words.len() > 1 && stop(words.last()) {
        weight *= 0.95;
    }
    weight
}

/// Weight of a phrase by its refusal marker.
fn cue_weight(cue: Cue) -> f64 {
    match cue {
        Cue::Inability => 1.0,
        Cue::Apology => 0.5,
        Cue::None => 0.2,
    }
}

/// In the greedy ordering a phrase counts for `score × (REDUNDANT +
/// (1 − REDUNDANT) × share of its documents not yet covered)`.
const REDUNDANT: f64 = 0.3;

/// A foreground document.
#[derive(Debug, Clone)]
pub struct ForegroundDoc {
    pub at: LineKey,
    /// The visible text (cut to a few KB, for examples).
    pub text: String,
    pub grams: Vec<Gram>,
    /// The current list already flags it.
    pub flagged: bool,
}

impl ForegroundDoc {
    pub fn new(at: LineKey, visible: &str, flagged: bool) -> ForegroundDoc {
        let mut text = visible.to_string();
        if text.len() > KEEP_TEXT_BYTES {
            let mut cut = KEEP_TEXT_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        ForegroundDoc {
            at,
            grams: grams(visible),
            text,
            flagged,
        }
    }
}

/// The background side of a document: its candidates' key hashes.
pub fn background_doc(visible: &str) -> Vec<u64> {
    grams(visible).iter().map(|g| key_hash(&g.key)).collect()
}

#[derive(Debug, Default)]
struct Stat {
    /// Foreground document ids, ascending.
    docs: Vec<u32>,
    surfaces: HashMap<String, u32>,
    len: usize,
    kind: Option<GramKind>,
}

/// A phrase with enough support, scored.
struct Candidate<'a> {
    score: f64,
    key: &'a String,
    st: &'a Stat,
    background: u32,
    cue: Cue,
}

/// An `f64` ordered for the heap (scores are finite).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound(f64);

impl Eq for Bound {}

impl PartialOrd for Bound {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Bound {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Distinct candidate phrases counted (~300 bytes each with their
/// counts): past it a phrase not yet seen is left out, and counted in
/// [`Miner::left_out`]; phrases already seen go on being counted.
pub const MAX_PHRASES: usize = 200_000;
/// Distinct background phrase hashes counted (~24 bytes each); past it a
/// hash not yet seen is left out (its phrase then reads as rarer in the
/// background than it is), and counted in [`Miner::left_out`].
pub const MAX_BACKGROUND_KEYS: usize = 2_000_000;

/// Counts candidates over the run, in memory bounded by [`MAX_PHRASES`]
/// and [`MAX_BACKGROUND_KEYS`] plus 4 bytes per phrase occurrence in the
/// foreground and a few KB per foreground text (docs/limits.md); it held
/// ~250 bytes per input byte before.
#[derive(Debug, Default)]
pub struct Miner {
    stats: HashMap<String, Stat>,
    background: HashMap<u64, u32>,
    docs: Vec<(LineKey, String, bool)>,
    background_docs: u64,
    left_out: LeftOut,
}

/// Phrase occurrences the caps left out.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// Foreground occurrences of phrases first seen past [`MAX_PHRASES`].
    pub foreground: u64,
    /// Background occurrences of hashes first seen past [`MAX_BACKGROUND_KEYS`].
    pub background: u64,
}

/// A suggested refusal phrase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suggestion {
    /// As most often written (quotes folded to ASCII): use it in a list file.
    pub phrase: String,
    /// Foreground documents (refusal-eligible, non-answer) containing it.
    pub count: u32,
    pub score: f64,
    /// A short excerpt of the first document containing it.
    pub example: String,
    /// Where the example is.
    pub at: LineKey,
    /// Background documents (tool-calling attempts, boxed answers) containing it.
    pub background: u32,
    /// Of `count`, how many the current list already flags.
    pub already_flagged: u32,
    pub kind: GramKind,
    /// The refusal marker it carries (`none`: shown for review, left out of
    /// the `--format text` list).
    pub marker: Cue,
}

impl Miner {
    pub fn add_foreground(&mut self, doc: ForegroundDoc) {
        let id = self.docs.len() as u32;
        for g in doc.grams {
            if self.stats.len() >= MAX_PHRASES && !self.stats.contains_key(&g.key) {
                self.left_out.foreground += 1;
                continue;
            }
            let st = self.stats.entry(g.key).or_default();
            st.docs.push(id);
            *st.surfaces.entry(g.surface).or_insert(0) += 1;
            st.len = g.len;
            st.kind = Some(g.kind);
        }
        self.docs.push((doc.at, doc.text, doc.flagged));
    }

    pub fn add_background(&mut self, hashes: &[u64]) {
        self.background_docs += 1;
        for h in hashes {
            let full = self.background.len() >= MAX_BACKGROUND_KEYS;
            match self.background.get_mut(h) {
                Some(n) => *n += 1,
                None if full => self.left_out.background += 1,
                None => {
                    self.background.insert(*h, 1);
                }
            }
        }
    }

    /// What the caps left out (zeros unless the input was huge).
    pub fn left_out(&self) -> LeftOut {
        self.left_out
    }

    pub fn foreground_docs(&self) -> usize {
        self.docs.len()
    }

    pub fn background_docs(&self) -> u64 {
        self.background_docs
    }

    /// The ranked suggestions (at most `top`), each found in at least
    /// `min_support` foreground documents.
    pub fn suggest(&self, top: usize, min_support: usize) -> Vec<Suggestion> {
        let nf = self.docs.len() as f64;
        let nb = self.background_docs as f64;
        let mut scored: Vec<Candidate> = Vec::new();
        for (key, st) in &self.stats {
            let f = st.docs.len();
            if f < min_support.max(1) {
                continue;
            }
            let b = self.background.get(&key_hash(key)).copied().unwrap_or(0);
            let pf = (f as f64 + SMOOTHING) / (nf + 2.0 * SMOOTHING);
            let pb = (f64::from(b) + SMOOTHING) / (nb + 2.0 * SMOOTHING);
            let ratio = (pf / pb).ln();
            if ratio <= 0.0 {
                continue;
            }
            let kind = st.kind.unwrap_or(GramKind::Words);
            let cue = refusal_cue(key);
            // One ordinary word ("time", "page") would match answers of
            // every kind: a single word is a phrase only as a refusal cue.
            if kind == GramKind::Words && st.len == 1 && cue == Cue::None {
                continue;
            }
            let shape = length_weight(st.len, kind) * edge_weight(key, kind);
            let score = ratio * (1.0 + f as f64).ln() * shape * cue_weight(cue);
            scored.push(Candidate {
                score,
                key,
                st,
                background: b,
                cue,
            });
        }
        scored.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(b.key)));
        // One phrase per set of documents: the rest say the same thing.
        let mut same_docs: HashSet<&[u32]> = HashSet::new();
        scored.retain(|c| same_docs.insert(c.st.docs.as_slice()));

        // Phrases with a refusal marker first, then the rest; within each
        // tier a lazy greedy pass favours phrases that cover new documents.
        let mut covered = vec![false; self.docs.len()];
        let mut out = Vec::new();
        // Phrases that find no new document but do match background texts
        // could only add false positives: they go last.
        let mut tail: Vec<usize> = Vec::new();
        for tier in [true, false] {
            let mut heap: BinaryHeap<(Bound, Reverse<usize>)> = scored
                .iter()
                .enumerate()
                .filter(|(_, c)| (c.cue != Cue::None) == tier)
                .map(|(i, c)| (Bound(c.score), Reverse(i)))
                .collect();
            while out.len() < top {
                let Some((Bound(bound), Reverse(i))) = heap.pop() else {
                    break;
                };
                let c = &scored[i];
                let new = c.st.docs.iter().filter(|d| !covered[**d as usize]).count();
                let share = new as f64 / c.st.docs.len() as f64;
                if new == 0 && c.background > 0 {
                    tail.push(i);
                    continue;
                }
                let adjusted = c.score * (REDUNDANT + (1.0 - REDUNDANT) * share);
                let next = heap.peek().map_or(f64::NEG_INFINITY, |(b, _)| b.0);
                if adjusted < bound && adjusted < next {
                    heap.push((Bound(adjusted), Reverse(i)));
                    continue;
                }
                for d in &c.st.docs {
                    covered[*d as usize] = true;
                }
                out.push(self.suggestion(c.score, c.key, c.st, c.background));
            }
        }
        tail.sort_unstable();
        for i in tail.into_iter().take(top.saturating_sub(out.len())) {
            let c = &scored[i];
            out.push(self.suggestion(c.score, c.key, c.st, c.background));
        }
        out
    }

    fn suggestion(&self, score: f64, key: &str, st: &Stat, background: u32) -> Suggestion {
        let phrase = st
            .surfaces
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(s, _)| s.clone())
            .unwrap_or_else(|| key.to_string());
        let doc = st.docs.first().map_or(0, |d| *d as usize);
        let (at, text, _) = &self.docs[doc];
        let example = match find_keyword(text, key, MatchMode::Normalized) {
            Some(r) => excerpt(text, r),
            None => excerpt(text, 0..0),
        };
        Suggestion {
            phrase,
            count: st.docs.len() as u32,
            score: (score * 1000.0).round() / 1000.0,
            example,
            at: at.clone(),
            background,
            already_flagged: st.docs.iter().filter(|d| self.docs[**d as usize].2).count() as u32,
            kind: st.kind.unwrap_or(GramKind::Words),
            marker: refusal_cue(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_contrasts_and_dedupes() {
        let at = |i: usize| LineKey {
            trace_id: format!("t{i}"),
            session: "main".into(),
            index: 0,
        };
        let mut m = Miner::default();
        for i in 0..6 {
            m.add_foreground(ForegroundDoc::new(
                at(i),
                "I cannot assist with that request.",
                false,
            ));
            m.add_foreground(ForegroundDoc::new(
                at(i),
                "Let me check the page again.",
                false,
            ));
        }
        for _ in 0..20 {
            m.add_background(&background_doc("Let me check the page again."));
        }
        let s = m.suggest(5, 3);
        assert!(
            s[0].phrase.to_lowercase().contains("cannot assist"),
            "{s:?}"
        );
        assert!(!s.iter().any(|x| x.phrase.contains("check the page")));
        // One phrase per document set: the rest of the sentence does not repeat.
        assert_eq!(s.iter().filter(|x| x.count == 6).count(), 1, "{s:?}");
        assert_eq!(s[0].example, "I cannot assist with that request.");
    }

    #[test]
    fn a_single_ordinary_word_is_never_suggested() {
        let at = |i: usize| LineKey {
            trace_id: format!("t{i}"),
            session: "main".into(),
            index: 0,
        };
        let mut m = Miner::default();
        let texts = [
            "Out of time, stopping.",
            "No time left now.",
            "The time is up here.",
            "Time ran out again.",
        ];
        for (i, text) in texts.iter().cycle().take(12).enumerate() {
            m.add_foreground(ForegroundDoc::new(at(i), text, false));
        }
        for _ in 0..50 {
            m.add_background(&background_doc("Searching the web for the answer."));
        }
        let s = m.suggest(10, 3);
        assert!(
            !s.iter().any(|x| x.phrase.eq_ignore_ascii_case("time")),
            "{s:?}"
        );
    }
}
