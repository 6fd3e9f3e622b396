//! Charts as inline SVG, drawn here so a page needs no script or library
//! to show them: horizontal bars, stacked bars, columns over a position, a
//! histogram with a marked limit, and a forest plot of changes.
//!
//! Every chart is an `<svg class="chart" data-chart="ID">` whose data marks
//! carry `class="mark …"` and a `<title>` with the exact figures (a tooltip
//! on hover). Colours come from CSS classes, so the light and dark schemes
//! and print restyle them.

mod bars;
mod change;
mod columns;

use std::fmt::Write as _;

use super::escape::Esc;

pub use bars::{bars, Bar, Series};
pub use change::{diverging, forest, Change, ForestRow};
pub use columns::{columns, histogram, Column};

/// Width of a chart's coordinate system; the page scales it to fit.
pub const WIDTH: f64 = 560.0;
/// Width of a chart that has a row of the page to itself.
pub const WIDE: f64 = 1000.0;
/// Rough width of one character of the charts' 12-unit text, for fitting labels.
pub(super) const CHAR_W: f64 = 6.6;
pub(super) const ROW: f64 = 22.0;
pub(super) const BAR: f64 = 14.0;

/// The opening tag and accessible title of a chart.
pub(super) fn open(svg: &mut String, id: &str, width: f64, height: f64, title: &str) {
    let _ = write!(
        svg,
        "<svg class=\"chart\" data-chart=\"{}\" viewBox=\"0 0 {width} {height:.0}\" width=\"{width}\" height=\"{height:.0}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        Esc(id),
        Esc(title),
        Esc(title)
    );
}

/// The plotting area of a chart with a vertical value axis.
pub(super) struct Plot {
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub height: f64,
}

impl Plot {
    /// Horizontal grid lines at the [`ticks`] up to `y_max`, each labelled
    /// on the left by `label`.
    pub fn y_grid(&self, svg: &mut String, y_max: f64, label: impl Fn(f64) -> String) {
        for t in ticks(y_max) {
            let y = self.top + self.height - t / y_max * self.height;
            let _ = write!(
                svg,
                "<line class=\"grid\" x1=\"{}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"></line>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
                self.left,
                self.right,
                self.left - 5.0,
                Esc(&label(t))
            );
        }
    }
}

/// How much wider than [`CHAR_W`] per character a text is taken to be
/// when it is measured or cut (see [`clip`]).
const TEXT_MARGIN: f64 = 1.15;

/// Width for a column of texts: enough for the longest, within bounds.
pub(super) fn fit_width<'a>(texts: impl Iterator<Item = &'a str>, min: f64, max: f64) -> f64 {
    let longest = texts.map(|t| t.chars().count()).max().unwrap_or(0) as f64;
    (longest * CHAR_W * TEXT_MARGIN + 12.0).clamp(min, max)
}

/// `text` cut to fit `width` chart units, with `…` where it was cut.
/// [`CHAR_W`] is an average: names heavy in `m`, `w` and `_` run wider, and
/// a right-aligned label that overruns loses its start off the chart, so
/// the cut leaves a margin.
pub(super) fn clip(text: &str, width: f64) -> String {
    let fits = (width / (CHAR_W * TEXT_MARGIN)).floor().max(2.0) as usize;
    crate::render::format::shorten(text, fits)
}

/// A round number at or above `x` (1, 2, 2.5, 5 × a power of ten).
pub fn nice_ceiling(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= x * (1.0 - 1e-9) {
            return m * p;
        }
    }
    10.0 * p
}

/// Tick positions from 0 to `max` (a [`nice_ceiling`]), four or five steps.
pub(super) fn ticks(max: f64) -> Vec<f64> {
    let step = nice_ceiling(max / 5.0);
    let n = (max / step).round() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// Tick positions from 0 to `max` for an axis that runs both ways: two or
/// three steps a side, so the labels have room.
pub(super) fn ticks_either_side(max: f64) -> Vec<f64> {
    let step = nice_ceiling(max / 2.0);
    let n = (max / step + 1e-9).floor() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

pub(super) fn percent_tick(v: f64, max: f64) -> String {
    if max * 100.0 < 5.0 {
        format!("{:.1}%", v * 100.0)
    } else {
        format!("{:.0}%", v * 100.0)
    }
}

/// A tick value: as few decimals as it needs (`0.0025`, `1.5`, `10`).
pub fn tick_number(v: f64) -> String {
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.to_string()
    }
}

/// A count or a share of one, without needless decimals.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ceilings_and_ticks() {
        assert_eq!(nice_ceiling(0.37), 0.5);
        assert_eq!(nice_ceiling(7.0), 10.0);
        assert_eq!(nice_ceiling(2.2), 2.5);
        assert_eq!(nice_ceiling(1.0), 1.0);
        assert_eq!(
            ticks(0.5),
            vec![0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5]
        );
        assert_eq!(ticks(10.0).len(), 6);
    }
}
