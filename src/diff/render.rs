//! `diff` output: a terminal table, a markdown PR comment, or JSON.

use std::fmt::Write as _;

use comfy_table::{presets, Cell, CellAlignment, Color, ContentArrangement, Table};

use super::format::{self as f, count};
use super::paired::{PairedView, TaskChange};
use super::{Assessment, Comparison, Method, MetricChange, Report, SideSummary};

/// The output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

/// Renders the report in `format`; `color` only affects the table.
pub fn render(report: &Report, format: Format, color: bool) -> String {
    match format {
        Format::Table => table(report, color),
        Format::Markdown => markdown(report),
        Format::Json => json(report),
    }
}

/// The report as pretty JSON (rates are fractions; see docs/diff.md).
pub fn json(report: &Report) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

fn side(s: &SideSummary) -> String {
    format!(
        "{} ({} traces, {} attempts)",
        s.label,
        count(s.traces as u64),
        count(s.attempts)
    )
}

pub fn verdict_word(mc: &MetricChange, alpha: f64) -> &'static str {
    match mc.assessment {
        Assessment::Worse => "WORSE",
        Assessment::Better => "better",
        Assessment::Untested => "untested",
        Assessment::NoChange if mc.p_adjusted.is_some_and(|p| p < alpha) => "below noise",
        Assessment::NoChange => "",
    }
}

fn idle_names(c: &Comparison) -> Vec<&'static str> {
    c.metrics
        .iter()
        .filter(|m| m.is_idle())
        .map(|m| m.metric)
        .collect()
}

pub fn headline(c: &Comparison) -> String {
    let worse: Vec<&str> = c.worse().map(|m| m.metric).collect();
    let better: Vec<&str> = c.better().map(|m| m.metric).collect();
    let mut s = String::new();
    if worse.is_empty() && better.is_empty() {
        s.push_str("no significant change");
    }
    if !worse.is_empty() {
        let _ = write!(
            s,
            "{} significantly worse ({})",
            worse.len(),
            worse.join(", ")
        );
    }
    if !better.is_empty() {
        if !s.is_empty() {
            s.push_str("; ");
        }
        let _ = write!(
            s,
            "{} significantly better ({})",
            better.len(),
            better.join(", ")
        );
    }
    let _ = write!(s, " — {} metrics tested", c.tested);
    s
}

pub fn method_line(m: &Method) -> String {
    format!(
        "Cluster bootstrap over traces ({} resamples per side, seed {}), {:.0}% percentile intervals; \
         Holm–Bonferroni across the tested metrics; significant = adjusted p < {} and |change| > {} pp (rates) \
         or > {}% of the base value (per-trace and streak metrics).",
        m.iterations,
        m.seed,
        m.confidence * 100.0,
        m.alpha,
        m.noise_pp,
        m.noise_relative_pct
    )
}

fn task_rate(r: u64, a: u64) -> String {
    format!("{r}/{a} ({:.1}%)", r as f64 / a as f64 * 100.0)
}

fn mover_line(t: &TaskChange) -> String {
    format!(
        "{} {} → {} ({})",
        t.trace_id,
        task_rate(t.base_rollbacks, t.base_attempts),
        task_rate(t.new_rollbacks, t.new_attempts),
        f::change(super::Unit::Rate, Some(t.change))
    )
}

pub fn paired_summary(p: &PairedView) -> String {
    let direction = if !p.significant {
        "no significant per-task shift"
    } else if p.worse > p.better {
        "tasks got worse"
    } else {
        "tasks got better"
    };
    format!(
        "{} shared tasks: {} worse, {} better, {} unchanged (rollback rate; median change {}); \
         Wilcoxon signed-rank p {}, sign test p {} → {}",
        count(p.shared as u64),
        p.worse,
        p.better,
        p.unchanged,
        f::change(super::Unit::Rate, Some(p.median_change)),
        f::p(p.wilcoxon.as_ref().map(|w| w.p)),
        f::p(Some(p.sign_p)),
        direction
    )
}

