//! Raw lines of an input: a size cap, line numbers, a byte-order mark and
//! `\r\n` removed, invalid UTF-8 reported; lines are lent from the input's
//! buffer when it holds them whole.

use std::io::{self, BufRead};
use std::sync::Arc;

use super::BadLine;
use crate::model::Origin;

/// Reads raw lines with a size cap, tracking line numbers.
pub struct LineReader<R> {
    inner: R,
    file: Arc<str>,
    pub(super) line_no: u64,
    max_bytes: usize,
    buf: Vec<u8>,
    /// Bytes of `inner`'s buffer lent out as the last line, consumed when
    /// the next one is asked for.
    lent: usize,
}

/// One raw line, or why it could not be taken.
pub enum RawLine<'a> {
    Text(&'a str, Origin),
    Bad(BadLine),
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, file: Arc<str>, max_bytes: usize) -> Self {
        LineReader {
            inner,
            file,
            line_no: 0,
            max_bytes,
            buf: Vec::new(),
            lent: 0,
        }
    }

    pub fn file(&self) -> &Arc<str> {
        &self.file
    }

    /// The next non-blank line; `Ok(None)` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        self.inner.consume(std::mem::take(&mut self.lent));
        // Most lines lie whole in the reader's buffer: lend them from there.
        let take = loop {
            let Some(take) = self.line_in_buffer()? else {
                return self.copy_line();
            };
            self.line_no += 1;
            let blank = {
                let chunk = self.inner.fill_buf()?;
                let (start, end) = trim_line(&chunk[..take], self.line_no);
                chunk[start..end].iter().all(|b| b.is_ascii_whitespace())
            };
            if !blank {
                break take;
            }
            self.inner.consume(take);
        };
        let origin = self.origin();
        // The buffer still holds what `line_in_buffer` saw (nothing was consumed).
        let line = self
            .inner
            .fill_buf()?
            .get(..take)
            .ok_or_else(|| io::Error::other("the input's buffer shrank"))?;
        self.lent = take;
        let (start, end) = trim_line(line, self.line_no);
        Ok(Some(text_or_bad(&line[start..end], origin)))
    }

    /// The length (newline included) of the next line when the reader's
    /// buffer holds all of it, and it is not too long.
    fn line_in_buffer(&mut self) -> io::Result<Option<usize>> {
        let chunk = loop {
            match self.inner.fill_buf() {
                Ok(c) => break c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        Ok(memchr_newline(chunk)
            .map(|i| i + 1)
            .filter(|&take| take <= self.max_bytes))
    }

    /// The next non-blank line, copied piece by piece (it straddles the
    /// reader's buffer, is too long, or ends the input without a newline).
    fn copy_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        let (start, end) = loop {
            self.buf.clear();
            let Some(too_long) = read_capped_line(&mut self.inner, &mut self.buf, self.max_bytes)?
            else {
                return Ok(None);
            };
            self.line_no += 1;
            if too_long {
                return Ok(Some(RawLine::Bad(BadLine {
                    origin: self.origin(),
                    reason: format!(
                        "line longer than {} bytes (raise it with --max-line-bytes)",
                        self.max_bytes
                    ),
                })));
            }
            let (start, end) = trim_line(&self.buf, self.line_no);
            if !self.buf[start..end].iter().all(|b| b.is_ascii_whitespace()) {
                break (start, end);
            }
        };
        let origin = self.origin();
        Ok(Some(text_or_bad(&self.buf[start..end], origin)))
    }

    fn origin(&self) -> Origin {
        Origin {
            file: self.file.clone(),
            line: self.line_no,
        }
    }
}

/// The line without its newline (and, on line 1, without a byte-order mark).
fn trim_line(line: &[u8], line_no: u64) -> (usize, usize) {
    let start = if line_no == 1 && line.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut end = line.len();
    while end > start && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    (start, end)
}

fn text_or_bad(line: &[u8], origin: Origin) -> RawLine<'_> {
    // Every line is checked: simdutf8 checks 16 or 32 bytes at a time where
    // the standard library slows to a character at a time on non-ASCII text
    // (3% of analyze on the bench input); std says where a bad line breaks.
    if let Ok(text) = simdutf8::basic::from_utf8(line) {
        return RawLine::Text(text, origin);
    }
    match std::str::from_utf8(line) {
        Ok(text) => RawLine::Text(text, origin),
        Err(e) => RawLine::Bad(BadLine {
            origin,
            reason: format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
        }),
    }
}

