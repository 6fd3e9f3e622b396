//! The terminal back end: the headline, then each section's notes and
//! comfy-table tables, coloured only when asked (a terminal without
//! `--no-color`).

use comfy_table::{
    presets, Attribute, Cell as TableCell, CellAlignment, Color, ContentArrangement, Table as Comfy,
};

use super::doc::{Block, Cell, Document, Line, Style, Table, Tone};

/// How the text is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableStyle {
    /// ANSI colours and bold.
    pub color: bool,
    /// Wrap tables to the terminal's width (stdout is a terminal).
    pub fit_terminal: bool,
}

/// Draws the whole document as text.
pub fn draw(doc: &Document, style: TableStyle) -> String {
    let color = style.color;
    let mut out = String::new();
    for line in &doc.headline {
        out.push_str(&ansi(line, "1", color));
        out.push('\n');
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
        Block::Note(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Block::Text(line) => {
            out.push_str(&line_text(line, style.color));
            out.push('\n');
        }
        Block::List(items) => {
            for item in items {
                out.push_str("- ");
                out.push_str(&line_text(item, style.color));
                out.push('\n');
            }
        }
        Block::Details { summary, blocks } => {
            out.push_str(summary);
            out.push('\n');
            for b in blocks {
                draw_block(b, style, out);
            }
        }
        Block::Table(t) => {
            if let Some(caption) = &t.caption {
                out.push_str(caption);
                out.push('\n');
            }
            out.push_str(&table(t, style).to_string());
            out.push('\n');
        }
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
        .map(|span| match span.style {
            Style::Strong => ansi(&span.text, "1", color),
            Style::Plain | Style::Code => span.text.clone(),
        })
        .collect()
}

/// One table as comfy-table draws it.
pub fn table(t: &Table, style: TableStyle) -> Comfy {
    let color = style.color;
    let mut table = Comfy::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    if style.fit_terminal {
        table.set_content_arrangement(ContentArrangement::Dynamic);
    } else {
        // Not a terminal: no width to fit, and the same text everywhere.
        table.force_no_tty();
        table.set_content_arrangement(ContentArrangement::Disabled);
    }
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
    table
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
