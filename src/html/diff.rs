//! The `diff` page: every metric's change as a forest plot (interval,
//! noise band, significant ones marked), the mistake kinds' shares
//! ([`super::diff_mistakes`]), the paired per-task view, the gates, and
//! the full metric table — for each comparison, on scales shared by all
//! comparisons.

use crate::render::format::counted;
use crate::render::skipped::{self as skip, Skipped};
use std::fmt::Write as _;

use super::chart::{self, Change, ForestRow};
use super::escape::Esc;
use super::page::{figure, kpi, section, Page};
use super::table::{self, Td};
use crate::diff::format as f;
use crate::diff::paired::{PairedView, TaskChange};
use crate::diff::render::json;
use crate::diff::view::{headline, method_line, paired_summary, task_rate, verdict_word};
use crate::diff::{Assessment, Comparison, DiffReport, MetricChange, SideSummary, Unit};

/// The panels of the forest plot: one axis per unit.
const PANELS: [(Unit, &str, &str); 5] = [
    (Unit::Rate, "Rates", "change in percentage points"),
    (Unit::PerTrace, "Per trace", "change in events per trace"),
    (Unit::Rollbacks, "Streak length", "change in rollbacks"),
    (Unit::Tokens, "Tokens per task", "change in tokens per task"),
    (
        Unit::Millis,
        "LLM time per task",
        "change in milliseconds per task",
    ),
];

/// The whole page.
pub fn page(report: &DiffReport, skipped: &Skipped) -> String {
    let json = json(report);
    let mut body = String::new();
    let mut toc: Vec<(String, String)> = Vec::new();
    if !report.gates.is_empty() {
        let fired: Vec<&str> = report
            .gates
            .iter()
            .filter(|g| g.fired)
            .map(|g| g.rule.as_str())
            .collect();
        if !fired.is_empty() {
            let _ = write!(
                body,
                "<div class=\"gate-banner fired\"><a href=\"#gates\">{} gate{} fired</a>: {}</div>",
                fired.len(),
                if fired.len() == 1 { "" } else { "s" },
                Esc(&fired.join(", "))
            );
        } else {
            body.push_str("<div class=\"gate-banner passed\">Gates passed: no rule fired</div>");
        }
    }
    // Every comparison's panels share their axis.
    let extents: Vec<f64> = PANELS
        .iter()
        .map(|(unit, _, _)| {
            report
                .comparisons
                .iter()
                .flat_map(|c| c.metrics.iter().filter(|m| m.def.unit == *unit))
                .map(|m| extent(m, report))
                .fold(0.0, f64::max)
        })
        // Nothing moved at all: an axis of ±1 pp or ±1 still reads.
        .zip(PANELS)
        .map(|(e, (unit, _, _))| match unit {
            _ if e > 1e-12 => e,
            Unit::Rate => 0.01,
            _ => 1.0,
        })
        .collect();
    let kinds_extent = super::diff_mistakes::extent(report);
    let paired_extent = report
        .comparisons
        .iter()
        .filter_map(|c| c.paired.as_ref())
        .flat_map(|p| p.top_worse.iter().chain(&p.top_better))
        .map(|t| t.change.abs())
        .fold(0.0, f64::max);
    for (i, c) in report.comparisons.iter().enumerate() {
        let id = format!("comparison-{i}");
        let title = match (&c.group, report.method.group_by) {
            (Some(g), by) => format!("{} {g}", by.unwrap_or("group")),
            (None, _) => "Base vs new".to_string(),
        };
        let inner = comparison(i, c, report, &extents, kinds_extent, paired_extent);
        toc.push((id.clone(), title.clone()));
        section(&mut body, &id, &title, None, &inner);
    }
    if !report.gates.is_empty() {
        toc.push(("gates".into(), "Gates".into()));
        section(
            &mut body,
            "gates",
            "Gates",
            Some("The --fail-on rules, evaluated on every comparison."),
            &gates(report),
        );
    }
    if let Some(changes) = &report.policy_changes {
        let doc = crate::render::Document {
            title: String::new(),
            level: 2,
            headline: Vec::new(),
            sections: vec![crate::diff::view::policy_changes(changes)],
        };
        toc.push(("policy-changes".into(), "Policy changes".into()));
        section(
            &mut body,
            "policy-changes",
            "Policy changes",
            Some("The same traces replayed under both policies, verdict by verdict."),
            &super::table::view(&doc),
        );
    }
    if let Some(inner) = super::skipped::inner(skipped) {
        toc.push(("skipped".into(), skip::TITLE.into()));
        section(
            &mut body,
            "skipped",
            skip::TITLE,
            Some("What the runs of both sides skipped and said on their stderr: these lines are in neither side."),
            &inner,
        );
    }
    toc.push(("method".into(), "Method".into()));
    let method = format!(
        "<p>{}</p><p class=\"note\">Details: docs/diff.md.</p>",
        Esc(&method_line(&report.method))
    );
    section(&mut body, "method", "Method", None, &method);

    let sides: Vec<String> = report
        .comparisons
        .first()
        .map(|c| vec![side(&c.base), side(&c.new)])
        .unwrap_or_default();
    let subtitle = match sides.as_slice() {
        [base, new] if report.comparisons.len() == 1 => format!("base {base} → new {new}"),
        [base, _] => format!(
            "base {base} → {} groups of the new side",
            report.comparisons.len()
        ),
        _ => String::new(),
    };
    // The gates' result leads the title (the tab, the heading) too.
    let title = match crate::render::gates::result_words(&report.gates) {
        Some(words) => format!("{words} · what changed"),
        None => "what changed".to_string(),
    };
    Page {
        command: "diff",
        title: &title,
        subtitle: Esc(&subtitle).to_string(),
        toc,
        body,
        data: &json,
    }
    .render()
}