/// Reads up to and including the next `\n` into `out`, keeping at most `max`
/// bytes. Returns `None` at end of input, else whether the line was too long
/// (its excess is consumed and dropped). A line that is too long and holds
/// a NUL byte ends the input with an error: binary data may never end
/// (`/dev/zero` behind a good line). A shorter line with a NUL byte is
/// kept: it fails as JSON, with the same message wherever it lies.
fn read_capped_line<R: BufRead>(
    r: &mut R,
    out: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<bool>> {
    let mut seen = 0usize;
    let mut too_long = false;
    let mut binary = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((seen > 0).then_some(too_long));
        }
        let (take, done) = match memchr_newline(chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let piece = &chunk[..take];
        if !too_long {
            if out.len() + take > max {
                too_long = true;
                binary = binary || out.contains(&0);
                *out = Vec::new();
            } else {
                out.extend_from_slice(piece);
            }
        }
        if too_long {
            binary = binary || memchr::memchr(0, piece).is_some();
        }
        seen = seen.saturating_add(take);
        r.consume(take);
        if done {
            return Ok(Some(too_long));
        }
        if binary {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("binary data: a line holding NUL bytes runs past {max} bytes; the rest of the input is skipped"),
            ));
        }
    }
}

fn memchr_newline(s: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line, as the line reader yields it, with its number.
    fn lines_with_capacity(bytes: &[u8], capacity: usize, max: usize) -> Vec<String> {
        let inner = std::io::BufReader::with_capacity(capacity, bytes);
        let mut reader = LineReader::new(inner, "x".into(), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(match line {
                RawLine::Text(t, o) => format!("{}: {t}", o.line),
                RawLine::Bad(b) => format!("bad {b}"),
            });
        }
        out
    }

    /// Text in any script passes; a broken line is named with the byte
    /// where it breaks, whichever check found it.
    #[test]
    fn utf8_is_checked_line_by_line() {
        let mut bytes = "{\"q\": \"深圳 GDP \u{1F600}\"}\n".as_bytes().to_vec();
        bytes.extend_from_slice(b"{\"q\": \"ab\xE6\xB7\"}\n{\"x\": \"\xFF\"}\n");
        let lines = lines_with_capacity(&bytes, 64, 1000);
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("1: {\"q\": \"深圳"), "{}", lines[0]);
        assert!(
            lines[1].contains("invalid UTF-8 at byte 9 of the line"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].contains("invalid UTF-8 at byte 7 of the line"),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn an_endless_line_of_nul_bytes_ends_the_input() {
        let input = std::io::Read::chain(&b"{\"a\": 1}\n"[..], std::io::repeat(0));
        let mut reader = LineReader::new(std::io::BufReader::new(input), "x".into(), 1000);
        assert!(matches!(reader.next_line(), Ok(Some(RawLine::Text(..)))));
        let err = reader.next_line().err().expect("an error, not a hang");
        assert!(err.to_string().contains("binary data"), "{err}");
    }

    #[test]
    fn lines_read_the_same_whatever_the_buffer_size() {
        let mut bytes = b"\xEF\xBB\xBF{\"a\": 1}\r\n\n  \n{\"b\": \"".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 40));
        bytes.extend(b"\"}\n\xFF\xFE\n\r\n");
        bytes.extend(std::iter::repeat_n(b'y', 90));
        bytes.extend(b"\n{\"nul\": \"ab\0c\"}\n{\"last\": true}");
        let expected = lines_with_capacity(&bytes, 1 << 16, 64);
        assert_eq!(
            expected,
            [
                "1: {\"a\": 1}".to_string(),
                format!("4: {{\"b\": \"{}\"}}", "x".repeat(40)),
                "bad x:5: invalid UTF-8 at byte 0 of the line".to_string(),
                "bad x:7: line longer than 64 bytes (raise it with --max-line-bytes)".to_string(),
                "8: {\"nul\": \"ab\0c\"}".to_string(),
                "9: {\"last\": true}".to_string(),
            ]
        );
        for capacity in [1, 2, 3, 7, 16, 50, 63, 64, 65, 200] {
            assert_eq!(
                lines_with_capacity(&bytes, capacity, 64),
                expected,
                "capacity {capacity}"
            );
        }
    }
}
