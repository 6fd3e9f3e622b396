//! `diff`'s report as a [`Document`], drawn by the table and Markdown back
//! ends of [`crate::render`] (a terminal table, a pull-request comment).
//! The mistakes block's kinds are chosen by [`super::mistakes`].

use super::format::{self as f};
use super::paired::{PairedView, TaskChange};
use super::policies::{PolicyChanges, SHOWN_TASKS};
use super::{Assessment, Comparison, DiffReport, Method, MetricChange, SideSummary, Unit};
use crate::render::format::{counted, percent, thousands};
use crate::render::gates;
use crate::render::{Block, Cell, Document, Line, Section, Table, Tone};

/// The report, laid out; `cap` bounds the mistakes block's rows per
/// family (the terminal's [`super::mistakes::TERMINAL_ROWS`]).
pub fn document(report: &DiffReport, cap: Option<usize>) -> Document {
    let alpha = report.method.alpha;
    let mut sections: Vec<Section> = Vec::new();
    // The gates' result first (docs/diff.md, "Gates"): the rules, each with
    // why it fired or passed, before the figures behind them.
    if !report.gates.is_empty() {
        sections.push(gates::section(&report.gates));
    }
    if let Some(changes) = &report.policy_changes {
        sections.push(policy_changes(changes));
    }
    sections.extend(
        report
            .comparisons
            .iter()
            .map(|c| comparison(c, &report.method, alpha, cap)),
    );
    sections.push(Section {
        title: String::new(),
        blocks: vec![Block::Text(
            Line::default()
                .strong("Method:")
                .then(format!(" {} (docs/diff.md)", method_line(&report.method))),
        )],
    });
    // The answer first: the gates' result, then which metrics changed,
    // before any table.
    let mut headline: Vec<String> = gates::result_line(&report.gates).into_iter().collect();
    headline.extend(report.policy_changes.iter().map(|c| c.summary()));
    for c in &report.comparisons {
        headline.push(verdict_line(c));
        if let Some(note) = &c.power.note {
            headline.push(match &c.group {
                Some(g) => format!("{g}: {note}"),
                None => note.clone(),
            });
        }
    }
    Document {
        title: title(report),
        // A pull-request comment sits inside a page.
        level: 2,
        headline,
        sections,
    }
}

/// The Markdown heading (and the page's title): the gates' result, then
/// the significance verdict, which counts the kind shares too, so the two
/// never disagree.
pub fn title(report: &DiffReport) -> String {
    match gates::result_words(&report.gates) {
        Some(words) => {
            let icon = if gates::any_fired(&report.gates) {
                "❌"
            } else {
                "✅"
            };
            format!("mirotrace diff: {icon} {words} · {}", status(report))
        }
        None => format!("mirotrace diff: {}", status(report)),
    }
}

/// `verdict: …` for one comparison (`verdict for model=x: …` in a group).
fn verdict_line(c: &Comparison) -> String {
    match &c.group {
        Some(g) => format!("verdict for {g}: {}", headline(c)),
        None => format!("verdict: {}", headline(c)),
    }
}

/// Significant changes of the metrics and of the kind shares, worse and
/// better.
fn changed(c: &Comparison) -> (usize, usize) {
    let all = || c.metrics.iter().chain(&c.kind_shares);
    (
        all().filter(|m| m.assessment == Assessment::Worse).count(),
        all().filter(|m| m.assessment == Assessment::Better).count(),
    )
}

fn status(report: &DiffReport) -> String {
    let (worse, better) = report
        .comparisons
        .iter()
        .map(changed)
        .fold((0, 0), |(w, b), (cw, cb)| (w + cw, b + cb));
    match (worse, better) {
        (0, 0) => "⚪ no significant change".to_string(),
        (0, b) => format!("🟢 {b} significantly better"),
        (w, 0) => format!("🔴 {w} significantly worse"),
        (w, b) => format!("🔴 {w} significantly worse, 🟢 {b} better"),
    }
}

