//! Printing a keywords [`Report`]: tables for people, JSON for tools, and
//! bare phrases (a list file) for `--suggest --format text`.

use comfy_table::{presets, Cell, Color, ContentArrangement, Table};

use super::evaluate::LineNote;
use super::suggest::Cue;
use super::Report;

/// The report as pretty JSON.
pub fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The suggested phrases, one per line, best first: usable as a `--list`
/// file. Phrases without a refusal marker (content words such as a final
/// answer template) are for review in the table or JSON, not for a list.
pub fn phrases(report: &Report) -> String {
    let mut out = String::new();
    for s in report.suggestions.iter().flatten() {
        if s.marker == Cue::None {
            continue;
        }
        // A list file line is trimmed and `#` starts a comment: such phrases
        // cannot be written as is.
        if s.phrase.starts_with('#') || s.phrase.contains('\n') {
            continue;
        }
        out.push_str(&s.phrase);
        out.push('\n');
    }
    out
}

/// The human-readable report; `top` caps every per-attempt listing.
pub fn tables(report: &Report, top: usize, color: bool) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{} attempts, {} refusal-eligible (no tool call, no MCP tag), {} with tool calls\n",
        report.attempts, report.eligible, report.tool_calling
    ));
    if report.text_unknown > 0 {
        out.push_str(&format!(
            "{} attempts known only from task logs' step_logs (their text is gone): not judged again, their logged verdicts kept\n",
            report.text_unknown
        ));
    }
    if let Some(l) = &report.labels {
        out.push_str(&format!(
            "labels: {} ({} refusals) from {}; {} found in the inputs{}\n",
            l.labels,
            l.positives,
            l.file,
            l.found,
            if l.not_found > 0 {
                format!(", {} not found (not scored)", l.not_found)
            } else {
                String::new()
            }
        ));
    }
    out.push('\n');
    out.push_str(&lists_table(report, color).to_string());
    out.push('\n');

    for list in report.lists.iter().skip(1) {
        for (what, notes) in [
            ("newly flagged", &list.newly_flagged),
            ("no longer flagged", &list.no_longer_flagged),
        ] {
            if !notes.is_empty() {
                out.push_str(&format!(
                    "\n{} vs current: {} {}\n",
                    list.name,
                    notes.len(),
                    what
                ));
                out.push_str(&notes_table(notes, top).to_string());
                out.push('\n');
            }
        }
    }
    for list in &report.lists {
        let Some(s) = &list.scores else { continue };
        for (what, notes) in [
            ("false positives", &s.false_positives),
            ("false negatives", &s.false_negatives),
        ] {
            if !notes.is_empty() {
                out.push_str(&format!("\n{}: {} {}\n", list.name, notes.len(), what));
                out.push_str(&notes_table(notes, top).to_string());
                out.push('\n');
            }
        }
    }
    if let Some(suggestions) = &report.suggestions {
        let mined = report.mined.map_or(String::new(), |m| {
            format!(
                " ({} answers without tool call or final answer vs {} other texts, min support {})",
                m.foreground, m.background, m.min_support
            )
        });
        out.push_str(&format!("\nsuggested phrases{mined}\n"));
        if suggestions.is_empty() {
            out.push_str("none (try a lower --min-support)\n");
        } else {
            let mut t = table();
            t.set_header(vec![
                "#",
                "phrase",
                "marker",
                "count",
                "elsewhere",
                "caught now",
                "score",
                "example",
            ]);
            for (i, s) in suggestions.iter().enumerate() {
                t.add_row(vec![
                    Cell::new(i + 1),
                    Cell::new(&s.phrase),
                    Cell::new(match s.marker {
                        Cue::Inability => "inability",
                        Cue::Apology => "apology",
                        Cue::None => "-",
                    }),
                    Cell::new(s.count),
                    Cell::new(s.background),
                    Cell::new(s.already_flagged),
                    Cell::new(format!("{:.2}", s.score)),
                    Cell::new(format!("{} ({})", s.example, s.at)),
                ]);
            }
            out.push_str(&t.to_string());
            out.push('\n');
        }
    }
    if let Some(near) = &report.near_misses {
        if !near.is_empty() {
            out.push_str("\nnear-misses of the current keywords\n");
            let mut t = table();
            t.set_header(vec![
                "keyword",
                "written as",
                "differs in",
                "count",
                "caught",
                "example",
            ]);
            for m in near.iter().take(top) {
                let kinds: Vec<String> = m
                    .variations
                    .iter()
                    .map(|v| format!("{v:?}").to_lowercase())
                    .collect();
                t.add_row(vec![
                    Cell::new(&m.keyword),
                    Cell::new(&m.variant),
                    Cell::new(kinds.join(", ")),
                    Cell::new(m.count),
                    Cell::new(if m.caught { "yes" } else { "no" }),
                    Cell::new(format!("{} ({})", m.example, m.at)),
                ]);
            }
            out.push_str(&t.to_string());
            out.push('\n');
        }
    }
    out
}

