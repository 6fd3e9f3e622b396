//! The worst traces, each a `<details>` that opens on its timeline: one row
//! per attempt with outcome, reason and what caused it, calls and repairs.
//! `<details>` opens without scripts; `#trace-N` in the address opens one
//! when scripts run.

use crate::render::format::counted;
use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::escape::{Breakable, Esc};
use crate::analyze::rank::TraceRecord;
use crate::analyze::view::traces::label;
use crate::analyze::worst_timeline::{Step, Timeline};
use crate::render::format::pct;
use crate::render::shell::{program, replay_trace, see_it_with};

/// The worst traces that rolled back at all, worst first; an id in
/// `ambiguous` (listed from several files) is shown with its file.
pub fn worst_traces(traces: &[TraceRecord], ambiguous: &BTreeSet<String>) -> String {
    let shown: Vec<&TraceRecord> = traces.iter().filter(|t| t.rollbacks > 0).collect();
    if shown.is_empty() {
        return "<p class=\"note\">No trace rolled back.</p>".into();
    }
    let mut out = String::from(
        "<input class=\"filter\" type=\"search\" data-for=\"worst-list\" placeholder=\"filter traces (id, file, reason)…\" aria-label=\"filter traces\">\
         <div id=\"worst-list\">",
    );
    for (i, t) in shown.iter().enumerate() {
        let mut facts = format!(
            "{} / {} reached ({}) · top reason {} · longest streak {}",
            counted(t.rollbacks, "rollback"),
            counted(t.reached, "attempt"),
            pct(t.rollbacks, t.reached),
            t.top_reason.map_or("–", |r| r.name()),
            t.longest_streak
        );
        if let Some(e) = t.ended_early {
            let _ = write!(facts, " · main loop ended early: {}", e.name());
        }
        let _ = write!(
            out,
            "<details class=\"trace\" id=\"trace-{}\"><summary><span class=\"rank\">#{}</span><span class=\"id\">{}</span>\
             <span class=\"facts\">{}</span></summary><div class=\"body\">\
             <p class=\"note\">file {} · in a terminal: <code>{}</code></p>",
            i + 1,
            i + 1,
            Breakable(&label(&t.trace_id, &t.file, ambiguous)),
            Esc(&facts),
            Esc(&t.file),
            Esc(&replay_trace(&t.file, &t.trace_id).unwrap_or_else(|| see_it_with(&t.file, &t.trace_id).0)),
        );
        match &t.timeline {
            Some(timeline) => out.push_str(&timeline_table(timeline)),
            None => out.push_str("<p class=\"note\">timeline not kept</p>"),
        }
        out.push_str("</div></details>");
    }
    out.push_str("</div>");
    out
}

/// A word as a POSIX shell reads it back (quoted when it has to be).
fn timeline_table(t: &Timeline) -> String {
    let mut out = String::from(
        "<div class=\"tablewrap\"><table class=\"data timeline\"><thead><tr>\
         <th class=\"num\">line</th><th>session</th><th class=\"num\">#</th><th class=\"num\">turn</th><th>outcome</th>\
         <th>reason</th><th>detail</th><th class=\"num\">streak</th><th>flags</th><th>tool calls</th></tr></thead><tbody>",
    );
    for s in &t.rows {
        row(&mut out, s);
    }
    out.push_str("</tbody></table></div>");
    if t.omitted > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">… {} more attempts not shown (see <code>{} replay --trace</code>)</p>",
            t.omitted,
            Esc(program())
        );
    }
    out
}

fn row(out: &mut String, s: &Step) {
    let outcome = s.outcome.name();
    let _ = write!(
        out,
        "<tr class=\"o-row-{outcome}\"><td class=\"num\">{}</td><td class=\"text\">{}</td><td class=\"num\">{}</td>\
         <td class=\"num\">{}</td><td><span class=\"badge o-{outcome}\">{outcome}</span></td><td>{}</td>\
         <td class=\"detail\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"calls\">",
        s.line,
        Esc(&s.session),
        s.index,
        s.turn.map_or("–".to_string(), |t| t.to_string()),
        s.reason.map_or("", |r| r.name()),
        Esc(s.detail.as_deref().unwrap_or("")),
        s.streak.map_or("–".to_string(), |c| c.to_string()),
        s.flags.iter().map(|f| f.name()).collect::<Vec<_>>().join(" "),
    );
    for c in &s.calls {
        let _ = write!(
            out,
            "<div{}>{}{}/{}",
            if c.executed { "" } else { " class=\"notrun\"" },
            if c.executed { "" } else { "(not run) " },
            Breakable(&c.server),
            Breakable(&c.tool)
        );
        for r in &c.repairs {
            let _ = write!(out, " <span class=\"badge plain\">{}</span>", r.name());
        }
        if c.json.name() != "strict" {
            let _ = write!(
                out,
                " <span class=\"badge plain\">json {}</span>",
                c.json.name()
            );
        }
        let _ = write!(out, " <code>{}</code></div>", Esc(&c.arguments));
    }
    out.push_str("</td></tr>");
}

#[cfg(test)]
mod tests {
    use crate::render::shell::word as shell_word;

    #[test]
    fn shell_words_quote_when_needed() {
        assert_eq!(shell_word("a/b.jsonl"), "a/b.jsonl");
        assert_eq!(shell_word("it's here"), r"'it'\''s here'");
        assert_eq!(shell_word(""), "''");
    }
}
