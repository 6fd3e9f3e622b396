//! `--fail-on` rules: when a comparison should fail a CI job.

use super::counts::{self, Counts, Metric, Unit};
use super::{format, Comparison, DiffReport};
use crate::render::format::thousands;

/// The accepted grammar, shown with every parse error: one grammar for
/// `diff` and `analyze`.
pub const GRAMMAR: &str = "\
accepted --fail-on rules (diff compares two runs, analyze reads one):
  any-significant-worse     diff: some metric is significantly worse
  any-significant-change    diff: some metric changed significantly, either way
  paired-worse              diff: the paired per-task test is significant and more tasks got worse than better
  sig:METRIC OP CHANGE      diff: the change of METRIC (new − base) is beyond CHANGE AND significant
                            after Holm (the report's own verdict): the rule for CI
  METRIC OP CHANGE          diff: the point estimate of the change compares so, significant or not
  new:METRIC OP LEVEL       diff: the new side's METRIC itself compares so (base: for the base side)
  METRIC OP LEVEL           analyze: this run's METRIC compares so (each --group-by group's too)
    OP     >  >=  <  <=
    CHANGE [+|-]NUMBER pp   absolute change in percentage points (rate metrics)
           [+|-]NUMBER%     relative change, percent of the base value (any metric; 0 → >0 is +infinity)
           [+|-]NUMBER      absolute change in the metric's unit (per-trace and streak metrics)
    LEVEL  NUMBER%          a rate as a percentage (30%), or NUMBER as a fraction (0.30)
           NUMBER           any other metric in its own unit
  rules are OR-ed: the job fails (exit 1) when any rule fires on any comparison (or group)
  quote each rule, or the shell reads > and < as redirections:
    diff --fail-on 'sig:rollback_rate>+1pp' --fail-on 'sig:refusal>+20%' --fail-on 'new:rollback_rate>0.30'
    analyze --fail-on 'rollback_rate>0.30' --fail-on 'refusal>5%'
  every METRIC: `mirotrace diff --list-metrics` (and docs/diff.md)";

/// Which command a rule is written for: the same grammar, read against
/// two runs or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `diff`: changes, `sig:`, `base:`/`new:` levels, the keyword rules.
    Diff,
    /// `analyze`: a level of the one run.
    Run,
}

/// What a threshold is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The change new − base (`diff`).
    Change,
    /// The base side's own figure (`base:`).
    Base,
    /// The new side's own figure (`new:`).
    New,
    /// The figure of the run `analyze` read.
    Run,
}

impl Target {
    fn is_level(self) -> bool {
        self != Target::Change
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    fn holds(self, x: f64, y: f64) -> bool {
        match self {
            Op::Gt => x > y,
            Op::Ge => x >= y,
            Op::Lt => x < y,
            Op::Le => x <= y,
        }
    }
}

/// What a threshold's number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Percentage points of a rate.
    Points,
    /// Percent of the base value.
    Relative,
    /// The metric's own unit.
    Plain,
    /// A level given as a percentage (`30%` of a rate): stored as a fraction.
    Percent,
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    AnySignificantWorse,
    AnySignificantChange,
    PairedWorse,
    Threshold {
        metric: &'static Metric,
        op: Op,
        /// In the metric's own unit (fractions for rates), or a fraction
        /// of the base value for [`Scale::Relative`].
        value: f64,
        scale: Scale,
        /// `sig:`: fires only when the change is also significant (adjusted
        /// p below alpha and beyond the noise threshold), so the gate
        /// agrees with the report's verdict; otherwise the point estimate
        /// alone decides.
        significant: bool,
        /// The change, or a side's (the run's) own figure.
        target: Target,
    },
}

/// A rule with the text it was written as.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub text: String,
    pub rule: Rule,
}

/// A rule that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error("--fail-on {text:?}: {problem}\n{GRAMMAR}")]
pub struct GateError {
    pub text: String,
    pub problem: String,
}

/// Parses one `diff --fail-on` rule. Spaces are ignored, keywords are
/// case-insensitive.
pub fn parse(text: &str) -> Result<Gate, GateError> {
    parse_for(text, Scope::Diff)
}

