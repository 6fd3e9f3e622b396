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
        for whole in paragraph.split(' ').filter(|w| !w.is_empty()) {
            for word in break_wide(whole, max.saturating_sub(prefix(&lines))) {
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
        }
        lines.push(line);
    }
    lines
}

/// [`wrap`] for free text that may be cut inside a word: a word wider
/// than `max` is cut into pieces of `max` columns (a column of free text,
/// [`super::doc::PROSE`]).
pub fn wrap_prose(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let cut: Vec<String> = text
        .split('\n')
        .map(|paragraph| {
            let words: Vec<String> = paragraph
                .split(' ')
                .map(|word| {
                    if width(word) <= max {
                        return word.to_string();
                    }
                    let mut pieces = vec![String::new()];
                    let mut used = 0;
                    for c in word.chars() {
                        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                        if used > 0 && used + w > max {
                            pieces.push(String::new());
                            used = 0;
                        }
                        if let Some(last) = pieces.last_mut() {
                            last.push(c);
                        }
                        used += w;
                    }
                    pieces.join(" ")
                })
                .collect();
            words.join(" ")
        })
        .collect();
    wrap(&cut.join("\n"), max, 0)
}

/// The narrowest a column of free text is made before it is left out.
pub const PROSE_LEAST: usize = 30;

/// Where a word may break: between two characters of which one is wide
/// (CJK text has no spaces, and may break between any two ideographs).
fn units(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut previous_wide = None;
    for (i, c) in word.char_indices() {
        let wide = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > 1;
        if let Some(p) = previous_wide {
            if p || wide {
                out.push(&word[start..i]);
                start = i;
            }
        }
        previous_wide = Some(wide);
    }
    out.push(&word[start..]);
    out
}

/// `word` as it is when it fits in `max`; else cut between wide characters
/// into pieces of at most `max` (a piece of narrow characters stays whole).
fn break_wide(word: &str, max: usize) -> Vec<&str> {
    if width(word) <= max {
        return vec![word];
    }
    let mut pieces = Vec::new();
    let (mut start, mut used) = (0, 0);
    let mut end = 0;
    for unit in units(word) {
        let w = width(unit);
        if used > 0 && used + w > max {
            pieces.push(&word[start..end]);
            start = end;
            used = 0;
        }
        end += unit.len();
        used += w;
    }
    pieces.push(&word[start..end]);
    pieces
}

/// The widest word of `text` (CJK text counted between its break points,
/// see [`units`]): a column can be no narrower.
fn longest_word(text: &str) -> usize {
    text.split([' ', '\n'])
        .flat_map(units)
        .map(width)
        .max()
        .unwrap_or(0)
}

/// The pieces a header word may break into: after each `_` or `-`
/// (`duplicate_` + `query`). Headers are the report's own words, so
/// unlike names from traces they may break there.
fn header_pieces(word: &str) -> impl Iterator<Item = &str> {
    word.split_inclusive(['_', '-'])
}

/// The widest piece of a header: a column can be no narrower for it.
fn longest_header_piece(text: &str) -> usize {
    text.split([' ', '\n'])
        .flat_map(header_pieces)
        .map(width)
        .max()
        .unwrap_or(0)
}

/// A header fitted to `max` columns: broken at spaces, and inside a word
/// after `_` or `-` where the word alone is too wide.
pub fn wrap_header(text: &str, max: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let whole = width(word);
        if !line.is_empty() && width(&line) + 1 + whole <= max {
            line.push(' ');
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for piece in header_pieces(word) {
            if !line.is_empty() && width(&line) + width(piece) > max {
                lines.push(std::mem::take(&mut line));
            }
            line.push_str(piece);
        }
    }
    lines.push(line);
    lines.join("\n")
}

/// The widest line of `text`: what a column takes unwrapped.
fn longest_line(text: &str) -> usize {
    text.split('\n').map(width).max().unwrap_or(0)
}

/// Columns a grid of `n` columns spends between them: two spaces a gap,
/// no outer borders (see `table::table`'s preset).
pub fn grid_overhead(n: usize) -> usize {
    2 * n.saturating_sub(1)
}

/// Columns kept however narrow the width: the row's name and its first
/// figure. A table is stacked only when even these cannot fit.
pub const ESSENTIAL_COLUMNS: usize = 2;

/// How a table is laid out in a given width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A grid of the columns `shown` (indices into the table, in order) at
    /// these widths; cells are wrapped to them. The columns left out are
    /// named under the table.
    Grid {
        widths: Vec<usize>,
        shown: Vec<usize>,
    },
    /// One record per row.
    Stacked,
}

impl Layout {
    /// Every column of an `n`-column table, at these widths.
    fn all(widths: Vec<usize>) -> Layout {
        let shown = (0..widths.len()).collect();
        Layout::Grid { widths, shown }
    }
}

