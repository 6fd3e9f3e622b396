//! The OTLP/JSON encoding: export requests, spans and their attributes
//! (`{key, value: AnyValue}`), read by value or, on the fast path, into
//! typed structs that decode only what the conversion needs.

use serde::Deserialize;
use serde_json::{Map, Value as Json};

use super::conventions::{role_of, status_is_error};
use super::{OtelError, Span};

/// Takes `key` (or its snake-case spelling) out of an object.
pub(super) fn take(obj: &mut Map<String, Json>, keys: &[&str]) -> Json {
    keys.iter()
        .find_map(|k| obj.remove(*k))
        .unwrap_or(Json::Null)
}

pub(super) fn collect_spans(doc: Json, line: u64, out: &mut Vec<Span>) -> Result<(), OtelError> {
    if super::plain::is_plain(&doc) {
        return super::plain::collect(doc, line, out);
    }
    let Json::Object(mut doc) = doc else {
        return Err(OtelError::NotAList);
    };
    let Json::Array(resources) = take(&mut doc, &["resourceSpans", "resource_spans"]) else {
        return Err(OtelError::NotAList);
    };
    for r in resources {
        let Json::Object(mut r) = r else { continue };
        let scopes = take(
            &mut r,
            &["scopeSpans", "scope_spans", "instrumentationLibrarySpans"],
        );
        for scope in into_array(scopes) {
            let Json::Object(mut scope) = scope else {
                continue;
            };
            for s in into_array(take(&mut scope, &["spans"])) {
                let Json::Object(mut s) = s else { continue };
                let mut field = |keys: &[&str]| match take(&mut s, keys) {
                    Json::String(t) => t,
                    Json::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                let trace = field(&["traceId", "trace_id"]);
                let id = field(&["spanId", "span_id"]);
                let parent = field(&["parentSpanId", "parent_span_id"]);
                let start = field(&["startTimeUnixNano", "start_time_unix_nano"])
                    .parse()
                    .unwrap_or(0);
                let end = field(&["endTimeUnixNano", "end_time_unix_nano"])
                    .parse()
                    .unwrap_or(0);
                out.push(Span {
                    trace,
                    id,
                    parent,
                    start,
                    end,
                    role: role_of(&attributes(take(&mut s, &["attributes"])))
                        .failed(status_is_error(s.get("status"))),
                    line,
                });
            }
        }
    }
    Ok(())
}

/// The spans of one export request given as text, decoded into just what
/// the conversion reads; `false` when the text is not an export request.
pub(super) fn spans_of_text(text: &str, line: u64, out: &mut Vec<Span>) -> bool {
    // Plain-JSON spans (and anything else) are not decoded twice.
    if !text.contains("esourceSpans\"") && !text.contains("resource_spans\"") {
        return false;
    }
    let Ok(request) = serde_json::from_str::<ExportRequest>(text) else {
        return false;
    };
    // An integer id of more than 64 bits is a float to serde_json: such a
    // request is read whole, where its ids keep every digit.
    let inexact = |v: &Json| matches!(v, Json::Number(n) if n.is_f64());
    if request
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .any(|s| inexact(&s.trace) || inexact(&s.id) || inexact(&s.parent))
    {
        return false;
    }
    for scope in request
        .resource_spans
        .into_iter()
        .flat_map(|r| r.scope_spans)
    {
        for s in scope.spans {
            out.push(Span {
                trace: id_text(s.trace),
                id: id_text(s.id),
                parent: id_text(s.parent),
                start: id_text(s.start).parse().unwrap_or(0),
                end: id_text(s.end).parse().unwrap_or(0),
                role: role_of(
                    &s.attributes
                        .into_iter()
                        .map(|kv| (kv.key, kv.value.into_json()))
                        .collect(),
                )
                .failed(status_is_error(Some(&s.status))),
                line,
            });
        }
    }
    true
}

/// The parts of an OTLP/JSON `ExportTraceServiceRequest` that are read.
#[derive(Deserialize)]
pub(super) struct ExportRequest {
    #[serde(rename = "resourceSpans", alias = "resource_spans")]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Deserialize)]
pub(super) struct ResourceSpans {
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans",
        default
    )]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Deserialize)]
