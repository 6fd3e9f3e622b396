//! OpenTelemetry spans exported as OTLP JSON → traces. A document (or
//! each line of a file exporter's JSONL) is an `ExportTraceServiceRequest`:
//! `resourceSpans[].scopeSpans[].spans[]`, attributes as `{key, value:
//! AnyValue}` lists. Spans are grouped by `traceId`, and the attempts of a
//! trace are its LLM spans in the order of the span tree (depth first,
//! siblings by start time). Three attribute conventions are read:
//!
//! - GenAI semantic conventions: `gen_ai.operation.name` `chat` (or
//!   `text_completion`, `generate_content`), `gen_ai.output.messages` and
//!   `gen_ai.input.messages` (JSON; parts `text`, `tool_call`,
//!   `tool_call_response`), `gen_ai.response.finish_reasons`,
//!   `gen_ai.system_instructions`; `execute_tool` spans with
//!   `gen_ai.tool.call.id` and `gen_ai.tool.call.result`;
//! - their older flattened form: `gen_ai.completion.N.*`, `gen_ai.prompt.N.*`;
//! - OpenInference: `openinference.span.kind` `LLM`,
//!   `llm.output_messages.N.message.*`, `llm.input_messages.N.message.*`,
//!   `TOOL` spans with `output.value`.
//!
//! A call's result is the tool message that answers its id in a later
//! span's input, or the execute-tool span with its id, or else the next
//! tool span after its LLM span.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Map, Value as Json};

use super::calls::chat_call;
use super::chat::{self, ChatError, SessionTarget};
use crate::model::{Origin, Trace};

/// Why spans could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OtelError {
    #[error("\"resourceSpans\" is not a list")]
    NotAList,
    #[error("trace {trace}: {source}")]
    Chat { trace: String, source: ChatError },
}

/// One span, as much of it as the conversion needs: what it says is
/// taken out of its attributes when it is read (a chat span's input holds
/// the whole conversation so far, which is not kept).
struct Span {
    trace: String,
    id: String,
    parent: String,
    start: u128,
    role: SpanRole,
    line: u64,
}

enum SpanRole {
    Llm(Box<LlmSpan>),
    Tool {
        call_id: Option<String>,
        output: Option<String>,
    },
    Other,
}

/// What an LLM span tells: its reply, the results and system prompt its
/// input shows, its model.
struct LlmSpan {
    /// The reply as a chat assistant message; `None` when not recorded.
    assistant: Option<Json>,
    /// (call id, result) of the tool messages in its input.
    results: Vec<(String, String)>,
    system: Option<String>,
    model: Option<String>,
}

/// Reads what the conversion needs out of a span's attributes.
fn role_of(attrs: &Map<String, Json>) -> SpanRole {
    if is_llm(attrs) {
        let (input_system, results) = input_facts(attrs);
        let system = system_instructions(attrs).or(input_system);
        let model = text_attr(attrs, "gen_ai.response.model")
            .or_else(|| text_attr(attrs, "gen_ai.request.model"))
            .or_else(|| text_attr(attrs, "llm.model_name"))
            .map(str::to_string);
        SpanRole::Llm(Box::new(LlmSpan {
            assistant: output_message(attrs),
            results,
            system,
            model,
        }))
    } else if is_tool(attrs) {
        SpanRole::Tool {
            call_id: text_attr(attrs, "gen_ai.tool.call.id").map(str::to_string),
            output: tool_output(attrs),
        }
    } else {
        SpanRole::Other
    }
}

/// Every trace in the documents (one per line of a JSONL export), in order
/// of first appearance. The documents are taken apart, not copied.
pub fn from_documents(docs: Vec<(u64, Json)>, file: &Arc<str>) -> Result<Vec<Trace>, OtelError> {
    let mut spans = SpanReader::default();
    for (line, doc) in docs {
        spans.push(line, doc)?;
    }
    spans.finish(file)
}

/// Export requests read one by one: their spans are kept, the rest of
/// each document dropped as soon as it is read.
#[derive(Default)]
pub struct SpanReader {
    spans: Vec<Span>,
}

impl SpanReader {
    /// Takes one export request (its line number, parsed JSON).
    pub fn push(&mut self, line: u64, doc: Json) -> Result<(), OtelError> {
        collect_spans(doc, line, &mut self.spans)
    }

