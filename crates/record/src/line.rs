//! One line of a recording (docs/record.md, "The recording"): a JSON
//! object per call, `\n`-terminated, with the format's mark
//! `"mirotrace_recording": 1` on every line.
//!
//! Bodies are stored decoded (gzip and deflate undone) as the JSON value
//! when they are JSON (`body`, compacted without reordering keys or
//! rewriting numbers), as text when they are UTF-8 (`body_text`, verbatim:
//! an SSE stream), else as base64 (`body_base64`); a body over
//! `--max-body` is counted but not stored (`omitted`).

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;

/// The format's version, the value of `mirotrace_recording`.
pub const VERSION: u32 = 1;

/// Headers as recorded: lower-case names in the order they came, a
/// repeated header as an array of its values.
#[derive(Debug, Default, Clone)]
pub struct Headers(pub Vec<(String, Vec<String>)>);

impl Serialize for Headers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, values) in &self.0 {
            match values.as_slice() {
                [one] => map.serialize_entry(name, one)?,
                many => map.serialize_entry(name, many)?,
            }
        }
        map.end()
    }
}

/// A body as stored.
#[derive(Debug)]
pub enum Body {
    /// No body (`bytes: 0`).
    None,
    /// Valid JSON, compacted.
    Json(Box<RawValue>),
    /// Valid UTF-8 that is not JSON, verbatim.
    Text(String),
    /// Anything else.
    Base64(String),
    /// Over `--max-body`: why it is not stored.
    Omitted(String),
}

/// The field the body is stored under (none when there is no body):
/// flattened into its `request` or `response`.
impl Serialize for Body {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self {
            Body::None => {}
            Body::Json(v) => map.serialize_entry("body", v)?,
            Body::Text(t) => map.serialize_entry("body_text", t)?,
            Body::Base64(b) => map.serialize_entry("body_base64", b)?,
            Body::Omitted(why) => map.serialize_entry("omitted", why)?,
        }
        map.end()
    }
}

/// What a call's captured body was: a copy of the bytes kept (up to the
/// cap), how many bytes passed, whether they went over the cap.
///
/// The copy is kept in pages that double from 16 KiB up to 1 MiB and are
/// never moved: a body costs its size plus at most one page, with no
/// reallocation's double copy, and holds none of the stream's own
/// buffers alive.
#[derive(Debug, Default)]
pub struct Captured {
    pages: Vec<Vec<u8>>,
    kept_len: usize,
    pub bytes: u64,
    pub over: bool,
}

const FIRST_PAGE: usize = 16 << 10;
const LAST_PAGE: usize = 1 << 20;

impl Captured {
    /// Adds bytes that passed, keeping a copy while the total fits `max`.
    pub fn push(&mut self, data: &[u8], max: usize) {
        self.bytes += data.len() as u64;
        if self.over {
            return;
        }
        if self.kept_len + data.len() > max {
            self.over = true;
            self.pages = Vec::new();
            self.kept_len = 0;
            return;
        }
        self.kept_len += data.len();
        let mut rest = data;
        while !rest.is_empty() {
            let full = self.pages.last().is_none_or(|p| p.len() == p.capacity());
            if full {
                let next = self
                    .pages
                    .last()
                    .map_or(FIRST_PAGE, |p| (p.capacity() * 2).min(LAST_PAGE));
                self.pages.push(Vec::with_capacity(next));
            }
            if let Some(page) = self.pages.last_mut() {
                let n = (page.capacity() - page.len()).min(rest.len());
                page.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
            }
        }
    }

    /// The body as stored: decoded per `content_encoding` (gzip, deflate;
    /// other codings stay as they came), then classified.
    pub fn into_body(self, content_encoding: Option<&str>, max: usize) -> Body {
        if self.over {
            return Body::Omitted(format!(
                "body of {} bytes is over --max-body ({max})",
                self.bytes
            ));
        }
        if self.bytes == 0 {
            return Body::None;
        }
        let mut whole = Vec::with_capacity(self.kept_len);
        for page in self.pages {
            whole.extend_from_slice(&page);
        }
        match decode(whole, content_encoding, max) {
            Ok(bytes) => classify(bytes),
            Err(decoded_over) => Body::Omitted(format!(
                "body of {} bytes decodes to more than --max-body ({max}): {decoded_over}",
                self.bytes
            )),
        }
    }
}

