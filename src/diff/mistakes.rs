//! The "mistakes" block of `diff`'s views: which kind shares
//! (`<family>_share.<kind>`, [`Comparison::kind_shares`]) a reader is
//! shown, in what order. One selection for every back end — the terminal
//! table and Markdown ([`super::view`]) and the page (`crate::html::diff`)
//! — so they cannot disagree on what the block holds.
//!
//! Only kinds that occur on a side are shown (a kind at 0% on both sides
//! says nothing), grouped by family in registry order, each family's
//! kinds by size (the larger of the two shares first). A back end may cap
//! a family's rows; the JSON always has every kind.

use super::{Comparison, MetricChange};

/// Rows of one family the terminal shows; the rest are counted in a note
/// pointing at `--format json`.
pub const TERMINAL_ROWS: usize = 8;

/// One family's shown kinds.
#[derive(Debug)]
pub struct KindFamily<'a> {
    /// `format_error`, `llm_failed`, `duplicate_query`, `json_fixes`.
    pub family: &'a str,
    /// What the shares are of, on each side (the family's verdicts, or the
    /// calls json_repair repaired).
    pub base_total: u64,
    pub new_total: u64,
    /// The kinds that occur, largest first.
    pub rows: Vec<&'a MetricChange>,
}

impl KindFamily<'_> {
    /// What the denominator counts: `format_error verdicts`, `calls json_repair repaired`.
    pub fn of_what(&self) -> String {
        self.rows
            .first()
            .map(|m| m.def.figure.den.name())
            .unwrap_or_default()
    }

    /// `12 → 9 format_error verdicts` (base → new).
    pub fn totals(&self) -> String {
        format!(
            "{} → {} {}",
            crate::render::format::thousands(self.base_total),
            crate::render::format::thousands(self.new_total),
            self.of_what()
        )
    }
}

/// The family a kind share belongs to: `format_error` of `format_error_share.cut_off`.
pub fn family_of(id: &str) -> &str {
    let prefix = id.split_once('.').map_or(id, |(p, _)| p);
    prefix.strip_suffix("_share").unwrap_or(prefix)
}

/// The families with a kind that occurs, in registry order.
pub fn families(c: &Comparison) -> Vec<KindFamily<'_>> {
    let mut out: Vec<KindFamily<'_>> = Vec::new();
    for m in &c.kind_shares {
        let family = family_of(m.metric);
        let at = match out.iter().position(|f| f.family == family) {
            Some(at) => at,
            None => {
                out.push(KindFamily {
                    family,
                    base_total: m.base_counts[1],
                    new_total: m.new_counts[1],
                    rows: Vec::new(),
                });
                out.len() - 1
            }
        };
        if !m.is_idle() {
            out[at].rows.push(m);
        }
    }
    out.retain(|f| !f.rows.is_empty());
    for f in &mut out {
        // Stable: equal sizes keep the registry's order.
        f.rows.sort_by(|a, b| size(b).total_cmp(&size(a)));
    }
    out
}

/// A kind's size: the larger of its two shares.
fn size(m: &MetricChange) -> f64 {
    m.base.unwrap_or(0.0).max(m.new.unwrap_or(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_names_its_family() {
        assert_eq!(family_of("format_error_share.cut_off"), "format_error");
        assert_eq!(family_of("json_fixes_share.truncated"), "json_fixes");
        assert_eq!(family_of("rollback_rate"), "rollback_rate");
    }
}