/// Parses one `--fail-on` rule written for `scope`.
pub fn parse_for(text: &str, scope: Scope) -> Result<Gate, GateError> {
    let err = |problem: String| GateError {
        text: text.to_string(),
        problem,
    };
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let rule = match compact.as_str() {
        "" => return Err(err("the rule is empty".into())),
        "any-significant-worse" | "any-significant-change" | "paired-worse"
            if scope == Scope::Run =>
        {
            return Err(err(format!(
                "{compact} compares two runs: a rule for `mirotrace diff`; analyze's rules \
                 compare a figure of this run with a number, e.g. rollback_rate>0.30"
            )))
        }
        "any-significant-worse" => Rule::AnySignificantWorse,
        "any-significant-change" => Rule::AnySignificantChange,
        "paired-worse" => Rule::PairedWorse,
        _ => {
            let (significant, compact) = match compact.strip_prefix("sig:") {
                Some(rest) => (true, rest),
                None => (false, compact.as_str()),
            };
            let (target, compact) = if let Some(rest) = compact.strip_prefix("new:") {
                (Target::New, rest)
            } else if let Some(rest) = compact.strip_prefix("base:") {
                (Target::Base, rest)
            } else if scope == Scope::Run {
                (Target::Run, compact)
            } else {
                (Target::Change, compact)
            };
            if scope == Scope::Run && (significant || target != Target::Run) {
                return Err(err(
                    "sig:, new: and base: compare two runs (rules for `mirotrace diff`); \
                     analyze's rules compare a figure of this run with a number, e.g. rollback_rate>0.30"
                        .into(),
                ));
            }
            if significant && target.is_level() {
                return Err(err(
                    "sig: tests a change between the sides; new: and base: compare one side's \
                     figure with a number, with no test: use one or the other"
                        .into(),
                ));
            }
            let Some(at) = compact.find(['>', '<']) else {
                return Err(err(no_operator(compact)));
            };
            let (name, rest) = compact.split_at(at);
            let (op, value) = match rest.as_bytes() {
                [b'>', b'=', ..] => (Op::Ge, &rest[2..]),
                [b'<', b'=', ..] => (Op::Le, &rest[2..]),
                [b'>', ..] => (Op::Gt, &rest[1..]),
                _ => (Op::Lt, &rest[1..]),
            };
            if name.is_empty() {
                return Err(err("no metric before the operator".into()));
            }
            let metric = counts::find(name).ok_or_else(|| {
                let known: Vec<&str> = counts::METRICS.iter().map(|m| m.id).collect();
                // analyze's longest streak is bounded by the limit: not a metric to test.
                let hint = if name == "max_streak" {
                    "max_streak (the longest streak) is shown, not compared; \
                     the mean of each trace's longest streak is mean_longest_streak. "
                } else {
                    ""
                };
                let kinds: Vec<String> = crate::metrics::figures::kind_families()
                    .into_iter()
                    .map(|(prefix, _)| format!("{prefix}.<kind>"))
                    .collect();
                err(format!(
                    "unknown metric {name:?}; {hint}known metrics: {}; kind shares: {} (diff --list-metrics lists the kinds)",
                    known.join(", "),
                    kinds.join(", ")
                ))
            })?;
            let (number, scale) = if let Some(n) = value.strip_suffix("pp") {
                (n, Scale::Points)
            } else if let Some(n) = value.strip_suffix('%') {
                (n, Scale::Relative)
            } else {
                (value, Scale::Plain)
            };
            let x: f64 = match number.parse::<f64>() {
                Ok(x) if x.is_finite() && !number.is_empty() => x,
                _ => {
                    return Err(err(format!(
                        "{value:?} is not a number with an optional unit (pp or %)"
                    )))
                }
            };
            let (value, scale) = if target.is_level() {
                level(metric, x, scale).map_err(err)?
            } else {
                (change(metric, x, scale).map_err(err)?, scale)
            };
            Rule::Threshold {
                metric,
                op,
                value,
                scale,
                significant,
                target,
            }
        }
    };
    Ok(Gate {
        text: text.trim().to_string(),
        rule,
    })
}

