//! The model's mistakes: a chart per family (the kinds, most first, with
//! their shares) and the view's tables of first examples and per-model /
//! per-agent counts, so the page says what the terminal report says.

use crate::analyze::aggregate::Aggregate;
use crate::analyze::view::mistakes::{family, kinds, share_base};
use crate::html::chart::{self, Bar};
use crate::html::escape::slug;
use crate::html::page::figure;
use crate::html::table;
use crate::parse::JsonPath;
use crate::render::format::pct;
use crate::render::{Block, Document, Section};

pub(super) fn mistakes(a: &Aggregate, view: Option<&Section>) -> String {
    let m = &a.mistakes;
    let repaired = a.tally.calls.path(JsonPath::Repaired);
    let mut figs = String::new();
    for (name, counts) in m.families() {
        let f = family(name);
        let kinds = kinds(counts);
        if kinds.is_empty() {
            continue;
        }
        let base = share_base(counts, f.several_per_item.then_some(repaired));
        let bars: Vec<Bar> = kinds
            .iter()
            .map(|&(kind, n)| {
                Bar::single(
                    kind,
                    n as f64,
                    class(name),
                    format!("{kind}: {n} ({} of {base})", pct(n, base)),
                    format!("{n} · {}", pct(n, base)),
                )
            })
            .collect();
        let id = format!("mistakes-{}", slug(name));
        figs.push_str(&figure(
            f.title,
            &format!("of {base}"),
            &chart::bars(&id, f.title, &bars, &[], None),
        ));
    }
    let mut out = String::new();
    if figs.is_empty() {
        out.push_str("<p class=\"note\">No format errors or repaired arguments to classify.</p>");
    } else {
        out.push_str("<div class=\"figs\">");
        out.push_str(&figs);
        out.push_str("</div>");
    }
    if let Some(section) = view {
        // The tables only: the charts above stand for the "none" notes.
        let tables: Vec<Block> = section
            .blocks
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .cloned()
            .collect();
        out.push_str(&table::view(&Document {
            title: String::new(),
            level: 2,
            headline: Vec::new(),
            sections: vec![Section {
                title: String::new(),
                blocks: tables,
            }],
        }));
    }
    out
}

/// A family's bar colour: its reason's (or outcome's) where it has one.
fn class(family: &str) -> &'static str {
    match family {
        "format_error" => "r-format_error",
        "unknown_tool" => "r-unknown_tool",
        "tool_error" => "r-tool_error",
        "duplicate_query" => "r-duplicate_query",
        "llm_failed" => "o-llm_failed",
        "json_fixes" => "c-json-repaired",
        _ => "c-repair",
    }
}
