//! A Python `str`: a sequence of Unicode code points, surrogates included.

use std::borrow::Cow;
use std::fmt;

/// A Python string. Stored as "generalized UTF-8": ordinary characters as
/// UTF-8, and each surrogate code point (U+D800..U+DFFF) as its own 3-byte
/// sequence. Two surrogates are never merged into one character, because
/// Python keeps `"\ud83d\ude00"` from json_repair as two code points.
///
/// Equality, ordering and hashing are on the code point sequence.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PyStr {
    bytes: Vec<u8>,
    /// Whether any surrogate is stored; when false, `bytes` is valid UTF-8.
    surrogates: bool,
}

impl PyStr {
    pub fn new() -> PyStr {
        PyStr::default()
    }

    pub fn with_capacity(n: usize) -> PyStr {
        PyStr {
            bytes: Vec::with_capacity(n),
            surrogates: false,
        }
    }

    pub fn push(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.bytes
            .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }

    pub fn push_str(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    pub fn push_pystr(&mut self, s: &PyStr) {
        self.bytes.extend_from_slice(&s.bytes);
        self.surrogates |= s.surrogates;
    }

    /// Appends any code point up to U+10FFFF; surrogates are kept as such.
    /// Values above U+10FFFF are ignored (Python cannot hold them either).
    pub fn push_code_point(&mut self, cp: u32) {
        if let Some(c) = char::from_u32(cp) {
            self.push(c);
        } else if (0xD800..=0xDFFF).contains(&cp) {
            self.bytes.push(0xE0 | (cp >> 12) as u8);
            self.bytes.push(0x80 | ((cp >> 6) & 0x3F) as u8);
            self.bytes.push(0x80 | (cp & 0x3F) as u8);
            self.surrogates = true;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn has_surrogates(&self) -> bool {
        self.surrogates
    }

    /// The text when it holds no surrogate.
    pub fn as_str(&self) -> Option<&str> {
        if self.surrogates {
            None
        } else {
            // Invariant: without surrogates the bytes are UTF-8.
            std::str::from_utf8(&self.bytes).ok()
        }
    }

    /// The text's bytes when every character is ASCII (no surrogate, no
    /// byte above 0x7F): a caller can then work byte by byte without
    /// decoding.
    pub fn ascii_bytes(&self) -> Option<&[u8]> {
        (!self.surrogates && self.bytes.is_ascii()).then_some(&self.bytes[..])
    }

    /// The text, with each surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        match self.as_str() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(
                self.code_points()
                    .map(|cp| char::from_u32(cp).unwrap_or('\u{FFFD}'))
                    .collect(),
            ),
        }
    }

    /// The text with each surrogate written as its JSON escape (`\udc00`,
    /// as `json.dumps` writes it): unlike [`PyStr::to_string_lossy`], two
    /// strings that differ only in their surrogates stay apart. For ids,
    /// which must compare as their JSON values.
    pub fn to_string_escaping_surrogates(&self) -> Cow<'_, str> {
        match self.as_str() {
            Some(s) => Cow::Borrowed(s),
            None => {
                let mut out = String::with_capacity(self.bytes.len() + 8);
                for cp in self.code_points() {
                    match char::from_u32(cp) {
                        Some(c) => out.push(c),
                        None => out.push_str(&format!("\\u{cp:04x}")),
                    }
                }
                Cow::Owned(out)
            }
        }
    }

    /// The code points, in order.
    pub fn code_points(&self) -> CodePoints<'_> {
        CodePoints {
            bytes: &self.bytes,
            pos: 0,
        }
    }

    /// Number of code points (Python's `len`).
    pub fn char_len(&self) -> usize {
        match self.as_str() {
            Some(s) => s.chars().count(),
            None => self.code_points().count(),
        }
    }

    pub fn starts_with(&self, prefix: &str) -> bool {
        self.bytes.starts_with(prefix.as_bytes())
    }
}

/// A JSON string when it holds no surrogate, else its code points: either
/// way it reads back to the same code point sequence (partial reports).
impl serde::Serialize for PyStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.surrogates {
            s.collect_seq(self.code_points())
        } else {
            s.serialize_str(&self.to_string_lossy())
        }
    }
}

impl<'de> serde::Deserialize<'de> for PyStr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PyStr, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Text(String),
            CodePoints(Vec<u32>),
        }
        Ok(match Stored::deserialize(d)? {
            Stored::Text(t) => PyStr::from(t),
            Stored::CodePoints(c) => c.into_iter().collect(),
        })
    }
}

impl From<&str> for PyStr {
    fn from(s: &str) -> PyStr {
        PyStr {
            bytes: s.as_bytes().to_vec(),
            surrogates: false,
        }
    }
}

impl From<String> for PyStr {
    fn from(s: String) -> PyStr {
        PyStr {
            bytes: s.into_bytes(),
            surrogates: false,
        }
    }
}

impl FromIterator<u32> for PyStr {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> PyStr {
        let mut s = PyStr::new();
        for cp in iter {
            s.push_code_point(cp);
        }
        s
    }
}

impl PartialEq<str> for PyStr {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for PyStr {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl fmt::Debug for PyStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl fmt::Display for PyStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

/// Iterator over the code points of a [`PyStr`].
pub struct CodePoints<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let b = self.bytes;
        let i = self.pos;
        let first = *b.get(i)?;
        let (len, init) = match first {
            0x00..=0x7F => (1, first as u32),
            0xC0..=0xDF => (2, (first & 0x1F) as u32),
            0xE0..=0xEF => (3, (first & 0x0F) as u32),
            _ => (4, (first & 0x07) as u32),
        };
        let mut cp = init;
        for k in 1..len {
            cp = (cp << 6) | (b.get(i + k).copied().unwrap_or(0x80) & 0x3F) as u32;
        }
        self.pos = i + len;
        Some(cp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surrogates_round_trip_as_code_points() {
        let s: PyStr = [0x61, 0xD83D, 0xDE00, 0x4E2D].into_iter().collect();
        assert!(s.has_surrogates());
        assert_eq!(
            s.code_points().collect::<Vec<_>>(),
            vec![0x61, 0xD83D, 0xDE00, 0x4E2D]
        );
        assert_eq!(s.char_len(), 4);
        assert_eq!(s.as_str(), None);
        assert_eq!(s.to_string_lossy(), "a\u{FFFD}\u{FFFD}中");
    }

    #[test]
    fn plain_text_is_utf8() {
        let s = PyStr::from("héllo");
        assert_eq!(s.as_str(), Some("héllo"));
        assert_eq!(s.char_len(), 5);
        assert!(s == "héllo");
    }
}