    /// Takes one export request as its text; `false` when the text is not
    /// one (the caller then looks at it as JSON). Only spans' ids, start
    /// times and attributes are decoded.
    pub fn push_text(&mut self, line: u64, text: &str) -> bool {
        let Ok(request) = serde_json::from_str::<ExportRequest>(text) else {
            return false;
        };
        for scope in request
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans)
        {
            for s in scope.spans {
                self.spans.push(Span {
                    trace: id_text(s.trace),
                    id: id_text(s.id),
                    parent: id_text(s.parent),
                    start: id_text(s.start).parse().unwrap_or(0),
                    role: role_of(
                        &s.attributes
                            .into_iter()
                            .map(|kv| (kv.key, kv.value.into_json()))
                            .collect(),
                    ),
                    line,
                });
            }
        }
        true
    }

    /// Every trace read, in order of first appearance.
    pub fn finish(self, file: &Arc<str>) -> Result<Vec<Trace>, OtelError> {
        group_traces(self.spans, file)
    }
}

fn group_traces(spans: Vec<Span>, file: &Arc<str>) -> Result<Vec<Trace>, OtelError> {
    let mut order: Vec<String> = Vec::new();
    let mut by_trace: HashMap<String, Vec<Span>> = HashMap::new();
    for s in spans {
        match by_trace.get_mut(&s.trace) {
            Some(list) => list.push(s),
            None => {
                order.push(s.trace.clone());
                by_trace.insert(s.trace.clone(), vec![s]);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|id| by_trace.remove(&id).map(|spans| (id, spans)))
        .filter_map(|(id, spans)| trace_of(&id, spans, file).transpose())
        .collect()
}

/// Takes `key` (or its snake-case spelling) out of an object.
fn take(obj: &mut Map<String, Json>, keys: &[&str]) -> Json {
    keys.iter()
        .find_map(|k| obj.remove(*k))
        .unwrap_or(Json::Null)
}

fn collect_spans(doc: Json, line: u64, out: &mut Vec<Span>) -> Result<(), OtelError> {
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
                out.push(Span {
                    trace,
                    id,
                    parent,
                    start,
                    role: role_of(&attributes(take(&mut s, &["attributes"]))),
                    line,
                });
            }
        }
    }
    Ok(())
}

/// The parts of an OTLP/JSON `ExportTraceServiceRequest` that are read.
#[derive(Deserialize)]
struct ExportRequest {
    #[serde(rename = "resourceSpans", alias = "resource_spans")]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Deserialize)]
struct ResourceSpans {
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans",
        default
    )]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    spans: Vec<RawSpan>,
}