fn table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t
}

fn lists_table(report: &Report, color: bool) -> Table {
    let labelled = report.labels.is_some();
    let mut t = table();
    if color {
        // Coloured when asked (`--color always` into a pipe too).
        t.enforce_styling();
    }
    let mut header = vec![
        "list",
        "match",
        "phrases",
        "flagged",
        "refusal rollbacks",
        "ended at limit",
        "rollbacks",
        "rollback rate",
    ];
    if labelled {
        header.extend(["precision", "recall", "F1", "tp", "fp", "fn"]);
    }
    t.set_header(header);
    let best_f1 = report
        .lists
        .iter()
        .filter_map(|l| l.scores.as_ref().map(|s| s.f1))
        .fold(f64::NEG_INFINITY, f64::max);
    let base = report
        .lists
        .first()
        .map(|l| (l.flagged, l.replay.rollbacks));
    for l in &report.lists {
        let delta = |now: u64, then: Option<u64>| match then {
            Some(then) if l.name != "current" && now != then => {
                format!("{now} ({:+})", now as i64 - then as i64)
            }
            _ => now.to_string(),
        };
        let mut row = vec![
            Cell::new(&l.name),
            Cell::new(l.mode),
            Cell::new(l.phrases.len()),
            Cell::new(delta(l.flagged, base.map(|b| b.0))),
            Cell::new(l.replay.refusal_rollbacks),
            Cell::new(l.replay.ended_at_limit),
            Cell::new(delta(l.replay.rollbacks, base.map(|b| b.1))),
            Cell::new(format!("{:.1}%", 100.0 * l.rollback_rate)),
        ];
        if let Some(s) = &l.scores {
            let f1 = Cell::new(format!("{:.3}", s.f1));
            let f1 = if color && s.f1 == best_f1 {
                f1.fg(Color::Green)
            } else {
                f1
            };
            row.extend([
                Cell::new(format!("{:.3}", s.precision)),
                Cell::new(format!("{:.3}", s.recall)),
                f1,
                Cell::new(s.tp),
                Cell::new(s.fp),
                Cell::new(s.fn_),
            ]);
        }
        t.add_row(row);
    }
    t
}

fn notes_table(notes: &[LineNote], top: usize) -> Table {
    let mut t = table();
    t.set_header(vec!["trace", "session", "#", "keyword", "excerpt"]);
    for n in notes.iter().take(top) {
        t.add_row(vec![
            Cell::new(&n.at.trace_id),
            Cell::new(&n.at.session),
            Cell::new(n.at.index),
            Cell::new(n.keyword.as_deref().unwrap_or("-")),
            Cell::new(&n.excerpt),
        ]);
    }
    if notes.len() > top {
        t.add_row(vec![
            Cell::new(format!(
                "… {} more (--top, or --format json)",
                notes.len() - top
            )),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
            Cell::new(""),
        ]);
    }
    t
}
