//! The `analyze` page: headline figures, then one picture per question —
//! which reasons dominate, where in a session rollbacks happen, for which
//! tool and agent, how long streaks get, what repair saves, which queries
//! repeat — the worst traces with their timelines, and with `--group-by`
//! the groups side by side on the same scales.

mod calls;
mod cost;
mod groups;
mod mistakes;
mod reasons;
mod session;

use std::fmt::Write as _;

use crate::analyze::view;
use crate::analyze::{render_json, Analysis, Scored};
use crate::html::escape::Esc;
use crate::html::page::{kpi, section, Page};
use crate::html::{table, worst_traces};
use crate::render::format::{pct, thousands};
use crate::render::skipped::{self as skip, Skipped};

use calls::{duplicates, repairs};
use reasons::{rollbacks, who};
use session::{streaks, where_in_session};

/// The whole page.
pub fn page(analysis: &Analysis, skipped: &Skipped) -> String {
    let json = render_json::render(analysis);
    let layout = view::build(analysis);
    let overall = &analysis.overall;
    let a = &overall.aggregate;
    let limit = analysis.options.rollback_limit;
    let mut body = String::new();
    let mut toc: Vec<(String, String)> = Vec::new();
    let mut add = |body: &mut String, id: &str, title: &str, lead: Option<&str>, inner: &str| {
        toc.push((id.to_string(), title.to_string()));
        section(body, id, title, lead, inner);
    };

    // The gates' result first, as the other views have it.
    let gate_line = crate::render::gates::result_line(&analysis.gates);
    if let Some(line) = &gate_line {
        let class = if crate::render::gates::any_fired(&analysis.gates) {
            "fired"
        } else {
            "passed"
        };
        let _ = write!(
            body,
            "<div class=\"gate-banner {class}\">{}</div>",
            Esc(line)
        );
    }
    body.push_str("<div class=\"headline\">");
    let skip = usize::from(gate_line.is_some());
    for line in layout.headline.iter().skip(skip) {
        let _ = write!(body, "<p>{}</p>", Esc(line));
    }
    body.push_str("</div>");
    body.push_str(&kpis(overall, limit));

    add(
        &mut body,
        "rollbacks",
        "Rollbacks by reason",
        Some("What the layer rolled back, and what every attempt came to."),
        &rollbacks(a),
    );
    let mistakes_view = layout
        .sections
        .iter()
        .find(|s| s.title == view::mistakes::TITLE);
    add(
        &mut body,
        "mistakes",
        "Mistakes",
        Some("Which mistake, one level below the reason: each format error by its kind, each repaired call by the fixes its arguments needed; the first example of each kind names its line."),
        &mistakes::mistakes(a, mistakes_view),
    );
    if let Some(blind) = layout
        .sections
        .iter()
        .find(|s| s.title == view::blind::TITLE)
    {
        let only = crate::render::Document {
            title: String::new(),
            level: 3,
            headline: Vec::new(),
            sections: vec![crate::render::Section {
                title: String::new(),
                blocks: blind.blocks.clone(),
            }],
        };
        add(
            &mut body,
            "blind-spots",
            view::blind::TITLE,
            Some("What the rules could not judge on this input: tool results that read like errors but match no rule, attempts whose text the input does not hold, rules that cannot fire."),
            &table::view(&only),
        );
    }
    add(
        &mut body,
        "where",
        "Where in a session",
        Some("Rollback rate by the attempt's position within its session (0 = its first LLM call). The grey strip below: attempts at that position, i.e. how many sessions got that far."),
        &where_in_session(a),
    );
    add(
        &mut body,
        "who",
        "Per tool and agent",
        Some("Rollbacks split by reason. Format errors and refusals happen without a tool call."),
        &who(analysis),
    );
    add(&mut body, "streaks", "Rollback streaks", Some("A streak is a run of consecutive rollbacks in one session; its length is the highest consecutive_rollbacks reached."), &streaks(a, limit));
    add(
        &mut body,
        "repairs",
        "Repairs",
        Some("In-place fixes applied to parsed tool calls, and how their arguments parsed."),
        &repairs(a),
    );
    add(
        &mut body,
        "duplicates",
        "Duplicate queries",
        None,
        &duplicates(a, analysis.options.top),
    );
    if let Some(inner) = cost::cost(overall) {
        add(
            &mut body,
            "cost",
            "Cost",
            Some("Tokens and seconds of the attempts the layer threw away (rollbacks and loop ends) and of failed calls, as shares of all attempts made."),
            &inner,
        );
    }
    if let Some(inner) = cost::results(overall) {
        add(
            &mut body,
            "results",
            "Task results",
            Some("Do failed tasks roll back more? Rollbacks / attempts reached over the tasks of each result, with cluster-bootstrap intervals over tasks."),
            &inner,
        );
    }
    add(
        &mut body,
        "worst",
        "Worst traces",
        Some("Most rollbacks first. Open one for its timeline."),
        &worst_traces::worst_traces(a.worst_traces.items(), &view::traces::ambiguous(a)),
    );
    if let Some(by) = analysis.options.group_by {
        add(
            &mut body,
            "groups",
            &format!("By {}", by.name()),
            Some("Each group on the same scales: rates per attempt, the same positions, the same streak lengths."),
            &groups::groups(analysis),
        );
    }
    if let Some(inner) = crate::html::skipped::inner(skipped) {
        add(
            &mut body,
            "skipped",
            skip::TITLE,
            Some("What the run skipped and said on its stderr: these lines are not in any figure."),
            &inner,
        );
    }
    let all = format!(
        "<details class=\"all\"><summary>Every table of <code>--format table</code></summary>{}</details>",
        table::view(&layout)
    );
    add(&mut body, "tables", "All figures as tables", None, &all);

    let subtitle = format!(
        "{} input{} · {} traces · {} attempts · rollback limit {} · bootstrap {} resamples, seed {}",
        a.files,
        if a.files == 1 { "" } else { "s" },
        a.tally.traces,
        a.tally.attempts,
        limit,
        analysis.options.iterations,
        analysis.options.seed
    );
    let title = match crate::render::gates::result_words(&analysis.gates) {
        Some(words) => format!("{words} · rollback report"),
        None => "rollback report".to_string(),
    };
    Page {
        command: "analyze",
        title: &title,
        subtitle: Esc(&subtitle).to_string(),
        toc,
        body,
        data: &json,
    }
    .render()
}

