//! One line of a recording (docs/record.md; the proxy `mirotrace record`
//! writes it) → the call it holds: when and how long, which session it
//! belongs to, the request as a conversation and the answer or the failure.
//! This is the contract the readers of recordings share (a recording read
//! alone, [`super::traces`]; joined with task logs): what a call says is
//! decided here once.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::{request, response};
use crate::model::{Origin, Usage};

/// The key that marks every line of a recording, and its version.
pub const MARK: &str = "mirotrace_recording";
/// The version of the format this reader reads.
pub const VERSION: u64 = 1;
pub use crate::read::format::DEFAULT_TRACE_HEADER;
/// The OpenAI SDKs' retry counter (0 on the first try).
pub const SDK_RETRY_HEADER: &str = "x-stainless-retry-count";

/// One recorded call.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The recording's file and line.
    pub origin: Origin,
    /// `call`: 1-based, in the order the proxy received the requests.
    pub call: u64,
    /// `started`: RFC 3339 UTC, when the request arrived.
    pub started: Option<Arc<str>>,
    /// `seconds`: until the call completed.
    pub seconds: Option<f64>,
    /// `first_byte_seconds`: until the upstream's response head arrived.
    pub first_byte_seconds: Option<f64>,
    /// The value of the trace header (name matched case-insensitively).
    pub session: Option<Arc<str>>,
    /// `x-stainless-retry-count` (0 when absent or unreadable).
    pub sdk_retry: u32,
    /// Which API the call is, from its path and body.
    pub api: Api,
    pub request: Request,
    pub result: CallResult,
}

/// The API a call speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions (`/chat/completions`, `messages`).
    ChatCompletions,
    /// OpenAI Responses (`/responses`, `input` / `instructions`).
    Responses,
    /// Anthropic Messages (`/messages`, `system` apart, content blocks).
    AnthropicMessages,
    /// Anything else: the request's path.
    Other(Arc<str>),
}

impl Api {
    /// Its name in messages.
    pub fn name(&self) -> &str {
        match self {
            Api::ChatCompletions => "OpenAI Chat Completions",
            Api::Responses => "OpenAI Responses",
            Api::AnthropicMessages => "Anthropic Messages",
            Api::Other(path) => path,
        }
    }

    /// Whether it is one of the model APIs mirotrace reads.
    pub fn is_model_call(&self) -> bool {
        !matches!(self, Api::Other(_))
    }
}

/// The request, as a conversation in the project's chat form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    /// `model`.
    pub model: Option<Arc<str>>,
    /// The first system/developer message, Anthropic's `system` (a string
    /// or text blocks), the Responses API's `instructions`.
    pub system_prompt: Option<String>,
    /// The messages after the system prompt, as chat messages
    /// (`read::chat` reads them: OpenAI roles, Anthropic content blocks;
    /// Responses items are turned into such messages).
    pub messages: Vec<Json>,
    /// `max_tokens`, `max_completion_tokens` or `max_output_tokens`.
    pub max_tokens: Option<u64>,
    /// `stream: true`.
    pub stream: bool,
    /// The request lists tools (`tools`): the model calls them natively.
    pub tools: bool,
    /// Why the conversation is not known (an `omitted`, non-JSON or
    /// absent body): the call is still counted, its request unseen.
    pub unreadable: Option<String>,
}

impl Request {
    /// Whether two requests send the same conversation (system prompt and
    /// messages; the model and limits may differ).
    pub fn same_conversation(&self, other: &Request) -> bool {
        self.unreadable.is_none()
            && other.unreadable.is_none()
            && self.system_prompt == other.system_prompt
            && self.messages == other.messages
    }

    /// The text of the first user message, where there is one.
    pub fn first_user_text(&self) -> Option<String> {
        let first = self
            .messages
            .iter()
            .find(|m| m.get("role").and_then(Json::as_str) == Some("user"))?;
        crate::read::chat::content_text(first.get("content"), 0).ok()
    }
}