fn side(s: &SideSummary) -> String {
    format!(
        "{} ({}, {})",
        s.label,
        counted(s.traces as u64, "trace"),
        counted(s.attempts, "attempt")
    )
}

/// Half-width of the axis a metric needs: its interval, change and noise band.
pub(super) fn extent(m: &MetricChange, report: &DiffReport) -> f64 {
    let ci = m.ci.map_or(0.0, |[lo, hi]| lo.abs().max(hi.abs()));
    ci.max(m.change.map_or(0.0, f64::abs)).max(noise(m, report))
}

/// Half-width of a metric's noise band: changes inside it are never significant.
fn noise(m: &MetricChange, report: &DiffReport) -> f64 {
    crate::diff::comparison::noise_band(
        m.def.unit,
        report.method.noise_pp,
        report.method.noise_relative_pct,
        m.base.unwrap_or(0.0),
    )
}

fn class_of(m: &MetricChange) -> &'static str {
    match m.assessment {
        Assessment::Worse => "worse",
        Assessment::Better => "better",
        Assessment::NoChange => "same",
        Assessment::Untested => "untested",
    }
}

/// A signed tick: `+2`, `-0.5`, `0`.
fn signed(v: f64) -> String {
    let s = chart::tick_number(v.abs());
    match v {
        _ if s == "0" => s,
        v if v > 0.0 => format!("+{s}"),
        _ => format!("−{s}"),
    }
}

pub(super) fn tick_for(unit: Unit) -> Box<dyn Fn(f64) -> String> {
    match unit {
        Unit::Rate => Box::new(|v| signed((v * 1000.0).round() / 10.0)),
        Unit::Tokens | Unit::Millis => Box::new(move |v| f::change(unit, Some(v))),
        _ => Box::new(signed),
    }
}

