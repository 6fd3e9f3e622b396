//! The view model: what a report says, laid out, independent of how it is
//! drawn. Every command builds a [`Document`]; the table, Markdown (and
//! issue 16's HTML) back ends draw it, so the formats cannot drift apart.
//! The figures themselves stay in the command's report (`Analysis`,
//! `DiffReport`, `KeywordsReport`), which the JSON output serialises.

/// How a cell or line should stand out (colour on a terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// The row to look at first.
    Strong,
    Good,
    Warn,
    Bad,
    /// Something neither good nor bad that should still be told apart
    /// (an LLM failure in a timeline).
    Info,
    /// Zeros and context.
    Dim,
}

/// How a run of text is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    /// Emphasised in every format (bold).
    Strong,
    /// A name or value quoted as is: Markdown code, plain on a terminal.
    Code,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

/// A line of text made of styled runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line(pub Vec<Span>);

impl Line {
    pub fn plain(text: impl Into<String>) -> Line {
        Line(vec![Span {
            text: text.into(),
            style: Style::Plain,
        }])
    }

    fn push(mut self, text: impl Into<String>, style: Style) -> Line {
        self.0.push(Span {
            text: text.into(),
            style,
        });
        self
    }

    /// Appends plain text.
    pub fn then(self, text: impl Into<String>) -> Line {
        self.push(text, Style::Plain)
    }

    /// Appends emphasised text.
    pub fn strong(self, text: impl Into<String>) -> Line {
        self.push(text, Style::Strong)
    }

    /// Appends a quoted name or value.
    pub fn code(self, text: impl Into<String>) -> Line {
        self.push(text, Style::Code)
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.0.iter().map(|s| s.text.as_str()).collect()
    }
}

impl From<String> for Line {
    fn from(text: String) -> Line {
        Line::plain(text)
    }
}

impl From<&str> for Line {
    fn from(text: &str) -> Line {
        Line::plain(text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub tone: Tone,
    /// Right-aligned.
    pub numeric: bool,
    /// Emphasised in every format (Markdown bold).
    pub strong: bool,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            tone: Tone::Plain,
            numeric: false,
            strong: false,
        }
    }

    pub fn num(s: impl Into<String>) -> Cell {
        Cell {
            numeric: true,
            ..Cell::text(s)
        }
    }

    /// A count, dimmed when zero.
    /// A count, written as every count is (`2,736`, as in headlines).
    pub fn count(n: u64) -> Cell {
        let c = Cell::num(super::format::thousands(n));
        if n == 0 {
            c.tone(Tone::Dim)
        } else {
            c
        }
    }

    pub fn tone(mut self, tone: Tone) -> Cell {
        self.tone = tone;
        self
    }

    /// Emphasised when `yes`.
    pub fn strong_if(mut self, yes: bool) -> Cell {
        self.strong = yes;
        self
    }
}

/// One table, with an optional caption above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Each column's importance, for a width too short for all of them:
    /// the least important are left out first (the rightmost of equals
    /// first); the most important are kept at any width. Empty (or
    /// shorter than the header): the rightmost columns go first. A
    /// priority with [`PROSE`] added marks a column of free text (a
    /// verdict's detail) whose long words may be cut to fit a narrow
    /// terminal rather than the column left out ([`Table::prose`]).
    pub priority: Vec<u8>,
}

/// Added to a column's priority: the column is free text ([`Table::priority`]).
pub const PROSE: u8 = 128;

impl Table {
    /// A table without caption; `header` names the columns.
    pub fn new(header: &[&str]) -> Table {
        Table {
            caption: None,
            priority: Vec::new(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Sets the columns' importance ([`Table::priority`]), one per column.
    pub fn priority(mut self, priority: &[u8]) -> Table {
        self.priority = priority.to_vec();
        self
    }

    /// Marks columns of free text ([`PROSE`]); after [`Table::priority`].
    pub fn prose(mut self, columns: &[usize]) -> Table {
        for &i in columns {
            if let Some(p) = self.priority.get_mut(i) {
                *p |= PROSE;
            }
        }
        self
    }

    /// Whether column `i` is free text ([`PROSE`]).
    pub fn is_prose(&self, i: usize) -> bool {
        self.priority.get(i).is_some_and(|p| p & PROSE != 0)
    }

    pub fn caption(mut self, caption: impl Into<String>) -> Table {
        self.caption = Some(caption.into());
        self
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Table(Table),
    /// A sentence under or between tables.
    Note(String),
    /// A sentence with emphasised or quoted parts.
    Text(Line),
    /// Items of a list.
    List(Vec<Line>),
    /// Blocks a reader may skip: collapsed in Markdown, shown under their
    /// summary on a terminal.
    Details {
        summary: String,
        blocks: Vec<Block>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// A heading; empty for none.
    pub title: String,
    pub blocks: Vec<Block>,
}

/// A whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The Markdown heading (a terminal starts with the headline instead).
    pub title: String,
    /// The title's heading level in Markdown (sections are one deeper):
    /// 1 for a page, 2 for a comment that sits inside a page.
    pub level: usize,
    /// A few lines that answer "what dominates, where to look".
    pub headline: Vec<String>,
    pub sections: Vec<Section>,
}