/// What came back.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    /// The model answered (a stream merged into the answer it makes).
    Answer(Answer),
    /// The upstream answered with an error: HTTP status ≥ 400 (or an
    /// error event in place of a stream's answer), and its message.
    Failed { status: u16, message: String },
    /// No response came: the recording's `error` (`connect`, `timeout`,
    /// `upstream`, `client_disconnected`, `request_body`) and its message.
    NoResponse { kind: Arc<str>, message: String },
    /// A response came but cannot be read (its body `omitted`, not the
    /// API's shape): the reason, never a guess.
    Unreadable(String),
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// The text (Chat Completions `content`, or its `refusal` when there
    /// is no content; Anthropic's and Responses' text parts, in order).
    pub text: String,
    /// Tool calls in Chat Completions form (`{id, type, function: {name,
    /// arguments}}`, arguments a JSON string).
    pub tool_calls: Vec<Json>,
    /// The finish reason in OpenAI's words (`stop`, `length`,
    /// `tool_calls`, …; `read::calls::openai_finish`); `None` when the
    /// response gives none (a stream cut short).
    pub finish: Option<String>,
    pub usage: Option<Usage>,
    /// The model the response names.
    pub model: Option<Arc<str>>,
    /// Why the answer is incomplete (a stream cut short: what arrived is
    /// kept), `None` when it is whole.
    pub incomplete: Option<String>,
}

/// Reads one line of a recording. `trace_header` names the header that
/// says which run a call belongs to (matched case-insensitively). An
/// error is a line that is not a call of a recording this reader reads.
pub fn parse(
    line: &Map<String, Json>,
    origin: Origin,
    trace_header: &str,
) -> Result<RecordedCall, String> {
    match line.get(MARK) {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "a recording of version {v}, this reader reads {VERSION}"
            ))
        }
        None => return Err(format!("no \"{MARK}\" key: not a line of a recording")),
    }
    let call = line
        .get("call")
        .and_then(Json::as_u64)
        .ok_or("no \"call\" number")?;
    let req = line
        .get("request")
        .and_then(Json::as_object)
        .ok_or("no \"request\" object")?;
    let empty = Map::new();
    let headers = req
        .get("headers")
        .and_then(Json::as_object)
        .unwrap_or(&empty);
    let path = req.get("path").and_then(Json::as_str).unwrap_or("");
    let body = body_of(req);
    let api = request::api_of(path, body.as_ref().ok());
    let request = request::read(&api, body);
    let result = response::read(&api, line.get("response"), line.get("error"));
    Ok(RecordedCall {
        origin,
        call,
        started: line.get("started").and_then(Json::as_str).map(Arc::from),
        seconds: line.get("seconds").and_then(crate::read::usage::seconds),
        first_byte_seconds: line
            .get("first_byte_seconds")
            .and_then(crate::read::usage::seconds),
        session: header(headers, trace_header).map(Arc::from),
        sdk_retry: header(headers, SDK_RETRY_HEADER)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        api,
        request,
        result,
    })
}

/// A header's value (the first, when repeated), its name matched
/// case-insensitively.
pub fn header<'a>(headers: &'a Map<String, Json>, name: &str) -> Option<&'a str> {
    let value = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)?;
    match value {
        Json::String(s) => Some(s),
        Json::Array(values) => values.first().and_then(Json::as_str),
        _ => None,
    }
}

/// A request's or response's body: its JSON, or why there is none to read.
pub(super) fn body_of(part: &Map<String, Json>) -> Result<Json, String> {
    if let Some(body) = part.get("body") {
        return Ok(body.clone());
    }
    if let Some(why) = part.get("omitted") {
        let why = why.as_str().map_or_else(|| why.to_string(), str::to_string);
        return Err(format!("body omitted: {why}"));
    }
    if part.contains_key("body_text") {
        return Err("body is text, not JSON".into());
    }
    if part.contains_key("body_base64") {
        return Err("body is binary, not JSON".into());
    }
    Err("no body".into())
}

#[cfg(test)]
#[path = "call_tests.rs"]
mod tests;
