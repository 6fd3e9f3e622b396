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

use serde_json::{json, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use crate::model::{Origin, Trace};

mod conventions;
mod otlp;
pub mod plain;

use otlp::collect_spans;

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
    /// `endTimeUnixNano`; 0 when not recorded.
    end: u128,
    role: SpanRole,
    line: u64,
}

enum SpanRole {
    Llm(Box<LlmSpan>),
    Tool {
        call_id: Option<String>,
        output: Option<String>,
        /// The span's status is an error: the call failed.
        failed: bool,
    },
    Other,
}

impl SpanRole {
    /// A tool span whose status is an error is a failed call.
    fn failed(mut self, error: bool) -> SpanRole {
        if let SpanRole::Tool { failed, .. } = &mut self {
            *failed = error;
        }
        self
    }
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

/// Every trace in the documents (one per line of a JSONL export), in order
/// of first appearance. The documents are taken apart, not copied.
/// With the traces come notes: spans whose parent is not in the input are
/// read as roots (a partial export: no note), and spans whose parent chain
/// is cyclic (no root reaches them) after the rest in time order, noted.
pub fn from_documents(docs: Vec<(u64, Json)>, file: &Arc<str>) -> Result<Spanned, OtelError> {
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
        otlp::spans_of_text(text, line, &mut self.spans)
    }

    /// Every trace read, in order of first appearance, and notes.
    pub fn finish(self, file: &Arc<str>) -> Result<Spanned, OtelError> {
        group_traces(self.spans, file)
    }
}

/// The traces of some spans, and notes on how they were put together.
pub type Spanned = (Vec<Trace>, Vec<String>);