#[derive(Deserialize)]
struct RawSpan {
    #[serde(rename = "traceId", alias = "trace_id", default)]
    trace: Json,
    #[serde(rename = "spanId", alias = "span_id", default)]
    id: Json,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", default)]
    parent: Json,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano", default)]
    start: Json,
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

/// One attribute; its value is an OTLP `AnyValue`, whose string form
/// (most attributes) is decoded without a map.
#[derive(Deserialize)]
struct KeyValue {
    key: String,
    #[serde(default)]
    value: AnyValue,
}

#[derive(Deserialize, Default)]
struct AnyValue {
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
fn id_text(v: Json) -> String {
    match v {
        Json::String(s) => s,
        Json::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

fn into_array(v: Json) -> Vec<Json> {
    match v {
        Json::Array(items) => items,
        _ => Vec::new(),
    }
}

/// OTLP attributes (`[{key, value: AnyValue}]`, or a plain object) as a map
/// of plain JSON values.
fn attributes(attrs: Json) -> Map<String, Json> {
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
fn any_value(v: Json) -> Json {
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

fn text_attr<'a>(attrs: &'a Map<String, Json>, key: &str) -> Option<&'a str> {
    attrs.get(key).and_then(Json::as_str)
}

fn is_llm(attrs: &Map<String, Json>) -> bool {
    matches!(
        text_attr(attrs, "gen_ai.operation.name"),
        Some("chat" | "text_completion" | "generate_content")
    ) || text_attr(attrs, "openinference.span.kind") == Some("LLM")
}

fn is_tool(attrs: &Map<String, Json>) -> bool {
    text_attr(attrs, "gen_ai.operation.name") == Some("execute_tool")
        || text_attr(attrs, "openinference.span.kind") == Some("TOOL")
}

/// The spans of one trace in tree order: depth first from the roots,
/// siblings by start time.
fn tree_order(spans: &[Span]) -> Vec<usize> {
    let ids: HashSet<&str> = spans.iter().map(|s| s.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        if s.parent.is_empty() || !ids.contains(s.parent.as_str()) || s.parent == s.id {
            roots.push(i);
        } else {
            children.entry(s.parent.as_str()).or_default().push(i);
        }
    }
    let by_start = |v: &mut Vec<usize>| v.sort_by_key(|&i| (spans[i].start, i));
    by_start(&mut roots);
    children.values_mut().for_each(by_start);
    let mut order = Vec::with_capacity(spans.len());
    let mut seen = vec![false; spans.len()];
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push(i);
        if let Some(kids) = children.get(spans[i].id.as_str()) {
            stack.extend(kids.iter().rev());
        }
    }
    order
}

/// One trace's attempts; `None` when it holds no LLM span.
fn trace_of(id: &str, spans: Vec<Span>, file: &Arc<str>) -> Result<Option<Trace>, OtelError> {
    let order = tree_order(&spans);
    let mut spans: Vec<Option<Span>> = spans.into_iter().map(Some).collect();
    let mut results: HashMap<String, String> = HashMap::new();
    let mut system = None;
    for span in spans.iter_mut().flatten() {
        match &mut span.role {
            SpanRole::Llm(llm) => {
                for (call, text) in std::mem::take(&mut llm.results) {
                    results.entry(call).or_insert(text);
                }
                if system.is_none() {
                    system = llm.system.take();
                }
            }
            SpanRole::Tool {
                call_id: Some(call),
                output: Some(text),
            } => {
                results.entry(call.clone()).or_insert_with(|| text.clone());
            }
            _ => {}
        }
    }
    let mut messages: Vec<Json> = Vec::new();
    if let Some(s) = system {
        messages.push(json!({"role": "system", "content": s}));
    }
    let mut model = None;
    let mut first_line = None;
    let mut pending: Vec<bool> = Vec::new();
    for i in order {
        let Some(span) = spans[i].take() else {
            continue;
        };
        match span.role {
            SpanRole::Tool { output, .. } => {
                // An unanswered call takes the next tool span's output.
                if let (Some(slot), Some(text)) = (pending.iter().position(|done| !done), output) {
                    messages.push(json!({"role": "tool", "content": text}));
                    pending[slot] = true;
                }
            }
            SpanRole::Llm(llm) => {
                let LlmSpan {
                    assistant,
                    model: m,
                    ..
                } = *llm;
                let Some(assistant) = assistant else {
                    continue;
                };
                first_line.get_or_insert(span.line);
                model = model.or(m);
                pending.clear();
                let ids: Vec<Option<String>> = assistant
                    .get("tool_calls")
                    .and_then(Json::as_array)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .map(|c| c.get("id").and_then(Json::as_str).map(str::to_string))
                    .collect();
                messages.push(assistant);
                for call_id in ids {
                    match call_id.as_ref().and_then(|c| results.get(c)) {
                        Some(text) => {
                            messages.push(
                                json!({"role": "tool", "tool_call_id": call_id, "content": text}),
                            );
                            pending.push(true);
                        }
                        None => pending.push(false),
                    }
                }
            }
            SpanRole::Other => {}
        }
    }
    let Some(line) = first_line else {
        return Ok(None);
    };
    let origin = Origin {
        file: file.clone(),
        line,
    };
    let mut attempts = chat::convert_messages(
        &messages,
        SessionTarget {
            trace_id: id,
            session: "main",
            agent: "main",
            origin: &origin,
            system_prompt: None,
        },
    )
    .map_err(|source| OtelError::Chat {
        trace: id.to_string(),
        source,
    })?;
    for a in &mut attempts {
        a.native_tools = true;
    }
    if let (Some(first), Some(model)) = (attempts.first_mut(), model) {
        first.set_meta(json!({ "model": model }));
    }
    Ok(Some(Trace::new(id, attempts)))
}

/// A JSON attribute that may be recorded as its text.
fn json_attr(attrs: &Map<String, Json>, key: &str) -> Option<Json> {
    match attrs.get(key)? {
        Json::String(s) => serde_json::from_str(s).ok(),
        other => Some(other.clone()),
    }
}

fn system_instructions(attrs: &Map<String, Json>) -> Option<String> {
    let parts = json_attr(attrs, "gen_ai.system_instructions")?;
    Some(parts_text(parts.as_array()?))
}

/// A GenAI message's text: its `text` parts, or a plain `content` string
/// (some exporters write the chat form).
fn message_text(m: &Json) -> String {
    match m.get("parts").and_then(Json::as_array) {
        Some(parts) => parts_text(parts),
        None => m
            .get("content")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

/// The text of GenAI message parts (`{"type": "text", "content"}`).
fn parts_text(parts: &[Json]) -> String {
    parts
        .iter()
        .filter(|p| p.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|p| p.get("content").and_then(Json::as_str))
        .collect()
}

/// What a span's input shows: its system prompt, and the results of the
/// calls it answers (call id, text), from whichever convention it uses.
/// The rest of the input (the conversation so far) is not kept.
fn input_facts(attrs: &Map<String, Json>) -> (Option<String>, Vec<(String, String)>) {
    let mut system = None;
    let mut results = Vec::new();
    if let Some(text) = text_attr(attrs, "gen_ai.input.messages") {
        if let Ok(msgs) = serde_json::from_str::<Vec<InputMessage>>(text) {
            for m in msgs {
                if m.role == "system" && system.is_none() {
                    system = Some(match (&m.parts, &m.content) {
                        (Some(parts), _) => parts
                            .iter()
                            .filter(|p| p.kind == "text")
                            .filter_map(|p| p.content.as_ref().and_then(Json::as_str))
                            .collect(),
                        (None, Some(Json::String(s))) => s.clone(),
                        _ => String::new(),
                    });
                }
                for p in m.parts.into_iter().flatten() {
                    if p.kind == "tool_call_response" {
                        let text = match p.response {
                            Some(Json::String(s)) => s,
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        results.push((id_text(p.id.unwrap_or(Json::Null)), text));
                    }
                }
            }
            return (system, results);
        }
    }
    for field in [
        &(|n: usize, f: &str| format!("gen_ai.prompt.{n}.{f}")) as &dyn Fn(usize, &str) -> String,
        &|n, f| format!("llm.input_messages.{n}.message.{f}"),
    ] {
        let mut n = 0;
        while let Some(role) = text_attr(attrs, &field(n, "role")) {
            let content = || text_attr(attrs, &field(n, "content")).unwrap_or("");
            if role == "system" && system.is_none() {
                system = Some(content().to_string());
            }
            if let Some(call) = text_attr(attrs, &field(n, "tool_call_id")) {
                results.push((call.to_string(), content().to_string()));
            }
            n += 1;
        }
        if n > 0 {
            break;
        }
    }
    (system, results)
}

/// A GenAI input message, as far as [`input_facts`] reads it.
#[derive(Deserialize)]
struct InputMessage {
    #[serde(default)]
    role: String,
    #[serde(default)]
    parts: Option<Vec<InputPart>>,
    #[serde(default)]
    content: Option<Json>,
}

#[derive(Deserialize)]
struct InputPart {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    id: Option<Json>,
    #[serde(default)]
    content: Option<Json>,
    #[serde(default)]
    response: Option<Json>,
}

/// The span's response as a chat assistant message (text, tool calls,
/// finish reason); `None` when the span recorded no output.
fn output_message(attrs: &Map<String, Json>) -> Option<Json> {
    let finish = attrs
        .get("gen_ai.response.finish_reasons")
        .and_then(|f| f.get(0).or(Some(f)))
        .and_then(Json::as_str)
        .map(str::to_string);
    if let Some(Json::Array(msgs)) = json_attr(attrs, "gen_ai.output.messages") {
        let m = msgs.first()?;
        let parts = m
            .get("parts")
            .and_then(Json::as_array)
            .map_or(&[][..], Vec::as_slice);
        let calls: Vec<Json> = parts
            .iter()
            .filter(|p| p.get("type").and_then(Json::as_str) == Some("tool_call"))
            .map(|p| {
                let name = p.get("name").and_then(Json::as_str).unwrap_or("");
                chat_call(p.get("id"), name, p.get("arguments").unwrap_or(&Json::Null))
            })
            .collect();
        let finish = m
            .get("finish_reason")
            .and_then(Json::as_str)
            .map(str::to_string)
            .or(finish);
        return Some(assistant(message_text(m), calls, finish));
    }
    for (prefix, call) in [
        (
            "gen_ai.completion.0.",
            "gen_ai.completion.0.tool_calls.{n}.",
        ),
        (
            "llm.output_messages.0.message.",
            "llm.output_messages.0.message.tool_calls.{n}.tool_call.",
        ),
    ] {
        let key = |f: &str| format!("{prefix}{f}");
        if !attrs.contains_key(&key("role")) && !attrs.contains_key(&key("content")) {
            continue;
        }
        let calls: Vec<Json> = (0..)
            .map_while(|n| {
                let base = call.replace("{n}", &n.to_string());
                let (name, args) = if prefix.starts_with("llm.") {
                    (
                        format!("{base}function.name"),
                        format!("{base}function.arguments"),
                    )
                } else {
                    (format!("{base}name"), format!("{base}arguments"))
                };
                let name = text_attr(attrs, &name)?;
                let id = attrs.get(&format!("{base}id"));
                Some(chat_call(id, name, attrs.get(&args).unwrap_or(&Json::Null)))
            })
            .collect();
        let text = text_attr(attrs, &key("content")).unwrap_or("").to_string();
        let finish = text_attr(attrs, &key("finish_reason"))
            .map(str::to_string)
            .or(finish);
        return Some(assistant(text, calls, finish));
    }
    None
}

fn assistant(text: String, calls: Vec<Json>, finish: Option<String>) -> Json {
    let mut m = json!({"role": "assistant", "content": text, "finish_reason": finish});
    if !calls.is_empty() {
        m["tool_calls"] = Json::Array(calls);
    }
    m
}

/// A tool span's output: GenAI's `gen_ai.tool.call.result`, OpenInference's `output.value`.
fn tool_output(attrs: &Map<String, Json>) -> Option<String> {
    match attrs
        .get("gen_ai.tool.call.result")
        .or_else(|| attrs.get("output.value"))?
    {
        Json::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, value: &str) -> Json {
        json!({"key": key, "value": {"stringValue": value}})
    }

    #[test]
    fn llm_spans_in_tree_order_with_tool_results() {
        let out1 = r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_call"}]"#;
        let in2 = r#"[{"role":"user","parts":[{"type":"text","content":"weather?"}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"rainy"}]}]"#;
        let out2 = r#"[{"role":"assistant","parts":[{"type":"text","content":"It is rainy."}],"finish_reason":"stop"}]"#;
        let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": "c2", "parentSpanId": "root", "startTimeUnixNano": "30",
             "attributes": [kv("gen_ai.operation.name", "chat"), kv("gen_ai.input.messages", in2), kv("gen_ai.output.messages", out2)]},
            {"traceId": "t", "spanId": "root", "startTimeUnixNano": "1", "attributes": [kv("gen_ai.operation.name", "invoke_agent")]},
            {"traceId": "t", "spanId": "c1", "parentSpanId": "root", "startTimeUnixNano": "10",
             "attributes": [kv("gen_ai.operation.name", "chat"), kv("gen_ai.request.model", "gpt-4"), kv("gen_ai.output.messages", out1)]}
        ]}]}]});
        let traces = from_documents(vec![(1, doc)], &"spans.json".into()).unwrap();
        assert_eq!(traces.len(), 1);
        let a = &traces[0].attempts;
        assert_eq!(a.len(), 2);
        assert_eq!(
            a[0].tool_calls.as_ref().unwrap()[0]["function"]["name"],
            "get_weather"
        );
        assert_eq!(a[0].tool_results[0].result, "rainy");
        assert_eq!(a[1].content, "It is rainy.");
        assert_eq!(a[0].model.as_deref(), Some("gpt-4"));
    }

    #[test]
    fn openinference_flattened_attributes() {
        let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": "a", "attributes": [
                kv("openinference.span.kind", "LLM"),
                kv("llm.output_messages.0.message.role", "assistant"),
                kv("llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "search"),
                kv("llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments", "{\"q\": \"x\"}")]},
            {"traceId": "t", "spanId": "b", "parentSpanId": "a", "startTimeUnixNano": "5", "attributes": [
                kv("openinference.span.kind", "TOOL"), kv("output.value", "found")]}
        ]}]}]});
        let t = &from_documents(vec![(1, doc)], &"s.json".into()).unwrap()[0];
        assert_eq!(t.attempts.len(), 1);
        assert_eq!(
            t.attempts[0].tool_calls.as_ref().unwrap()[0]["function"]["arguments"],
            "{\"q\": \"x\"}"
        );
        assert_eq!(t.attempts[0].tool_results[0].result, "found");
    }
}