/// Undoes gzip and deflate (applied in the order listed, so undone in
/// reverse). A coding it cannot undo, or bytes that do not decode, leave
/// the body as it came. Err when the decoded body is over `max`.
fn decode(bytes: Vec<u8>, content_encoding: Option<&str>, max: usize) -> Result<Vec<u8>, String> {
    let Some(codings) = content_encoding else {
        return Ok(bytes);
    };
    let codings: Vec<String> = codings
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    let mut current = bytes;
    for coding in codings.iter().rev() {
        let decoded = match coding.as_str() {
            "gzip" | "x-gzip" => read_capped(flate2::read::MultiGzDecoder::new(&current[..]), max),
            // "deflate" is zlib-wrapped by the standard; some servers send
            // it raw.
            "deflate" => read_capped(flate2::read::ZlibDecoder::new(&current[..]), max).or_else(
                |e| match e {
                    Decoded::Over => Err(Decoded::Over),
                    Decoded::Bad => {
                        read_capped(flate2::read::DeflateDecoder::new(&current[..]), max)
                    }
                },
            ),
            _ => return Ok(current),
        };
        match decoded {
            Ok(d) => current = d,
            Err(Decoded::Over) => return Err(format!("{coding}-decoded")),
            Err(Decoded::Bad) => return Ok(current),
        }
    }
    Ok(current)
}

enum Decoded {
    Over,
    Bad,
}

fn read_capped(reader: impl Read, max: usize) -> Result<Vec<u8>, Decoded> {
    let mut out = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|_| Decoded::Bad)?;
    if out.len() > max {
        return Err(Decoded::Over);
    }
    Ok(out)
}

/// JSON → `body`, UTF-8 → `body_text`, else `body_base64`.
pub fn classify(bytes: Vec<u8>) -> Body {
    if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok() {
        if let Ok(Ok(raw)) = String::from_utf8(compact(&bytes)).map(RawValue::from_string) {
            return Body::Json(raw);
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) => Body::Text(text),
        Err(e) => Body::Base64(base64::engine::general_purpose::STANDARD.encode(e.as_bytes())),
    }
}

/// Valid JSON without the whitespace between tokens: keys keep their
/// order, numbers their spelling, strings their escapes.
fn compact(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            if b == b'"' {
                in_string = true;
            }
            out.push(b);
        }
    }
    out
}

/// Why a call ended without a complete exchange (`error.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Refused, DNS or TLS failure: the client got a 502.
    Connect,
    /// No response head within `--timeout`: the client got a 504.
    Timeout,
    /// The upstream broke the exchange (mid-body, or before its head), or
    /// stalled mid-body longer than `--timeout`.
    Upstream,
    /// The client hung up; what arrived until then is kept.
    ClientDisconnected,
    /// The client's body could not be read.
    RequestBody,
}

/// `error`: its kind and a message.
#[derive(Debug, Clone, Serialize)]
pub struct CallError {
    pub kind: ErrorKind,
    pub message: String,
}

/// `request`.
#[derive(Debug, Serialize)]
pub struct Request {
    pub method: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    pub headers: Headers,
    pub redacted: Vec<String>,
    pub bytes: u64,
    #[serde(flatten)]
    pub body: Body,
}

/// `response`.
#[derive(Debug, Serialize)]
pub struct Response {
    pub status: u16,
    pub headers: Headers,
    pub redacted: Vec<String>,
    pub bytes: u64,
    #[serde(flatten)]
    pub body: Body,
}

/// One call.
#[derive(Debug)]
pub struct Line {
    pub call: u64,
    pub started: SystemTime,
    pub seconds: f64,
    pub first_byte_seconds: Option<f64>,
    pub upstream: String,
    pub request: Request,
    pub response: Option<Response>,
    pub error: Option<CallError>,
}

