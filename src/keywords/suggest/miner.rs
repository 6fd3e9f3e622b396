//! Ranking candidate phrases: a smoothed log-ratio of foreground vs
//! background document frequency, weighted by length, edges and refusal
//! cue, then a greedy pass that favours phrases finding new documents.

use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use super::cues::{refusal_cue, Cue};
use super::text::{grams, is_word_char, key_hash, mined_part, Gram, GramKind, STOPWORDS};
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
            grams: grams(&mined_part(visible)),
            text,
            flagged,
        }
    }
}

/// The background side of a document: its candidates' key hashes.
pub fn background_doc(visible: &str) -> Vec<u64> {
    grams(&mined_part(visible))
        .iter()
        .map(|g| key_hash(&g.key))
        .collect()
}

/// Where a phrase was first seen, with the excerpt shown for it.
#[derive(Debug)]
struct Example {
    at: Arc<LineKey>,
    excerpt: Box<str>,
}

#[derive(Debug)]
struct Stat {
    /// Foreground documents containing the phrase.
    count: u32,
    /// Of them, those the current list already flags.
    flagged: u32,
    /// Their ids, ascending, while [`MAX_DOC_REFS`] lasts: the same-documents
    /// and new-documents passes of the ranking read them.
    docs: Vec<u32>,
    /// Spellings met, with counts (the first [`MAX_SURFACES`]).
    surfaces: Vec<(Box<str>, u32)>,
    len: usize,
    kind: GramKind,
    example: Example,
}

impl Stat {
    fn all_listed(&self) -> bool {
        self.docs.len() == self.count as usize
    }
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

/// Distinct candidate phrases counted (~450 bytes each with their counts
/// and example excerpt): past it a phrase not yet seen is left out, and counted in
/// [`Miner::left_out`]; phrases already seen go on being counted.
pub const MAX_PHRASES: usize = 100_000;
/// Distinct background phrase hashes counted (~24 bytes each); past it a
/// hash not yet seen is left out (its phrase then reads as rarer in the
/// background than it is), and counted in [`Miner::left_out`].
pub const MAX_BACKGROUND_KEYS: usize = 2_000_000;
/// Document ids listed under the phrases, all phrases together (4 bytes
/// each): past it occurrences are still counted but not listed, and
/// [`Miner::left_out`] says how many; the ranking's coverage pass then sees
/// only the listed documents of a phrase.
pub const MAX_DOC_REFS: usize = 4_000_000;
/// Spellings kept per phrase (for the one most often written).
const MAX_SURFACES: usize = 8;

/// Counts candidates over the run, in memory bounded by the caps above
/// whatever the input's size or script: [`MAX_PHRASES`] phrases,
/// [`MAX_BACKGROUND_KEYS`] hashes, [`MAX_DOC_REFS`] listed document ids,
/// and no text per document (each phrase keeps its own example excerpt).
/// docs/limits.md gives the total; it held ~250 bytes per input byte once.
#[derive(Debug, Default)]
pub struct Miner {
    stats: HashMap<String, Stat>,
    background: HashMap<u64, u32>,
    foreground_docs: u32,
    doc_refs: usize,
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
    /// Foreground occurrences counted but not listed past [`MAX_DOC_REFS`].
    #[serde(skip_serializing_if = "is_zero")]
    pub unlisted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
        let id = self.foreground_docs;
        self.foreground_docs = self.foreground_docs.saturating_add(1);
        let mut at: Option<Arc<LineKey>> = None;
        for g in doc.grams {
            let full = self.stats.len() >= MAX_PHRASES;
            let st = match self.stats.entry(g.key) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(_) if full => {
                    self.left_out.foreground += 1;
                    continue;
                }
                Entry::Vacant(e) => {
                    let at = at.get_or_insert_with(|| Arc::new(doc.at.clone())).clone();
                    let shown = match find_keyword(&doc.text, e.key(), MatchMode::Normalized) {
                        Some(r) => excerpt(&doc.text, r),
                        None => excerpt(&doc.text, 0..0),
                    };
                    e.insert(Stat {
                        count: 0,
                        flagged: 0,
                        docs: Vec::with_capacity(1),
                        // Most phrases have one spelling: no room for four.
                        surfaces: Vec::with_capacity(1),
                        len: g.len,
                        kind: g.kind,
                        example: Example {
                            at,
                            excerpt: shown.into(),
                        },
                    })
                }
            };
            st.count = st.count.saturating_add(1);
            st.flagged += u32::from(doc.flagged);
            if self.doc_refs < MAX_DOC_REFS {
                st.docs.push(id);
                self.doc_refs += 1;
            } else {
                self.left_out.unlisted += 1;
            }
            let room = st.surfaces.len() < MAX_SURFACES;
            match st.surfaces.iter_mut().find(|(s, _)| **s == *g.surface) {
                Some((_, n)) => *n += 1,
                None if room => st.surfaces.push((g.surface.into(), 1)),
                None => {}
            }
        }
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
        self.foreground_docs as usize
    }

    pub fn background_docs(&self) -> u64 {
        self.background_docs
    }

    /// The ranked suggestions (at most `top`), each found in at least
    /// `min_support` foreground documents.
    pub fn suggest(&self, top: usize, min_support: usize) -> Vec<Suggestion> {
        let nf = f64::from(self.foreground_docs);
        let nb = self.background_docs as f64;
        let mut scored: Vec<Candidate> = Vec::new();
        for (key, st) in &self.stats {
            let f = st.count as usize;
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
            let kind = st.kind;
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
        // (Only phrases whose documents are all listed can be compared.)
        let mut same_docs: HashSet<&[u32]> = HashSet::new();
        scored.retain(|c| !c.st.all_listed() || same_docs.insert(c.st.docs.as_slice()));

        // Phrases with a refusal marker first, then the rest; within each
        // tier a lazy greedy pass favours phrases that cover new documents.
        let mut covered: HashSet<u32> = HashSet::new();
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
                // Occurrences past MAX_DOC_REFS are not listed: taken as new.
                let unlisted = c.st.count as usize - c.st.docs.len();
                let new = unlisted + c.st.docs.iter().filter(|d| !covered.contains(d)).count();
                let share = new as f64 / f64::from(c.st.count);
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
                covered.extend(c.st.docs.iter().copied());
                out.push(self.suggestion(c.score, c.key, c.st, c.background));
            }
        }
        tail.sort_unstable();
        for i in tail.into_iter().take(top.saturating_sub(out.len())) {
            let c = &scored[i];
            out.push(self.suggestion(c.score, c.key, c.st, c.background));
        }
        // Which phrases is decided above; they are shown by the score the
        // table prints, highest first.
        out.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.phrase.cmp(&b.phrase))
        });
        out
    }

    fn suggestion(&self, score: f64, key: &str, st: &Stat, background: u32) -> Suggestion {
        let phrase = st
            .surfaces
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
            .map(|(s, _)| s.to_string())
            .unwrap_or_else(|| key.to_string());
        Suggestion {
            phrase,
            count: st.count,
            score: (score * 1000.0).round() / 1000.0,
            example: st.example.excerpt.to_string(),
            at: (*st.example.at).clone(),
            background,
            already_flagged: st.flagged,
            kind: st.kind,
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
