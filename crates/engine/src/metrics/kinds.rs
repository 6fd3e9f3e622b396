//! The mistake kinds `diff` compares as shares (issue 28): the kinds of
//! the families whose kinds are a fixed vocabulary — `format_error` (its
//! seven rules), `llm_failed` (the cause without its parameter) and
//! `duplicate_query` (how the first run went), each with `unclassified`.
//! A trace's count of each is a [`Tally`](super::Tally) slot
//! ([`KindTally`]), so a kind's share (its verdicts / its family's
//! verdicts) is an ordinary ratio figure: `<family>_share.<kind>` in the
//! registry ([`super::figures::KIND_FIGURES`]). `unknown_tool` and
//! `tool_error` kinds come from trace text and are not compared.
//!
//! The fixes json_repair made are compared the same way ([`FixTally`]):
//! `json_fixes_share.<fix>` is the share of the calls json_repair repaired
//! that needed that fix (a call may need several, so these shares add up
//! to 1 or more), as `analyze`'s `mistakes.json_fix_shares`.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::mistakes::UNCLASSIFIED;
use crate::detect::cause::{After, Cause, FAIL_GROUPS};
use crate::detect::format_error::FormatKind;
use crate::detect::Reason;
use crate::parse::json_repair::JsonFix;
use crate::parse::JsonPath;
use crate::replay::{Outcome, Verdict};

/// The compared families, in order.
pub const SHARE_FAMILIES: [&str; 3] = ["format_error", "llm_failed", "duplicate_query"];

/// How many kinds [`SHARE_KINDS`] lists.
pub const KINDS: usize = 19;

/// Every compared (family, kind), family by family, `unclassified` last in each.
pub static SHARE_KINDS: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
    let mut all: Vec<(&str, &str)> = FormatKind::ALL
        .iter()
        .map(|k| (SHARE_FAMILIES[0], k.name()))
        .collect();
    all.push((SHARE_FAMILIES[0], UNCLASSIFIED));
    all.extend(FAIL_GROUPS.iter().map(|g| (SHARE_FAMILIES[1], *g)));
    all.push((SHARE_FAMILIES[1], UNCLASSIFIED));
    all.extend(After::ALL.iter().map(|a| (SHARE_FAMILIES[2], a.name())));
    all.push((SHARE_FAMILIES[2], UNCLASSIFIED));
    all
});

/// The index in [`SHARE_KINDS`] of a verdict's compared kind, if it has one.
pub fn slot_of(v: &Verdict) -> Option<usize> {
    let ended = matches!(v.outcome, Outcome::Rollback | Outcome::End);
    let (family, kind) = if v.outcome == Outcome::LlmFailed {
        let kind = match &v.cause {
            Some(Cause::LlmFailed(f)) => f.group(),
            _ => UNCLASSIFIED,
        };
        (SHARE_FAMILIES[1], kind)
    } else if ended && v.reason == Some(Reason::FormatError) {
        let kind = v
            .format_why
            .as_ref()
            .map_or(UNCLASSIFIED, |w| w.kind.name());
        (SHARE_FAMILIES[0], kind)
    } else if ended && v.reason == Some(Reason::DuplicateQuery) {
        let kind = match &v.cause {
            Some(Cause::DuplicateQuery { after, .. }) => after.name(),
            _ => UNCLASSIFIED,
        };
        (SHARE_FAMILIES[2], kind)
    } else {
        return None;
    };
    SHARE_KINDS
        .iter()
        .position(|&(f, k)| f == family && k == kind)
}

/// A trace's (or a set's) verdicts of each compared kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindTally(pub [u64; KINDS]);

impl Default for KindTally {
    fn default() -> Self {
        KindTally([0; KINDS])
    }
}

impl KindTally {
    pub fn count(&mut self, v: &Verdict) {
        if let Some(i) = slot_of(v) {
            self.0[i] += 1;
        }
    }

    pub fn add(&mut self, o: &KindTally) {
        super::tally::add_arrays(&mut self.0, &o.0);
    }

    /// The verdicts of kind `i`.
    pub fn kind(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// The verdicts of all kinds of family `f` (an index in [`SHARE_FAMILIES`]).
    pub fn family(&self, f: usize) -> u64 {
        let name = SHARE_FAMILIES.get(f).copied().unwrap_or("");
        SHARE_KINDS
            .iter()
            .zip(self.0.iter())
            .filter(|((family, _), _)| *family == name)
            .map(|(_, n)| n)
            .sum()
    }
}

/// The family name of the compared fixes.
pub const FIX_FAMILY: &str = "json_fixes";

/// How many fixes [`FixTally`] counts: every [`JsonFix`].
pub const FIXES: usize = JsonFix::ALL.len();

/// A trace's (or a set's) calls that json_repair repaired, each fix
/// counted once per call it was made in ([`JsonFix::ALL`] order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixTally(pub [u64; FIXES]);

impl Default for FixTally {
    fn default() -> Self {
        FixTally([0; FIXES])
    }
}

impl FixTally {
    /// Counts the fixes of `v`'s calls that took the `repaired` path (the
    /// calls `analyze`'s `mistakes.json_fixes` counts).
    pub fn count(&mut self, v: &Verdict) {
        for call in v.calls.iter().filter(|c| c.json == JsonPath::Repaired) {
            for fix in call.fixes.iter() {
                self.0[fix as usize] += 1;
            }
        }
    }

    pub fn add(&mut self, o: &FixTally) {
        super::tally::add_arrays(&mut self.0, &o.0);
    }

    /// The repaired calls with fix `i` (an index in [`JsonFix::ALL`]).
    pub fn fix(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_counted_and_distinct() {
        assert_eq!(SHARE_KINDS.len(), KINDS);
        for (i, k) in SHARE_KINDS.iter().enumerate() {
            assert_eq!(SHARE_KINDS.iter().position(|x| x == k), Some(i));
        }
    }

    /// [`FixTally`] indexes by `fix as usize`: the enum's order is `ALL`'s.
    #[test]
    fn fix_slots_follow_the_vocabulary() {
        for (i, f) in JsonFix::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "{}", f.name());
        }
    }
}
