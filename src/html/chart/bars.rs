//! Horizontal bars, single or stacked, with a legend.

use std::fmt::Write as _;

use super::{clip, fit_width, open, Esc, BAR, CHAR_W, ROW, WIDTH};

/// One horizontal bar (or one row of stacked bars).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    /// Segments, left to right: (value, CSS class, tooltip).
    pub parts: Vec<(f64, String, String)>,
    /// Shown right of the bar.
    pub note: String,
}

impl Bar {
    /// A bar of one segment.
    pub fn single(
        label: impl Into<String>,
        value: f64,
        class: &str,
        tip: impl Into<String>,
        note: impl Into<String>,
    ) -> Bar {
        Bar {
            label: label.into(),
            parts: vec![(value, class.to_string(), tip.into())],
            note: note.into(),
        }
    }

    fn total(&self) -> f64 {
        self.parts.iter().map(|p| p.0).sum()
    }
}

/// A series named in a legend: (name, CSS class).
pub type Series = (String, String);

/// Horizontal bars against a common scale `max` (the largest total when
/// `None`), with an optional legend of the segment classes above.
pub fn bars(id: &str, title: &str, rows: &[Bar], legend: &[Series], max: Option<f64>) -> String {
    let max = max
        .unwrap_or_else(|| rows.iter().map(Bar::total).fold(0.0, f64::max))
        .max(f64::MIN_POSITIVE);
    let label_w = fit_width(rows.iter().map(|r| r.label.as_str()), 90.0, 210.0);
    let note_w = fit_width(rows.iter().map(|r| r.note.as_str()), 40.0, 170.0);
    let plot_w = WIDTH - label_w - note_w - 12.0;
    let mut svg = String::new();
    let (legend_svg, legend_h) = legend_block(legend);
    let height = legend_h + rows.len() as f64 * ROW + 6.0;
    open(&mut svg, id, WIDTH, height, title);
    svg.push_str(&legend_svg);
    for (i, row) in rows.iter().enumerate() {
        let y = legend_h + i as f64 * ROW;
        let mid = y + ROW / 2.0;
        let _ = write!(
            svg,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
            label_w - 6.0,
            mid,
            Esc(&clip(&row.label, label_w - 8.0))
        );
        let mut x = label_w;
        for (value, class, tip) in &row.parts {
            let w = (value / max * plot_w).max(0.0);
            let _ = write!(
                svg,
                "<rect class=\"mark {}\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{BAR}\"><title>{}</title></rect>",
                Esc(class),
                mid - BAR / 2.0,
                Esc(tip)
            );
            x += w;
        }
        let _ = write!(
            svg,
            "<text class=\"note\" x=\"{:.1}\" y=\"{mid:.1}\" dominant-baseline=\"central\">{}</text>",
            x + 5.0,
            Esc(&row.note)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A legend row (wrapping) of swatches; returns the markup and its height.
fn legend_block(series: &[Series]) -> (String, f64) {
    if series.is_empty() {
        return (String::new(), 0.0);
    }
    let mut svg = String::from("<g class=\"legend\">");
    let (mut x, mut y) = (0.0, 4.0);
    for (name, class) in series {
        let w = 16.0 + name.chars().count() as f64 * CHAR_W + 14.0;
        if x + w > WIDTH && x > 0.0 {
            x = 0.0;
            y += 18.0;
        }
        let _ = write!(
            svg,
            "<rect class=\"swatch {}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"11\" height=\"11\" rx=\"2\"></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"central\">{}</text>",
            Esc(class),
            x + 15.0,
            y + 5.5,
            Esc(name)
        );
        x += w;
    }
    svg.push_str("</g>");
    (svg, y + 22.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_escape_labels_and_mark_every_segment() {
        let rows = vec![
            Bar::single("<b>x</b>", 3.0, "c0", "tip", "3"),
            Bar {
                label: "y".into(),
                parts: vec![
                    (1.0, "c1".into(), "a".into()),
                    (2.0, "c2".into(), "b".into()),
                ],
                note: "3".into(),
            },
        ];
        let svg = bars("t", "title", &rows, &[("s".into(), "c1".into())], None);
        assert_eq!(svg.matches("class=\"mark ").count(), 3);
        assert!(svg.contains("&lt;b&gt;x&lt;/b&gt;") && !svg.contains("<b>"));
        assert!(svg.starts_with("<svg class=\"chart\" data-chart=\"t\""));
    }
}