/// The layout of `t` in `max` columns: its natural grid when that fits,
/// else a grid with wrapped columns (each at least its widest word, the
/// rest of the room shared in proportion to what each column lacks); when
/// even that does not fit, the least important columns are left out, one
/// at a time ([`Table::priority`]; the rightmost without one), down to
/// [`ESSENTIAL_COLUMNS`]; a column whose every cell is the same (all
/// `1`, one session) says nothing row by row and goes first whatever its
/// priority. Only a table whose essential columns cannot fit is stacked.
pub fn layout(t: &Table, max: usize) -> Layout {
    let columns = t
        .header
        .len()
        .max(t.rows.iter().map(Vec::len).max().unwrap_or(0));
    let mut natural = vec![0; columns];
    let mut least = vec![0; columns];
    let cells = t
        .rows
        .iter()
        .flat_map(|row| row.iter().map(|c| c.text.as_str()).enumerate());
    for (i, text) in cells {
        natural[i] = natural[i].max(longest_line(text));
        least[i] = least[i].max(longest_word(text));
    }
    for i in (0..columns).filter(|&i| t.is_prose(i)) {
        least[i] = least[i].min(PROSE_LEAST);
    }
    for (i, text) in t.header.iter().enumerate() {
        natural[i] = natural[i].max(longest_line(text));
        least[i] = least[i].max(longest_header_piece(text));
    }
    let room = max.saturating_sub(grid_overhead(columns));
    if natural.iter().sum::<usize>() <= room {
        return Layout::all(natural);
    }
    let essential = ESSENTIAL_COLUMNS.min(columns);
    let keep = keep_order(&t.priority, &constant_columns(t, columns));
    for kept in (essential.max(1)..=columns).rev() {
        let room = max.saturating_sub(grid_overhead(kept));
        let mut shown = keep[..kept].to_vec();
        shown.sort_unstable();
        let pick = |of: &[usize]| shown.iter().map(|&i| of[i]).collect::<Vec<_>>();
        let (natural, least) = (pick(&natural), pick(&least));
        if least.iter().sum::<usize>() <= room {
            let widths = shared_widths(&natural, &least, room);
            return Layout::Grid { widths, shown };
        }
    }
    Layout::Stacked
}

/// The columns in the order they are kept: most important first (see
/// [`Table::priority`]), the leftmost of equals first; without priorities,
/// left to right; `constant` ones last. The first [`ESSENTIAL_COLUMNS`]
/// are the essential ones.
fn keep_order(priority: &[u8], constant: &[bool]) -> Vec<usize> {
    let columns = constant.len();
    let mut order: Vec<usize> = (0..columns).collect();
    if priority.len() >= columns {
        order.sort_by_key(|&i| std::cmp::Reverse(priority[i] & !super::doc::PROSE));
    }
    // Stable: the constant columns keep their order among themselves.
    order.sort_by_key(|&i| constant[i]);
    order
}

/// Which columns hold the same text in every row, of three or more (two
/// lists that both score 1.000 say something; a timeline of lines all `1`
/// does not).
fn constant_columns(t: &Table, columns: usize) -> Vec<bool> {
    (0..columns)
        .map(|i| {
            let mut cells = t.rows.iter().map(|r| r.get(i).map(|c| c.text.as_str()));
            match cells.next() {
                Some(first) => t.rows.len() > 2 && cells.all(|c| c == first),
                None => false,
            }
        })
        .collect()
}

/// Widths for columns that need `natural` and can take no less than
/// `least`, in `room` (at least the sum of `least`): each gets its least,
/// the rest shared in proportion to what each lacks.
fn shared_widths(natural: &[usize], least: &[usize], room: usize) -> Vec<usize> {
    let floor: usize = least.iter().sum();
    let lacking: Vec<usize> = natural.iter().zip(least).map(|(n, l)| n - l).collect();
    let lacking_total: usize = lacking.iter().sum();
    let spare = (room - floor).min(lacking_total);
    let mut widths: Vec<usize> = least
        .iter()
        .zip(&lacking)
        .map(|(l, lack)| l + spare * lack / lacking_total.max(1))
        .collect();
    // Rounding leaves a few columns over: give them to the widest lacks.
    let mut left = spare + floor - widths.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(natural[i] - widths[i]));
    for i in order {
        if left == 0 {
            break;
        }
        let give = left.min(natural[i] - widths[i]);
        widths[i] += give;
        left -= give;
    }
    widths
}

