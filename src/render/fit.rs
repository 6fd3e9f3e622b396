//! Fitting text to a terminal's width without ever cutting a word: reason
//! names, tool names and file paths are what a reader searches for and
//! pastes, so lines break only at spaces. A table that cannot fit even with
//! every column wrapped at spaces is stacked: one record per row, its
//! `header: value` pairs packed into lines.
//!
//! Widths are display columns (a CJK character takes two). A single word
//! wider than the whole line stays whole on a line of its own.

use unicode_width::UnicodeWidthStr;

use super::doc::Table;

/// Columns `text` takes on a terminal.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` broken at spaces into lines of at most `max` columns; every
/// line after the first starts with `indent` spaces (counted in `max`).
/// Newlines in `text` are kept as breaks; runs of spaces at a break vanish.
pub fn wrap(text: &str, max: usize, indent: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        // A paragraph's own indentation (an outcome row under its total)
        // is kept on each of its lines.
        let own = paragraph.len() - paragraph.trim_start_matches(' ').len();
        let first = lines.len();
        let mut line = String::new();
        let mut used = 0;
        let prefix = |lines: &Vec<String>| {
            if lines.len() == first {
                own
            } else {
                own + indent
            }
        };
        for word in paragraph.split(' ').filter(|w| !w.is_empty()) {
            let w = width(word);
            if used > 0 && used + 1 + w > max {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            if used == 0 {
                let pad = prefix(&lines);
                line.push_str(&" ".repeat(pad));
                used = pad;
            } else {
                line.push(' ');
                used += 1;
            }
            line.push_str(word);
            used += w;
        }
        lines.push(line);
    }
    lines
}

/// The widest word of `text`: a column can be no narrower.
fn longest_word(text: &str) -> usize {
    text.split([' ', '\n']).map(width).max().unwrap_or(0)
}

/// The widest line of `text`: what a column takes unwrapped.
fn longest_line(text: &str) -> usize {
    text.split('\n').map(width).max().unwrap_or(0)
}

/// Columns a grid of `n` columns spends on borders and padding
/// (`│ a ┆ b │`: one bar per column plus one, a space either side of each).
pub fn grid_overhead(n: usize) -> usize {
    3 * n + 1
}

/// How a table is laid out in a given width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A grid whose columns are these widths; cells are wrapped to them.
    Grid(Vec<usize>),
    /// One record per row.
    Stacked,
}

/// The layout of `t` in `max` columns: its natural grid when that fits,
/// else a grid with wrapped columns (each at least its widest word, the
/// rest of the room shared in proportion to what each column lacks), else
/// stacked.
pub fn layout(t: &Table, max: usize) -> Layout {
    let columns = t
        .header
        .len()
        .max(t.rows.iter().map(Vec::len).max().unwrap_or(0));
    let mut natural = vec![0; columns];
    let mut least = vec![0; columns];
    let texts = t
        .rows
        .iter()
        .flat_map(|row| row.iter().map(|c| c.text.as_str()).enumerate())
        .chain(t.header.iter().map(String::as_str).enumerate());
    for (i, text) in texts {
        natural[i] = natural[i].max(longest_line(text));
        least[i] = least[i].max(longest_word(text));
    }
    let room = max.saturating_sub(grid_overhead(columns));
    let total: usize = natural.iter().sum();
    if total <= room {
        return Layout::Grid(natural);
    }
    let floor: usize = least.iter().sum();
    if floor > room {
        return Layout::Stacked;
    }
    let lacking: Vec<usize> = natural.iter().zip(&least).map(|(n, l)| n - l).collect();
    let lacking_total: usize = lacking.iter().sum();
    let spare = room - floor;
    let mut widths: Vec<usize> = least
        .iter()
        .zip(&lacking)
        .map(|(l, lack)| l + spare * lack / lacking_total.max(1))
        .collect();
    // Rounding leaves a few columns over: give them to the widest lacks.
    let mut left = room - widths.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..columns).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(natural[i] - widths[i]));
    for i in order {
        if left == 0 {
            break;
        }
        let give = left.min(natural[i] - widths[i]);
        widths[i] += give;
        left -= give;
    }
    Layout::Grid(widths)
}

