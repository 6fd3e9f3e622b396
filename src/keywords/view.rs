//! `keywords`' report as a [`Document`]: the lists side by side, what each
//! candidate flips, label errors, suggested phrases and near-misses. Drawn
//! by the back ends of [`crate::render`].

use super::evaluate::LineNote;
use super::suggest::Cue;
use super::KeywordsReport;
use crate::render::format::{counted, percent};
use crate::render::{Block, Cell, Document, Section, Table, Tone};

/// The report, laid out; `top` caps every per-attempt listing.
pub fn document(report: &KeywordsReport, top: usize) -> Document {
    let mut headline = vec![format!(
        "{}, {} refusal-eligible (no tool call, no MCP tag), {} with tool calls",
        counted(report.attempts, "attempt"),
        report.eligible,
        report.tool_calling
    )];
    if report.text_unknown > 0 {
        headline.push(format!(
            "{} known only from task logs' step_logs (their text is gone): not judged again, their logged verdicts kept",
            counted(report.text_unknown, "attempt")
        ));
    }
    if let Some(l) = &report.labels {
        headline.push(format!(
            "labels: {} ({}) from {}; {} found in the inputs{}",
            l.labels,
            counted(l.positives as u64, "refusal"),
            l.file,
            l.found,
            if l.not_found > 0 {
                format!(", {} not found (not scored)", l.not_found)
            } else {
                String::new()
            }
        ));
    }
    // What each candidate flips against the current list, then each list's
    // errors against the labels: (whose, what, which attempts).
    let mut listings: Vec<(String, &str, &[LineNote])> = Vec::new();
    for list in report.lists.iter().skip(1) {
        let whose = format!("{} vs current", list.name);
        listings.push((whose.clone(), "newly flagged", &list.newly_flagged));
        listings.push((whose, "no longer flagged", &list.no_longer_flagged));
    }
    for list in &report.lists {
        if let Some(s) = &list.scores {
            listings.push((list.name.clone(), "false positives", &s.false_positives));
            listings.push((list.name.clone(), "false negatives", &s.false_negatives));
        }
    }
    let mut blocks = vec![Block::Table(lists_table(report))];
    for (whose, what, notes) in listings {
        if !notes.is_empty() {
            let caption = format!("{whose}: {} {what}", notes.len());
            blocks.push(Block::Table(notes_table(notes, top).caption(caption)));
        }
    }
    let mut sections = vec![Section {
        title: "Keyword lists".into(),
        blocks,
    }];
    sections.extend(suggestions(report));
    sections.extend(near_misses(report, top));
    Document {
        title: "mirotrace keywords".into(),
        level: 1,
        headline,
        sections,
    }
}

fn lists_table(report: &KeywordsReport) -> Table {
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
    // Narrow terminals keep what answers the table's question: the list
    // and its rate, and with labels its precision, recall and F1.
    let mut priority = vec![9, 3, 2, 6, 5, 2, 4, 7];
    if report.labels.is_some() {
        header.extend(["precision", "recall", "F1", "tp", "fp", "fn"]);
        priority.extend([8, 8, 8, 1, 1, 1]);
    }
    let mut t = Table::new(&header).priority(&priority);
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
            Cell::text(l.name.as_str()),
            Cell::text(l.mode),
            Cell::count(l.phrases.len() as u64),
            Cell::num(delta(l.flagged, base.map(|b| b.0))),
            Cell::count(l.replay.refusal_rollbacks),
            Cell::count(l.replay.ended_at_limit),
            Cell::num(delta(l.replay.rollbacks, base.map(|b| b.1))),
            Cell::num(percent(l.rollback_rate, 1)),
        ];
        if let Some(s) = &l.scores {
            let best = s.f1 == best_f1;
            row.extend([
                Cell::num(format!("{:.3}", s.precision)),
                Cell::num(format!("{:.3}", s.recall)),
                Cell::num(format!("{:.3}", s.f1))
                    .tone(if best { Tone::Good } else { Tone::Plain })
                    .strong_if(best),
                Cell::count(s.tp),
                Cell::count(s.fp),
                Cell::count(s.fn_),
            ]);
        }
        t.rows.push(row);
    }
    t
}

