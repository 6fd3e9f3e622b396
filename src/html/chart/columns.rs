//! Vertical columns: rates along a position, and a histogram with a marked limit.

use std::fmt::Write as _;

use super::{nice_ceiling, number, open, percent_tick, Esc, Plot, CHAR_W, WIDTH};

/// One column of [`columns`].
#[derive(Debug, Clone)]
pub struct Column {
    /// The x-axis label (shown when there is room).
    pub label: String,
    pub value: f64,
    /// A second, smaller quantity drawn in a strip below (e.g. how many
    /// attempts the value rests on).
    pub weight: f64,
    pub tip: String,
}

/// Vertical columns along a position (rates by session index), with a
/// y axis in percent, and below them a strip of the weights.
pub fn columns(
    id: &str,
    title: &str,
    cols: &[Column],
    y_max: f64,
    weight_name: &str,
    width: f64,
) -> String {
    let y_max = nice_ceiling(y_max.max(1e-9));
    let (left, top, plot_h, strip_h, gap) = (56.0, 8.0, 150.0, 36.0, 22.0);
    let plot_w = width - left - 8.0;
    let height = top + plot_h + gap + strip_h + 30.0;
    let mut svg = String::new();
    open(&mut svg, id, width, height, title);
    let plot = Plot {
        left,
        right: width - 8.0,
        top,
        height: plot_h,
    };
    plot.y_grid(&mut svg, y_max, |t| percent_tick(t, y_max));
    let n = cols.len().max(1) as f64;
    let step = plot_w / n;
    let w = (step * 0.8).max(1.0);
    let w_max = cols.iter().map(|c| c.weight).fold(0.0, f64::max).max(1e-9);
    let strip_top = top + plot_h + gap;
    let widest = cols
        .iter()
        .map(|c| c.label.chars().count())
        .max()
        .unwrap_or(1) as f64;
    let label_every = ((n * (widest * CHAR_W + 14.0) / plot_w).ceil() as usize).max(1);
    for (i, c) in cols.iter().enumerate() {
        let x = left + i as f64 * step + (step - w) / 2.0;
        let h = (c.value / y_max * plot_h).clamp(0.0, plot_h);
        let wh = c.weight / w_max * strip_h;
        let _ = write!(
            svg,
            "<g><title>{}</title><rect class=\"mark rate\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{h:.1}\"></rect>\
             <rect class=\"weight\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{wh:.1}\"></rect></g>",
            Esc(&c.tip),
            top + plot_h - h,
            strip_top + strip_h - wh
        );
        if i % label_every == 0 {
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + w / 2.0,
                strip_top + strip_h + 14.0,
                Esc(&c.label)
            );
        }
    }
    let _ = write!(
        svg,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"></line>\
         <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
        width - 8.0,
        top + plot_h,
        top + plot_h,
        left - 5.0,
        strip_top + strip_h / 2.0,
        Esc(weight_name)
    );
    svg.push_str("</svg>");
    svg
}

/// A histogram of counts by length, with a dashed line after bin
/// `limit_after` (the last length the limit allows) labelled `limit_label`.
pub fn histogram(
    id: &str,
    title: &str,
    bins: &[(String, f64, String)],
    y_max: f64,
    limit_after: Option<usize>,
    limit_label: &str,
) -> String {
    let y_max = nice_ceiling(y_max.max(1.0));
    let (left, top, plot_h) = (44.0, 22.0, 150.0);
    let plot_w = WIDTH - left - 8.0;
    let height = top + plot_h + 40.0;
    let mut svg = String::new();
    open(&mut svg, id, WIDTH, height, title);
    let plot = Plot {
        left,
        right: WIDTH - 8.0,
        top,
        height: plot_h,
    };
    plot.y_grid(&mut svg, y_max, number);
    let step = plot_w / bins.len().max(1) as f64;
    let w = (step * 0.7).max(1.0);
    for (i, (label, value, tip)) in bins.iter().enumerate() {
        let x = left + i as f64 * step + (step - w) / 2.0;
        let h = (value / y_max * plot_h).clamp(0.0, plot_h);
        let beyond = limit_after.is_some_and(|l| i > l);
        let _ = write!(
            svg,
            "<g><title>{}</title><rect class=\"mark {}\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{h:.1}\"></rect></g>\
             <text class=\"value\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            Esc(tip),
            if beyond { "bad" } else { "bin" },
            top + plot_h - h,
            x + w / 2.0,
            top + plot_h - h - 4.0,
            Esc(&number(*value)),
            x + w / 2.0,
            top + plot_h + 16.0,
            Esc(label)
        );
    }
    if let Some(l) = limit_after {
        let x = left + (l as f64 + 1.0) * step;
        let _ = write!(
            svg,
            "<line class=\"limit\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"></line>\
             <text class=\"limit-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            top - 14.0,
            top + plot_h + 4.0,
            x - 4.0,
            top - 4.0,
            Esc(limit_label)
        );
    }
    let _ = write!(
        svg,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"></line>",
        WIDTH - 8.0,
        top + plot_h,
        top + plot_h
    );
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_marks_the_limit() {
        let bins: Vec<(String, f64, String)> = (1..=5)
            .map(|i| (i.to_string(), i as f64, String::new()))
            .collect();
        let svg = histogram("h", "t", &bins, 5.0, Some(3), "limit");
        assert!(svg.contains("class=\"limit\""));
        assert_eq!(svg.matches("class=\"mark bad\"").count(), 1);
    }
}
