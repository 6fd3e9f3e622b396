//! The Markdown back end (GitHub-flavoured: pull requests, wikis,
//! notebooks): the same [`Document`] as the terminal table.
//!
//! Trace text (ids, queries, models, tool and file names) must render as
//! the literal text, never as a link, an image, HTML or an entity, so the
//! rule is blunt (docs/limits.md, "Robustness"): in text, every ASCII
//! punctuation character is backslash-escaped (which also keeps bare URLs,
//! `www.` names and e-mail addresses from GitHub's autolinking, and
//! `&` from starting an entity); a code span's fence is longer than any
//! run of backticks inside it; the one HTML we write (`<details>`) holds
//! its summary HTML-escaped.

use super::doc::{Block, Document, Line, Style, Table};

/// Draws the whole document as Markdown.
pub fn draw(doc: &Document) -> String {
    let doc = &*super::visible::document(doc);
    let level = doc.level.max(1);
    let mut out = format!("{} {}\n\n", "#".repeat(level), escape(&doc.title));
    for line in &doc.headline {
        if super::shell::is_command(line) {
            // A code span, copied as it is.
            out.push_str(&format!("- {}\n", code_span(line)));
        } else {
            out.push_str(&format!("- **{}**\n", escape(line)));
        }
    }
    for section in &doc.sections {
        if !section.title.is_empty() {
            out.push_str(&format!(
                "\n{} {}\n",
                "#".repeat(level + 1),
                escape(&section.title)
            ));
        }
        for block in &section.blocks {
            draw_block(block, &mut out);
        }
    }
    out
}

fn draw_block(block: &Block, out: &mut String) {
    // One blank line between blocks (none more after a heading's).
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    match block {
        Block::Note(text) => {
            out.push_str(&escape(text));
            out.push('\n');
        }
        Block::Text(line) => {
            out.push_str(&line_text(line));
            out.push('\n');
        }
        Block::List(items) => {
            for item in items {
                out.push_str(&format!("- {}\n", line_text(item)));
            }
        }
        Block::Details { summary, blocks } => {
            // Inside an HTML block Markdown escapes do not apply: HTML's do.
            out.push_str(&format!(
                "<details><summary>{}</summary>\n",
                html_escape(summary)
            ));
            for b in blocks {
                draw_block(b, out);
            }
            out.push_str("\n</details>\n");
        }
        Block::Table(t) => table(t, out),
    }
}

fn line_text(line: &Line) -> String {
    line.0
        .iter()
        .map(|span| match span.style {
            Style::Plain => escape(&span.text),
            Style::Strong => format!("**{}**", escape(&span.text)),
            Style::Code => code_span(&span.text),
        })
        .collect()
}

fn table(t: &Table, out: &mut String) {
    if let Some(caption) = &t.caption {
        out.push_str(&format!("*{}*\n\n", escape(caption)));
    }
    let columns = t
        .header
        .len()
        .max(t.rows.iter().map(Vec::len).max().unwrap_or(0));
    let header: Vec<String> = (0..columns)
        .map(|i| escape(t.header.get(i).map_or("", String::as_str)))
        .collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    // Right-align a column when all its filled cells are numbers.
    let rules: Vec<&str> = (0..columns)
        .map(|i| {
            let mut filled = t
                .rows
                .iter()
                .filter_map(|r| r.get(i))
                .filter(|c| !c.text.is_empty())
                .peekable();
            let numeric = filled.peek().is_some() && filled.all(|c| c.numeric);
            if numeric {
                "---:"
            } else {
                "---"
            }
        })
        .collect();
    out.push_str(&format!("| {} |\n", rules.join(" | ")));
    for row in &t.rows {
        let cells: Vec<String> = (0..columns)
            .map(|i| {
                row.get(i).map_or(String::new(), |c| {
                    let text = indented(&c.text);
                    match c.strong {
                        true if !c.text.is_empty() => format!("**{text}**"),
                        _ => text,
                    }
                })
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
}

/// Keeps text from being read as Markdown syntax inside a line or a cell:
/// every ASCII punctuation character (all CommonMark lets be escaped) gets
/// a backslash, line breaks become spaces.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for c in text.chars() {
        match c {
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// Text for inside an HTML element (`<summary>`): `&`, `<`, `>` and `"`
/// as entities, so nothing is read as a tag or a reference.
fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A cell's text escaped, its leading spaces (an outcome row under its
/// total) kept as non-breaking spaces: Markdown drops plain ones.
fn indented(text: &str) -> String {
    let body = text.trim_start_matches(' ');
    let lead = text.len() - body.len();
    format!("{}{}", "&nbsp;".repeat(lead), escape(body))
}

/// `text` as a code span that holds it exactly: fenced by one backtick
/// more than its longest run of them, padded with a space each side when
/// it starts or ends with a backtick or a space (CommonMark strips one
/// each side), line breaks as spaces. Only for lines, never table cells
/// (where a `|` would still end the cell).
fn code_span(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let edge = |c: Option<char>| matches!(c, Some('`' | ' '));
    if edge(text.chars().next()) || edge(text.chars().last()) {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::doc::{Cell, Section};

    #[test]
    fn tables_are_escaped_and_aligned() {
        let mut t = Table::new(&["tool", "n"]);
        t.rows
            .push(vec![Cell::text("a|b").strong_if(true), Cell::num("3")]);
        t.rows.push(vec![Cell::text("  ok"), Cell::num("1")]);
        let doc = Document {
            title: "report".into(),
            level: 2,
            headline: vec!["rate 5%".into()],
            sections: vec![Section {
                title: "T".into(),
                blocks: vec![
                    Block::Table(t),
                    Block::Text(Line::plain("see ").code("a`b").strong("now")),
                ],
            }],
        };
        let md = draw(&doc);
        assert!(
            md.starts_with("## report\n\n- **rate 5\\%**\n\n### T\n"),
            "{md}"
        );
        assert!(
            md.contains(
                "| tool | n |\n| --- | ---: |\n| **a\\|b** | 3 |\n| &nbsp;&nbsp;ok | 1 |\n"
            ),
            "{md}"
        );
        assert!(md.contains("see ``a`b``**now**\n"), "{md}");
    }

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(code_span("ab"), "`ab`");
        assert_eq!(code_span(" a "), "`  a  `");
        assert_eq!(code_span("a``b`"), "``` a``b` ```");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(escape("[x](y) &amp;"), "\\[x\\]\\(y\\) \\&amp\\;");
        assert_eq!(html_escape("<b>&"), "&lt;b&gt;&amp;");
    }
}