/// The note under a table drawn without some of its columns: which, and
/// how to see them.
pub fn hidden_note(t: &Table, shown: &[usize]) -> Option<String> {
    let hidden: Vec<&str> = t
        .header
        .iter()
        .enumerate()
        .filter(|(i, _)| !shown.contains(i))
        .map(|(_, h)| h.as_str())
        .collect();
    if hidden.is_empty() {
        return None;
    }
    Some(format!(
        "not shown at this width: {} (--wide or --format markdown shows every column)",
        hidden.join(", ")
    ))
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
        // CJK text wider than the line breaks between ideographs; a run of
        // narrow characters inside it stays whole.
        assert_eq!(
            wrap("对不起，我不能继续 (kw-1-043/main#2)", 8, 0),
            vec!["对不起，", "我不能继", "续", "(kw-1-043/main#2)"]
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
    fn a_column_of_one_value_goes_first() {
        let mut t = Table::new(&["line", "outcome", "detail"])
            .priority(&[9, 8, 7])
            .prose(&[2]);
        for (outcome, detail) in [
            ("rollback", "refusal: I cannot"),
            ("ok", "two calls"),
            ("final", "an answer"),
        ] {
            t.rows.push(vec![
                Cell::num("1"),
                Cell::text(outcome),
                Cell::text(detail),
            ]);
        }
        let shown = |t: &Table, max: usize| match layout(t, max) {
            Layout::Grid { shown, .. } => shown,
            other => panic!("{other:?}"),
        };
        // `line` is all 1: it goes though it ranks first.
        assert_eq!(shown(&t, 20), [1, 2]);
        // Free text is cut inside a word rather than the column left out.
        let long = format!("leaked {}", "x".repeat(40));
        t.rows[0][2] = Cell::text(long.as_str());
        assert_eq!(shown(&t, 42), [1, 2]);
        let cut = wrap_prose(&long, 20);
        assert!(cut.iter().all(|l| width(l) <= 20), "{cut:?}");
        assert_eq!(cut.concat().replace(' ', ""), long.replace(' ', ""));
        t.rows[1][0] = Cell::num("2");
        assert_eq!(shown(&t, 20)[0], 0, "a line column that varies is kept");
    }

    #[test]
    fn columns_are_left_out_by_priority_not_position() {
        let mut t = Table::new(&["length", "trace", "session", "ended by"]).priority(&[9, 9, 1, 8]);
        t.rows.push(vec![
            Cell::num("4"),
            Cell::text("task-003"),
            Cell::text("agent-browsing_1"),
            Cell::text("loop_ended"),
        ]);
        // All four need 6 + 8 + 16 + 10 + 6 between; without the session 30.
        match layout(&t, 32) {
            Layout::Grid { shown, .. } => assert_eq!(shown, [0, 1, 3], "ended by kept"),
            other => panic!("{other:?}"),
        }
        t.priority.clear();
        match layout(&t, 32) {
            // By position, "ended by" goes first, then the session too.
            Layout::Grid { shown, .. } => assert_eq!(shown, [0, 1]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_table_fits_then_wraps_then_stacks() {
        let t = table();
        // Natural: 15 + 9 + 19 + 4 between the columns.
        assert_eq!(layout(&t, 47), Layout::all(vec![15, 9, 19]));
        let Layout::Grid { widths, shown } = layout(&t, 36) else {
            panic!("should still be a grid");
        };
        assert_eq!(shown, [0, 1, 2]);
        assert_eq!(widths.iter().sum::<usize>() + grid_overhead(3), 36);
        assert!(widths[0] >= 15 && widths[2] >= 5);
        // Too narrow for the third column's widest word: it is left out.
        let Layout::Grid { shown, .. } = layout(&t, 30) else {
            panic!("the essential columns still fit");
        };
        assert_eq!(shown, [0, 1]);
        assert_eq!(
            hidden_note(&t, &shown).as_deref(),
            Some("not shown at this width: ended loop at limit (--wide or --format markdown shows every column)")
        );
        // Not even the name and the first figure: one record per row.
        assert_eq!(layout(&t, 20), Layout::Stacked);
        assert_eq!(wrap_header("duplicate_query", 12), "duplicate_\nquery");
        assert_eq!(
            wrap_header("of attempts reached", 12),
            "of attempts\nreached"
        );
        assert_eq!(wrap_header("tool_error", 10), "tool_error");
        let text = stacked(&t, 30, &|c| c.text.clone());
        assert_eq!(
            text,
            "- reason: duplicate_query\n  rollbacks: 9\n  ended loop at limit: 0\n"
        );
        // Rows narrower than the first figure's header still wrap it.
        assert!(matches!(layout(&t, 26), Layout::Grid { .. }));
        let wide = stacked(&t, 80, &|c| c.text.clone());
        assert_eq!(
            wide,
            "- reason: duplicate_query · rollbacks: 9 · ended loop at limit: 0\n"
        );
    }
}
