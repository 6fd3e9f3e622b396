//! Which mistake a format error is: one [`FormatKind`] per attempt, by the
//! first of seven rules that applies (docs/metrics.md, "Mistakes"):
//!
//! 1. `cut_off` — `finish_reason` is `length`, or the text after its last
//!    `<use_mcp_tool>` is a prefix of a well-formed block that stops before
//!    `</arguments>`;
//! 2. `misspelled_tag` — a complete tag-like token within edit distance 2 of
//!    an MCP tag name that is not itself one;
//! 3. `unclosed_block` — a block complete through `</arguments>` with no
//!    `</use_mcp_tool>` after it;
//! 4. `misordered_elements` — a closed block holding all three elements in
//!    another order;
//! 5. `missing_element` — a closed block lacking one of them;
//! 6. `text_between_elements` — a closed block in order, with other text
//!    between its elements;
//! 7. `stray_tag` — anything else (tags outside any block).
//!
//! The rules read only the text (and the finish reason); they run on format
//! errors alone, so their cost is off the hot path.

use serde::{Deserialize, Serialize};

use crate::parse::pytext::is_py_space;

/// The kind of a format error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatKind {
    CutOff,
    MisspelledTag,
    UnclosedBlock,
    MisorderedElements,
    MissingElement,
    TextBetweenElements,
    StrayTag,
}

impl FormatKind {
    /// In rule order.
    pub const ALL: [FormatKind; 7] = [
        FormatKind::CutOff,
        FormatKind::MisspelledTag,
        FormatKind::UnclosedBlock,
        FormatKind::MisorderedElements,
        FormatKind::MissingElement,
        FormatKind::TextBetweenElements,
        FormatKind::StrayTag,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FormatKind::CutOff => "cut_off",
            FormatKind::MisspelledTag => "misspelled_tag",
            FormatKind::UnclosedBlock => "unclosed_block",
            FormatKind::MisorderedElements => "misordered_elements",
            FormatKind::MissingElement => "missing_element",
            FormatKind::TextBetweenElements => "text_between_elements",
            FormatKind::StrayTag => "stray_tag",
        }
    }

    pub fn from_name(name: &str) -> Option<FormatKind> {
        FormatKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Why a reply is a format error: the kind, the tag the kind is about and
/// where it is (a byte offset into the reply text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatWhy {
    pub kind: FormatKind,
    pub tag: String,
    pub offset: usize,
}

const BLOCK: &str = "use_mcp_tool";
/// The three elements of a block, in the order the format requires.
const ELEMENTS: [&str; 3] = ["server_name", "tool_name", "arguments"];
const NAMES: [&str; 4] = [BLOCK, "server_name", "tool_name", "arguments"];
/// The elements' opening and closing tags, in [`ELEMENTS`] order.
const ELEMENT_TAGS: [(&str, &str); 3] = [
    ("<server_name>", "</server_name>"),
    ("<tool_name>", "</tool_name>"),
    ("<arguments>", "</arguments>"),
];
const OPEN: &str = "<use_mcp_tool>";
const CLOSE: &str = "</use_mcp_tool>";

/// Classifies a reply that upstream judged a format error. `length` is
/// whether its `finish_reason` was `length`; `leaked` the MCP tag found.
pub fn classify(text: &str, length: bool, leaked: &str) -> FormatWhy {
    let why = |kind, tag: &str, offset| FormatWhy {
        kind,
        tag: tag.to_string(),
        offset,
    };
    let last_open = text.rfind(OPEN);
    if length {
        return why(FormatKind::CutOff, leaked, last_open.unwrap_or(text.len()));
    }
    if let Some(p) = last_open {
        if is_cut_block(&text[p..]) {
            return why(FormatKind::CutOff, OPEN, p);
        }
    }
    let tokens = tag_tokens(text);
    if let Some(t) = tokens.iter().find(|t| t.misspelled()) {
        return why(FormatKind::MisspelledTag, t.raw, t.offset);
    }
    let blocks = blocks(text);
    for rule in [
        FormatKind::UnclosedBlock,
        FormatKind::MisorderedElements,
        FormatKind::MissingElement,
        FormatKind::TextBetweenElements,
    ] {
        if let Some(w) = blocks.iter().find_map(|b| b.judge(text, rule)) {
            return w;
        }
    }
    why(
        FormatKind::StrayTag,
        leaked,
        text.find(leaked).unwrap_or_default(),
    )
}