fn comparison(
    i: usize,
    c: &Comparison,
    report: &DiffReport,
    extents: &[f64],
    kinds_extent: f64,
    paired_extent: f64,
) -> String {
    let alpha = report.method.alpha;
    let mut out = String::new();
    if report.comparisons.len() > 1 {
        let _ = write!(
            out,
            "<p class=\"lead\">base {} → new {}</p>",
            Esc(&side(&c.base)),
            Esc(&side(&c.new))
        );
    }
    let _ = write!(out, "<p>{}</p>", Esc(&headline(c)));
    if let Some(note) = &c.power.note {
        let _ = write!(out, "<p class=\"note power\">{}</p>", Esc(note));
    }
    out.push_str("<div class=\"kpis\">");
    let worse = c.worse().count();
    let better = c.better().count();
    kpi(
        &mut out,
        &worse.to_string(),
        "significantly worse",
        "metrics",
        if worse > 0 { "bad" } else { "" },
        "",
    );
    kpi(
        &mut out,
        &better.to_string(),
        "significantly better",
        "metrics",
        if better > 0 { "good" } else { "" },
        "",
    );
    kpi(
        &mut out,
        &c.tested.to_string(),
        "metrics tested",
        &format!("of {}", c.metrics.len()),
        "",
        "",
    );
    if let Some(p) = &c.paired {
        kpi(
            &mut out,
            &format!("{} / {}", p.worse, p.better),
            "tasks worse / better",
            &format!("of {} shared tasks", p.shared),
            if p.significant && p.worse > p.better {
                "bad"
            } else {
                ""
            },
            "",
        );
    }
    out.push_str("</div>");
    let confidence = report.method.confidence * 100.0;
    out.push_str("<div class=\"figs\">");
    for ((unit, name, sub), &extent) in PANELS.iter().zip(extents) {
        let rows: Vec<ForestRow> = c
            .metrics
            .iter()
            .filter(|m| m.def.unit == *unit)
            .map(|m| forest_row(m, report, alpha, confidence))
            .collect();
        // A panel of figures neither side recorded (tokens, durations of
        // traces without usage) would be an empty axis: the table says so.
        if rows.iter().all(|r| r.estimate.is_none()) {
            continue;
        }
        let unit_id = unit.name();
        let svg = chart::forest(
            &format!("forest-{i}-{unit_id}"),
            &format!("{name}: change with its {confidence:.0}% interval"),
            &rows,
            extent,
            &*tick_for(*unit),
        );
        out.push_str(&figure(
            name,
            &format!(
                "{sub}; {confidence:.0}% interval, grey band = noise threshold, ◆ significant"
            ),
            &svg,
        ));
    }
    out.push_str("</div>");
    out.push_str(&super::diff_mistakes::panel(i, c, report, kinds_extent));
    out.push_str(&paired(i, c.paired.as_ref(), paired_extent));
    if let Some(r) = &c.results {
        out.push_str(&task_results(r));
    }
    out.push_str(&metric_table(i, c, alpha, confidence));
    out
}

/// Flipped tasks with their rollback change, and pass^k (issue 25).
fn task_results(r: &crate::diff::results::ResultsView) -> String {
    let mut out = format!(
        "<h3>Task results</h3><p>{}</p>",
        Esc(&crate::diff::view::results_summary(r))
    );
    let flips: Vec<_> = r
        .pass_to_fail_tasks
        .iter()
        .map(|f| ("pass → fail", f))
        .chain(r.fail_to_pass_tasks.iter().map(|f| ("fail → pass", f)))
        .collect();
    if !flips.is_empty() {
        out.push_str("<table><thead><tr><th>task</th><th>flip</th><th>base rollbacks / reached</th><th>new rollbacks / reached</th></tr></thead><tbody>");
        for (kind, f) in flips {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{kind}</td><td>{} / {}</td><td>{} / {}</td></tr>",
                Esc(&f.task),
                f.base_rollbacks,
                f.base_reached,
                f.new_rollbacks,
                f.new_reached
            );
        }
        out.push_str("</tbody></table>");
    }
    out
}

pub(super) fn forest_row(
    m: &MetricChange,
    report: &DiffReport,
    alpha: f64,
    confidence: f64,
) -> ForestRow {
    let unit = m.def.unit;
    let word = verdict_word(m, alpha);
    let mut note = f::change(unit, m.change);
    if !word.is_empty() {
        let _ = write!(note, " · {word}");
    }
    ForestRow {
        label: m.metric.to_string(),
        estimate: m.change,
        interval: m.ci,
        noise: noise(m, report),
        class: class_of(m),
        note,
        tip: format!(
            "{}: {} → {} (change {}, {confidence:.0}% CI {}, Holm p {}) — {}",
            m.metric,
            f::value(unit, m.base),
            f::value(unit, m.new),
            f::change(unit, m.change),
            f::interval(unit, m.ci),
            f::p_adjusted(m),
            m.def.about
        ),
    }
}

