//! HTML tables: the page's own (sortable, with cells that may hold badges
//! or small bars) and the report's layout model ([`Document`]) drawn as HTML, so
//! the page also carries every table the terminal report shows.

use std::fmt::Write as _;

use super::escape::{Breakable, Esc};
use crate::render::{Block, Cell, Document, Line, Style, Table, Tone};

/// One cell: markup already escaped by whoever built it.
#[derive(Debug, Clone)]
pub struct Td {
    html: String,
    class: &'static str,
    /// The value to sort by, when the text is not a plain number.
    sort: Option<f64>,
}

impl Td {
    /// Trace content or any other text: escaped, breakable after `_`,
    /// `-`, `.` and `/` only ([`Breakable`]).
    pub fn text(s: &str) -> Td {
        Td {
            html: Breakable(s).to_string(),
            class: "text",
            sort: None,
        }
    }

    /// A count.
    pub fn count(n: u64) -> Td {
        Td {
            html: n.to_string(),
            class: if n == 0 { "num t-dim" } else { "num" },
            sort: None,
        }
    }

    /// A number shown as `shown` (e.g. `12.5%`) and sorted by `value`.
    pub fn num(shown: &str, value: Option<f64>) -> Td {
        Td {
            html: Esc(shown).to_string(),
            class: "num",
            sort: Some(value.unwrap_or(f64::MIN)),
        }
    }

    /// Markup built by the caller, every piece of content escaped.
    pub fn markup(html: String) -> Td {
        Td {
            html,
            class: "",
            sort: None,
        }
    }

    pub fn class(mut self, class: &'static str) -> Td {
        self.class = class;
        self
    }
}

/// A table of the page; sortable by clicking a header when scripts run.
pub fn table(
    id: &str,
    caption: Option<&str>,
    header: &[&str],
    numeric: &[bool],
    rows: &[(String, Vec<Td>)],
) -> String {
    let mut out = String::from("<div class=\"tablewrap\"><table class=\"data sortable\"");
    if !id.is_empty() {
        let _ = write!(out, " id=\"{}\"", Esc(id));
    }
    out.push('>');
    if let Some(c) = caption {
        let _ = write!(out, "<caption>{}</caption>", Esc(c));
    }
    out.push_str("<thead><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if numeric.get(i).copied().unwrap_or(false) {
            " class=\"num\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", Esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for (row_class, cells) in rows {
        if row_class.is_empty() {
            out.push_str("<tr>");
        } else {
            let _ = write!(out, "<tr class=\"{}\">", Esc(row_class));
        }
        for c in cells {
            out.push_str("<td");
            if !c.class.is_empty() {
                let _ = write!(out, " class=\"{}\"", c.class);
            }
            if let Some(v) = c.sort {
                let _ = write!(out, " data-v=\"{v}\"");
            }
            out.push('>');
            out.push_str(&c.html);
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

/// A small inline bar for a table cell: `value` of `max`.
pub fn cell_bar(value: f64, max: f64) -> String {
    let w = if max > 0.0 {
        (value / max * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    };
    format!("<svg class=\"cellbar\" viewBox=\"0 0 100 8\" preserveAspectRatio=\"none\" aria-hidden=\"true\"><rect width=\"{w:.1}\" height=\"8\" rx=\"2\"></rect></svg>")
}

/// The report's layout (the [`Document`] the table and Markdown back ends
/// draw) as HTML.
pub fn view(doc: &Document) -> String {
    let mut out = String::new();
    for section in &doc.sections {
        if !section.title.is_empty() {
            let _ = write!(out, "<h3>{}</h3>", Esc(&section.title));
        }
        blocks(&mut out, &section.blocks);
    }
    out
}

fn blocks(out: &mut String, blocks: &[Block]) {
    for block in blocks {
        match block {
            Block::Note(text) => {
                let _ = write!(out, "<p class=\"note\">{}</p>", Esc(text));
            }
            Block::Text(line) => {
                out.push_str("<p>");
                spans(out, line);
                out.push_str("</p>");
            }
            Block::List(items) => {
                out.push_str("<ul>");
                for line in items {
                    out.push_str("<li>");
                    spans(out, line);
                    out.push_str("</li>");
                }
                out.push_str("</ul>");
            }
            Block::Details {
                summary,
                blocks: inner,
            } => {
                let _ = write!(out, "<details><summary>{}</summary>", Esc(summary));
                self::blocks(out, inner);
                out.push_str("</details>");
            }
            Block::Table(t) => doc_table(out, t),
        }
    }
}

fn spans(out: &mut String, line: &Line) {
    for span in &line.0 {
        match span.style {
            Style::Plain => {
                let _ = write!(out, "{}", Esc(&span.text));
            }
            Style::Strong => {
                let _ = write!(out, "<strong>{}</strong>", Esc(&span.text));
            }
            Style::Code => {
                let _ = write!(out, "<code>{}</code>", Esc(&span.text));
            }
        }
    }
}

fn doc_table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"tablewrap\"><table class=\"data\">");
    if let Some(c) = &t.caption {
        let _ = write!(out, "<caption>{}</caption>", Esc(c));
    }
    out.push_str("<thead><tr>");
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", Esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for c in row {
            view_cell(out, c, row.len() < t.header.len());
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn view_cell(out: &mut String, c: &Cell, short_row: bool) {
    let tone = match (c.tone, c.strong) {
        (Tone::Plain, true) => "t-strong",
        (Tone::Plain, false) => "",
        (Tone::Strong, _) => "t-strong",
        (Tone::Good, _) => "t-good",
        (Tone::Warn, _) => "t-warn",
        (Tone::Bad, _) => "t-bad",
        (Tone::Info, _) => "t-info",
        (Tone::Dim, _) => "t-dim",
    };
    let class = match (c.numeric, tone.is_empty()) {
        (true, true) => "num".to_string(),
        (true, false) => format!("num {tone}"),
        (false, _) => tone.to_string(),
    };
    out.push_str("<td");
    if short_row {
        // A note row ("… 3 more tools") spans the table.
        out.push_str(" colspan=\"99\"");
    }
    if !class.is_empty() {
        let _ = write!(out, " class=\"{class}\"");
    }
    // Names wrap at their parts, never inside a word; figures never wrap.
    let text = if c.numeric {
        Esc(&c.text).to_string()
    } else {
        Breakable(&c.text).to_string()
    };
    if c.strong {
        let _ = write!(out, "><strong>{text}</strong></td>");
    } else {
        let _ = write!(out, ">{text}</td>");
    }
}
