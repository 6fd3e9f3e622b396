//! `--fail-on` rules: when a comparison should fail a CI job.

use serde::Serialize;

use super::counts::{self, Metric, Unit};
use super::{format, Comparison, DiffReport};

/// The accepted grammar, shown with every parse error.
pub const GRAMMAR: &str = "\
accepted --fail-on rules:
  any-significant-worse     some metric is significantly worse
  any-significant-change    some metric changed significantly, either way
  paired-worse              the paired per-task test is significant and more tasks got worse than better
  sig:METRIC OP VALUE       the change of METRIC (new − base) is beyond VALUE AND significant
                            after Holm (the report's own verdict): the rule for CI
  METRIC OP VALUE           the point estimate of the change compares so, significant or not
    OP     >  >=  <  <=
    VALUE  [+|-]NUMBER pp   absolute change in percentage points (rate metrics)
           [+|-]NUMBER%     relative change, percent of the base value (any metric; 0 → >0 is +infinity)
           [+|-]NUMBER      absolute change in the metric's unit (per-trace and streak metrics)
  rules are OR-ed: the job fails (exit 1) when any rule fires on any comparison
  quote each rule, or the shell reads > and < as redirections:
    --fail-on 'sig:rollback_rate>+1pp' --fail-on 'sig:refusal>+20%' --fail-on 'mean_streak>=0.5'
  every METRIC: `mirotrace diff --list-metrics` (and docs/diff.md)";

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

/// Parses one `--fail-on` rule. Spaces are ignored, keywords are
/// case-insensitive.
pub fn parse(text: &str) -> Result<Gate, GateError> {
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
        "any-significant-worse" => Rule::AnySignificantWorse,
        "any-significant-change" => Rule::AnySignificantChange,
        "paired-worse" => Rule::PairedWorse,
        _ => {
            let (significant, compact) = match compact.strip_prefix("sig:") {
                Some(rest) => (true, rest),
                None => (false, compact.as_str()),
            };
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
            let value = match (scale, metric.unit) {
                (Scale::Points, Unit::Rate) => x / 100.0,
                (Scale::Points, _) => {
                    return Err(err(format!(
                        "pp applies to rate metrics; {} is measured in {}: use a plain number or %",
                        metric.id,
                        unit_words(metric.unit)
                    )))
                }
                (Scale::Plain, Unit::Rate) => {
                    return Err(err(format!(
                        "{} is a rate: say pp (percentage points) or % (relative), e.g. {}>+{}pp",
                        metric.id, metric.id, x
                    )))
                }
                (Scale::Relative, _) => x / 100.0,
                (Scale::Plain, _) => x,
            };
            Rule::Threshold {
                metric,
                op,
                value,
                scale,
                significant,
            }
        }
    };
    Ok(Gate {
        text: text.trim().to_string(),
        rule,
    })
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

/// What a rule made of one comparison.
#[derive(Debug, Clone, Serialize)]
pub struct GateOutcome {
    pub rule: String,
    pub group: Option<String>,
    /// `fired`, `passed`, or `not_evaluated` (the metric is undefined on a side).
    pub result: &'static str,
    pub fired: bool,
    /// Which figures made it fire (or why it could not be evaluated).
    pub message: String,
}

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
        } => {
            let Some(mc) = c.metric(metric.id) else {
                return outcome(
                    "not_evaluated",
                    format!("{} is not in the comparison", metric.id),
                );
            };
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
            match (beyond, significant, mc.significant) {
                (false, _, _) => outcome("passed", format!("change is not {bound}: {figures}")),
                (true, true, true) => outcome(
                    "fired",
                    format!("change is {bound} and significant: {figures}"),
                ),
                (true, true, false) => outcome(
                    "passed",
                    format!("change is {bound} but {verdict}: {figures}"),
                ),
                (true, false, _) => outcome(
                    "fired",
                    format!("point estimate is {bound} ({verdict}; sig: would need significance): {figures}"),
                ),
            }
        }
    }
}

/// `beyond +1 pp`, `at or below -5%`: a threshold in words.
fn threshold_words(op: Op, value: f64, scale: Scale) -> String {
    let op = match op {
        Op::Gt => "beyond",
        Op::Ge => "at or beyond",
        Op::Lt => "below",
        Op::Le => "at or below",
    };
    // As written: 0.07 shows as +7 pp, not +7.000000000000001 pp.
    let short = |x: f64| {
        let s = format!("{x:+.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let number = match scale {
        Scale::Points => format!("{} pp", short(value * 100.0)),
        Scale::Relative => format!("{}%", short(value * 100.0)),
        Scale::Plain => short(value),
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