/// The terminal table.
pub fn table(report: &Report, color: bool) -> String {
    let mut out = String::new();
    let alpha = report.method.alpha;
    let ci_head = format!("{:.0}% CI", report.method.confidence * 100.0);
    for c in &report.comparisons {
        let _ = writeln!(out, "base: {}", side(&c.base));
        let _ = writeln!(out, "new:  {}", side(&c.new));
        if let Some(g) = &c.group {
            let _ = writeln!(out, "group: {g}");
        }
        let mut t = Table::new();
        if color {
            // Coloured when asked (`--color always` into a pipe too).
            t.enforce_styling();
        }
        t.load_preset(presets::UTF8_FULL_CONDENSED);
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_header(vec![
            "metric", "base", "new", "change", "rel", &ci_head, "p (Holm)", "result",
        ]);
        for mc in c.metrics.iter().filter(|m| !m.is_idle()) {
            let unit = mc.def.unit;
            let word = verdict_word(mc, alpha);
            let mut result = Cell::new(word);
            if color {
                result = match mc.assessment {
                    Assessment::Worse => result.fg(Color::Red),
                    Assessment::Better => result.fg(Color::Green),
                    _ => result.fg(Color::DarkGrey),
                };
            }
            let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
            t.add_row(vec![
                Cell::new(mc.metric),
                right(f::value(unit, mc.base)),
                right(f::value(unit, mc.new)),
                right(f::change(unit, mc.change)),
                right(f::relative(mc)),
                right(f::interval(unit, mc.ci)),
                right(f::p_adjusted(mc)),
                result,
            ]);
        }
        let _ = writeln!(out, "{t}");
        let idle = idle_names(c);
        if !idle.is_empty() {
            let _ = writeln!(out, "zero on both sides: {}", idle.join(", "));
        }
        let _ = writeln!(out, "summary: {}", headline(c));
        match &c.paired {
            None => {
                let _ = writeln!(out, "paired: the sides share no task id");
            }
            Some(p) => {
                let _ = writeln!(out, "paired: {}", paired_summary(p));
                for (label, list) in [("top worse", &p.top_worse), ("top better", &p.top_better)] {
                    if !list.is_empty() {
                        let _ = writeln!(out, "  {label}:");
                        for t in list {
                            let _ = writeln!(out, "    {}", mover_line(t));
                        }
                    }
                }
            }
        }
        out.push('\n');
    }
    gates_text(report, &mut out);
    let _ = writeln!(out, "method: {}", method_line(&report.method));
    out
}

fn gates_text(report: &Report, out: &mut String) {
    if report.gates.is_empty() {
        return;
    }
    let _ = writeln!(out, "gates:");
    for g in &report.gates {
        let group = g
            .group
            .as_ref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {}{}: {}",
            g.result.to_uppercase(),
            g.rule,
            group,
            g.message
        );
    }
}

/// Escapes text for a markdown table cell or inline code.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('`', "'")
}

