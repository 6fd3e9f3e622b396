//! The model's mistakes (issue 28): for each family
//! [`Mistakes::families`] returns, its kinds with counts, shares and first
//! example, then per model and per agent when there is more than one. Drawn
//! generically, so a new family needs only a title in [`FAMILIES`] (an
//! unknown one is titled by its name).

use std::collections::BTreeMap;

use super::{Block, Cell, Section, Table, Tone};
use crate::metrics::mistakes::{Example, Mistakes};
use crate::render::format::{pct, shorten};

/// The section's title (the page finds the section by it).
pub const TITLE: &str = "Mistakes";

/// Longest excerpt of an example shown in a cell (the JSON has it whole).
pub const EXCERPT_WIDTH: usize = 40;

/// A family's title and what its shares are of.
pub struct Family {
    pub name: &'static str,
    /// A heading: what the counts are.
    pub title: &'static str,
    /// The noun of the kinds' column.
    pub kind: &'static str,
    /// Whether one item can carry several kinds (a repaired call several
    /// fixes), so the shares are of items and need not add up to 100%.
    pub several_per_item: bool,
}

/// The families known by name, in no particular order (the order is
/// [`Mistakes::families`]'s).
pub const FAMILIES: [Family; 7] = [
    Family {
        name: "format_error",
        title: "Format errors by kind",
        kind: "kind",
        several_per_item: false,
    },
    Family {
        name: "json_fixes",
        title: "Repaired arguments by fix",
        kind: "fix",
        several_per_item: true,
    },
    Family {
        name: "llm_failed",
        title: "LLM failures by cause",
        kind: "cause",
        several_per_item: false,
    },
    Family {
        name: "unknown_tool",
        title: "Unknown tools the model invented",
        kind: "name",
        several_per_item: false,
    },
    Family {
        name: "tool_error",
        title: "Tool errors by class",
        kind: "class",
        several_per_item: false,
    },
    Family {
        name: "duplicate_query",
        title: "Duplicate queries by what came before",
        kind: "after",
        several_per_item: false,
    },
    Family {
        name: "owner",
        title: "Tool errors and LLM failures: the model's or the environment's",
        kind: "family.owner",
        several_per_item: false,
    },
];

/// The description of family `name`; one made from the name when unknown.
pub fn family(name: &'static str) -> Family {
    FAMILIES
        .into_iter()
        .find(|f| f.name == name)
        .unwrap_or(Family {
            name,
            title: name,
            kind: "kind",
            several_per_item: false,
        })
}

/// The kinds of one family with a count, most first (then by name).
pub fn kinds(counts: &BTreeMap<String, u64>) -> Vec<(&str, u64)> {
    let mut kinds: Vec<(&str, u64)> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.as_str(), *n))
        .collect();
    kinds.sort_by_key(|(k, n)| (std::cmp::Reverse(*n), *k));
    kinds
}

/// What a family's shares are of: `items` when given (repaired calls for
/// the fixes), else the sum of its kinds.
pub fn share_base(counts: &BTreeMap<String, u64>, items: Option<u64>) -> u64 {
    items.unwrap_or_else(|| counts.values().sum())
}

/// An example as `file:line` and a short excerpt, one line.
pub fn example_text(e: &Example) -> (String, String) {
    let excerpt = e.excerpt.replace('\n', "\\n");
    (
        format!("{}:{}", e.file, e.line),
        shorten(&excerpt, EXCERPT_WIDTH),
    )
}

/// The section; `repaired_calls` is what the fixes' shares are of.
pub(super) fn section(m: &Mistakes, repaired_calls: u64) -> Section {
    let mut blocks = Vec::new();
    for (name, counts) in m.families() {
        let f = family(name);
        let kinds = kinds(counts);
        if kinds.is_empty() {
            blocks.push(Block::Note(format!("{}: none", f.title)));
            continue;
        }
        let items = f.several_per_item.then_some(repaired_calls);
        let base = share_base(counts, items);
        let rows = kinds
            .iter()
            .map(|&(kind, n)| {
                let (at, excerpt) = m
                    .examples
                    .get(&format!("{name}.{kind}"))
                    .map(example_text)
                    .unwrap_or_default();
                vec![
                    Cell::text(kind),
                    Cell::count(n),
                    Cell::num(pct(n, base)),
                    Cell::text(at).tone(Tone::Dim),
                    Cell::text(excerpt),
                ]
            })
            .collect();
        let mut table = Table::new(&[f.kind, "count", "share", "first seen", "excerpt"])
            .priority(&[9, 9, 8, 7, 6]);
        table.rows = rows;
        let caption = if f.several_per_item {
            format!("{} (shares of {repaired_calls} repaired calls)", f.title)
        } else {
            format!("{} ({base})", f.title)
        };
        blocks.push(Block::Table(table.caption(caption)));
        for (who, by) in [("model", &m.by_model), ("agent", &m.by_agent)] {
            if let Some(t) = per(who, name, by) {
                blocks.push(Block::Table(t));
            }
        }
    }
    Section {
        title: TITLE.into(),
        blocks,
    }
}