/// A change threshold in the metric's unit (a fraction of the base for `%`).
fn change(metric: &Metric, x: f64, scale: Scale) -> Result<f64, String> {
    match (scale, metric.unit) {
        (Scale::Points, Unit::Rate) => Ok(x / 100.0),
        (Scale::Points, _) => Err(format!(
            "pp applies to rate metrics; {} is measured in {}: use a plain number or %",
            metric.id,
            unit_words(metric.unit)
        )),
        (Scale::Plain, Unit::Rate) => Err(format!(
            "{} is a rate: say pp (percentage points) or % (relative), e.g. {}>+{}pp",
            metric.id, metric.id, x
        )),
        (Scale::Relative | Scale::Percent, _) => Ok(x / 100.0),
        (Scale::Plain, _) => Ok(x),
    }
}

/// A level threshold (`new:`, `base:`, analyze's): a rate as a fraction or
/// a percentage, anything else in its own unit.
fn level(metric: &Metric, x: f64, scale: Scale) -> Result<(f64, Scale), String> {
    let rate = metric.unit == Unit::Rate;
    match (scale, rate) {
        (Scale::Points, _) => Err(format!(
            "pp is a change; a level of {} is {}",
            metric.id,
            if rate {
                "a percentage (30%) or a fraction (0.30)"
            } else {
                "a plain number in its unit"
            }
        )),
        (Scale::Relative, true) if (0.0..=100.0).contains(&x) => Ok((x / 100.0, Scale::Percent)),
        (Scale::Plain, true) if (0.0..=1.0).contains(&x) => Ok((x, Scale::Plain)),
        (_, true) => Err(format!(
            "{} is a rate between 0 and 1: write a fraction (0.30) or a percentage (30%)",
            metric.id
        )),
        (Scale::Relative, false) => Err(format!(
            "{} is measured in {}: a level is a plain number (% is a change, relative to the base, in diff)",
            metric.id,
            unit_words(metric.unit)
        )),
        (_, false) => Ok((x, Scale::Plain)),
    }
}

/// Why a rule without an operator was refused. A bare metric name is
/// what an unquoted `rollback_rate>+1pp` leaves once the shell has taken
/// `>+1pp` as a redirection (and written a file `+1pp`): say so.
fn no_operator(compact: &str) -> String {
    match counts::find(compact) {
        Some(m) => format!(
            "{} is a metric with no operator and no value: if you wrote `{}>…` unquoted, \
             the shell took `>…` as a redirection (check for a stray file named after the value); \
             quote the rule: --fail-on 'sig:{}>+1pp'",
            m.id, compact, m.id
        ),
        None => "not a known rule and no comparison operator (> >= < <=) in it".into(),
    }
}

/// Every metric a rule can name, one per line: its name, unit, which way
/// is worse and what it measures (`mirotrace diff --list-metrics`), the
/// description wrapped to `width` when one is given.
pub fn metrics_listing(width: Option<usize>) -> String {
    let name_width = counts::METRICS
        .iter()
        .map(|m| m.id.len())
        .max()
        .unwrap_or(0);
    let mut out = String::from(
        "Metrics a --fail-on rule can name\n\
         (a trailing _rate may be left off or added;\n\
         rates take pp or %, the others a number or %):\n",
    );
    for m in counts::METRICS.iter() {
        let worse = if m.higher_is_worse { "higher" } else { "lower" };
        let head = format!(
            "  {:name_width$}  {:9}  worse when {worse:6}  ",
            m.id,
            m.unit.name()
        );
        let lines: Vec<String> = match width {
            // Continuations under the description while it has room.
            Some(w) if head.len() + 20 <= w => {
                crate::render::fit::wrap(&m.about, w - head.len(), 0)
                    .into_iter()
                    .enumerate()
                    .map(|(i, l)| {
                        let lead = if i == 0 {
                            head.clone()
                        } else {
                            " ".repeat(head.len())
                        };
                        format!("{lead}{l}")
                    })
                    .collect()
            }
            Some(w) => {
                let mut lines = vec![head.trim_end().to_string()];
                lines.extend(crate::render::fit::wrap(&format!("    {}", m.about), w, 0));
                lines
            }
            None => vec![format!("{head}{}", m.about)],
        };
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out.push_str(&kind_listing(width));
    out
}

/// The parametrised kind shares (`<family>_share.<kind>`), one paragraph
/// per family with its kinds.
fn kind_listing(width: Option<usize>) -> String {
    let mut out = String::from(
        "\nKind shares, one rate per kind: a kind's share of its\n\
         family's verdicts (json_fixes: of the calls json_repair\n\
         repaired; a call may need several), Holm-adjusted\n\
         among themselves:\n",
    );
    for (prefix, kinds) in crate::metrics::figures::kind_families() {
        out.push_str(&format!("  {prefix}.<kind>\n"));
        let text = format!("kinds: {}", kinds.join(", "));
        match width {
            Some(w) if w > 30 => {
                for l in crate::render::fit::wrap(&text, w - 4, 0) {
                    out.push_str(&format!("    {l}\n"));
                }
            }
            _ => out.push_str(&format!("    {text}\n")),
        }
    }
    out
}

fn unit_words(u: Unit) -> &'static str {
    match u {
        Unit::Rate => "a share",
        Unit::PerTrace => "events per trace",
        Unit::Rollbacks => "rollbacks",
        Unit::Tokens => "tokens per task",
        Unit::Millis => "milliseconds per task",
    }
}

