//! Escaping for everything that goes into a page: trace content (queries,
//! tool names, file names, model output) is text, never markup.

use std::fmt;

/// Text escaped for HTML element content and quoted attribute values:
/// `write!(out, "<td title=\"{}\">{}</td>", Esc(a), Esc(b))`.
pub struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}

/// Text escaped as [`Esc`] does, with a `<wbr>` (a place a line may
/// break) after each `_`, `-`, `.` and `/` inside it: long names
/// (`search_and_scrape_webpage`, `a/b/trace.jsonl`) wrap at their parts in
/// a narrow table cell, never inside a word, and copy as typed.
pub struct Breakable<'a>(pub &'a str);

impl fmt::Display for Breakable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['_', '-', '.', '/']) {
            let (piece, after) = rest.split_at(at + 1);
            write!(f, "{}", Esc(piece))?;
            // Not at the end, nor inside a run (`__`): after the run.
            let sep = piece.as_bytes()[at] as char;
            if after.chars().next().is_some_and(|next| next != sep) {
                f.write_str("<wbr>")?;
            }
            rest = after;
        }
        write!(f, "{}", Esc(rest))
    }
}

/// `text` escaped, as a string.
pub fn esc(text: &str) -> String {
    Esc(text).to_string()
}

/// JSON text made safe inside `<script type="application/json">`: no `<`
/// can end the element or open a comment, and `>`/`&` go too so the text
/// means the same in any HTML context. Outside strings JSON has none of
/// these, so the escapes are `\u` escapes inside strings and parse back to
/// the same value.
pub fn json_island(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A value usable in an `id` attribute and in a URL fragment: letters,
/// digits, `-` and `_` only.
pub fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_may_break_after_their_separators_only() {
        assert_eq!(Breakable("google_search").to_string(), "google_<wbr>search");
        assert_eq!(
            Breakable("a/b-c.jsonl").to_string(),
            "a/<wbr>b-<wbr>c.<wbr>jsonl"
        );
        assert_eq!(Breakable("x_").to_string(), "x_", "none at the end");
        assert_eq!(Breakable("a__b").to_string(), "a__<wbr>b");
        assert_eq!(Breakable("<b>_&").to_string(), "&lt;b&gt;_<wbr>&amp;");
    }

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(esc("深圳 2022"), "深圳 2022");
    }

    #[test]
    fn json_island_cannot_close_its_script_and_parses_back() {
        let value = serde_json::json!({"q": "</script><script>alert(1)</script><!-- & \u{2028}"});
        let text = serde_json::to_string(&value).expect("json");
        let island = json_island(&text);
        assert!(!island.contains('<') && !island.contains('>') && !island.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&island).expect("still JSON");
        assert_eq!(back, value);
    }

    #[test]
    fn slugs_are_plain() {
        assert_eq!(slug("a b/<c>_1"), "a-b--c-_1");
    }
}
