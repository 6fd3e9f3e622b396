//! Cutting what the model says into candidate phrases: visible text,
//! sentences, word n-grams and, for CJK text (no spaces between words),
//! n-grams of the words jieba's dictionary finds, so that a phrase never
//! ends inside a word (`不能继` of `不能继续`).

use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use serde::Serialize;

use crate::detect::refusal::{fold_quote, fold_text};

/// Texts longer than this are mined on their first and last
/// [`MINED_EDGE_BYTES`] only: a refusal opens or closes an answer, and the
/// candidates of one text (and jieba's cut of it) grow with its length.
pub const MINED_BYTES: usize = 16 * 1024;
/// What is kept of each end of a longer text.
pub const MINED_EDGE_BYTES: usize = 8 * 1024;

/// Longest word n-gram mined.
const MAX_WORDS: usize = 6;
/// CJK phrases: at least this many characters…
const CJK_MIN: usize = 2;
/// …at most this many…
const CJK_MAX: usize = 8;
/// …made of at most this many words.
const CJK_MAX_WORDS: usize = 4;

/// jieba's dictionary, loaded on the first CJK text (a fraction of a
/// second), never for text without it.
static JIEBA: LazyLock<jieba_rs::Jieba> = LazyLock::new(jieba_rs::Jieba::new);

/// The words of `run` (CJK characters without spaces) as byte ranges
/// into it, by jieba's dictionary (no HMM guessing of unknown words: a
/// phrase should be made of words the dictionary vouches for; unknown
/// characters come out one by one).
fn cjk_words(run: &str) -> Vec<(usize, usize)> {
    JIEBA
        .cut(run, false)
        .into_iter()
        .map(|t| (t.byte_start, t.byte_end))
        .collect()
}

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

/// The part of `text` that is mined (see [`MINED_BYTES`]): the text itself,
/// or its two ends joined by a line break, so no phrase spans the cut.
pub fn mined_part(text: &str) -> Cow<'_, str> {
    if text.len() <= MINED_BYTES {
        return Cow::Borrowed(text);
    }
    let mut head = MINED_EDGE_BYTES;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - MINED_EDGE_BYTES;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    Cow::Owned(format!("{}\n{}", &text[..head], &text[tail..]))
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

/// Whole texts that harnesses (and mirotrace's replay, for an empty
/// answer) write in the model's place: upstream's placeholder for an empty
/// response, a task log's stand-in for attempts it did not record. Never
/// the model's words, so never mined or shown as near-misses.
pub const PLACEHOLDERS: &[&str] = &["LLM response is empty.", "No further recorded attempts."];

/// Whether `text` is, whole, one of the [`PLACEHOLDERS`].
pub fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    PLACEHOLDERS
        .iter()
        .any(|p| t == *p || t == p.trim_end_matches('.'))
}

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

pub(super) fn is_word_char(c: char) -> bool {
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
pub(super) const STOPWORDS: &[&str] = &[
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
        // CJK word n-grams over runs of adjacent CJK characters.
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
            let (from, to) = (sentence[i].start, sentence[j - 1].end);
            let words = cjk_words(&text[from..to]);
            for a in 0..words.len() {
                for n in 1..=CJK_MAX_WORDS.min(words.len() - a) {
                    let (start, end) = (from + words[a].0, from + words[a + n - 1].1);
                    let chars = text[start..end].chars().count();
                    if chars > CJK_MAX {
                        break;
                    }
                    if chars >= CJK_MIN {
                        push(start, end, chars, GramKind::Chars);
                    }
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
    fn cjk_grams_are_word_ngrams_within_runs() {
        let k = keys("很抱歉，我不能完成。ok");
        for want in ["很抱歉", "抱歉", "我不能", "不能完成"] {
            assert!(k.contains(&want.to_string()), "{want} in {k:?}");
        }
        assert!(!k
            .iter()
            .any(|g| g.contains('，') || g.chars().count() > CJK_MAX && !g.is_ascii()));
    }

    #[test]
    fn a_long_text_is_mined_on_its_two_ends() {
        let middle = "filler words here. ".repeat(4000);
        let text = format!("I cannot open it. {middle}Sorry, I give up.");
        let part = mined_part(&text);
        assert!(part.len() <= MINED_BYTES + 1, "{}", part.len());
        let k = keys(&part);
        assert!(k.contains(&"i cannot open it".to_string()));
        assert!(k.contains(&"i give up".to_string()));
        // Cut on a character boundary, whatever the script.
        let cjk = "我不能".repeat(10_000);
        assert!(mined_part(&cjk)
            .chars()
            .all(|c| c == '\n' || "我不能".contains(c)));
        assert_eq!(mined_part("short"), "short");
    }

    #[test]
    fn cjk_grams_never_end_inside_a_word() {
        let k = keys("对不起，我不能继续这个任务。抱歉，我无法访问该网页。");
        for cut in ["不能继", "我无法访", "无法访", "续这"] {
            assert!(!k.contains(&cut.to_string()), "{cut} in {k:?}");
        }
        for want in ["不能继续", "我无法访问", "无法访问"] {
            assert!(k.contains(&want.to_string()), "{want} in {k:?}");
        }
    }
}