/// A complete tag-like token: `<name>` or `</name>`, the name of letters,
/// digits, `_` and `-`, perhaps with spaces inside the brackets.
struct Token<'a> {
    offset: usize,
    raw: &'a str,
    name: &'a str,
    spaced: bool,
}

impl Token<'_> {
    fn is_mcp(&self) -> bool {
        !self.spaced && NAMES.contains(&self.name)
    }

    /// Near an MCP tag name (case aside) without being one.
    fn misspelled(&self) -> bool {
        if self.is_mcp() {
            return false;
        }
        NAMES.iter().any(|n| within_two(self.name, n))
    }
}

fn tag_tokens(text: &str) -> Vec<Token<'_>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'<', &b[i..]) {
        let start = i + k;
        i = start + 1;
        let mut j = start + 1;
        let mut spaced = false;
        let skip = |j: &mut usize, spaced: &mut bool| {
            while *j < b.len() && b[*j] == b' ' {
                *j += 1;
                *spaced = true;
            }
        };
        skip(&mut j, &mut spaced);
        if j < b.len() && b[j] == b'/' {
            j += 1;
            skip(&mut j, &mut spaced);
        }
        let name_start = j;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'-') {
            j += 1;
        }
        let name_end = j;
        skip(&mut j, &mut spaced);
        if name_end > name_start && j < b.len() && b[j] == b'>' {
            out.push(Token {
                offset: start,
                raw: &text[start..=j],
                name: &text[name_start..name_end],
                spaced,
            });
            i = j + 1;
        }
    }
    out
}

/// Whether `a` (case aside) is within edit distance 2 of `b`, a
/// lower-case MCP tag name (insertions, deletions, substitutions and
/// adjacent transpositions). Runs for every tag-like token of a format
/// error, so the table lives on the stack.
fn within_two(a: &str, b: &str) -> bool {
    const MAX: usize = 16;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > 2 {
        return false;
    }
    debug_assert!(b.len() < MAX - 2, "an MCP tag name");
    let w = b.len() + 1;
    let mut d = [0usize; MAX * MAX];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    let lower = |i: usize| a[i].to_ascii_lowercase();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(lower(i - 1) != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && lower(i - 1) == b[j - 2] && lower(i - 2) == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()] <= 2
}

/// Whether `tail` (starting with `<use_mcp_tool>`) is a prefix of a
/// well-formed block that ends before `</arguments>`: every literal in
/// order, whitespace between, element contents free of MCP tags.
fn is_cut_block(tail: &str) -> bool {
    let mut rest = &tail[OPEN.len()..];
    for (k, (open, close)) in ELEMENT_TAGS.iter().enumerate() {
        rest = rest.trim_start_matches(is_py_space);
        if rest.len() < open.len() {
            return open.starts_with(rest);
        }
        let Some(after) = rest.strip_prefix(open) else {
            return false;
        };
        match after.find(close) {
            // The arguments closed: not cut before `</arguments>`.
            Some(_) if k == ELEMENTS.len() - 1 => return false,
            Some(c) => {
                if !clean(&after[..c]) {
                    return false;
                }
                rest = &after[c + close.len()..];
            }
            None => return clean(after),
        }
    }
    false
}

/// No MCP tag, near miss or `<use_mcp_tool>` fragment inside an element.
fn clean(content: &str) -> bool {
    !content.contains(OPEN)
        && !content.contains(CLOSE)
        && tag_tokens(content)
            .iter()
            .all(|t| !t.is_mcp() && !t.misspelled())
}

