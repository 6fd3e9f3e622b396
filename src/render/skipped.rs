//! What a run skipped (bad lines, unreadable inputs, records that are not
//! traces), kept for the page: stderr says it as it happens, but a reader
//! of a page in a pull request never sees stderr. The first
//! [`SHOWN`] problems are kept in full (`file:line: message`), and every
//! problem is counted by its kind (its reason up to the first `:`).

use std::collections::BTreeMap;

use super::doc::{Block, Line, Section};
use super::format::counted;

/// How many problems a page lists in full.
pub const SHOWN: usize = 10;

/// The section's title.
pub const TITLE: &str = "Skipped input";

/// The problems of a run, as its reports list them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Skipped {
    /// The first [`SHOWN`] problems, as stderr said them.
    pub shown: Vec<String>,
    /// Kind → problems, all of them.
    pub kinds: BTreeMap<String, u64>,
    /// Problems in all.
    pub total: u64,
    /// Problems counted elsewhere whose messages are gone (a merged
    /// partial keeps counts only): said as such.
    pub without_messages: u64,
}

impl Skipped {
    /// Counts one problem; `reason`'s part before its first `:` is its kind.
    pub fn add(&mut self, message: &str, reason: &str) {
        self.total += 1;
        if self.shown.len() < SHOWN {
            self.shown.push(message.to_string());
        }
        let kind = reason.split(':').next().unwrap_or(reason).trim();
        *self.kinds.entry(kind.to_string()).or_default() += 1;
    }

    /// Adds another side's problems (`diff` reads two).
    pub fn merge(&mut self, other: &Skipped) {
        for m in &other.shown {
            if self.shown.len() < SHOWN {
                self.shown.push(m.clone());
            }
        }
        for (k, n) in &other.kinds {
            *self.kinds.entry(k.clone()).or_default() += n;
        }
        self.total += other.total;
        self.without_messages += other.without_messages;
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0 && self.without_messages == 0
    }

    /// The kinds, most first (then by name).
    pub fn kinds(&self) -> Vec<(&str, u64)> {
        let mut kinds: Vec<(&str, u64)> =
            self.kinds.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        kinds.sort_by_key(|(k, n)| (std::cmp::Reverse(*n), *k));
        kinds
    }

    /// The section a report shows, or `None` when nothing was skipped.
    pub fn section(&self) -> Option<Section> {
        if self.is_empty() {
            return None;
        }
        let mut blocks = Vec::new();
        if self.total > 0 {
            let more = self.total.saturating_sub(self.shown.len() as u64);
            blocks.push(Block::Note(format!(
                "{} skipped; {}:",
                counted(self.total, "problem"),
                if more > 0 {
                    format!("the first {} as the run reported them", self.shown.len())
                } else {
                    "each as the run reported it".to_string()
                }
            )));
            blocks.push(Block::List(
                self.shown.iter().map(|m| Line::plain(m.as_str())).collect(),
            ));
            let kinds: Vec<String> = self
                .kinds()
                .iter()
                .map(|(k, n)| format!("{n} × {k}"))
                .collect();
            blocks.push(Block::Note(format!("by kind: {}", kinds.join(", "))));
        }
        if self.without_messages > 0 {
            blocks.push(Block::Note(format!(
                "{} skipped by the runs that made the merged partials (their stderr named them)",
                counted(self.without_messages, "line or record")
            )));
        }
        Some(Section {
            title: TITLE.into(),
            blocks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_are_kept_whole_and_all_are_counted_by_kind() {
        let mut s = Skipped::default();
        for i in 0..SHOWN + 3 {
            let reason = if i % 2 == 0 {
                "not JSON: at 3"
            } else {
                "too long"
            };
            s.add(&format!("a.jsonl:{i}: {reason} (line skipped)"), reason);
        }
        assert_eq!(s.shown.len(), SHOWN);
        assert_eq!(s.shown[0], "a.jsonl:0: not JSON: at 3 (line skipped)");
        assert_eq!(s.kinds(), [("not JSON", 7), ("too long", 6)]);
        let section = s.section().expect("a section");
        assert!(matches!(&section.blocks[1], Block::List(l) if l.len() == SHOWN));
        assert_eq!(
            section.blocks[2],
            Block::Note("by kind: 7 × not JSON, 6 × too long".into())
        );
        assert_eq!(Skipped::default().section(), None);
    }
}
