//! Binary input, told apart from text as ripgrep does: by NUL bytes, which
//! no JSON text holds (JSON escapes every control character). A file whose
//! first block holds a NUL byte and not one line that looks like JSON text
//! is skipped whole (`/dev/urandom`, `/dev/zero`, an image); a NUL on some
//! line of a JSON file only costs that line, so its good lines are kept.

/// How much of an input is looked at: the first buffer the reader fills.
pub const HEAD_BYTES: usize = 1 << 16;

/// Why an input is taken for binary data, when it is: the offset of its
/// first NUL byte, as a message for the skipped input.
pub fn binary_head(head: &[u8]) -> Option<String> {
    let head = &head[..head.len().min(HEAD_BYTES)];
    let nul = memchr::memchr(0, head)?;
    let mut lines = head.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        if looks_like_json(line, lines.peek().is_none()) {
            return None;
        }
    }
    Some(format!(
        "binary file (NUL byte at offset {nul}), skipped: not JSON text"
    ))
}

/// Whether a line (perhaps cut by the end of the block) could be a JSON
/// record: UTF-8 without NUL bytes, an object or array opened; closed too,
/// unless the block ends inside it. Random bytes almost never are.
fn looks_like_json(line: &[u8], cut: bool) -> bool {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        // A character cut by the end of the block.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
    };
    let text = text.trim();
    !text.contains('\0')
        && (text.starts_with('{') || text.starts_with('['))
        && (cut || text.len() >= 2 && (text.ends_with('}') || text.ends_with(']')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_on_the_first_line_make_a_binary_file() {
        assert!(binary_head(&[0u8; 100]).is_some());
        assert!(binary_head(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR").is_some());
        assert!(binary_head(b"\n  {\"a\":\0}\n").is_some());
        // Random bytes: the first line is not UTF-8.
        assert!(binary_head(b"\xff\xfe\x01x\n\0").is_some());
    }

    #[test]
    fn text_with_a_later_nul_line_is_not_binary() {
        assert!(binary_head(b"{\"trace_id\": \"a\"}\n{\0}\n").is_none());
        assert!(binary_head(b"\xff\xfe\0garbage\n{\"trace_id\": \"a\"}\n").is_none());
        assert!(binary_head(b"{\"trace_id\": \"a\"}\n").is_none());
        assert!(binary_head(b"").is_none());
        // A character cut at the end of the block, no NUL on its line.
        assert!(binary_head(b"{\"a\": \"\xc3").is_none());
    }
}
