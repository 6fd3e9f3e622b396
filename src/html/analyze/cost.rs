//! The cost and task-results sections of the `analyze` page: output tokens
//! and seconds discarded by reason, and the rollback rate of passed and
//! failed tasks with their intervals.

use crate::analyze::{view, Scored};
use crate::detect::Reason;
use crate::html::chart::{self, Bar};
use crate::html::escape::Esc;
use crate::html::page::figure;
use crate::metrics::cost::CostSums;
use crate::render::format::{pct, percent, thousands};

/// The cost charts; `None` when the input recorded no usage or duration.
pub(super) fn cost(scored: &Scored) -> Option<String> {
    let c = &scored.aggregate.tally.cost;
    if !c.total.any_known() {
        return None;
    }
    let mut out = format!("<p>{}</p>", Esc(&view::cost::summary(c)));
    out.push_str("<div class=\"figs\">");
    let mut draw = |title: &str, id: &str, unit: &str, value: fn(&CostSums) -> (u64, u64)| {
        let (all, known) = value(&c.total);
        if known == 0 {
            return;
        }
        let mut rows: Vec<Bar> = Reason::ALL
            .iter()
            .map(|&r| {
                let (n, _) = value(c.reason(r));
                Bar::single(
                    r.name(),
                    n as f64,
                    &format!("r-{}", r.name()),
                    format!(
                        "{}: {} {unit} discarded, {} of the run's",
                        r.name(),
                        thousands(n),
                        pct(n, all)
                    ),
                    pct(n, all),
                )
            })
            .collect();
        let (failed, _) = value(&c.failed);
        rows.push(Bar::single(
            "failed calls",
            failed as f64,
            "o-llm_failed",
            format!(
                "llm_failed: {} {unit}, {} of the run's",
                thousands(failed),
                pct(failed, all)
            ),
            pct(failed, all),
        ));
        out.push_str(&figure(
            title,
            &format!(
                "share of the run's {unit} (known for {known} of {} attempts made)",
                c.total.attempts
            ),
            &chart::bars(id, title, &rows, &[], Some(all as f64)),
        ));
    };
    draw(
        "Output tokens discarded, by reason",
        "cost-tokens",
        "output tokens",
        |s| (s.output_tokens, s.output_known),
    );
    draw(
        "LLM time discarded, by reason",
        "cost-seconds",
        "milliseconds of LLM time",
        |s| (s.nanos / 1_000_000, s.seconds_known),
    );
    out.push_str("</div>");
    Some(out)
}

/// The rollback rate of passed and failed tasks; `None` without results.
pub(super) fn results(scored: &Scored) -> Option<String> {
    let a = &scored.aggregate;
    let t = &a.tally.results;
    if t.tasks == 0 {
        return None;
    }
    let r = &a.task_results;
    let rows: Vec<Bar> = [
        (
            "passed",
            &r.rate_success,
            scored.result_intervals[0],
            t.success,
            "o-final",
        ),
        (
            "failed",
            &r.rate_failure,
            scored.result_intervals[1],
            t.failure,
            "o-crash",
        ),
    ]
    .into_iter()
    .filter_map(|(label, h, interval, n, class)| {
        let rate = h.ratio()?;
        let ci = interval.map_or("no interval".to_string(), |(lo, hi)| {
            format!("95% CI {}–{}", percent(lo, 1), percent(hi, 1))
        });
        Some(Bar::single(
            format!("{label} tasks ({n})"),
            rate,
            class,
            format!("{label} tasks: rollback rate {} ({ci})", percent(rate, 1)),
            format!("{} · {ci}", percent(rate, 1)),
        ))
    })
    .collect();
    let mut out = String::from("<div class=\"figs\">");
    out.push_str(&figure(
        "Rollback rate by task result",
        &format!(
            "{} tasks with a result: {} passed, {} failed",
            t.tasks, t.success, t.failure
        ),
        &chart::bars(
            "rate-by-result",
            "Rollback rate by task result",
            &rows,
            &[],
            None,
        ),
    ));
    out.push_str("</div>");
    Some(out)
}