fn comparison(c: &Comparison, method: &Method, alpha: f64, cap: Option<usize>) -> Section {
    let mut blocks = Vec::new();
    if let Some(g) = &c.group {
        let by = method.group_by.unwrap_or("group");
        blocks.push(Block::Text(
            Line::default().strong(format!("{by}:")).then(" ").code(g),
        ));
    }
    blocks.push(Block::Text(side("base:", &c.base)));
    blocks.push(Block::Text(side("new:", &c.new)));
    let paired = Line::default().strong("Paired by task:");
    match &c.paired {
        None => blocks.push(Block::Text(paired.then(" the sides share no task id"))),
        Some(p) => blocks.push(Block::Text(paired.then(format!(" {}", paired_summary(p))))),
    }
    let ci_head = format!("{:.0}% CI", method.confidence * 100.0);
    let mut table = Table::new(&[
        "metric", "base", "new", "change", &ci_head, "p (Holm)", "result",
    ]);
    table.rows = c
        .metrics
        .iter()
        .filter(|m| !m.is_idle())
        .map(|mc| metric_row(mc, alpha))
        .collect();
    blocks.push(Block::Table(table));
    let idle: Vec<&str> = c
        .metrics
        .iter()
        .filter(|m| m.is_idle())
        .map(|m| m.metric)
        .collect();
    if !idle.is_empty() {
        blocks.push(Block::Note(format!(
            "zero on both sides: {}",
            idle.join(", ")
        )));
    }
    blocks.extend(mistakes(c, &ci_head, alpha, cap));
    if let Some(p) = c
        .paired
        .as_ref()
        .filter(|p| !p.top_worse.is_empty() || !p.top_better.is_empty())
    {
        let mut movers = Table::new(&["task", "base", "new", "change"]);
        movers.rows = p
            .top_worse
            .iter()
            .chain(&p.top_better)
            .map(mover_row)
            .collect();
        blocks.push(Block::Details {
            summary: "Top movers (rollbacks / attempts reached)".into(),
            blocks: vec![Block::Table(movers)],
        });
    }
    if let Some(r) = &c.results {
        blocks.push(Block::Text(
            Line::default()
                .strong("Task results:")
                .then(format!(" {}", results_summary(r))),
        ));
        let flips: Vec<_> = r
            .pass_to_fail_tasks
            .iter()
            .map(|f| ("pass → fail", f))
            .chain(r.fail_to_pass_tasks.iter().map(|f| ("fail → pass", f)))
            .collect();
        if !flips.is_empty() {
            let mut table = Table::new(&["task", "flip", "base rollbacks", "new rollbacks"]);
            table.rows = flips
                .into_iter()
                .map(|(kind, f)| {
                    vec![
                        Cell::text(f.task.as_str()),
                        Cell::text(kind),
                        Cell::text(format!("{} / {}", f.base_rollbacks, f.base_reached)),
                        Cell::text(format!("{} / {}", f.new_rollbacks, f.new_reached)),
                    ]
                })
                .collect();
            blocks.push(Block::Details {
                summary: "Flipped tasks (rollbacks / attempts reached)".into(),
                blocks: vec![Block::Table(table)],
            });
        }
    }
    Section {
        title: String::new(),
        blocks,
    }
}

/// The kind shares that occur, family by family, drawn as the metrics'
/// rows are; nothing when no kind occurs on either side.
fn mistakes(c: &Comparison, ci_head: &str, alpha: f64, cap: Option<usize>) -> Vec<Block> {
    let families = super::mistakes::families(c);
    if families.is_empty() {
        return Vec::new();
    }
    let mut table = Table::new(&[
        "mistake kind",
        "base",
        "new",
        "change",
        ci_head,
        "p (Holm)",
        "result",
    ])
    // The result over the interval when the kind's long name leaves no room.
    .priority(&[9, 5, 6, 7, 3, 4, 8]);
    table.caption = Some(
        "Mistakes: each kind's share of its family (json_fixes: of the calls json_repair \
         repaired, a call may need several); Holm-adjusted among the kinds"
            .into(),
    );
    let mut hidden = Vec::new();
    for f in &families {
        let shown = cap.unwrap_or(usize::MAX).min(f.rows.len());
        table
            .rows
            .extend(f.rows[..shown].iter().map(|mc| metric_row(mc, alpha)));
        if shown < f.rows.len() {
            hidden.push(format!("{} more {} kinds", f.rows.len() - shown, f.family));
        }
    }
    let totals: Vec<String> = families.iter().map(|f| f.totals()).collect();
    let mut blocks = vec![
        Block::Table(table),
        Block::Note(format!("shares of (base → new): {}", totals.join("; "))),
    ];
    if !hidden.is_empty() {
        blocks.push(Block::Note(format!(
            "{} in --format json",
            hidden.join(", ")
        )));
    }
    blocks
}

/// Flips and pass^k in one sentence.
pub fn results_summary(r: &super::results::ResultsView) -> String {
    let mut s = format!(
        "{} tasks with a result on both sides: {} pass → fail, {} fail → pass",
        r.shared, r.pass_to_fail, r.fail_to_pass
    );
    for (side, ks) in [("base", &r.base_pass_k), ("new", &r.new_pass_k)] {
        if !ks.is_empty() {
            let parts: Vec<String> = ks.iter().map(|(k, v)| format!("pass^{k} {v:.3}")).collect();
            s.push_str(&format!("; {side} {}", parts.join(", ")));
        }
    }
    s
}

