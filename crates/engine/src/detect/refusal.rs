//! Refusal: a reply in which no tool call was parsed (and no MCP tag
//! leaked) that contains a refusal keyword. The layer rolls the attempt back
//! (or ends the loop at the limit).
//!
//! Upstream: `core/orchestrator.py` `_handle_response_format_issues` (its
//! second check, after the MCP tags), with `utils/prompt_utils.py`
//! `refusal_keywords` ([`Policy::refusal_keywords`]), matched as
//! case-sensitive substrings ([`MatchMode::Exact`]). [`MatchMode::Normalized`]
//! is ours: case, quote variants and whitespace runs folded on both sides,
//! for "what if" policies and `mirotrace keywords`.

use std::ops::Range;

use memchr::memmem::Finder;

use super::Reason;
use crate::policy::{MatchMode, Policy};

/// The reason this detector reports.
pub const REASONS: [Reason; 1] = [Reason::Refusal];

/// The first refusal keyword (in the policy's list order) found in `text`
/// under the policy's match mode; the verdict names it.
pub fn refusal_keyword<'a>(text: &str, policy: &'a Policy) -> Option<&'a str> {
    match policy.refusal_match {
        MatchMode::Exact => policy
            .refusal_keywords
            .iter()
            .find(|k| text.contains(k.as_str()))
            .map(String::as_str),
        MatchMode::Normalized => {
            let folded = fold_text(text);
            policy
                .refusal_keywords
                .iter()
                .find(|k| folded.contains(&fold_text(k)))
                .map(String::as_str)
        }
    }
}

/// The policy's refusal keywords ready for many replies: each keyword's
/// searcher is built once, here (under `normalized`, of the folded
/// keyword), instead of once per reply and keyword as `str::contains`
/// does ([`refusal_keyword`] folds and searches on every call).
#[derive(Debug, Clone)]
pub struct RefusalMatcher {
    /// One searcher per keyword, in the policy's order.
    finders: Vec<Finder<'static>>,
    mode: MatchMode,
}

impl RefusalMatcher {
    pub fn new(policy: &Policy) -> RefusalMatcher {
        let mode = policy.refusal_match;
        let finders = policy
            .refusal_keywords
            .iter()
            .map(|k| match mode {
                MatchMode::Exact => Finder::new(k).into_owned(),
                MatchMode::Normalized => Finder::new(&fold_text(k)).into_owned(),
            })
            .collect();
        RefusalMatcher { finders, mode }
    }

    /// [`refusal_keyword`] for the policy this matcher was made from.
    pub fn find<'a>(&self, text: &str, policy: &'a Policy) -> Option<&'a str> {
        if self.mode != policy.refusal_match || self.finders.len() != policy.refusal_keywords.len()
        {
            return refusal_keyword(text, policy);
        }
        let folded;
        let text = match self.mode {
            MatchMode::Exact => text,
            MatchMode::Normalized => {
                folded = fold_text(text);
                &folded
            }
        };
        let at = self
            .finders
            .iter()
            .position(|f| f.find(text.as_bytes()).is_some())?;
        policy.refusal_keywords.get(at).map(String::as_str)
    }
}

/// Folds case, curly quotes/apostrophes and runs of whitespace, for the
/// `normalized` match modes. Only whitespace folds to blank: a phrase is
/// blank after folding exactly when it is blank before (the policy's
/// validation relies on that).
pub fn fold_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        let c = fold_quote(c);
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.extend(c.to_lowercase());
    }
    out
}

