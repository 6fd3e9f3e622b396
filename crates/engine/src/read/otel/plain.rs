//! OpenTelemetry spans as plain JSON: the shape the Python SDK's
//! `ReadableSpan.to_json()` prints (its console exporter) and that
//! frameworks such as mozilla-ai's any-agent save (`{"spans": [...]}`), a
//! bare list of such spans, or one span a line. Each span has `name`,
//! `context: {trace_id, span_id}`, a `parent` (a context, or `parent_id`
//! in the console exporter's form), `start_time`/`end_time` (nanoseconds,
//! or ISO 8601 text) and flat `attributes`, not OTLP's `{key, value}` lists.

use crate::read::clock::days_from_civil;
use serde_json::{Map, Value as Json};

use super::conventions::{role_of, status_is_error};
use super::otlp::take;
use super::{OtelError, Span};

/// Whether an object is one plain-JSON span: a `context` with a `span_id`
/// beside the span's `name`.
pub fn is_span(obj: &Map<String, Json>) -> bool {
    obj.get("context")
        .is_some_and(|c| c.get("span_id").is_some() && c.get("trace_id").is_some())
        && obj.contains_key("name")
}

/// Whether an object holds plain-JSON spans under `spans`.
pub fn is_span_list(obj: &Map<String, Json>) -> bool {
    obj.get("spans")
        .and_then(Json::as_array)
        .and_then(|s| s.first())
        .and_then(Json::as_object)
        .is_some_and(is_span)
}

/// Whether a document is in this shape (not OTLP's `resourceSpans`).
pub fn is_plain(doc: &Json) -> bool {
    match doc {
        Json::Array(items) => items.first().and_then(Json::as_object).is_some_and(is_span),
        Json::Object(obj) => is_span(obj) || is_span_list(obj),
        _ => false,
    }
}

/// Takes the spans of a plain-JSON document.
pub(super) fn collect(doc: Json, line: u64, out: &mut Vec<Span>) -> Result<(), OtelError> {
    let spans = match doc {
        Json::Array(items) => items,
        Json::Object(obj) if is_span(&obj) => vec![Json::Object(obj)],
        Json::Object(mut obj) => match take(&mut obj, &["spans"]) {
            Json::Array(items) => items,
            _ => return Err(OtelError::NotAList),
        },
        _ => return Err(OtelError::NotAList),
    };
    for s in spans {
        let Json::Object(mut s) = s else { continue };
        let context = take(&mut s, &["context"]);
        let parent = match take(&mut s, &["parent"]) {
            Json::Null => take(&mut s, &["parent_id"]),
            p => p.get("span_id").cloned().unwrap_or(Json::Null),
        };
        let attributes = match take(&mut s, &["attributes"]) {
            Json::Object(a) => a,
            _ => Map::new(),
        };
        out.push(Span {
            trace: id_text(context.get("trace_id")),
            id: id_text(context.get("span_id")),
            parent: id_text(Some(&parent)),
            start: time_ns(s.get("start_time")),
            end: time_ns(s.get("end_time")),
            role: role_of(&attributes).failed(status_is_error(s.get("status"))),
            line,
        });
    }
    Ok(())
}

/// An id as text: a number (as the SDK's `to_json` of any-agent writes
/// it) or a hex string (`0x…`, the console exporter's), lowercased.
fn id_text(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.trim_start_matches("0x").to_ascii_lowercase(),
        Some(Json::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// A time in nanoseconds since the epoch: a number, or ISO 8601 UTC text
/// (`2025-01-01T12:00:00.123456Z`); 0 when it is neither.
pub(super) fn time_ns(v: Option<&Json>) -> u128 {
    match v {
        Some(Json::Number(n)) => n
            .as_u64()
            .map(u128::from)
            .or_else(|| n.as_f64().filter(|x| *x >= 0.0).map(|x| x as u128))
            .unwrap_or(0),
        Some(Json::String(s)) => s.parse::<u128>().ok().or_else(|| iso_ns(s)).unwrap_or(0),
        _ => 0,
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction][Z|+00:00]` in nanoseconds since the
/// epoch; other offsets are not the exporters' and are not guessed.
fn iso_ns(s: &str) -> Option<u128> {
    let s = s
        .strip_suffix('Z')
        .or_else(|| s.strip_suffix("+00:00"))
        .unwrap_or(s);
    let (date, time) = s.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut c = clock.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, min, sec) = (c.next()??, c.next()??, c.next()??);
    if !fraction.bytes().all(|b| b.is_ascii_digit())
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
    {
        return None;
    }
    let nanos: i64 = format!("{fraction:0<9}").get(..9)?.parse().ok()?;
    let days = days_from_civil(y, m, day);
    let secs = days * 86_400 + h * 3600 + min * 60 + sec;
    u128::try_from(secs)
        .ok()
        .map(|s| s * 1_000_000_000 + nanos as u128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_as_numbers_or_text() {
        assert_eq!(
            time_ns(Some(&json!(1_700_000_000_000_000_000u64))),
            1_700_000_000_000_000_000
        );
        assert_eq!(
            time_ns(Some(&json!("1970-01-02T00:00:01.5Z"))),
            86_401_500_000_000
        );
        assert_eq!(
            time_ns(Some(&json!("2025-05-21T11:17:58.530027Z"))),
            1_747_826_278_530_027_000
        );
        assert_eq!(time_ns(Some(&json!("yesterday"))), 0);
        assert_eq!(time_ns(Some(&json!("2025-13-01T00:00:00Z"))), 0);
    }
}
