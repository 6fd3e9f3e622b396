//! What the rules could not judge on this input, and whose failures the
//! tool errors and failed LLM calls are (issue 38; docs/metrics.md, "Blind
//! spots" and "Model or environment"): a headline line when it matters and
//! a short section.

use super::{Block, Cell, Section, Table};
use crate::metrics::Tally;
use crate::render::format::{counted, pct};

/// The section's title.
pub const TITLE: &str = "Blind spots";

/// The headline's line on blind spots, when there is one to say: tool
/// results that read like errors no rule judged, attempts whose text is
/// gone, a rule that cannot fire.
pub fn headline(t: &Tally) -> Option<String> {
    let b = &t.blind;
    let mut parts = Vec::new();
    if b.tool_errors_unmatched > 0 {
        parts.push(format!(
            "{} read like errors but match no tool_error_prefixes (add the harness's prefix to the policy)",
            counted(b.tool_errors_unmatched, "tool result")
        ));
    }
    if b.text_unknown > 0 {
        parts.push(format!(
            "{} of {} attempts ({}) have no text in the input: their verdicts are the log's",
            b.text_unknown,
            t.attempts,
            pct(b.text_unknown, t.attempts)
        ));
    }
    if b.results_unseen > 0 {
        parts.push(format!(
            "{} of {} attempts ({}) ran tools whose results are in no later request: not judged by the rules that need them",
            b.results_unseen,
            t.attempts,
            pct(b.results_unseen, t.attempts)
        ));
    }
    let idle: Vec<&str> = b.idle_rules(t.attempts).map(|(r, _)| r.name()).collect();
    if !idle.is_empty() {
        parts.push(format!(
            "on this input the rules {} cannot fire (see {TITLE})",
            idle.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| format!("blind spots: {}", parts.join("; ")))
}

/// The headline's line on owners, when some tool errors or failed calls
/// are the environment's.
pub fn owners_headline(t: &Tally) -> Option<String> {
    let o = &t.owners;
    (o.environment > 0).then(|| {
        format!(
            "tool errors and LLM failures: {} the environment's (not the model's), {} the model's{}",
            o.environment,
            o.model,
            if o.unclassified > 0 {
                format!(", {} unclassified", o.unclassified)
            } else {
                String::new()
            }
        )
    })
}

/// The section, when there is a blind spot.
pub fn section(t: &Tally) -> Option<Section> {
    let b = &t.blind;
    if !b.any(t.attempts) {
        return None;
    }
    let rows = [
        vec![
            Cell::text("tool results read as errors, matched by no rule"),
            Cell::count(b.tool_errors_unmatched),
            Cell::text(format!(
                "in {}; begin with Error/ERROR/error then ':' or a space, not marked as failed, \
                 no tool_error_prefixes entry matches: the tool_error rule did not see them",
                counted(b.attempts_with_unmatched, "attempt")
            )),
        ],
        vec![
            Cell::text("attempts without their text"),
            Cell::count(b.text_unknown),
            Cell::text(format!(
                "{} of attempts; verdicts taken from the log: {} format errors of unknown kind, \
                 {} refusals without their text; no policy can judge them again",
                pct(b.text_unknown, t.attempts),
                b.text_unknown_format_errors,
                b.text_unknown_refusals
            )),
        ],
        vec![
            Cell::text("attempts with unseen tool results"),
            Cell::count(b.results_unseen),
            Cell::text(format!(
                "{} of attempts; a recording's rolled-back turns: their text is judged, their tool \
                 results are in no later request, so tool_error, empty_search and unknown_tool \
                 could not judge them (verdict source recorded)",
                pct(b.results_unseen, t.attempts)
            )),
        ],
        vec![
            Cell::text("attempts with native tool calls"),
            Cell::count(b.native_tool_attempts),
            Cell::text("their calls are structured: the MCP-XML format-error rule does not apply"),
        ],
    ];
    // Only what this input has.
    let counts = [
        b.tool_errors_unmatched,
        b.text_unknown,
        b.results_unseen,
        b.native_tool_attempts,
    ];
    let mut rows: Vec<Vec<Cell>> = rows
        .into_iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(row, _)| row)
        .collect();
    for (rule, why) in b.idle_rules(t.attempts) {
        rows.push(vec![
            Cell::text(format!("rule {} cannot fire", rule.name())),
            Cell::text(""),
            Cell::text(why),
        ]);
    }
    let mut table = Table::new(&["", "count", "what it hides"]);
    table.rows = rows;
    Some(Section {
        title: TITLE.into(),
        blocks: vec![Block::Table(table)],
    })
}
