//! How `diff`'s numbers read in tables, PR comments and gate messages:
//! rates in percent with changes in percentage points, counts as plain
//! numbers (built on [`crate::render::format`]).

use super::{MetricChange, Unit};
use crate::render::format::{percent, signed, thousands};

/// Whether a unit counts in thousands (tokens, milliseconds), where
/// decimals are noise and digit groups help.
fn large(unit: Unit) -> bool {
    matches!(unit, Unit::Tokens | Unit::Millis)
}

/// A large figure rounded to a whole number with digit groups: `16,372`.
fn whole(v: f64) -> String {
    let n = thousands(v.abs().round() as u64);
    if v < -0.5 {
        format!("-{n}")
    } else {
        n
    }
}

/// A large change rounded, signed, with digit groups: `+2,154`.
fn whole_signed(d: f64) -> String {
    if d.round() == 0.0 {
        "0".into()
    } else if d > 0.0 {
        format!("+{}", whole(d))
    } else {
        whole(d)
    }
}

/// A metric's value: `8.12%` for rates, `1.430` for counts, `16,372` for
/// tokens and milliseconds, `–` undefined.
pub fn value(unit: Unit, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "–".into(),
        (Unit::Rate, Some(v)) => percent(v, 2),
        (u, Some(v)) if large(u) => whole(v),
        (_, Some(v)) => format!("{v:.3}"),
    }
}

/// A change, signed: `+6.11 pp` for rates, `+0.125` for counts, `+2,154`
/// for tokens and milliseconds.
pub fn change(unit: Unit, d: Option<f64>) -> String {
    match (unit, d) {
        (_, None) => "–".into(),
        (Unit::Rate, Some(d)) => format!("{} pp", signed(d * 100.0, 2)),
        (u, Some(d)) if large(u) => whole_signed(d),
        (_, Some(d)) => signed(d, 3),
    }
}

/// A relative change: `+304%`, `new` when the base is 0 and the new side
/// is not, `–` when undefined.
pub fn relative(mc: &MetricChange) -> String {
    match (mc.relative_change, mc.change) {
        (Some(r), _) => format!("{}%", signed(r * 100.0, if r.abs() < 0.1 { 1 } else { 0 })),
        (None, Some(d)) if d != 0.0 => "new".into(),
        (None, Some(_)) => "0%".into(),
        (None, None) => "–".into(),
    }
}

/// An interval of the change: `[+5.20, +7.01] pp`.
pub fn interval(unit: Unit, ci: Option<[f64; 2]>) -> String {
    match (unit, ci) {
        (_, None) => "–".into(),
        (Unit::Rate, Some([lo, hi])) => {
            format!("[{}, {}] pp", signed(lo * 100.0, 2), signed(hi * 100.0, 2))
        }
        (u, Some([lo, hi])) if large(u) => {
            format!("[{}, {}]", whole_signed(lo), whole_signed(hi))
        }
        (_, Some([lo, hi])) => format!("[{}, {}]", signed(lo, 3), signed(hi, 3)),
    }
}

/// A p-value: `<0.001`, `0.012`, `–`.
pub fn p(p: Option<f64>) -> String {
    match p {
        None => "–".into(),
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
    }
}

/// An adjusted p-value, `≤0.017` when the bootstrap could not resolve a
/// smaller one (every replicate on one side of zero).
pub fn p_adjusted(mc: &MetricChange) -> String {
    match mc.p_adjusted {
        Some(x) if mc.p_at_floor && x >= 0.001 => format!("≤{x:.3}"),
        other => p(other),
    }
}

/// One metric in a sentence: `refusal 2.01% → 8.12% (+6.11 pp, +304%), 95% CI [+5.20, +7.01] pp, p_adj <0.001`.
pub fn sentence(mc: &MetricChange, confidence: f64) -> String {
    format!(
        "{} {} → {} ({}, {}), {:.0}% CI {}, p_adj {}",
        mc.metric,
        value(mc.def.unit, mc.base),
        value(mc.def.unit, mc.new),
        change(mc.def.unit, mc.change),
        relative(mc),
        confidence * 100.0,
        interval(mc.def.unit, mc.ci),
        p_adjusted(mc),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(value(Unit::Rate, Some(0.0812)), "8.12%");
        assert_eq!(change(Unit::Rate, Some(0.0611)), "+6.11 pp");
        assert_eq!(change(Unit::Rate, Some(-0.00001)), "0.00 pp");
        assert_eq!(change(Unit::Rollbacks, Some(0.125)), "+0.125");
        assert_eq!(change(Unit::Tokens, Some(2154.4)), "+2,154");
        assert_eq!(change(Unit::Millis, Some(-4773.6)), "-4,774");
        assert_eq!(change(Unit::Tokens, Some(0.2)), "0");
        assert_eq!(value(Unit::Tokens, Some(16371.583)), "16,372");
        assert_eq!(
            interval(Unit::Millis, Some([-10967.1, 20595.9])),
            "[-10,967, +20,596]"
        );
        assert_eq!(
            interval(Unit::Rate, Some([-0.01, 0.02])),
            "[-1.00, +2.00] pp"
        );
        assert_eq!(p(Some(0.0004)), "<0.001");
        assert_eq!(p(Some(0.25)), "0.250");
    }
}