fn group_traces(spans: Vec<Span>, file: &Arc<str>) -> Result<Spanned, OtelError> {
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
    let mut traces = Vec::new();
    let mut notes = Vec::new();
    for id in order {
        let Some(spans) = by_trace.remove(&id) else {
            continue;
        };
        let (trace, Outside { cyclic }) = trace_of(&id, spans, file)?;
        if cyclic > 0 {
            notes.push(format!(
                "OpenTelemetry trace {id:?}: {cyclic} span(s) whose parent chain is cyclic, read after the rest in time order"
            ));
        }
        traces.extend(trace);
    }
    Ok((traces, notes))
}
/// The spans of one trace in tree order: depth first from the roots,
/// siblings by start time (a span whose parent is missing is a root); then
/// the spans no root reaches (their parent chain is a cycle), by start
/// time, and how many spans were outside the tree.
fn tree_order(spans: &[Span]) -> (Vec<usize>, Outside) {
    let ids: HashSet<&str> = spans.iter().map(|s| s.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        let missing = !s.parent.is_empty() && !ids.contains(s.parent.as_str());
        if s.parent.is_empty() || missing || s.parent == s.id {
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
    let mut unreached: Vec<usize> = (0..spans.len()).filter(|&i| !seen[i]).collect();
    by_start(&mut unreached);
    let cyclic = unreached.len();
    order.extend(unreached);
    (order, Outside { cyclic })
}

/// Spans of one trace that the parent links do not place in a tree.
#[derive(Debug, Default, Clone, Copy)]
struct Outside {
    /// No root reaches them: their parent chain is a cycle.
    cyclic: usize,
}

/// One trace's attempts (`None` when it holds no LLM span), and how many
/// of its spans were out of the tree.
fn trace_of(
    id: &str,
    spans: Vec<Span>,
    file: &Arc<str>,
) -> Result<(Option<Trace>, Outside), OtelError> {
    let (order, outside) = tree_order(&spans);
    let mut spans: Vec<Option<Span>> = spans.into_iter().map(Some).collect();
    // Call id → (result, marked as failed).
    let mut results: HashMap<String, (String, bool)> = HashMap::new();
    let mut system = None;
    for span in spans.iter_mut().flatten() {
        match &mut span.role {
            SpanRole::Llm(llm) => {
                for (call, text) in std::mem::take(&mut llm.results) {
                    results.entry(call).or_insert((text, false));
                }
                if system.is_none() {
                    system = llm.system.take();
                }
            }
            SpanRole::Tool {
                call_id: Some(call),
                output: Some(text),
                failed,
            } => {
                // The tool span's own record wins over an LLM input's copy.
                let entry = results
                    .entry(call.clone())
                    .or_insert_with(|| (text.clone(), false));
                entry.1 |= *failed;
            }
            _ => {}
        }
    }
    let mut messages: Vec<Json> = Vec::new();
    if let Some(s) = system {
        messages.push(json!({"role": "system", "content": s}));
    }
    let mut first_line = None;
    let mut pending: Vec<bool> = Vec::new();
    // Spans read that are neither a call nor a call's result.
    let (mut other_spans, mut unrecorded_replies) = (0u64, 0u64);
    for i in order {
        let Some(span) = spans[i].take() else {
            continue;
        };
        match span.role {
            SpanRole::Tool { output, failed, .. } => {
                // An unanswered call takes the next tool span's output.
                if let (Some(slot), Some(text)) = (pending.iter().position(|done| !done), output) {
                    messages.push(json!({"role": "tool", "content": text, "is_error": failed}));
                    pending[slot] = true;
                }
            }
            SpanRole::Llm(llm) => {
                let LlmSpan {
                    assistant,
                    model: m,
                    ..
                } = *llm;
                let Some(mut assistant) = assistant else {
                    unrecorded_replies += 1;
                    continue;
                };
                // The span's length is the call's duration.
                if let (Json::Object(m), true) =
                    (&mut assistant, span.start > 0 && span.end >= span.start)
                {
                    let seconds = (span.end - span.start) as f64 / 1e9;
                    m.insert("duration_s".into(), json!(seconds));
                }
                // The span's model travels with its reply to the chat reader.
                if let (Json::Object(obj), Some(m)) = (&mut assistant, m) {
                    obj.insert("model".into(), Json::from(m));
                }
                first_line.get_or_insert(span.line);
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
                        Some((text, failed)) => {
                            messages.push(json!({"role": "tool", "tool_call_id": call_id,
                                "content": text, "is_error": failed}));
                            pending.push(true);
                        }
                        None => pending.push(false),
                    }
                }
            }
            SpanRole::Other => other_spans += 1,
        }
    }
    let Some(line) = first_line else {
        return Ok((None, outside));
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
    let mut trace = Trace::new(id, attempts);
    trace.not_attempts = [
        (OTHER_SPAN, other_spans),
        (UNRECORDED_REPLY, unrecorded_replies),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(kind, n)| (kind.to_string(), n))
    .collect();
    Ok((Some(trace), outside))
}

/// How spans that are neither an LLM call nor a tool's are counted
/// (`input.skipped`): agent, chain, workflow spans.
pub const OTHER_SPAN: &str = "otel:other-span";
/// How LLM spans whose reply was not recorded are counted.
pub const UNRECORDED_REPLY: &str = "otel:llm-span-without-reply";

/// A JSON attribute that may be recorded as its text.
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
        let (traces, _) = from_documents(vec![(1, doc)], &"spans.json".into()).unwrap();
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
    fn every_span_is_read_or_counted() {
        let out = r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"ls","arguments":{}}]}]"#;
        let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": "root", "startTimeUnixNano": "1", "attributes": [kv("gen_ai.operation.name", "invoke_agent")]},
            {"traceId": "t", "spanId": "a", "parentSpanId": "root", "startTimeUnixNano": "2",
             "attributes": [kv("gen_ai.operation.name", "chat"), kv("gen_ai.output.messages", out)]},
            {"traceId": "t", "spanId": "b", "parentSpanId": "root", "startTimeUnixNano": "3",
             "attributes": [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.call.id", "c1"), kv("gen_ai.tool.call.result", "a.txt")]},
            {"traceId": "t", "spanId": "c", "parentSpanId": "root", "startTimeUnixNano": "4",
             "attributes": [kv("gen_ai.operation.name", "chat")]}
        ]}]}]});
        let t = &from_documents(vec![(1, doc)], &"s.json".into()).unwrap().0[0];
        // 4 spans: 1 call, 1 tool result read; 1 agent span and 1 call
        // without its reply counted.
        assert_eq!(t.attempts.len(), 1);
        assert_eq!(t.attempts[0].tool_results[0].result, "a.txt");
        let counted: u64 = t.not_attempts.iter().map(|(_, n)| n).sum();
        assert_eq!(t.attempts.len() as u64 + 1 + counted, 4);
        assert_eq!(
            t.not_attempts,
            [
                (OTHER_SPAN.to_string(), 1),
                (UNRECORDED_REPLY.to_string(), 1)
            ]
        );
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
        let t = &from_documents(vec![(1, doc)], &"s.json".into()).unwrap().0[0];
        assert_eq!(t.attempts.len(), 1);
        assert_eq!(
            t.attempts[0].tool_calls.as_ref().unwrap()[0]["function"]["arguments"],
            "{\"q\": \"x\"}"
        );
        assert_eq!(t.attempts[0].tool_results[0].result, "found");
    }

    #[test]
    fn spans_in_a_parent_cycle_are_read_in_time_order_with_a_note() {
        let out = |text: &str| {
            format!(
                r#"[{{"role":"assistant","parts":[{{"type":"text","content":"{text}"}}],"finish_reason":"stop"}}]"#
            )
        };
        let span = |id: &str, parent: &str, start: &str, text: &str| {
            json!({"traceId": "t", "spanId": id, "parentSpanId": parent, "startTimeUnixNano": start,
                "attributes": [kv("gen_ai.operation.name", "chat"), kv("gen_ai.output.messages", &out(text))]})
        };
        let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            span("b", "a", "20", "second"),
            span("a", "b", "10", "first"),
            span("c", "gone", "5", "orphan"),
        ]}]}]});
        let (traces, notes) = from_documents(vec![(1, doc)], &"s.json".into()).unwrap();
        let texts: Vec<&str> = traces[0]
            .attempts
            .iter()
            .map(|a| a.content.as_str())
            .collect();
        assert_eq!(texts, ["orphan", "first", "second"]);
        assert_eq!(notes.len(), 1, "a missing parent is no problem: {notes:?}");
        assert!(
            notes[0].contains("2 span(s) whose parent chain is cyclic"),
            "{notes:?}"
        );
    }
}