/// Apostrophe and quote variants → `'` and `"` (the quote part of [`fold_text`]).
pub fn fold_quote(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' | '`' | '\u{00B4}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
        c => c,
    }
}

/// Where `keyword` occurs in `text` under `mode`, as a byte range of `text`
/// (for excerpts). Agrees with [`refusal_keyword`] on whether it occurs.
pub fn find_keyword(text: &str, keyword: &str, mode: MatchMode) -> Option<Range<usize>> {
    match mode {
        MatchMode::Exact => text.find(keyword).map(|at| at..at + keyword.len()),
        MatchMode::Normalized => {
            // Fold with a map from each folded byte back to its source char.
            let mut folded = String::with_capacity(text.len());
            let mut origin: Vec<(usize, usize)> = Vec::with_capacity(text.len());
            let mut in_space = false;
            for (at, c) in text.char_indices() {
                let end = at + c.len_utf8();
                let c = fold_quote(c);
                let before = folded.len();
                if c.is_whitespace() {
                    if !in_space {
                        folded.push(' ');
                    }
                    in_space = true;
                } else {
                    in_space = false;
                    folded.extend(c.to_lowercase());
                }
                origin.extend(std::iter::repeat_n((at, end), folded.len() - before));
            }
            let needle = fold_text(keyword);
            let start = folded.find(&needle)?;
            let last = start + needle.len().max(1) - 1;
            Some(origin.get(start)?.0..origin.get(last)?.1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_mode(mode: MatchMode) -> Policy {
        Policy {
            refusal_match: mode,
            ..Policy::default()
        }
    }

    const CURLY: &str = "I\u{2019}m sorry, but I can\u{2019}t";

    #[test]
    fn keywords_match_as_upstream_and_normalized() {
        use MatchMode::{Exact, Normalized};
        // (mode, text, first keyword found)
        let cases: &[(MatchMode, &str, Option<&str>)] = &[
            // Upstream: case-sensitive substrings, curly apostrophes.
            (
                Exact,
                "I\u{2019}m sorry, but I can\u{2019}t do that",
                Some(CURLY),
            ),
            (Exact, "I'm sorry, but I can't do that", None),
            (
                Exact,
                "Given the time constraint, stop.",
                Some("time constraint"),
            ),
            (Exact, "Time constraint", None),
            (Exact, "time  constraint", None),
            (
                Exact,
                "Sadly, I'm sorry, I cannot solve it",
                Some("I'm sorry, I cannot solve"),
            ),
            (Exact, "", None),
            // List order wins over position in the text.
            (
                Exact,
                "I'm sorry, I cannot solve this time constraint",
                Some("time constraint"),
            ),
            // Normalized: case, quotes and whitespace runs fold on both sides.
            (Normalized, "I'M SORRY,  but I can't", Some(CURLY)),
            (Normalized, "I\u{2018}m sorry, but I can`t", Some(CURLY)),
            (
                Normalized,
                "Under a Time\nConstraint",
                Some("time constraint"),
            ),
            (
                Normalized,
                "Under a Time\u{3000}\tConstraint",
                Some("time constraint"),
            ),
            // Punctuation is not folded.
            (Normalized, "I'm sorry but I can't", None),
            (Normalized, "timeconstraint", None),
        ];
        for (mode, text, expected) in cases {
            let p = with_mode(*mode);
            assert_eq!(refusal_keyword(text, &p), *expected, "{mode:?} {text:?}");
        }
    }

    #[test]
    fn folding_snapshot() {
        let inputs = [
            "I\u{2019}M  Sorry",
            "\u{201C}Quoted\u{201D} \u{00B4}x\u{2032}",
            "  lead\t\n trail  ",
            "İSTANBUL",
            "ǅ ß Σ",
            "",
        ];
        let rendered: Vec<String> = inputs
            .iter()
            .map(|t| format!("{t:?} => {:?}", fold_text(t)))
            .collect();
        let expected = [
            r#""I’M  Sorry" => "i'm sorry""#,
            r#""“Quoted” ´x′" => "\"quoted\" 'x'""#,
            r#""  lead\t\n trail  " => " lead trail ""#,
            r#""İSTANBUL" => "i\u{307}stanbul""#,
            r#""ǅ ß Σ" => "ǆ ß σ""#,
            r#""" => """#,
        ];
        assert_eq!(rendered, expected);
    }

    #[test]
    fn only_whitespace_folds_to_blank() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let s = c.to_string();
            assert_eq!(
                fold_text(&s).trim().is_empty(),
                c.is_whitespace(),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }

    #[test]
    fn keyword_positions_map_back_to_the_original_text() {
        let text = "Well.  I\u{2019}M  sorry, but I can't.";
        let r = find_keyword(text, "i'm sorry, but", MatchMode::Normalized).unwrap();
        assert_eq!(&text[r], "I\u{2019}M  sorry, but");
        assert_eq!(find_keyword(text, "can't", MatchMode::Exact), Some(27..32));
        assert_eq!(find_keyword(text, "CAN'T", MatchMode::Exact), None);
        assert_eq!(find_keyword("İx", "i", MatchMode::Normalized), Some(0..2));
        assert_eq!(
            find_keyword("a  b", "A B", MatchMode::Normalized),
            Some(0..4)
        );
    }

    #[test]
    fn find_keyword_agrees_with_the_detector() {
        let texts = [
            "I\u{2019}m sorry, but I can\u{2019}t",
            "I'M SORRY, BUT I CAN'T",
            "a TIME\u{00A0}constraint here",
            "I'm sorry, I cannot solve",
            "nothing to see",
            "İ time constraint",
        ];
        for mode in [MatchMode::Exact, MatchMode::Normalized] {
            let p = with_mode(mode);
            for text in texts {
                let first = p
                    .refusal_keywords
                    .iter()
                    .find(|k| find_keyword(text, k, mode).is_some())
                    .map(String::as_str);
                assert_eq!(first, refusal_keyword(text, &p), "{mode:?} {text:?}");
            }
        }
    }

    #[test]
    fn the_matcher_finds_what_refusal_keyword_finds() {
        for mode in [MatchMode::Exact, MatchMode::Normalized] {
            let p = with_mode(mode);
            let m = RefusalMatcher::new(&p);
            for text in [
                "I'M SORRY,  but I can't",
                "I\u{2019}m sorry, but I can\u{2019}t",
                "TIME constraint",
                // Two keywords: the one first in the policy's list is named,
                // wherever it stands in the text.
                "Due to time constraints, I'm sorry, but I cannot continue",
                "nothing",
            ] {
                assert_eq!(
                    m.find(text, &p),
                    refusal_keyword(text, &p),
                    "{mode:?} {text:?}"
                );
            }
        }
    }
}
