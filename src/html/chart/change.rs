//! Changes around zero: the forest plot of metric changes and diverging bars.

use std::fmt::Write as _;

use super::{clip, fit_width, nice_ceiling, open, ticks_either_side, Esc, BAR, ROW, WIDTH};

/// One row of a forest plot.
#[derive(Debug, Clone)]
pub struct ForestRow {
    pub label: String,
    pub estimate: Option<f64>,
    pub interval: Option<[f64; 2]>,
    /// Half-width of the noise band around zero for this row.
    pub noise: f64,
    /// `worse`, `better`, `same` or `untested`.
    pub class: &'static str,
    pub note: String,
    pub tip: String,
}

/// A forest plot: each row's change as a point with its interval, a
/// shaded noise band around zero, on a symmetric axis of half-width
/// `extent` labelled by `tick_text`.
pub fn forest(
    id: &str,
    title: &str,
    rows: &[ForestRow],
    extent: f64,
    tick_text: &dyn Fn(f64) -> String,
) -> String {
    let extent = nice_ceiling(extent.max(1e-9));
    let label_w = fit_width(rows.iter().map(|r| r.label.as_str()), 90.0, 190.0);
    // Notes of significant rows are bold: a little wider per character.
    let note_w = fit_width(rows.iter().map(|r| r.note.as_str()), 60.0, 170.0) + 12.0;
    // A tall plot repeats its scale above the rows.
    let labels_above = rows.len() > 8;
    let (top, axis_h) = (if labels_above { 22.0 } else { 6.0 }, 26.0);
    let plot_l = label_w;
    let plot_w = WIDTH - label_w - note_w - 10.0;
    let x_of = |v: f64| plot_l + (v.clamp(-extent, extent) + extent) / (2.0 * extent) * plot_w;
    let height = top + rows.len() as f64 * ROW + axis_h;
    let bottom = top + rows.len() as f64 * ROW;
    let mut svg = String::new();
    open(&mut svg, id, WIDTH, height, title);
    for i in (1..rows.len()).step_by(2) {
        let _ = write!(
            svg,
            "<rect class=\"stripe\" x=\"0\" y=\"{:.1}\" width=\"{WIDTH}\" height=\"{ROW}\"></rect>",
            top + i as f64 * ROW
        );
    }
    for t in ticks_either_side(extent) {
        for v in if t == 0.0 { vec![0.0] } else { vec![-t, t] } {
            let x = x_of(v);
            let text = Esc(&tick_text(v)).to_string();
            let _ = write!(
                svg,
                "<line class=\"{}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\"></line>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{text}</text>",
                if v == 0.0 { "zero" } else { "grid" },
                bottom + 15.0,
            );
            if labels_above {
                let _ = write!(
                    svg,
                    "<text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{text}</text>",
                    top - 7.0
                );
            }
        }
    }
    for (i, r) in rows.iter().enumerate() {
        let y = top + i as f64 * ROW;
        let mid = y + ROW / 2.0;
        if r.noise > 0.0 {
            let (a, b) = (x_of(-r.noise), x_of(r.noise));
            let _ = write!(
                svg,
                "<rect class=\"noise\" x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"></rect>",
                y + 2.0,
                (b - a).max(1.0),
                ROW - 4.0
            );
        }
        let _ = write!(
            svg,
            "<text class=\"label {}\" x=\"{:.1}\" y=\"{mid:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
            r.class,
            label_w - 6.0,
            Esc(&clip(&r.label, label_w - 8.0))
        );
        let _ = write!(
            svg,
            "<g class=\"mark {}\"><title>{}</title>",
            r.class,
            Esc(&r.tip)
        );
        if let Some([lo, hi]) = r.interval {
            let _ = write!(
                svg,
                "<line class=\"ci\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{mid:.1}\" y2=\"{mid:.1}\"></line>",
                x_of(lo),
                x_of(hi)
            );
            for v in [lo, hi] {
                let _ = write!(
                    svg,
                    "<line class=\"ci\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"></line>",
                    mid - 4.0,
                    mid + 4.0,
                    x = x_of(v)
                );
            }
        }
        if let Some(e) = r.estimate {
            let x = x_of(e);
            if r.class == "worse" || r.class == "better" {
                let _ = write!(
                    svg,
                    "<path class=\"point\" d=\"M{x:.1} {:.1}L{:.1} {mid:.1}L{x:.1} {:.1}L{:.1} {mid:.1}Z\"></path>",
                    mid - 6.0,
                    x + 6.0,
                    mid + 6.0,
                    x - 6.0
                );
            } else {
                let _ = write!(
                    svg,
                    "<circle class=\"point\" cx=\"{x:.1}\" cy=\"{mid:.1}\" r=\"4\"></circle>"
                );
            }
        } else {
            // Nothing to plot: an invisible mark keeps the row's tooltip.
            let _ = write!(
                svg,
                "<rect class=\"none\" x=\"{plot_l:.1}\" y=\"{:.1}\" width=\"{plot_w:.1}\" height=\"{:.1}\"></rect>",
                y + 2.0,
                ROW - 4.0
            );
        }
        svg.push_str("</g>");
        let _ = write!(
            svg,
            "<text class=\"note {}\" x=\"{:.1}\" y=\"{mid:.1}\" dominant-baseline=\"central\">{}</text>",
            r.class,
            plot_l + plot_w + 8.0,
            Esc(&r.note)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// One bar of [`diverging`]: a signed change from zero.
#[derive(Debug, Clone)]
pub struct Change {
    pub label: String,
    pub value: f64,
    /// `worse` or `better` (its colour).
    pub class: &'static str,
    pub note: String,
    pub tip: String,
}

/// Bars left and right of zero (per-task changes), on a symmetric axis of
/// half-width `extent`.
pub fn diverging(
    id: &str,
    title: &str,
    rows: &[Change],
    extent: f64,
    tick_text: &dyn Fn(f64) -> String,
) -> String {
    let extent = nice_ceiling(extent.max(1e-9));
    let label_w = fit_width(rows.iter().map(|r| r.label.as_str()), 90.0, 190.0);
    let note_w = fit_width(rows.iter().map(|r| r.note.as_str()), 60.0, 170.0);
    let top = 6.0;
    let plot_w = WIDTH - label_w - note_w - 10.0;
    let x_of = |v: f64| label_w + (v.clamp(-extent, extent) + extent) / (2.0 * extent) * plot_w;
    let bottom = top + rows.len() as f64 * ROW;
    let mut svg = String::new();
    open(&mut svg, id, WIDTH, bottom + 26.0, title);
    for t in ticks_either_side(extent) {
        for v in if t == 0.0 { vec![0.0] } else { vec![-t, t] } {
            let x = x_of(v);
            let _ = write!(
                svg,
                "<line class=\"{}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\"></line>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                if v == 0.0 { "zero" } else { "grid" },
                bottom + 15.0,
                Esc(&tick_text(v))
            );
        }
    }
    for (i, r) in rows.iter().enumerate() {
        let mid = top + i as f64 * ROW + ROW / 2.0;
        let (a, b) = (x_of(0.0), x_of(r.value));
        let _ = write!(
            svg,
            "<text class=\"label\" x=\"{:.1}\" y=\"{mid:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>\
             <rect class=\"mark {}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BAR}\"><title>{}</title></rect>\
             <text class=\"note\" x=\"{:.1}\" y=\"{mid:.1}\" dominant-baseline=\"central\">{}</text>",
            label_w - 6.0,
            Esc(&clip(&r.label, label_w - 8.0)),
            r.class,
            a.min(b),
            mid - BAR / 2.0,
            (b - a).abs().max(1.0),
            Esc(&r.tip),
            label_w + plot_w + 8.0,
            Esc(&r.note)
        );
    }
    svg.push_str("</svg>");
    svg
}
