//! What marks a phrase as refusal-like: inability and apology words in a
//! small multilingual lexicon.

use serde::Serialize;

use super::text::is_word_char;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keywords::suggest::text::gives_final_answer;

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
}
