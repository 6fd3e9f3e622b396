//! Text from traces made safe to draw: control characters (C0 but the
//! line feed, DEL, C1) and bidirectional overrides would move the cursor,
//! recolour or retitle the terminal, or reorder what a reader sees (ESC,
//! CR, U+202E). Every terminal and Markdown rendering passes its whole
//! [`Document`] through [`document`], so they show as visible escapes
//! (`\e`, `\r`, `\u{202e}`) instead. Line feeds stay: cells are drawn on
//! several lines on purpose.

use std::borrow::Cow;
use std::fmt::Write;

use super::doc::{Block, Document, Line, Table};

/// Whether `c` must not reach a terminal raw.
pub fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control and bidi character escaped visibly.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn fix(text: &mut String) {
    if let Cow::Owned(safe) = visible(text) {
        *text = safe;
    }
}

fn fix_line(line: &mut Line) {
    line.0.iter_mut().for_each(|span| fix(&mut span.text));
}

fn fix_table(t: &mut Table) {
    t.caption.iter_mut().for_each(fix);
    t.header.iter_mut().for_each(fix);
    t.rows
        .iter_mut()
        .flatten()
        .for_each(|cell| fix(&mut cell.text));
}

fn fix_block(block: &mut Block) {
    match block {
        Block::Table(t) => fix_table(t),
        Block::Note(text) => fix(text),
        Block::Text(line) => fix_line(line),
        Block::List(lines) => lines.iter_mut().for_each(fix_line),
        Block::Details { summary, blocks } => {
            fix(summary);
            blocks.iter_mut().for_each(fix_block);
        }
    }
}

/// The document with every text escaped by [`visible`] (a copy only when
/// something had to change).
pub fn document(doc: &Document) -> Cow<'_, Document> {
    let mut safe = doc.clone();
    fix(&mut safe.title);
    safe.headline.iter_mut().for_each(fix);
    for section in &mut safe.sections {
        fix(&mut section.title);
        section.blocks.iter_mut().for_each(fix_block);
    }
    if safe == *doc {
        Cow::Borrowed(doc)
    } else {
        Cow::Owned(safe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{Cell, Section};

    #[test]
    fn controls_and_bidi_overrides_are_escaped() {
        assert_eq!(visible("plain\ntext"), "plain\ntext");
        assert_eq!(visible("a\u{1b}[31mb\rc\td"), "a\\e[31mb\\rc\\td");
        assert_eq!(
            visible("x\u{202e}y\u{9b}z\u{7f}"),
            "x\\u{202e}y\\u{9b}z\\u{7f}"
        );
    }

    #[test]
    fn every_text_of_a_document_is_escaped() {
        let doc = Document {
            title: "t\u{7}".into(),
            level: 1,
            headline: vec!["h\u{1b}]0;owned\u{7}".into()],
            sections: vec![Section {
                title: "s".into(),
                blocks: vec![Block::Table(Table {
                    caption: None,
                    priority: Vec::new(),
                    header: vec!["id".into()],
                    rows: vec![vec![Cell::text("t\r1")]],
                })],
            }],
        };
        let safe = document(&doc);
        let text = format!("{safe:?}");
        assert!(!safe.headline[0].contains('\u{1b}'), "{text}");
        assert!(matches!(safe, Cow::Owned(_)));
        let Block::Table(t) = &safe.sections[0].blocks[0] else {
            panic!("a table")
        };
        assert_eq!(t.rows[0][0].text, "t\\r1");
    }
}