/// The rows of `t` as records: `- key: value · key: value` packed into
/// lines of at most `max` columns, continuation lines indented by two.
/// Empty cells are left out; a cell under an empty header is its value alone.
/// `paint` styles a value (colour) after the layout is decided.
pub fn stacked(t: &Table, max: usize, paint: &dyn Fn(&super::doc::Cell) -> String) -> String {
    let mut out = String::new();
    for row in &t.rows {
        let mut line = String::from("-");
        let mut used = 1;
        let mut first = true;
        for (i, cell) in row.iter().enumerate() {
            if cell.text.trim().is_empty() {
                continue;
            }
            let key = t.header.get(i).map_or("", String::as_str);
            let plain = if key.is_empty() {
                cell.text.clone()
            } else {
                format!("{key}: {}", cell.text)
            };
            let w = longest_line(&plain);
            let painted = paint(cell);
            let shown = if key.is_empty() {
                painted
            } else {
                format!("{key}: {painted}")
            };
            if 2 + w <= max && !plain.contains('\n') {
                if !first && used + 3 + w > max {
                    out.push_str(&line);
                    out.push('\n');
                    line = String::from(" ");
                    used = 1;
                } else if !first {
                    line.push_str(" ·");
                    used += 2;
                }
                line.push(' ');
                line.push_str(&shown);
                used += 1 + w;
                first = false;
                continue;
            }
            // Too long for any line: wrapped on lines of its own, unstyled.
            let lead = if first { "- " } else { "  " };
            if !first {
                out.push_str(&line);
                out.push('\n');
            }
            first = false;
            let wrapped = wrap(&plain, max.saturating_sub(2), 2);
            let last = wrapped.len() - 1;
            for (n, part) in wrapped.into_iter().enumerate() {
                let piece = format!("{}{part}", if n == 0 { lead } else { "  " });
                if n == last {
                    used = width(&piece);
                    line = piece;
                } else {
                    out.push_str(&piece);
                    out.push('\n');
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::Cell;

    #[test]
    fn wraps_at_spaces_only() {
        assert_eq!(
            wrap("top reason: duplicate_query (31.0%)", 20, 2),
            vec!["top reason:", "  duplicate_query", "  (31.0%)"]
        );
        // A word wider than the line stays whole.
        assert_eq!(
            wrap("a fixtures/model-a.jsonl b", 8, 0)[1],
            "fixtures/model-a.jsonl"
        );
        assert_eq!(
            wrap("上海中心大厦 高度", 12, 0),
            vec!["上海中心大厦", "高度"]
        );
    }

    fn table() -> Table {
        let mut t = Table::new(&["reason", "rollbacks", "ended loop at limit"]);
        t.rows.push(vec![
            Cell::text("duplicate_query"),
            Cell::num("9"),
            Cell::num("0"),
        ]);
        t
    }

    #[test]
    fn a_table_fits_then_wraps_then_stacks() {
        let t = table();
        // Natural: 15 + 9 + 19 + 10 of borders.
        assert_eq!(layout(&t, 53), Layout::Grid(vec![15, 9, 19]));
        let Layout::Grid(narrow) = layout(&t, 40) else {
            panic!("should still be a grid");
        };
        assert_eq!(narrow.iter().sum::<usize>() + grid_overhead(3), 40);
        assert!(narrow[0] >= 15 && narrow[2] >= 5);
        assert_eq!(layout(&t, 30), Layout::Stacked);
        let text = stacked(&t, 30, &|c| c.text.clone());
        assert_eq!(
            text,
            "- reason: duplicate_query\n  rollbacks: 9\n  ended loop at limit: 0\n"
        );
        let wide = stacked(&t, 80, &|c| c.text.clone());
        assert_eq!(
            wide,
            "- reason: duplicate_query · rollbacks: 9 · ended loop at limit: 0\n"
        );
    }
}
