//! The terminal back end: the headline, then each section's notes and
//! comfy-table tables, coloured only when asked (a terminal without
//! `--no-color`), fitted to a width when one is given ([`super::fit`]).

use comfy_table::{
    Attribute, Cell as TableCell, CellAlignment, Color, ContentArrangement, Table as Comfy,
};

use super::doc::{Block, Cell, Document, Line, Style, Table, Tone};
use super::fit::{self, Layout};

/// How the text is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableStyle {
    /// ANSI colours and bold.
    pub color: bool,
    /// Fit every line into this many columns (a terminal, or `COLUMNS`);
    /// `None` draws everything at its natural width. Decided once, where
    /// the output is opened, and passed down.
    pub width: Option<usize>,
}

/// Draws the whole document as text.
pub fn draw(doc: &Document, style: TableStyle) -> String {
    let doc = &*super::visible::document(doc);
    let color = style.color;
    let mut out = String::new();
    for line in &doc.headline {
        let parts = match style.width {
            // A suggested command breaks only where it still pastes and runs.
            Some(w) if super::shell::is_command(line) => super::shell::wrap_command(line, w, 2),
            _ => wrapped(line, style.width, 2),
        };
        for part in parts {
            out.push_str(&ansi(&part, "1", color));
            out.push('\n');
        }
    }
    for section in &doc.sections {
        if !out.is_empty() {
            out.push('\n');
        }
        if !section.title.is_empty() {
            out.push_str(&ansi(&section.title.to_uppercase(), "1;36", color));
            out.push('\n');
        }
        for block in &section.blocks {
            draw_block(block, style, &mut out);
        }
    }
    out
}

fn draw_block(block: &Block, style: TableStyle, out: &mut String) {
    match block {
        Block::Note(text) => push_wrapped(out, text, style.width, 0),
        Block::Text(line) => push_line(out, "", line, style),
        Block::List(items) => {
            for item in items {
                push_line(out, "- ", item, style);
            }
        }
        Block::Details { summary, blocks } => {
            push_wrapped(out, summary, style.width, 0);
            for b in blocks {
                draw_block(b, style, out);
            }
        }
        Block::Table(t) => {
            if let Some(caption) = &t.caption {
                push_wrapped(out, caption, style.width, 0);
            }
            match style.width.map(|w| (w, fit::layout(t, w))) {
                Some((w, Layout::Stacked)) => {
                    out.push_str(&fit::stacked(t, w, &|c| painted(c, style.color)));
                }
                Some((_, Layout::Grid { widths, shown })) => {
                    push_grid(out, &table(&wrapped_table(t, &shown, &widths), style));
                    if let Some(note) = fit::hidden_note(t, &shown) {
                        push_wrapped(out, &note, style.width, 2);
                    }
                }
                None => push_grid(out, &table(t, style)),
            }
        }
    }
}

