//! A look at a line's raw text before serde reads it: where the value of
//! one top-level string field lies, so that a system prompt equal, byte for
//! byte, to an earlier line's can be left out instead of unescaped again.
//!
//! The scan only has to be right for valid JSON: a line it misreads is not
//! valid JSON, and serde rejects it anyway.

use memchr::memchr2;

/// Longest string value stepped over on the way to the key.
const MAX_SKIPPED_STRING: usize = 128;

/// Where the value of `key` starts, when `key` is among the first
/// `max_keys` keys of the top-level object and within its first `window`
/// bytes, every key before it is a plain string (no escapes), and only
/// strings and scalars come before it. The window keeps a line without
/// the key from being scanned through (its long content, say).
pub fn top_level_value_start(
    text: &str,
    key: &str,
    max_keys: usize,
    window: usize,
) -> Option<usize> {
    let b = &text.as_bytes()[..text.len().min(window)];
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    for _ in 0..max_keys {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let name = &b[i + 1..key_end - 1];
        // An escaped key may spell `key` differently: give up.
        if name.contains(&b'\\') {
            return None;
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if name == key.as_bytes() {
            return (i < b.len()).then_some(i);
        }
        i = match b.get(i)? {
            // Only short values are stepped over: a long one (the content,
            // say) means the key, if there at all, is far in.
            b'"' => string_end(&b[..b.len().min(i + MAX_SKIPPED_STRING)], i)?,
            b'{' | b'[' => return None,
            _ => scalar_end(b, i),
        };
        i = skip_ws(b, i);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
    None
}

/// Just past the closing quote of the string token opening at `start`.
pub fn string_end(b: &[u8], start: usize) -> Option<usize> {
    if b.get(start) != Some(&b'"') {
        return None;
    }
    let mut i = start + 1;
    loop {
        let at = i + memchr2(b'"', b'\\', b.get(i..)?)?;
        if b[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2;
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Just past a number or literal.
fn scalar_end(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw<'a>(text: &'a str, key: &str) -> Option<&'a str> {
        let start = top_level_value_start(text, key, 4, 200)?;
        string_end(text.as_bytes(), start).map(|end| &text[start..end])
    }

    #[test]
    fn finds_the_value_after_scalars_and_strings() {
        let line = r#" { "trace_id" : "t\"1", "n": -1.5e3, "ok": true, "system_prompt":"a\\\"b\n" , "x": 1}"#;
        assert_eq!(raw(line, "system_prompt"), Some(r#""a\\\"b\n""#));
        assert_eq!(raw(line, "trace_id"), Some(r#""t\"1""#));
    }

    #[test]
    fn gives_up_where_it_could_be_wrong() {
        // An escaped key could be the same key.
        assert_eq!(
            raw(
                r#"{"system\u005fprompt": "a", "system_prompt": "b"}"#,
                "system_prompt"
            ),
            None
        );
        // Nested values before it are not scanned.
        assert_eq!(
            raw(
                r#"{"meta": {"system_prompt": "a"}, "system_prompt": "b"}"#,
                "system_prompt"
            ),
            None
        );
        // Not a string.
        assert_eq!(raw(r#"{"system_prompt": null}"#, "system_prompt"), None);
        // Too far in: past the byte window, or past the key window.
        let long = format!(
            r#"{{"content": "{}", "system_prompt": "x"}}"#,
            "a".repeat(150)
        );
        assert_eq!(raw(&long, "system_prompt"), None);
        let far = format!(
            r#"{{"a": "{0}", "b": "{0}", "system_prompt": "x"}}"#,
            "a".repeat(100)
        );
        assert_eq!(raw(&far, "system_prompt"), None);
        assert_eq!(
            raw(
                r#"{"a": 1, "b": 2, "c": 3, "d": 4, "system_prompt": "x"}"#,
                "system_prompt"
            ),
            None
        );
        // Broken text.
        assert_eq!(raw(r#"{"system_prompt": "abc"#, "system_prompt"), None);
        assert_eq!(raw(r#"["system_prompt", "a"]"#, "system_prompt"), None);
        assert_eq!(raw("", "system_prompt"), None);
    }
}