/// A `<use_mcp_tool>` and what follows it: up to its `</use_mcp_tool>`
/// (closed) or to the next opening tag or the end of the text (open).
struct Block {
    start: usize,
    body: (usize, usize),
    closed: bool,
    /// Each element's tags, in [`ELEMENTS`] order (found once: every rule
    /// looks at them).
    spans: [Option<Span>; 3],
}

fn blocks(text: &str) -> Vec<Block> {
    let opens: Vec<usize> = text.match_indices(OPEN).map(|(i, _)| i).collect();
    let mut out = Vec::new();
    for (n, &start) in opens.iter().enumerate() {
        let body_start = start + OPEN.len();
        let limit = opens.get(n + 1).copied().unwrap_or(text.len());
        let segment = &text[body_start..limit];
        // A doubled opening tag: the block is the next one.
        if segment.trim_matches(is_py_space).is_empty() && limit < text.len() {
            continue;
        }
        let (end, closed) = match segment.find(CLOSE) {
            Some(c) => (body_start + c, true),
            None => (limit, false),
        };
        let body = (body_start, end);
        out.push(Block {
            start,
            body,
            closed,
            spans: ELEMENT_TAGS.map(|tags| element(text, body, tags)),
        });
    }
    out
}

/// An element's opening and closing tag within a block body (absolute
/// offsets of the opening tag's start and the closing tag's end).
#[derive(Clone, Copy)]
struct Span {
    open: usize,
    inner: usize,
    close: Option<(usize, usize)>,
}

/// An element's opening and closing tag within a block body (absolute
/// offsets), the first of each.
fn element(
    text: &str,
    (s, e): (usize, usize),
    (open_tag, close_tag): (&str, &str),
) -> Option<Span> {
    let body = &text[s..e];
    let o = body.find(open_tag)?;
    let inner = o + open_tag.len();
    let close = body[inner..]
        .find(close_tag)
        .map(|c| (s + inner + c, s + inner + c + close_tag.len()));
    Some(Span {
        open: s + o,
        inner: s + inner,
        close,
    })
}

impl Block {
    fn judge(&self, text: &str, rule: FormatKind) -> Option<FormatWhy> {
        let spans = &self.spans;
        let why = |kind, tag: String, offset| Some(FormatWhy { kind, tag, offset });
        let complete: Option<Vec<(Span, (usize, usize))>> = spans
            .iter()
            .map(|s| s.and_then(|s| s.close.map(|c| (s, c))))
            .collect();
        match rule {
            FormatKind::UnclosedBlock if !self.closed => complete.is_some().then(|| FormatWhy {
                kind: rule,
                tag: OPEN.to_string(),
                offset: self.start,
            }),
            FormatKind::MisorderedElements if self.closed => {
                let all: Vec<Span> = spans.iter().copied().collect::<Option<_>>()?;
                let mut order: Vec<(usize, usize)> =
                    all.iter().enumerate().map(|(k, s)| (s.open, k)).collect();
                order.sort();
                let misplaced = order.iter().enumerate().find(|(pos, (_, k))| pos != k);
                if let Some((_, &(offset, k))) = misplaced {
                    return why(rule, format!("<{}>", ELEMENTS[k]), offset);
                }
                // Opening tags in order but an element closes after the next opens.
                let complete = complete?;
                complete
                    .windows(2)
                    .find(|w| w[0].1 .1 > w[1].0.open)
                    .and_then(|w| {
                        why(
                            rule,
                            format!("<{}>", element_name(w[1].0, spans)),
                            w[1].0.open,
                        )
                    })
            }
            FormatKind::MissingElement if self.closed => {
                let k = spans
                    .iter()
                    .position(|s| s.is_none_or(|s| s.close.is_none()))?;
                why(rule, format!("<{}>", ELEMENTS[k]), self.start)
            }
            FormatKind::TextBetweenElements if self.closed => {
                let complete = complete?;
                let mut from = self.body.0;
                for (k, (span, close)) in complete.iter().enumerate() {
                    if let Some(off) = non_space(text, from, span.open) {
                        return why(rule, format!("<{}>", ELEMENTS[k]), off);
                    }
                    from = close.1;
                }
                non_space(text, from, self.body.1).and_then(|off| why(rule, CLOSE.to_string(), off))
            }
            _ => None,
        }
    }
}

