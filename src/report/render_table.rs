//! The terminal report: the headline, then one comfy-table per table of the
//! [`View`], coloured only when asked (a terminal without `--no-color`).

use comfy_table::{
    presets, Attribute, Cell as TableCell, CellAlignment, Color, ContentArrangement, Table as Comfy,
};

use super::view::{Block, Cell, Table, Tone, View};

/// How the text is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableStyle {
    /// ANSI colours and bold.
    pub color: bool,
    /// Wrap tables to the terminal's width (stdout is a terminal).
    pub fit_terminal: bool,
}

/// Renders the whole report as text.
pub fn render(view: &View, style: TableStyle) -> String {
    let color = style.color;
    let mut out = String::new();
    for line in &view.headline {
        if color {
            out.push_str(&format!("\x1b[1m{line}\x1b[0m\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    for section in &view.sections {
        out.push('\n');
        let title = section.title.to_uppercase();
        if color {
            out.push_str(&format!("\x1b[1;36m{title}\x1b[0m\n"));
        } else {
            out.push_str(&title);
            out.push('\n');
        }
        for block in &section.blocks {
            match block {
                Block::Note(text) => {
                    out.push_str(text);
                    out.push('\n');
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
    }
    out
}

fn table(t: &Table, style: TableStyle) -> Comfy {
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
    match c.tone {
        Tone::Plain => out,
        Tone::Strong => out.add_attribute(Attribute::Bold),
        Tone::Good => out.fg(Color::Green),
        Tone::Warn => out.fg(Color::Yellow),
        Tone::Bad => out.fg(Color::Red),
        Tone::Dim => out.fg(Color::DarkGrey),
    }
}
