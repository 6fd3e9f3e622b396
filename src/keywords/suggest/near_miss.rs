//! Near-misses: the current keywords as the data writes them when exact
//! matching misses (another apostrophe, case or spacing).

use std::cmp::Reverse;
use std::collections::HashMap;

use serde::Serialize;

use crate::detect::refusal::{find_keyword, fold_quote};
use crate::keywords::excerpt;
use crate::keywords::labels::LineKey;
use crate::policy::MatchMode;

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
}