pub(super) struct ScopeSpans {
    #[serde(default)]
    spans: Vec<RawSpan>,
}

#[derive(Deserialize)]
pub(super) struct RawSpan {
    #[serde(rename = "traceId", alias = "trace_id", default)]
    trace: Json,
    #[serde(rename = "spanId", alias = "span_id", default)]
    id: Json,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", default)]
    parent: Json,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano", default)]
    start: Json,
    #[serde(rename = "endTimeUnixNano", alias = "end_time_unix_nano", default)]
    end: Json,
    #[serde(default)]
    attributes: Vec<KeyValue>,
    #[serde(default)]
    status: Json,
}

/// One attribute; its value is an OTLP `AnyValue`, whose string form
/// (most attributes) is decoded without a map.
#[derive(Deserialize)]
pub(super) struct KeyValue {
    key: String,
    #[serde(default)]
    value: AnyValue,
}

#[derive(Deserialize, Default)]
pub(super) struct AnyValue {
    #[serde(rename = "stringValue", default)]
    string: Option<String>,
    #[serde(rename = "intValue", default)]
    int: Option<Json>,
    #[serde(rename = "doubleValue", default)]
    double: Option<Json>,
    #[serde(rename = "boolValue", default)]
    boolean: Option<bool>,
    #[serde(rename = "arrayValue", default)]
    array: Option<Json>,
    #[serde(rename = "kvlistValue", default)]
    kvlist: Option<Json>,
}

impl AnyValue {
    fn into_json(self) -> Json {
        if let Some(s) = self.string {
            return Json::String(s);
        }
        let mut obj = Map::new();
        for (key, v) in [
            ("intValue", self.int),
            ("doubleValue", self.double),
            ("boolValue", self.boolean.map(Json::Bool)),
            ("arrayValue", self.array),
            ("kvlistValue", self.kvlist),
        ] {
            if let Some(v) = v {
                obj.insert(key.into(), v);
            }
        }
        any_value(Json::Object(obj))
    }
}

/// An id or time written as a string or a number.
pub(super) fn id_text(v: Json) -> String {
    match v {
        Json::String(s) => s,
        Json::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

pub(super) fn into_array(v: Json) -> Vec<Json> {
    match v {
        Json::Array(items) => items,
        _ => Vec::new(),
    }
}

/// OTLP attributes (`[{key, value: AnyValue}]`, or a plain object) as a map
/// of plain JSON values.
pub(super) fn attributes(attrs: Json) -> Map<String, Json> {
    match attrs {
        Json::Array(kvs) => kvs
            .into_iter()
            .filter_map(|kv| {
                let Json::Object(mut kv) = kv else {
                    return None;
                };
                let Json::String(key) = kv.remove("key")? else {
                    return None;
                };
                Some((key, any_value(kv.remove("value")?)))
            })
            .collect(),
        Json::Object(plain) => plain,
        _ => Map::new(),
    }
}

/// An OTLP `AnyValue` as plain JSON.
pub(super) fn any_value(v: Json) -> Json {
    let Json::Object(mut obj) = v else {
        return v;
    };
    if let Some(s) = obj.remove("stringValue") {
        return s;
    }
    if let Some(i) = obj.remove("intValue") {
        return match i {
            Json::String(s) => s.parse::<i64>().map_or(Json::String(s), Json::from),
            other => other,
        };
    }
    if let Some(x) = obj
        .remove("doubleValue")
        .or_else(|| obj.remove("boolValue"))
    {
        return x;
    }
    if let Some(Json::Object(mut a)) = obj.remove("arrayValue") {
        return Json::Array(
            into_array(take(&mut a, &["values"]))
                .into_iter()
                .map(any_value)
                .collect(),
        );
    }
    if let Some(Json::Object(mut kvs)) = obj.remove("kvlistValue") {
        return Json::Object(attributes(take(&mut kvs, &["values"])));
    }
    Json::Object(obj)
}