fn side(name: &str, s: &SideSummary) -> Line {
    Line::default()
        .strong(name)
        .then(" ")
        .code(&s.label)
        .then(format!(
            " ({}, {}, {} reached)",
            counted(s.traces as u64, "trace"),
            counted(s.attempts, "attempt"),
            thousands(s.reached)
        ))
}

/// The result column's word: `worse`, `better`, `below noise`, `untested`.
pub fn verdict_word(mc: &MetricChange, alpha: f64) -> &'static str {
    match mc.assessment {
        Assessment::Worse => "worse",
        Assessment::Better => "better",
        Assessment::Untested => "untested",
        Assessment::NoChange if mc.p_adjusted.is_some_and(|p| p < alpha) => "below noise",
        Assessment::NoChange => "",
    }
}

/// A metric's row; significant changes stand out in every format.
fn metric_row(mc: &MetricChange, alpha: f64) -> Vec<Cell> {
    let unit = mc.def.unit;
    let tone = match mc.assessment {
        Assessment::Worse => Tone::Bad,
        Assessment::Better => Tone::Good,
        _ => Tone::Dim,
    };
    let strong = mc.significant;
    vec![
        Cell::text(mc.metric).strong_if(strong),
        Cell::num(f::value(unit, mc.base)),
        Cell::num(f::value(unit, mc.new)),
        Cell::num(format!(
            "{} ({})",
            f::change(unit, mc.change),
            f::relative(mc)
        ))
        .strong_if(strong),
        Cell::num(f::interval(unit, mc.ci)),
        Cell::num(f::p_adjusted(mc)),
        Cell::text(verdict_word(mc, alpha))
            .tone(tone)
            .strong_if(strong),
    ]
}

/// One line: which metrics and kind shares changed significantly, of how
/// many tested, and a significant paired shift.
pub fn headline(c: &Comparison) -> String {
    let names = |assessment: Assessment, list: &[MetricChange]| -> Vec<&str> {
        list.iter()
            .filter(|m| m.assessment == assessment)
            .map(|m| m.metric)
            .collect()
    };
    let mut worse = names(Assessment::Worse, &c.metrics);
    let mut better = names(Assessment::Better, &c.metrics);
    worse.extend(names(Assessment::Worse, &c.kind_shares));
    better.extend(names(Assessment::Better, &c.kind_shares));
    let mut parts = Vec::new();
    if worse.is_empty() && better.is_empty() {
        parts.push("no significant change".to_string());
    }
    if !worse.is_empty() {
        parts.push(format!(
            "{} significantly worse ({})",
            worse.len(),
            worse.join(", ")
        ));
    }
    if !better.is_empty() {
        parts.push(format!(
            "{} significantly better ({})",
            better.len(),
            better.join(", ")
        ));
    }
    if let Some(p) = c.paired.as_ref().filter(|p| p.significant) {
        parts.push(format!(
            "paired by task, {}",
            if p.worse > p.better {
                "tasks got worse"
            } else {
                "tasks got better"
            }
        ));
    }
    let kinds = c.kind_shares.iter().filter(|m| m.p.is_some()).count();
    let kinds = if kinds > 0 {
        format!(" and {}", counted(kinds as u64, "kind share"))
    } else {
        String::new()
    };
    format!(
        "{} — {}{kinds} tested",
        parts.join("; "),
        counted(c.tested as u64, "metric")
    )
}

/// How the comparison was made, in one sentence.
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

/// `rollbacks/reached (rate)`.
pub fn task_rate(rollbacks: u64, reached: u64) -> String {
    format!(
        "{rollbacks}/{reached} ({})",
        percent(rollbacks as f64 / reached as f64, 1)
    )
}

fn mover_row(t: &TaskChange) -> Vec<Cell> {
    vec![
        Cell::text(t.trace_id.as_str()),
        Cell::num(task_rate(t.base_rollbacks, t.base_reached)),
        Cell::num(task_rate(t.new_rollbacks, t.new_reached)),
        Cell::num(f::change(Unit::Rate, Some(t.change))),
    ]
}

/// The paired per-task test in one sentence.
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
        thousands(p.shared as u64),
        p.worse,
        p.better,
        p.unchanged,
        f::change(Unit::Rate, Some(p.median_change)),
        f::p(p.wilcoxon.as_ref().map(|w| w.p)),
        f::p(Some(p.sign_p)),
        direction
    )
}