impl Serialize for Line {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("mirotrace_recording", &VERSION)?;
        map.serialize_entry("call", &self.call)?;
        map.serialize_entry("started", &rfc3339(self.started))?;
        map.serialize_entry("seconds", &micros(self.seconds))?;
        if let Some(first) = self.first_byte_seconds {
            map.serialize_entry("first_byte_seconds", &micros(first))?;
        }
        map.serialize_entry("upstream", &self.upstream)?;
        map.serialize_entry("request", &self.request)?;
        if let Some(r) = &self.response {
            map.serialize_entry("response", r)?;
        }
        map.serialize_entry("error", &self.error)?;
        map.end()
    }
}

impl Line {
    /// The line's bytes, `\n` included.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serialising our own types into a Vec cannot fail (no map has a
        // non-string key, no float is infinite: `micros` sees to it).
        let mut out = serde_json::to_vec(self).unwrap_or_else(|e| {
            format!(
                "{{\"mirotrace_recording\":{VERSION},\"call\":{},\"error\":{{\"kind\":\"upstream\",\"message\":{:?}}}}}",
                self.call,
                format!("cannot write the call: {e}")
            )
            .into_bytes()
        });
        out.push(b'\n');
        out
    }
}

/// Seconds rounded to the microsecond (finite).
fn micros(seconds: f64) -> f64 {
    if seconds.is_finite() {
        (seconds * 1e6).round() / 1e6
    } else {
        0.0
    }
}

/// RFC 3339 in UTC with microseconds: `2026-12-03T17:00:00.123456Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_micros()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc_with_microseconds() {
        let t = UNIX_EPOCH + Duration::from_micros(1_796_317_200_123_456);
        assert_eq!(rfc3339(t), "2026-12-03T17:00:00.123456Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        // A leap day.
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000000Z");
    }

    #[test]
    fn json_is_compacted_without_reordering_or_renumbering() {
        let body = classify(b"{ \"b\" : 1.50 ,\n \"a\": [ \"x y\\\" \" ] }\n".to_vec());
        let Body::Json(raw) = body else {
            panic!("{body:?}")
        };
        assert_eq!(raw.get(), r#"{"b":1.50,"a":["x y\" "]}"#);
    }

    #[test]
    fn text_and_binary_bodies() {
        assert!(matches!(classify(b"data: {}\n\n".to_vec()), Body::Text(t) if t == "data: {}\n\n"));
        assert!(matches!(classify(vec![0xff, 0x00]), Body::Base64(b) if b == "/wA="));
    }

    #[test]
    fn gzip_and_deflate_are_decoded_for_the_record() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"{\"ok\": true}").unwrap();
        let mut c = Captured::default();
        c.push(&gz.finish().unwrap(), 1000);
        assert!(
            matches!(c.into_body(Some("gzip"), 1000), Body::Json(r) if r.get() == r#"{"ok":true}"#)
        );
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(b"hello").unwrap();
        let mut c = Captured::default();
        c.push(&z.finish().unwrap(), 1000);
        assert!(matches!(c.into_body(Some("deflate"), 1000), Body::Text(t) if t == "hello"));
        // Over the cap once decoded: omitted, not stored.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b'a'; 10_000]).unwrap();
        let mut c = Captured::default();
        c.push(&gz.finish().unwrap(), 1000);
        assert!(matches!(c.into_body(Some("gzip"), 1000), Body::Omitted(_)));
    }

    #[test]
    fn pages_keep_every_byte_in_order() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
        let mut c = Captured::default();
        for piece in data.chunks(7_777) {
            c.push(piece, 4 << 20);
        }
        assert!(c.pages.iter().all(|p| p.capacity() <= LAST_PAGE));
        let Body::Base64(b) = c.into_body(None, 4 << 20) else {
            panic!("not base64")
        };
        assert_eq!(
            base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
            data
        );
    }

    #[test]
    fn a_body_over_the_cap_is_counted_not_kept() {
        let mut c = Captured::default();
        c.push(b"12345", 8);
        c.push(b"6789", 8);
        assert!(c.over && c.pages.is_empty() && c.bytes == 9);
        c.push(b"0", 8);
        assert_eq!(c.bytes, 10);
        assert!(
            matches!(c.into_body(None, 8), Body::Omitted(m) if m == "body of 10 bytes is over --max-body (8)")
        );
    }
}