fn element_name(span: Span, spans: &[Option<Span>]) -> &'static str {
    spans
        .iter()
        .position(|s| s.is_some_and(|s| s.open == span.open && s.inner == span.inner))
        .map_or(BLOCK, |k| ELEMENTS[k])
}

/// The offset of the first non-whitespace character in `text[from..to]`.
fn non_space(text: &str, from: usize, to: usize) -> Option<usize> {
    let gap = text.get(from..to)?;
    gap.char_indices()
        .find(|(_, c)| !is_py_space(*c))
        .map(|(i, _)| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> FormatKind {
        classify(text, false, "<use_mcp_tool>").kind
    }

    const S: &str = "<server_name>s</server_name>";
    const T: &str = "<tool_name>t</tool_name>";
    const A: &str = "<arguments>{\"q\": 1}</arguments>";

    #[test]
    fn each_rule_on_its_own() {
        assert_eq!(
            kind(&format!("<use_mcp_tool>{S}\n{T}\n<arguments>{{\"q\": ")),
            FormatKind::CutOff
        );
        assert_eq!(kind("x <use_mcp_tool>\n<server_na"), FormatKind::CutOff);
        for bad in [
            "</use_mcp_tools>",
            "<toolname>",
            "<server-name>",
            "<Arguments>",
            "< arguments>",
        ] {
            let text = format!("<use_mcp_tool>{S}{T}{A}{bad}");
            assert_eq!(kind(&text), FormatKind::MisspelledTag, "{bad}");
        }
        assert_eq!(
            kind(&format!("<use_mcp_tool>{S}{T}{A}\nthen")),
            FormatKind::UnclosedBlock
        );
        assert_eq!(
            kind(&format!("<use_mcp_tool>{T}{S}{A}</use_mcp_tool>")),
            FormatKind::MisorderedElements
        );
        assert_eq!(
            kind(&format!(
                "<use_mcp_tool>{S}{T}<query>q</query></use_mcp_tool>"
            )),
            FormatKind::MissingElement
        );
        assert_eq!(
            kind(&format!("<use_mcp_tool>{S}\nnow:\n{T}{A}</use_mcp_tool>")),
            FormatKind::TextBetweenElements
        );
        assert_eq!(kind("I would use <arguments> here."), FormatKind::StrayTag);
        assert_eq!(kind(&format!("{S}{T}{A}")), FormatKind::StrayTag);
    }

    #[test]
    fn length_is_a_cut_whatever_the_text() {
        let w = classify("see <arguments>", true, "<arguments>");
        assert_eq!(
            (w.kind, w.tag.as_str()),
            (FormatKind::CutOff, "<arguments>")
        );
    }

    #[test]
    fn other_tags_are_not_misspellings() {
        for t in [
            "<think>",
            "</think>",
            "<tool>",
            "<name>",
            "<query>",
            "<b>",
            "<tool_call>",
        ] {
            let text = format!("{t} <arguments>");
            assert_eq!(kind(&text), FormatKind::StrayTag, "{t}");
        }
        // A misspelled closing tag inside the arguments is no cut.
        let text = format!("<use_mcp_tool>{S}{T}<arguments>{{}}</argument></use_mcp_tool>");
        assert_eq!(kind(&text), FormatKind::MisspelledTag);
    }

    #[test]
    fn the_offset_points_at_the_tag() {
        let text = format!("hi <use_mcp_tool>{S}{T}{A}</use_mcp_tol>");
        let w = classify(&text, false, "<use_mcp_tool>");
        assert_eq!(&text[w.offset..], "</use_mcp_tol>");
        assert_eq!(w.tag, "</use_mcp_tol>");
    }

    #[test]
    fn names_round_trip() {
        for k in FormatKind::ALL {
            assert_eq!(FormatKind::from_name(k.name()), Some(k));
        }
    }
}