/// A policy diff's verdicts that change: how, and in which tasks.
pub fn policy_changes(c: &PolicyChanges) -> Section {
    let mut blocks = vec![Block::Text(Line::plain(c.summary()))];
    if c.changed > 0 {
        let mut table = Table::new(&["base policy", "new policy", "verdicts"]);
        table.rows = c
            .transitions
            .iter()
            .map(|t| {
                vec![
                    Cell::text(t.base.as_str()),
                    Cell::text(t.new.as_str()),
                    Cell::count(t.verdicts),
                ]
            })
            .collect();
        blocks.push(Block::Table(table));
        let mut tasks = Table::new(&[
            "task",
            "verdicts",
            "what changed (session#index: base → new)",
        ]);
        tasks.rows = c
            .changed_tasks
            .iter()
            .take(SHOWN_TASKS)
            .map(|t| {
                let what: Vec<String> = t
                    .changes
                    .iter()
                    .map(|v| {
                        let why = v
                            .new_why
                            .as_ref()
                            .or(v.base_why.as_ref())
                            .map(|w| format!(" ({w})"))
                            .unwrap_or_default();
                        format!("{}#{}: {} → {}{why}", v.session, v.index, v.base, v.new)
                    })
                    .collect();
                vec![
                    Cell::text(t.trace_id.as_str()),
                    Cell::count(t.changes.len() as u64),
                    Cell::text(what.join("; ")),
                ]
            })
            .collect();
        blocks.push(Block::Details {
            summary: format!(
                "Tasks whose verdicts change ({})",
                counted(c.changed_tasks.len() as u64, "task")
            ),
            blocks: vec![Block::Table(tasks)],
        });
        if c.changed_tasks.len() > SHOWN_TASKS {
            blocks.push(Block::Note(format!(
                "the first {SHOWN_TASKS} tasks are listed; --format json lists all {}",
                c.changed_tasks.len()
            )));
        }
    }
    Section {
        title: "Verdicts that change with the policy".into(),
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::counts::{Counts, KIND_METRICS};
    use crate::diff::{compare, gate, CompareOptions, RowSet, Sample};

    /// `n` traces whose two verdicts of one family are all of kind `a`'s
    /// (`flip` false) or all of kind `b`'s.
    fn rows(n: usize, a: &Metric, b: &Metric, flip: bool) -> RowSet {
        let mut set = RowSet::default();
        for i in 0..n {
            let mut c = Counts::default();
            c.0[crate::diff::counts::Count::Traces.slot()] = 1;
            c.0[a.den] = 2;
            c.0[if flip { b.num } else { a.num }] = 2;
            set.push(&format!("t{i}"), &c);
        }
        set
    }

    use crate::diff::Metric;

    /// A kind share that moved significantly while no metric did: the
    /// headline and the title say so, as the `sig:` gate that fires on it
    /// does (they never contradict each other).
    #[test]
    fn a_kind_share_change_is_in_the_headline_its_gate_fires_on() {
        let a = &KIND_METRICS[0];
        let family = a.id.split_once('.').map(|(f, _)| f).unwrap_or_default();
        let b = KIND_METRICS
            .iter()
            .find(|m| m.id != a.id && m.den == a.den && m.id.starts_with(family))
            .expect("a second kind of the family");
        let opts = CompareOptions::default();
        let pool = crate::engine::Workers::new(Some(2)).expect("pool");
        let base = Sample::new("a".into(), rows(60, a, b, false), &opts, "base", &pool);
        let new = Sample::new("b".into(), rows(60, a, b, true), &opts, "new", &pool);
        let c = compare(&base, &new, None, &opts);
        assert_eq!(c.worse().count() + c.better().count(), 0, "no metric moved");
        let rule = format!("sig:{}>+10pp", b.id);
        let mut report = DiffReport {
            method: crate::diff::Method::new(&opts, None),
            comparisons: vec![c],
            gates: Vec::new(),
            policy_changes: None,
        };
        report.gates = gate::evaluate_all(&[gate::parse(&rule).expect("rule")], &report);
        assert!(report.gate_fired(), "{:?}", report.gates);
        let doc = document(&report, None);
        assert!(doc.title.contains("gate fired"), "{}", doc.title);
        assert!(
            !doc.title.contains("no significant change"),
            "{}",
            doc.title
        );
        assert!(
            doc.headline[0].starts_with("gate fired: "),
            "{:?}",
            doc.headline
        );
        let verdict = &doc.headline[1];
        assert!(!verdict.contains("no significant change"), "{verdict}");
        assert!(verdict.contains(b.id), "{verdict}");
        // The gates come before the figures.
        assert_eq!(doc.sections[0].title, "Gates");
    }
}