pub use crate::render::gates::GateOutcome;

/// Evaluates every gate against every comparison of the report.
pub fn evaluate_all(gates: &[Gate], report: &DiffReport) -> Vec<GateOutcome> {
    let confidence = report.method.confidence;
    let mut out = Vec::new();
    for c in &report.comparisons {
        for g in gates {
            out.push(evaluate(g, c, confidence));
        }
    }
    out
}

/// Evaluates one gate against one comparison.
pub fn evaluate(gate: &Gate, c: &Comparison, confidence: f64) -> GateOutcome {
    let outcome = |result: &'static str, message: String| GateOutcome {
        rule: gate.text.clone(),
        group: c.group.clone(),
        result,
        fired: result == "fired",
        message,
    };
    let list = |it: &mut dyn Iterator<Item = &super::MetricChange>| -> Vec<String> {
        it.map(|m| format::sentence(m, confidence)).collect()
    };
    match &gate.rule {
        Rule::AnySignificantWorse | Rule::AnySignificantChange => {
            let hits = if gate.rule == Rule::AnySignificantWorse {
                list(&mut c.worse())
            } else {
                list(&mut c.metrics.iter().filter(|m| m.significant))
            };
            if hits.is_empty() {
                outcome(
                    "passed",
                    "no metric changed significantly in that direction".into(),
                )
            } else {
                outcome("fired", hits.join("; "))
            }
        }
        Rule::PairedWorse => match &c.paired {
            None => outcome("not_evaluated", "the sides share no task id".into()),
            Some(p) => {
                let msg = format!(
                    "paired over {} shared tasks: {} worse, {} better, {} unchanged; Wilcoxon p {}",
                    p.shared,
                    p.worse,
                    p.better,
                    p.unchanged,
                    format::p(p.wilcoxon.as_ref().map(|w| w.p))
                );
                if p.significant && p.worse > p.better {
                    outcome("fired", msg)
                } else {
                    outcome("passed", msg)
                }
            }
        },
        Rule::Threshold {
            metric,
            op,
            value,
            scale,
            significant,
            target,
        } => {
            let Some(mc) = c.metric(metric.id) else {
                return outcome(
                    "not_evaluated",
                    format!("{} is not in the comparison", metric.id),
                );
            };
            let side = match target {
                Target::Base => Some(("the base side", mc.base, mc.base_counts)),
                Target::New | Target::Run => Some(("the new side", mc.new, mc.new_counts)),
                Target::Change => None,
            };
            if let Some((name, level, counts)) = side {
                let (result, message) =
                    level_outcome(metric, *op, *value, *scale, name, level, counts);
                return outcome(result, message);
            }
            let observed = match (scale, mc.change) {
                (_, None) => None,
                (Scale::Relative, Some(d)) => Some(match mc.relative_change {
                    Some(r) => r,
                    // From a zero base: any rise is infinitely large.
                    None if d > 0.0 => f64::INFINITY,
                    None if d < 0.0 => f64::NEG_INFINITY,
                    None => 0.0,
                }),
                (_, Some(d)) => Some(d),
            };
            let Some(x) = observed else {
                return outcome(
                    "not_evaluated",
                    format!(
                        "{} is undefined on a side (nothing to divide by)",
                        metric.id
                    ),
                );
            };
            let figures = format::sentence(mc, confidence);
            let bound = threshold_words(*op, *value, *scale);
            let beyond = op.holds(x, *value);
            let verdict = if mc.significant {
                "significant"
            } else if mc.exceeds_noise {
                "not significant after Holm"
            } else {
                "below the noise threshold"
            };
            // A sig: rule that passes on a comparison too small to see
            // much says so: its pass means little.
            let power = match (&mc.power_note, significant) {
                (Some(note), true) => format!(" ({note})"),
                _ => String::new(),
            };
            match (beyond, significant, mc.significant) {
                (false, _, _) => outcome(
                    "passed",
                    format!("change is not {bound}: {figures}{power}"),
                ),
                (true, true, true) => outcome(
                    "fired",
                    format!("change is {bound} and significant: {figures}"),
                ),
                (true, true, false) => outcome(
                    "passed",
                    format!("change is {bound} but {verdict}: {figures}{power}"),
                ),
                (true, false, _) => outcome(
                    "fired",
                    format!("point estimate is {bound} ({verdict}; sig: would need significance): {figures}"),
                ),
            }
        }
    }
}