/// A drawn grid, without the spaces comfy-table pads its last column with.
fn push_grid(out: &mut String, grid: &Comfy) {
    for line in grid.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// `text` as lines fitted to `width` (continuations indented by `indent`).
fn wrapped(text: &str, width: Option<usize>, indent: usize) -> Vec<String> {
    match width {
        Some(w) => fit::wrap(text, w, indent),
        None => text.split('\n').map(str::to_string).collect(),
    }
}

fn push_wrapped(out: &mut String, text: &str, width: Option<usize>, indent: usize) {
    for part in wrapped(text, width, indent) {
        out.push_str(&part);
        out.push('\n');
    }
}

/// A styled line after `lead` (`- ` for a list item), wrapped word by word
/// so that each word keeps its style.
fn push_line(out: &mut String, lead: &str, line: &Line, style: TableStyle) {
    let Some(max) = style.width else {
        out.push_str(lead);
        out.push_str(&line_text(line, style.color));
        out.push('\n');
        return;
    };
    // Words are runs without a space, possibly made of several spans
    // (`code` then `strong` with nothing between): (plain width, drawn).
    let mut words: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for span in &line.0 {
        for (n, piece) in span.text.split(' ').enumerate() {
            if n > 0 {
                open = false;
            }
            if piece.is_empty() {
                continue;
            }
            let drawn = styled(piece, span.style, style.color);
            match words.last_mut() {
                Some((w, d)) if open => {
                    *w += fit::width(piece);
                    d.push_str(&drawn);
                }
                _ => words.push((fit::width(piece), drawn)),
            }
            open = true;
        }
    }
    let indent = fit::width(lead);
    let mut current = lead.to_string();
    let mut used = indent;
    for (w, drawn) in words {
        if used > indent && used + 1 + w > max {
            out.push_str(&current);
            out.push('\n');
            current = " ".repeat(indent);
            used = indent;
        }
        if used > indent {
            current.push(' ');
            used += 1;
        }
        current.push_str(&drawn);
        used += w;
    }
    out.push_str(&current);
    out.push('\n');
}

fn styled(text: &str, style: Style, color: bool) -> String {
    match style {
        Style::Strong => ansi(text, "1", color),
        Style::Plain | Style::Code => text.to_string(),
    }
}

/// The columns `shown` of `t`, every cell and header wrapped to its
/// column's width (`widths[k]` for `shown[k]`).
fn wrapped_table(t: &Table, shown: &[usize], widths: &[usize]) -> Table {
    let fit = |k: usize, text: &str| {
        if t.is_prose(shown[k]) {
            fit::wrap_prose(text, widths[k]).join("\n")
        } else {
            fit::wrap(text, widths[k], 0).join("\n")
        }
    };
    Table {
        caption: None,
        priority: Vec::new(),
        header: shown
            .iter()
            .enumerate()
            .map(|(k, &i)| fit::wrap_header(t.header.get(i).map_or("", String::as_str), widths[k]))
            .collect(),
        rows: t
            .rows
            .iter()
            .map(|row| {
                shown
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &i)| {
                        row.get(i).map(|c| Cell {
                            text: fit(k, &c.text),
                            ..c.clone()
                        })
                    })
                    .collect()
            })
            .collect(),
    }
}

/// `text` in an ANSI style (`1` bold, `1;36` bold cyan) when colouring.
fn ansi(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

fn line_text(line: &Line, color: bool) -> String {
    line.0
        .iter()
        .map(|span| styled(&span.text, span.style, color))
        .collect()
}

/// One table as comfy-table draws it.
pub fn table(t: &Table, style: TableStyle) -> Comfy {
    let color = style.color;
    let mut table = Comfy::new();
    // A rule under the header and two spaces between columns, no borders:
    // the room goes to the figures (see `fit::grid_overhead`).
    table.load_preset(GRID);
    // The fitting is done by `fit` (never inside a word): comfy-table
    // draws the cells as they are, whatever terminal it runs on.
    table.force_no_tty();
    table.set_content_arrangement(ContentArrangement::Disabled);
    if color {
        table.enforce_styling();
    }
    if !t.header.is_empty() && t.header.iter().any(|h| !h.is_empty()) {
        table.set_header(t.header.iter().map(|h| {
            let c = TableCell::new(h);
            if color {
                c.add_attribute(Attribute::Bold)
            } else {
                c
            }
        }));
    }
    for row in &t.rows {
        table.add_row(row.iter().map(|c| cell(c, color)));
    }
    let last = table.column_count().saturating_sub(1);
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, if i < last { 2 } else { 0 }));
    }
    table
}

/// comfy-table's preset string: only the header rule is drawn.
const GRID: &str = "     ─             ";

/// A cell's text in its colour, for stacked records.
fn painted(c: &Cell, color: bool) -> String {
    let code = match c.tone {
        _ if !color => return c.text.clone(),
        Tone::Plain if c.strong => "1",
        Tone::Plain => return c.text.clone(),
        Tone::Strong => "1",
        Tone::Good => "32",
        Tone::Warn => "33",
        Tone::Bad => "31",
        Tone::Info => "35",
        Tone::Dim => "90",
    };
    ansi(&c.text, code, color)
}

fn cell(c: &Cell, color: bool) -> TableCell {
    let mut out = TableCell::new(&c.text);
    if c.numeric {
        out = out.set_alignment(CellAlignment::Right);
    }
    if !color {
        return out;
    }
    if c.strong {
        out = out.add_attribute(Attribute::Bold);
    }
    match c.tone {
        Tone::Plain => out,
        Tone::Strong => out.add_attribute(Attribute::Bold),
        Tone::Good => out.fg(Color::Green),
        Tone::Warn => out.fg(Color::Yellow),
        Tone::Bad => out.fg(Color::Red),
        Tone::Info => out.fg(Color::Magenta),
        Tone::Dim => out.fg(Color::DarkGrey),
    }
}
