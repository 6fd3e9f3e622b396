//! The report as GitHub-flavoured Markdown (for pull requests, wikis,
//! notebooks): the same [`View`] as the terminal table.

use super::view::{Block, Table, View};

pub fn render(view: &View) -> String {
    let mut out = String::from("# mirotrace analyze\n\n");
    for line in &view.headline {
        out.push_str(&format!("- **{}**\n", escape(line)));
    }
    for section in &view.sections {
        out.push_str(&format!("\n## {}\n", escape(&section.title)));
        for block in &section.blocks {
            out.push('\n');
            match block {
                Block::Note(text) => {
                    out.push_str(&escape(text));
                    out.push('\n');
                }
                Block::Table(t) => table(t, &mut out),
            }
        }
    }
    out
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
            .map(|i| row.get(i).map_or(String::new(), |c| escape(&c.text)))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
}

/// Keeps text from being read as Markdown syntax inside a line or a cell.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // `_` stays: names like `format_error` are intraword, which
            // GitHub does not read as emphasis.
            '|' | '*' | '`' | '<' | '>' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::view::{Cell, Section};

    #[test]
    fn tables_are_escaped_and_aligned() {
        let view = View {
            headline: vec!["rate 5%".into()],
            sections: vec![Section {
                title: "T".into(),
                blocks: vec![Block::Table(Table {
                    caption: None,
                    header: vec!["tool".into(), "n".into()],
                    rows: vec![vec![Cell::text("a|b"), Cell::num("3")]],
                })],
            }],
        };
        let md = render(&view);
        assert!(
            md.contains("| tool | n |\n| --- | ---: |\n| a\\|b | 3 |\n"),
            "{md}"
        );
    }
}