/// The report as a markdown pull-request comment.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let alpha = report.method.alpha;
    let worse: usize = report.comparisons.iter().map(|c| c.worse().count()).sum();
    let better: usize = report.comparisons.iter().map(|c| c.better().count()).sum();
    let status = match (worse, better) {
        (0, 0) => "⚪ no significant change".to_string(),
        (0, b) => format!("🟢 {b} significantly better"),
        (w, 0) => format!("🔴 {w} significantly worse"),
        (w, b) => format!("🔴 {w} significantly worse, 🟢 {b} better"),
    };
    let _ = writeln!(out, "## mirotrace diff: {status}\n");
    for c in &report.comparisons {
        if let Some(g) = &c.group {
            let _ = writeln!(
                out,
                "### {} `{}`\n",
                report.method.group_by.unwrap_or("group"),
                md(g)
            );
        }
        let _ = writeln!(
            out,
            "**Base** `{}`: {} traces, {} attempts · **New** `{}`: {} traces, {} attempts\n",
            md(&c.base.label),
            count(c.base.traces as u64),
            count(c.base.attempts),
            md(&c.new.label),
            count(c.new.traces as u64),
            count(c.new.attempts)
        );
        let shown: Vec<&MetricChange> = c.metrics.iter().filter(|m| !m.is_idle()).collect();
        let notable: Vec<&MetricChange> = shown
            .iter()
            .copied()
            .filter(|m| m.significant || m.p_adjusted.is_some_and(|p| p < alpha))
            .collect();
        let (worse, better) = (c.worse().count(), c.better().count());
        if report.comparisons.len() == 1 {
            // The heading already says it.
        } else if worse + better == 0 {
            let _ = writeln!(
                out,
                "No metric changed significantly ({} tested).\n",
                c.tested
            );
        } else {
            let _ = writeln!(
                out,
                "{} significantly worse, {} significantly better ({} tested).\n",
                if worse > 0 {
                    format!("🔴 **{worse}**")
                } else {
                    "0".into()
                },
                if better > 0 {
                    format!("🟢 **{better}**")
                } else {
                    "0".into()
                },
                c.tested
            );
        }
        if !notable.is_empty() {
            md_metric_table(&mut out, &notable, report.method.confidence, alpha);
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "<details><summary>All {} metrics ({} tested)</summary>\n",
            shown.len(),
            c.tested
        );
        md_metric_table(&mut out, &shown, report.method.confidence, alpha);
        let idle = idle_names(c);
        if !idle.is_empty() {
            let _ = writeln!(out, "\n<sub>Zero on both sides: {}.</sub>", idle.join(", "));
        }
        out.push_str("\n</details>\n\n");
        match &c.paired {
            None => out.push_str("**Paired by task:** the sides share no task id.\n\n"),
            Some(p) => {
                let _ = writeln!(out, "**Paired by task:** {}\n", paired_summary(p));
                if !p.top_worse.is_empty() || !p.top_better.is_empty() {
                    out.push_str(
                        "<details><summary>Top movers (rollbacks / attempts)</summary>\n\n",
                    );
                    out.push_str("| task | base | new | change |\n|:--|--:|--:|--:|\n");
                    for t in p.top_worse.iter().chain(&p.top_better) {
                        let _ = writeln!(
                            out,
                            "| `{}` | {} | {} | {} |",
                            md(&t.trace_id),
                            task_rate(t.base_rollbacks, t.base_attempts),
                            task_rate(t.new_rollbacks, t.new_attempts),
                            f::change(super::Unit::Rate, Some(t.change))
                        );
                    }
                    out.push_str("\n</details>\n\n");
                }
            }
        }
    }
    if !report.gates.is_empty() {
        out.push_str("**Gates**\n\n");
        for g in &report.gates {
            let icon = match g.result {
                "fired" => "❌",
                "passed" => "✅",
                _ => "➖",
            };
            let group = g
                .group
                .as_ref()
                .map(|s| format!(" ({})", md(s)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- {icon} `{}`{group} {}: {}",
                md(&g.rule),
                g.result.replace('_', " "),
                md(&g.message)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "<sub>{} Method: docs/diff.md.</sub>",
        method_line(&report.method)
    );
    out
}

/// A markdown table of metric rows; significant changes in bold.
fn md_metric_table(out: &mut String, rows: &[&MetricChange], confidence: f64, alpha: f64) {
    let _ = writeln!(
        out,
        "| metric | base | new | change | {:.0}% CI | p (Holm) | |",
        confidence * 100.0
    );
    out.push_str("|:--|--:|--:|--:|:--|--:|:--|\n");
    for mc in rows {
        let unit = mc.def.unit;
        let (name, change, mark) = match mc.assessment {
            Assessment::Worse => (
                format!("**{}**", mc.metric),
                format!("**{}**", f::change(unit, mc.change)),
                "🔴 worse",
            ),
            Assessment::Better => (
                format!("**{}**", mc.metric),
                format!("**{}**", f::change(unit, mc.change)),
                "🟢 better",
            ),
            _ => (
                mc.metric.to_string(),
                f::change(unit, mc.change),
                verdict_word(mc, alpha),
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} ({}) | {} | {} | {} |",
            name,
            f::value(unit, mc.base),
            f::value(unit, mc.new),
            change,
            f::relative(mc),
            f::interval(unit, mc.ci),
            f::p_adjusted(mc),
            mark
        );
    }
}
