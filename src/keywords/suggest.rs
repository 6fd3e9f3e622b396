//! Mining candidate refusal phrases.
//!
//! Refusals can only fire on answers without a tool call, and upstream's
//! list misses some of them: those end the loop as ordinary `final`
//! answers. So phrases are contrasted between two kinds of text:
//!
//! * *foreground*: refusal-eligible answers (no parsed tool call, no MCP
//!   tag) that do not give a final answer (`\boxed{…}`, MiroThinker's answer
//!   format), whether the current list flags them or not;
//! * *background*: the visible text of tool-calling attempts, and answers
//!   that give a boxed final answer ("I can't be certain, but the answer is
//!   \boxed{7}" is a hedge, not a refusal).
//!
//! With labels, a labelled attempt goes by its label instead (refusal →
//! foreground, not → background).
//!
//! Texts are cut to what the model says (`<think>` and MCP blocks removed)
//! and split into sentences. Candidates are word n-grams (1–6 words,
//! lowercased, apostrophes folded, inner punctuation kept, so a phrase
//! matches as a `normalized` substring) and, for CJK text, character
//! n-grams (2–4 characters). Each is scored by a smoothed log-ratio of its
//! document frequency in foreground vs background, times log support,
//! preferring 2–5 word phrases and phrases that carry an apology or
//! inability marker (a small multilingual lexicon) over content words.
//! Phrases with the same documents as a better one are dropped, and phrases
//! whose documents are mostly covered by better ones move behind those that
//! find new documents, so the top of the ranking reads as a short list.
//! Everything is deterministic (ties break on the phrase).

use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde::Serialize;

use super::excerpt;
use super::labels::LineKey;
use crate::detect::refusal::{find_keyword, fold_quote, fold_text};
use crate::policy::MatchMode;

/// Longest word n-gram mined.
const MAX_WORDS: usize = 6;
/// CJK character n-gram lengths.
const CJK_MIN: usize = 2;
const CJK_MAX: usize = 4;
/// Foreground texts are kept (for examples) up to this many bytes.
const KEEP_TEXT_BYTES: usize = 4000;
/// Additive smoothing of the document frequencies.
const SMOOTHING: f64 = 0.5;

/// Whether a candidate is made of words or CJK characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GramKind {
    Words,
    Chars,
}

/// One candidate phrase found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gram {
    /// Folded form: what counts are keyed on.
    pub key: String,
    /// As written (quotes folded to ASCII, whitespace collapsed, case kept).
    pub surface: String,
    /// Words or characters.
    pub len: usize,
    pub kind: GramKind,
}

/// What the model says: `<think>…</think>` and `<use_mcp_tool>…</use_mcp_tool>`
/// blocks removed (an unclosed block runs to the end).
pub fn visible_text(text: &str) -> String {
    let mut out = text.to_string();
    for (open, close) in [
        ("<think>", "</think>"),
        ("<use_mcp_tool>", "</use_mcp_tool>"),
    ] {
        let mut rest = out.as_str();
        let mut kept = String::with_capacity(rest.len());
        while let Some(at) = rest.find(open) {
            kept.push_str(&rest[..at]);
            kept.push('\n');
            rest = match rest[at..].find(close) {
                Some(end) => &rest[at + end + close.len()..],
                None => "",
            };
        }
        kept.push_str(rest);
        out = kept;
    }
    out
}

/// Phrases that state an answer (folded); `\boxed{` is MiroThinker's format.
const ANSWER_MARKERS: &[&str] = &[
    "\\boxed{",
    "the answer is",
    "final answer",
    "answer:",
    "答案是",
    "答案为",
    "答案：",
    "最终答案",
];

/// Whether an answer gives an answer: then it is no refusal, however
/// apologetic ("I can't be certain, but the answer is \boxed{7}").
pub fn gives_final_answer(text: &str) -> bool {
    let folded = fold_text(text);
    ANSWER_MARKERS.iter().any(|m| folded.contains(m))
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0x20000..=0x2FFFF)
}

fn is_sentence_break(c: char) -> bool {
    matches!(
        c,
        '.' | '!' | '?' | ';' | ':' | '\n' | '\r' | '。' | '！' | '？' | '；' | '：' | '…'
    )
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// A token's byte span in the text.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    cjk: bool,
    digit: bool,
}