fn paired(i: usize, p: Option<&PairedView>, extent: f64) -> String {
    let Some(p) = p else {
        return "<h3>Paired by task</h3><p class=\"note\">The sides share no task id.</p>".into();
    };
    let mut out = format!("<h3>Paired by task</h3><p>{}</p>", Esc(&paired_summary(p)));
    let movers: Vec<&TaskChange> = p.top_worse.iter().chain(&p.top_better).collect();
    if movers.is_empty() {
        return out;
    }
    let rows: Vec<Change> = movers
        .iter()
        .map(|t| Change {
            label: t.trace_id.clone(),
            value: t.change,
            class: if t.change > 0.0 { "worse" } else { "better" },
            note: f::change(Unit::Rate, Some(t.change)),
            tip: format!(
                "{}: {} → {}",
                t.trace_id,
                task_rate(t.base_rollbacks, t.base_reached),
                task_rate(t.new_rollbacks, t.new_reached)
            ),
        })
        .collect();
    let svg = chart::diverging(
        &format!("paired-{i}"),
        "Tasks whose rollback rate moved most",
        &rows,
        extent,
        &*tick_for(Unit::Rate),
    );
    out.push_str("<div class=\"figs\">");
    out.push_str(&figure(
        "Top movers",
        "change of each task's rollback rate, in percentage points; red got worse",
        &svg,
    ));
    let table_rows: Vec<(String, Vec<Td>)> = movers
        .iter()
        .map(|t| {
            (
                if t.change > 0.0 { "worse" } else { "better" }.to_string(),
                vec![
                    Td::text(&t.trace_id),
                    Td::num(
                        &task_rate(t.base_rollbacks, t.base_reached),
                        Some(t.base_rollbacks as f64 / t.base_reached.max(1) as f64),
                    ),
                    Td::num(
                        &task_rate(t.new_rollbacks, t.new_reached),
                        Some(t.new_rollbacks as f64 / t.new_reached.max(1) as f64),
                    ),
                    Td::num(&f::change(Unit::Rate, Some(t.change)), Some(t.change)),
                ],
            )
        })
        .collect();
    out.push_str("<div>");
    out.push_str(&table::table(
        &format!("movers-{i}"),
        None,
        &["task", "base rollbacks / attempts", "new", "change"],
        &[false, true, true, true],
        &table_rows,
    ));
    out.push_str("</div></div>");
    out
}

fn metric_table(i: usize, c: &Comparison, alpha: f64, confidence: f64) -> String {
    let rows: Vec<&MetricChange> = c.metrics.iter().collect();
    let mut out = String::from("<h3>Every metric</h3>");
    out.push_str(&change_table(
        &format!("metrics-{i}"),
        "metric",
        &rows,
        alpha,
        confidence,
    ));
    out
}

/// A sortable table of changes, one row per metric (or kind share).
pub(super) fn change_table(
    id: &str,
    first: &str,
    metrics: &[&MetricChange],
    alpha: f64,
    confidence: f64,
) -> String {
    let rows: Vec<(String, Vec<Td>)> = metrics
        .iter()
        .map(|m| {
            let unit = m.def.unit;
            let row_class = match m.assessment {
                Assessment::Worse => "worse",
                Assessment::Better => "better",
                _ => "",
            };
            (
                row_class.to_string(),
                vec![
                    Td::text(m.metric),
                    Td::num(&f::value(unit, m.base), m.base),
                    Td::num(&f::value(unit, m.new), m.new),
                    Td::num(&f::change(unit, m.change), m.change),
                    Td::num(&f::relative(m), m.relative_change),
                    Td::num(&f::interval(unit, m.ci), m.ci.map(|[lo, _]| lo)),
                    Td::num(&f::p_adjusted(m), m.p_adjusted),
                    Td::text(verdict_word(m, alpha)),
                ],
            )
        })
        .collect();
    let ci_head = format!("{confidence:.0}% CI");
    table::table(
        id,
        None,
        &[
            first, "base", "new", "change", "relative", &ci_head, "p (Holm)", "result",
        ],
        &[false, true, true, true, true, true, true, false],
        &rows,
    )
}

fn gates(report: &DiffReport) -> String {
    let rows: Vec<(String, Vec<Td>)> = report
        .gates
        .iter()
        .map(|g| {
            (
                String::new(),
                vec![
                    Td::markup(format!(
                        "<span class=\"badge {}\">{}</span>",
                        Esc(g.result),
                        Esc(&g.result.replace('_', " "))
                    )),
                    Td::text(&g.rule),
                    Td::text(g.group.as_deref().unwrap_or("")),
                    Td::text(&g.message),
                ],
            )
        })
        .collect();
    table::table(
        "gate-results",
        None,
        &["result", "rule", "group", "why"],
        &[false; 4],
        &rows,
    )
}