/// A level rule's result and its line: `rollback_rate of the new side is
/// 38.9% (68 / 175), above 30%`.
fn level_outcome(
    metric: &Metric,
    op: Op,
    value: f64,
    scale: Scale,
    side: &str,
    level: Option<f64>,
    [num, den]: [u64; 2],
) -> (&'static str, String) {
    let Some(x) = level else {
        return (
            "not_evaluated",
            format!(
                "{} of {side} is undefined (nothing to divide by: {den})",
                metric.id
            ),
        );
    };
    let shown = match metric.unit {
        Unit::Rate => format!(
            "{} ({} / {})",
            format::value(metric.unit, Some(x)),
            thousands(num),
            thousands(den)
        ),
        _ => format::value(metric.unit, Some(x)),
    };
    let bound = level_words(op, value, scale, metric.unit);
    if op.holds(x, value) {
        (
            "fired",
            format!("{} of {side} is {shown}, {bound}", metric.id),
        )
    } else {
        (
            "passed",
            format!("{} of {side} is {shown}, not {bound}", metric.id),
        )
    }
}

/// Evaluates `analyze`'s rules against the counts of one run or group
/// (`group` names it).
pub fn evaluate_run(gates: &[Gate], counts: &Counts, group: Option<&str>) -> Vec<GateOutcome> {
    let side = match group {
        Some(_) => "the group",
        None => "this run",
    };
    gates
        .iter()
        .map(|g| {
            let (result, message) = match &g.rule {
                Rule::Threshold {
                    metric,
                    op,
                    value,
                    scale,
                    ..
                } => level_outcome(
                    metric,
                    *op,
                    *value,
                    *scale,
                    side,
                    metric.value(counts),
                    [counts.get(metric.num), counts.get(metric.den)],
                ),
                // parse_for(Scope::Run) accepts no other rule.
                _ => ("not_evaluated", "a rule for diff, not analyze".into()),
            };
            GateOutcome {
                rule: g.text.clone(),
                group: group.map(String::from),
                result,
                fired: result == "fired",
                message,
            }
        })
        .collect()
}

/// `above 30%`, `at or below 0.5`: a level threshold in words.
fn level_words(op: Op, value: f64, scale: Scale, unit: Unit) -> String {
    let op = match op {
        Op::Gt => "above",
        Op::Ge => "at or above",
        Op::Lt => "below",
        Op::Le => "at or below",
    };
    // A rate reads as a percentage however it was written.
    let number = match (scale, unit) {
        (Scale::Percent, _) | (_, Unit::Rate) => format!("{}%", short(value * 100.0, false)),
        _ => short(value, false),
    };
    format!("{op} {number}")
}