/// Splits one text into sentences of tokens (words and single CJK chars).
fn sentences(text: &str) -> Vec<Vec<Span>> {
    let mut out = Vec::new();
    let mut current: Vec<Span> = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if is_sentence_break(c) {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            i += 1;
        } else if is_cjk(c) {
            current.push(Span {
                start: at,
                end: at + c.len_utf8(),
                cjk: true,
                digit: false,
            });
            i += 1;
        } else if is_word_char(c) {
            let start = at;
            let mut digit = false;
            let mut j = i;
            while j < chars.len() {
                let c = chars[j].1;
                if is_word_char(c) {
                    digit |= c.is_numeric();
                    j += 1;
                } else if fold_quote(c) == '\''
                    && j > i
                    && chars.get(j + 1).is_some_and(|&(_, n)| is_word_char(n))
                {
                    j += 1;
                } else {
                    break;
                }
            }
            let end = chars.get(j).map_or(text.len(), |&(a, _)| a);
            current.push(Span {
                start,
                end,
                cjk: false,
                digit,
            });
            i = j;
        } else {
            i += 1;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Function words: an n-gram made only of these says nothing.
const STOPWORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but",
    "by", "do", "does", "for", "from", "had", "has", "have", "here", "how", "i", "i'm", "if", "in",
    "is", "it", "it's", "its", "just", "let", "let's", "me", "more", "my", "now", "of", "on", "or",
    "our", "so", "some", "than", "that", "the", "then", "there", "these", "this", "those", "to",
    "up", "was", "we", "were", "what", "which", "who", "will", "with", "would", "you", "your",
];

/// Every candidate of one text, each key once (first occurrence).
pub fn grams(text: &str) -> Vec<Gram> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let mut push = |start: usize, end: usize, len: usize, kind: GramKind| {
        let slice = &text[start..end];
        let key = fold_text(slice);
        if key.len() > 120 || seen.contains(&key) {
            return;
        }
        seen.insert(key.clone());
        out.push(Gram {
            key,
            surface: surface_of(slice),
            len,
            kind,
        });
    };
    for sentence in sentences(text) {
        // Word n-grams over runs of adjacent word tokens.
        let mut run_start = 0;
        for k in 0..=sentence.len() {
            let breaks = k == sentence.len() || sentence[k].cjk;
            if !breaks {
                continue;
            }
            let run = &sentence[run_start..k];
            for i in 0..run.len() {
                for n in 1..=MAX_WORDS.min(run.len() - i) {
                    let words = &run[i..i + n];
                    if words.iter().any(|w| w.digit || w.end - w.start > 40) {
                        break;
                    }
                    let all_stop = words.iter().all(|w| {
                        let word = fold_text(&text[w.start..w.end]);
                        STOPWORDS.contains(&word.as_str())
                    });
                    if all_stop {
                        continue;
                    }
                    push(words[0].start, words[n - 1].end, n, GramKind::Words);
                }
            }
            run_start = k + 1;
        }
        // CJK character n-grams over runs of adjacent CJK characters.
        let mut i = 0;
        while i < sentence.len() {
            if !sentence[i].cjk {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < sentence.len() && sentence[j].cjk && sentence[j].start == sentence[j - 1].end
            {
                j += 1;
            }
            let run = &sentence[i..j];
            for a in 0..run.len() {
                for n in CJK_MIN..=CJK_MAX.min(run.len() - a) {
                    push(run[a].start, run[a + n - 1].end, n, GramKind::Chars);
                }
            }
            i = j;
        }
    }
    out
}

/// Quotes folded to ASCII and whitespace collapsed; case kept.
fn surface_of(slice: &str) -> String {
    let mut s = String::with_capacity(slice.len());
    let mut space = false;
    for c in slice.chars().map(fold_quote) {
        if c.is_whitespace() {
            if !space {
                s.push(' ');
            }
            space = true;
        } else {
            s.push(c);
            space = false;
        }
    }
    s
}

/// Stable hash of a key (background counts are kept by hash only).
pub fn key_hash(key: &str) -> u64 {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// Inability, refusal and give-up markers, folded: the core of a refusal.
/// Latin ones match whole words, CJK ones as substrings.
const INABILITY_WORDS: &[&str] = &[
    "unable",
    "cannot",
    "can't",
    "can not",
    "could not",
    "couldn't",
    "won't",
    "will not",
    "not able",
    "decline",
    "refuse",
    "time constraint",
    "time constraints",
    "no puedo",
    "je ne peux",
    "kann nicht",
    "kann ich nicht",
    "nicht möglich",
    "non posso",
    "não posso",
    "не могу",
];
const INABILITY_CJK: &[&str] = &["無法", "无法", "不能", "做不到", "できませ", "できない"];
/// Apology and regret markers: common in refusals, but also in "sorry for
/// the confusion, let me search again".
const APOLOGY_WORDS: &[&str] = &[
    "sorry",
    "apologize",
    "apologise",
    "apologies",
    "unfortunately",
    "afraid",
    "regret",
    "lo siento",
    "lamentablemente",
    "désolé",
    "désolée",
    "malheureusement",
    "leider",
    "entschuldigung",
    "mi dispiace",
    "desculpe",
    "infelizmente",
    "извините",
    "к сожалению",
];
const APOLOGY_CJK: &[&str] = &[
    "抱歉",
    "对不起",
    "遗憾",
    "不好意思",
    "恐怕",
    "申し訳",
    "すみません",
    "죄송",
];

/// What marks a phrase as refusal-like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cue {
    None,
    Apology,
    Inability,
}

/// The strongest refusal marker in a (folded) phrase.
pub fn refusal_cue(key: &str) -> Cue {
    let words: Vec<&str> = key
        .split(|c: char| !(is_word_char(c) || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let joined = format!(" {} ", words.join(" "));
    let has = |latin: &[&str], cjk: &[&str]| {
        cjk.iter().any(|c| key.contains(c))
            || latin.iter().any(|c| joined.contains(&format!(" {c} ")))
    };
    if has(INABILITY_WORDS, INABILITY_CJK) {
        Cue::Inability
    } else if has(APOLOGY_WORDS, APOLOGY_CJK) {
        Cue::Apology
    } else {
        Cue::None
    }
}

/// Whether a phrase carries an apology or inability marker.
pub fn looks_like_refusal(key: &str) -> bool {
    refusal_cue(key) != Cue::None
}

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

/// Counts candidates over the run.
#[derive(Debug, Default)]
pub struct Miner {
    stats: HashMap<String, Stat>,
    background: HashMap<u64, u32>,
    docs: Vec<(LineKey, String, bool)>,
    background_docs: u64,
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
            *self.background.entry(*h).or_insert(0) += 1;
        }
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

/// How a near-miss differs from its keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variation {
    Apostrophe,
    Case,
    Spacing,
}

/// Which variations separate `variant` from `keyword` (each is one that
/// the other foldings cannot explain).
pub fn variations(keyword: &str, variant: &str) -> Vec<Variation> {
    let norm = |s: &str, quotes: bool, case: bool, space: bool| -> String {
        let mut out = String::new();
        let mut in_space = false;
        for c in s.chars() {
            let c = if quotes { fold_quote(c) } else { c };
            if space && c.is_whitespace() {
                if !in_space {
                    out.push(' ');
                }
                in_space = true;
                continue;
            }
            in_space = false;
            if case {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    };
    let mut v = Vec::new();
    if norm(keyword, false, true, true) != norm(variant, false, true, true) {
        v.push(Variation::Apostrophe);
    }
    if norm(keyword, true, false, true) != norm(variant, true, false, true) {
        v.push(Variation::Case);
    }
    if norm(keyword, true, true, false) != norm(variant, true, true, false) {
        v.push(Variation::Spacing);
    }
    v
}

/// A variant of a current keyword that exact matching misses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NearMiss {
    pub keyword: String,
    /// As written in the data.
    pub variant: String,
    pub variations: Vec<Variation>,
    /// Refusal-eligible attempts containing it.
    pub count: u32,
    pub example: String,
    pub at: LineKey,
    /// The current list catches it anyway (it matches `normalized`).
    pub caught: bool,
}

/// Collects near-misses in input order.
#[derive(Debug, Default)]
pub struct NearMisses {
    found: HashMap<(String, String), NearMiss>,
    order: Vec<(String, String)>,
}

impl NearMisses {
    pub fn add(&mut self, miss: NearMiss) {
        let key = (miss.keyword.clone(), miss.variant.clone());
        match self.found.get_mut(&key) {
            Some(m) => m.count += miss.count,
            None => {
                self.order.push(key.clone());
                self.found.insert(key, miss);
            }
        }
    }

    /// Most frequent first; ties in order of first appearance.
    pub fn finish(mut self) -> Vec<NearMiss> {
        let mut out: Vec<NearMiss> = self
            .order
            .iter()
            .filter_map(|k| self.found.remove(k))
            .collect();
        out.sort_by_key(|m| Reverse(m.count));
        out
    }
}

/// The near-misses of `keywords` in one text: occurrences that match
/// `normalized` but not `exact`.
pub fn near_misses_in(
    text: &str,
    keywords: &[String],
    current_mode: MatchMode,
    at: &LineKey,
) -> Vec<NearMiss> {
    let mut out = Vec::new();
    for k in keywords {
        if text.contains(k.as_str()) {
            continue;
        }
        if let Some(r) = find_keyword(text, k, MatchMode::Normalized) {
            let variant = text[r.clone()].to_string();
            out.push(NearMiss {
                keyword: k.clone(),
                variations: variations(k, &variant),
                variant,
                count: 1,
                example: excerpt(text, r),
                at: at.clone(),
                caught: current_mode == MatchMode::Normalized,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<String> {
        grams(text).into_iter().map(|g| g.key).collect()
    }

    #[test]
    fn visible_text_drops_thinking_and_tool_calls() {
        let t = "<think>\nplan\n</think>\n\nSorry. <use_mcp_tool>x</use_mcp_tool> Bye <think>open";
        assert_eq!(
            visible_text(t).split_whitespace().collect::<Vec<_>>(),
            vec!["Sorry.", "Bye"]
        );
    }

    #[test]
    fn word_grams_keep_inner_punctuation_and_fold_apostrophes() {
        let k = keys("I\u{2019}m sorry, but I can't help. The 3 answers");
        assert!(k.contains(&"i'm sorry, but i can't".to_string()));
        assert!(k.contains(&"can't help".to_string()));
        // No n-gram crosses a sentence break or holds a digit; stopword-only ones are dropped.
        assert!(!k.iter().any(|g| g.contains("help. the") || g.contains('3')));
        assert!(!k.contains(&"but i".to_string()));
        let g = grams("I\u{2019}m  SORRY");
        assert_eq!(
            g.iter()
                .find(|g| g.key == "i'm sorry")
                .map(|g| g.surface.as_str()),
            Some("I'm SORRY")
        );
    }

    #[test]
    fn cjk_grams_are_character_ngrams_within_runs() {
        let k = keys("很抱歉，我不能完成。ok");
        for want in ["很抱歉", "抱歉", "我不能", "不能完成"] {
            assert!(k.contains(&want.to_string()), "{want} in {k:?}");
        }
        assert!(!k
            .iter()
            .any(|g| g.contains('，') || g.chars().count() > 4 && !g.is_ascii()));
    }

    #[test]
    fn refusal_markers() {
        assert!(looks_like_refusal("i cannot assist with"));
        assert!(looks_like_refusal("很抱歉"));
        assert!(looks_like_refusal("lo siento, no puedo"));
        assert!(!looks_like_refusal("the answer is"));
        assert!(!looks_like_refusal("significant cant")); // whole words only
        assert_eq!(refusal_cue("sorry for the confusion"), Cue::Apology);
        assert_eq!(refusal_cue("很抱歉，我不能"), Cue::Inability);
        assert!(gives_final_answer("I can\u{2019}t be sure, but \\boxed{7}"));
        assert!(gives_final_answer(
            "Sorry for the confusion. The Answer is 7."
        ));
        assert!(!gives_final_answer("I cannot answer that."));
    }

    #[test]
    fn variations_name_what_differs() {
        assert_eq!(
            variations("I\u{2019}m sorry", "I'm sorry"),
            vec![Variation::Apostrophe]
        );
        assert_eq!(
            variations("time constraint", "Time  Constraint"),
            vec![Variation::Case, Variation::Spacing]
        );
    }

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
}
