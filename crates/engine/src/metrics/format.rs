//! Figures and text as every back end writes them: percentages, signed
//! changes, counts with separators, text cut to fit a cell.

use std::ops::Range;

/// A share as a percentage with `digits` decimals: `percent(0.0812, 2)` is
/// `8.12%`.
pub fn percent(x: f64, digits: usize) -> String {
    format!("{:.digits$}%", 100.0 * x)
}

/// `n / d` as a percentage with one decimal; `–` when `d` is 0.
pub fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "–".to_string()
    } else {
        percent(n as f64 / d as f64, 1)
    }
}

/// The signed figure with `digits` decimals; never `-0.00`.
pub fn signed(x: f64, digits: usize) -> String {
    let s = format!("{x:+.digits$}");
    if s.trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        format!("{:.digits$}", 0.0)
    } else {
        s
    }
}

/// A count with thousands separators: `12,345`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `s` for a count other than one.
pub fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A count and its noun in agreement, with thousands separators:
/// `counted(1, "rollback")` is `1 rollback`, `counted(1200, "trace")` is
/// `1,200 traces`. Every sentence that counts says it this way.
pub fn counted(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", thousands(n), plural(n))
}

/// At most `width` characters on one line, with `…` where it was cut.
pub fn shorten(text: &str, width: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= width {
        return flat;
    }
    let mut cut: String = flat.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Up to `context` characters either side of `range` (twice as many after
/// an empty range), on one line, with `…` where the text was cut.
pub fn excerpt(text: &str, range: Range<usize>, context: usize) -> String {
    let start = range.start.min(text.len());
    let end = range.end.clamp(start, text.len());
    if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return excerpt(text, 0..0, context);
    }
    let before: Vec<(usize, char)> = text[..start].char_indices().rev().take(context).collect();
    let from = before.last().map_or(start, |(i, _)| *i);
    let after = if start == end { 2 * context } else { context };
    let to = text[end..]
        .char_indices()
        .nth(after)
        .map_or(text.len(), |(i, _)| end + i);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.push_str(
        &text[from..to]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    );
    if to < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(percent(0.0812, 2), "8.12%");
        assert_eq!(pct(1, 3), "33.3%");
        assert_eq!(pct(0, 0), "–");
        assert_eq!(signed(6.11, 2), "+6.11");
        assert_eq!(signed(-0.001, 2), "0.00");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(plural(1), "");
        assert_eq!(plural(2), "s");
        assert_eq!(counted(1, "rollback"), "1 rollback");
        assert_eq!(counted(0, "rollback"), "0 rollbacks");
        assert_eq!(counted(1200, "trace"), "1,200 traces");
    }

    #[test]
    fn shortens_on_characters_not_bytes() {
        assert_eq!(shorten("深圳 2022年 GDP", 5), "深圳 2…");
        assert_eq!(shorten("a\nb", 10), "a b");
        assert_eq!(shorten("abc", 3), "abc");
    }

    #[test]
    fn excerpts_cut_on_char_boundaries() {
        let text = format!("{}抱歉，我无法完成{}", "前".repeat(60), "后".repeat(60));
        let at = text.find("抱歉").expect("present");
        let e = excerpt(&text, at..at + "抱歉，我无法完成".len(), 40);
        assert!(e.starts_with('…') && e.ends_with('…'));
        assert_eq!(e.chars().filter(|c| *c == '前').count(), 40);
        assert_eq!(excerpt("short\n\ntext", 0..0, 40), "short text");
    }
}