fn kpis(scored: &Scored, limit: u32) -> String {
    let a = &scored.aggregate;
    let mut out = String::from("<div class=\"kpis\">");
    let interval = match scored.interval {
        Some((lo, hi)) => format!("95% CI {:.1}–{:.1}%", lo * 100.0, hi * 100.0),
        None => "no interval (fewer than 2 traces)".into(),
    };
    let interval = format!(
        "of {} attempts reached · {interval}",
        thousands(a.tally.reached())
    );
    let rate_tone = if a.tally.rollbacks() > 0 { "warn" } else { "" };
    kpi(
        &mut out,
        &pct(a.tally.rollbacks(), a.tally.reached()),
        "rollback rate",
        &interval,
        rate_tone,
        "rollback_rate.value",
    );
    kpi(
        &mut out,
        &a.tally.rollbacks().to_string(),
        "rollbacks",
        &format!("of {} attempts", a.tally.attempts),
        "",
        "rollbacks",
    );
    kpi(
        &mut out,
        &a.tally.traces_with_rollback.to_string(),
        "traces with a rollback",
        &format!(
            "{} of {} traces",
            pct(a.tally.traces_with_rollback, a.tally.traces),
            a.tally.traces
        ),
        "",
        "traces_with_rollback",
    );
    kpi(
        &mut out,
        &a.tally.calls.repaired.to_string(),
        "calls repaired",
        &format!(
            "{} of {} tool calls",
            pct(a.tally.calls.repaired, a.tally.calls.parsed),
            a.tally.calls.parsed
        ),
        if a.tally.calls.repaired > 0 {
            "good"
        } else {
            ""
        },
        "calls_repaired",
    );
    let longest = a.tally.streaks.longest;
    kpi(
        &mut out,
        &longest.to_string(),
        "longest streak",
        &format!(
            "{} streaks; at most {} before the limit acts",
            a.tally.streaks.count,
            limit.saturating_sub(1)
        ),
        if longest > 0 && longest + 1 >= limit {
            "bad"
        } else {
            ""
        },
        "streaks.max",
    );
    kpi(
        &mut out,
        &a.duplicates.total().to_string(),
        "duplicate-query hits",
        &format!(
            "{} near-duplicates slipped through",
            a.near_duplicates.total()
        ),
        "",
        "duplicate_hits",
    );
    let early: u64 = a.tally.main_ended_early.iter().sum();
    kpi(
        &mut out,
        &early.to_string(),
        "traces ended early",
        &format!("{} ended at the limit", a.tally.limit_events.loop_ended),
        if early > 0 { "bad" } else { "" },
        "",
    );
    if a.bad_lines > 0 {
        kpi(
            &mut out,
            &a.bad_lines.to_string(),
            "bad lines skipped",
            "listed under Skipped input",
            "warn",
            "bad_lines",
        );
    }
    out.push_str("</div>");
    out
}