fn notes_table(notes: &[LineNote], top: usize) -> Table {
    let mut t = Table::new(&["trace", "session", "#", "keyword", "excerpt"]);
    for n in notes.iter().take(top) {
        t.rows.push(vec![
            Cell::text(n.at.trace_id.as_str()),
            Cell::text(n.at.session.as_str()),
            Cell::num(n.at.index.to_string()),
            Cell::text(n.keyword.as_deref().unwrap_or("-")),
            Cell::text(n.excerpt.as_str()),
        ]);
    }
    if notes.len() > top {
        t.rows.push(vec![Cell::text(format!(
            "… {} more (--top, or --format json)",
            notes.len() - top
        ))
        .tone(Tone::Dim)]);
    }
    t
}

fn suggestions(report: &KeywordsReport) -> Option<Section> {
    let suggestions = report.suggestions.as_ref()?;
    let mined = report.mined.map_or(String::new(), |m| {
        format!(
            " ({} answers without tool call or final answer vs {} other texts, min support {})",
            m.foreground, m.background, m.min_support
        )
    });
    let mut caption = format!("suggested phrases{mined}");
    if let Some(l) = report.mined.map(|m| m.left_out) {
        if l.foreground + l.background > 0 {
            caption.push_str(&format!(
                "; the miner's memory caps left out {} foreground and {} background phrase occurrences (docs/limits.md)",
                l.foreground, l.background
            ));
        }
        if l.unlisted > 0 {
            caption.push_str(&format!(
                "; {} occurrences past the miner's document-list cap were counted but not listed (docs/limits.md)",
                l.unlisted
            ));
        }
    }
    let block = if suggestions.is_empty() {
        Block::Note(format!("{caption}: none (try a lower --min-support)"))
    } else {
        let mut t = Table::new(&[
            "#",
            "phrase",
            "marker",
            "count",
            "elsewhere",
            "caught now",
            "score",
            "example",
        ])
        .caption(caption);
        t.rows = suggestions
            .iter()
            .enumerate()
            .map(|(i, s)| {
                vec![
                    Cell::num((i + 1).to_string()),
                    Cell::text(s.phrase.as_str()),
                    Cell::text(match s.marker {
                        Cue::Inability => "inability",
                        Cue::Apology => "apology",
                        Cue::None => "-",
                    }),
                    Cell::count(u64::from(s.count)),
                    Cell::count(u64::from(s.background)),
                    Cell::count(u64::from(s.already_flagged)),
                    Cell::num(format!("{:.2}", s.score)),
                    Cell::text(format!("{} ({})", s.example, s.at)),
                ]
            })
            .collect();
        Block::Table(t)
    };
    Some(Section {
        title: "Suggestions".into(),
        blocks: vec![block],
    })
}

fn near_misses(report: &KeywordsReport, top: usize) -> Option<Section> {
    let near = report.near_misses.as_ref().filter(|n| !n.is_empty())?;
    let mut t = Table::new(&[
        "keyword",
        "written as",
        "differs in",
        "count",
        "caught",
        "example",
    ])
    .caption("near-misses of the current keywords");
    t.rows = near
        .iter()
        .take(top)
        .map(|m| {
            let kinds: Vec<String> = m
                .variations
                .iter()
                .map(|v| format!("{v:?}").to_lowercase())
                .collect();
            vec![
                Cell::text(m.keyword.as_str()),
                Cell::text(m.variant.as_str()),
                Cell::text(kinds.join(", ")),
                Cell::count(u64::from(m.count)),
                Cell::text(if m.caught { "yes" } else { "no" }),
                Cell::text(format!("{} ({})", m.example, m.at)),
            ]
        })
        .collect();
    Some(Section {
        title: "Near-misses".into(),
        blocks: vec![Block::Table(t)],
    })
}
