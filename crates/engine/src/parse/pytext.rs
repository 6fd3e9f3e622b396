//! Python's notion of whitespace, which differs from Rust's.

/// `str.isspace()` for one character: Rust's White_Space plus the
/// information separators U+001C..U+001F, which Python also counts.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.strip()` with no arguments.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// A regex character class equal to Python's `\s` on `str` patterns.
pub const PY_SPACE_CLASS: &str = r"[\s\x1C-\x1F]";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_includes_separators() {
        assert_eq!(py_strip("\u{1f} a b\u{a0}\n"), "a b");
        assert_eq!(py_strip("\u{200b}x"), "\u{200b}x");
    }
}