/// Family `name` per model or agent, when more than one has any: each
/// one's count and its kinds, most first.
fn per(
    who: &str,
    name: &'static str,
    by: &BTreeMap<String, BTreeMap<String, u64>>,
) -> Option<Table> {
    let prefix = format!("{name}.");
    let rows: Vec<Vec<Cell>> = by
        .iter()
        .filter_map(|(who, keys)| {
            let counts: BTreeMap<String, u64> = keys
                .iter()
                .filter_map(|(k, n)| Some((k.strip_prefix(&prefix)?.to_string(), *n)))
                .collect();
            let total: u64 = counts.values().sum();
            (total > 0).then(|| {
                let kinds: Vec<String> = kinds(&counts)
                    .iter()
                    .map(|(k, n)| format!("{k} {n} ({})", pct(*n, total)))
                    .collect();
                vec![
                    Cell::text(who.as_str()),
                    Cell::count(total),
                    Cell::text(kinds.join(" · ")),
                ]
            })
        })
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let mut table = Table::new(&[who, "count", "kinds (share of the row)"]);
    table.rows = rows;
    Some(table.caption(format!("{} per {who}", family_title_lower(name))))
}

fn family_title_lower(name: &'static str) -> String {
    let title = family(name).title;
    let mut chars = title.chars();
    match (chars.next(), chars.clone().next()) {
        // An acronym ("LLM failures") keeps its capitals.
        (Some(c), Some(next)) if next.is_uppercase() => std::iter::once(c).chain(chars).collect(),
        (Some(c), _) => c.to_lowercase().chain(chars).collect(),
        (None, _) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(file: &str, line: u64, excerpt: &str) -> Example {
        Example {
            file: file.into(),
            line,
            trace_id: "t".into(),
            excerpt: excerpt.into(),
        }
    }

    #[test]
    fn every_family_is_drawn_with_shares_examples_and_models() {
        let mut m = Mistakes::default();
        m.format_error.insert("cut_off".into(), 3);
        m.format_error.insert("stray_tag".into(), 1);
        m.json_fixes.insert("trailing_comma".into(), 2);
        m.examples.insert(
            "format_error.cut_off".into(),
            example("a.jsonl", 7, "<use_mcp_tool>\n<server"),
        );
        for (model, n) in [("m1", 3), ("m2", 1)] {
            m.by_model
                .entry(model.into())
                .or_default()
                .insert("format_error.cut_off".into(), n);
        }
        m.by_agent
            .entry("main".into())
            .or_default()
            .insert("format_error.cut_off".into(), 4);
        let names: Vec<&str> = m.families().iter().map(|f| f.0).collect();
        assert_eq!(
            names,
            [
                "format_error",
                "json_fixes",
                "llm_failed",
                "unknown_tool",
                "tool_error",
                "duplicate_query",
                "owner"
            ]
        );
        let s = section(&m, 4);
        let tables: Vec<&Table> = s
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        // Kinds of format errors, per model (two models), fixes; one agent: no table.
        assert_eq!(tables.len(), 3, "{tables:#?}");
        let kinds = &tables[0];
        assert_eq!(kinds.caption.as_deref(), Some("Format errors by kind (4)"));
        assert_eq!(kinds.rows[0][0].text, "cut_off");
        assert_eq!(kinds.rows[0][2].text, "75.0%");
        assert_eq!(kinds.rows[0][3].text, "a.jsonl:7");
        assert_eq!(kinds.rows[0][4].text, "<use_mcp_tool>\\n<server");
        assert_eq!(tables[1].header[0], "model");
        assert_eq!(
            tables[2].rows[0][2].text, "50.0%",
            "shares of repaired calls"
        );
    }

    #[test]
    fn acronyms_keep_their_capitals_in_lower_case_titles() {
        assert!(family_title_lower("llm_failed").starts_with("LLM"));
        assert!(family_title_lower("format_error").starts_with("format"));
    }

    #[test]
    fn the_families_of_issue_28_have_titles() {
        for name in [
            "llm_failed",
            "unknown_tool",
            "tool_error",
            "duplicate_query",
            "owner",
        ] {
            assert_ne!(family(name).title, name);
        }
        assert_eq!(family("something_new").title, "something_new");
    }
}