/// A threshold's number as written: 0.07 shows as 7, not 7.000000000000001.
fn short(x: f64, signed: bool) -> String {
    let s = if signed {
        format!("{x:+.4}")
    } else {
        format!("{x:.4}")
    };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `beyond +1 pp`, `at or below -5%`: a threshold in words.
fn threshold_words(op: Op, value: f64, scale: Scale) -> String {
    let op = match op {
        Op::Gt => "beyond",
        Op::Ge => "at or beyond",
        Op::Lt => "below",
        Op::Le => "at or below",
    };
    let number = match scale {
        Scale::Points => format!("{} pp", short(value * 100.0, true)),
        Scale::Relative | Scale::Percent => format!("{}%", short(value * 100.0, true)),
        Scale::Plain => short(value, true),
    };
    format!("{op} {number}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threshold(text: &str) -> (String, Op, f64, Scale) {
        match parse(text).expect("parses").rule {
            Rule::Threshold {
                metric,
                op,
                value,
                scale,
                ..
            } => (metric.id.to_string(), op, value, scale),
            other => panic!("not a threshold: {other:?}"),
        }
    }

    #[test]
    fn a_shell_mangled_rule_gets_a_hint_to_quote_it() {
        let e = parse("rollback_rate").expect_err("no operator").to_string();
        assert!(e.contains("redirection"), "{e}");
        assert!(e.contains("--fail-on 'sig:rollback_rate>+1pp'"), "{e}");
        assert!(e.contains("mirotrace diff --list-metrics"), "{e}");
        // `crash` is `crash_rate`: the hint names the metric as it is known.
        assert!(parse("crash")
            .expect_err("")
            .to_string()
            .contains("crash_rate is a metric"));
        let other = parse("nonsense").expect_err("").to_string();
        // Only the grammar below mentions redirections, not the problem line.
        let problem = other.lines().next().unwrap_or_default();
        assert!(!problem.contains("redirection"), "{other}");
    }

    #[test]
    fn the_listing_names_every_metric() {
        let listing = metrics_listing(None);
        assert!(metrics_listing(Some(80))
            .lines()
            .all(|l| l.chars().count() <= 80));
        for m in counts::METRICS.iter() {
            assert!(
                listing
                    .lines()
                    .any(|l| l.split_whitespace().next() == Some(m.id)),
                "{} missing",
                m.id
            );
        }
    }

    #[test]
    fn parses_the_documented_examples() {
        assert_eq!(
            threshold("rollback_rate>+1pp"),
            ("rollback_rate".into(), Op::Gt, 0.01, Scale::Points)
        );
        assert_eq!(
            threshold("refusal>+20%"),
            ("refusal".into(), Op::Gt, 0.2, Scale::Relative)
        );
        assert_eq!(
            threshold(" mean_streak >= 0.5 "),
            ("mean_streak".into(), Op::Ge, 0.5, Scale::Plain)
        );
        assert_eq!(
            threshold("crash<=-2pp"),
            ("crash_rate".into(), Op::Le, -0.02, Scale::Points)
        );
        assert_eq!(
            parse("Any-Significant-Worse").expect("parses").rule,
            Rule::AnySignificantWorse
        );
        assert_eq!(
            parse("paired-worse").expect("parses").rule,
            Rule::PairedWorse
        );
    }

    #[test]
    fn sig_prefix_requires_significance() {
        let sig = |t: &str| match parse(t).expect("parses").rule {
            Rule::Threshold { significant, .. } => significant,
            other => panic!("not a threshold: {other:?}"),
        };
        assert!(sig("sig:rollback_rate>+1pp"));
        assert!(sig(" SIG: rollback_rate > +1pp"));
        assert!(!sig("rollback_rate>+1pp"));
        assert_eq!(
            threshold("sig:refusal>+20%"),
            ("refusal".into(), Op::Gt, 0.2, Scale::Relative)
        );
        assert!(parse("sig:any-significant-worse").is_err());
    }

    #[test]
    fn explains_what_is_wrong() {
        let msg = |t: &str| parse(t).expect_err("rejects").to_string();
        assert!(msg("rollback_rate>1").contains("is a rate"));
        assert!(msg("mean_streak>1pp").contains("pp applies to rate metrics"));
        assert!(msg("nonsense>1pp").contains("unknown metric"));
        assert!(msg("max_streak>1").contains("mean_longest_streak"));
        assert!(msg("refusal>abc%").contains("not a number"));
        assert!(msg("refusal>pp").contains("not a number"));
        assert!(msg("all-bad").contains("no comparison operator"));
        assert!(msg(">1pp").contains("no metric"));
        assert!(msg("").contains("empty"));
        assert!(msg("all-bad").contains("accepted --fail-on rules"));
    }
}
