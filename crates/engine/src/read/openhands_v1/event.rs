//! One V1 event, as much of it as the conversion needs. A JSONL line is
//! decoded once, straight into [`Line`] (typed serde: the fields the
//! conversion reads, every other field skipped without being built), so
//! an `events.jsonl` is parsed once, not into a `Value` and then again.
//! An event already parsed (a JSON list, an evaluation line's `history`)
//! is looked at in place.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value as Json};

use super::{CONVERSATION_KINDS, OTHER_KINDS};

/// What one event is to the conversation.
pub(super) enum Event<'a> {
    /// `SystemPromptEvent`: the system prompt's text.
    SystemPrompt(Cow<'a, str>),
    /// `MessageEvent`: the message's content (parts), from the agent or not.
    Message {
        agent: bool,
        content: Option<Cow<'a, Json>>,
        response: Option<String>,
    },
    /// `ActionEvent`: one call of an LLM response.
    Action {
        id: Option<Cow<'a, Json>>,
        name: Cow<'a, str>,
        arguments: Cow<'a, Json>,
        thought: Option<Cow<'a, Json>>,
        response: Option<String>,
    },
    /// `ObservationEvent`, `UserRejectObservation`, `AgentErrorEvent`:
    /// what the model was shown for the call named.
    Result {
        tool_call_id: Option<Cow<'a, Json>>,
        text: String,
        /// An `AgentErrorEvent`, or an observation marked `is_error`.
        failed: bool,
    },
    /// `ConversationStateUpdateEvent`: not a turn; its value may hold the
    /// conversation's metrics.
    StateUpdate(Option<Cow<'a, Json>>),
    /// Another known kind that is not a turn (pause, condensation, …).
    Other(&'static str),
    /// A kind this reader does not know.
    Unknown(String),
}

impl Event<'_> {
    /// The event, owning what it holds (to be kept past its line).
    pub(super) fn into_owned(self) -> Event<'static> {
        let own = |v: Option<Cow<'_, Json>>| v.map(|v| Cow::Owned(v.into_owned()));
        match self {
            Event::SystemPrompt(t) => Event::SystemPrompt(Cow::Owned(t.into_owned())),
            Event::Message {
                agent,
                content,
                response,
            } => Event::Message {
                agent,
                content: own(content),
                response,
            },
            Event::Action {
                id,
                name,
                arguments,
                thought,
                response,
            } => Event::Action {
                id: own(id),
                name: Cow::Owned(name.into_owned()),
                arguments: Cow::Owned(arguments.into_owned()),
                thought: own(thought),
                response,
            },
            Event::Result {
                tool_call_id,
                text,
                failed,
            } => Event::Result {
                tool_call_id: own(tool_call_id),
                text,
                failed,
            },
            Event::StateUpdate(v) => Event::StateUpdate(own(v)),
            Event::Other(k) => Event::Other(k),
            Event::Unknown(k) => Event::Unknown(k),
        }
    }
}

/// The known kind named `kind`, as its constant.
fn known(kind: &str) -> Option<&'static str> {
    CONVERSATION_KINDS
        .iter()
        .chain(OTHER_KINDS.iter())
        .copied()
        .find(|k| *k == kind)
}

/// An event parsed already, looked at in place.
pub(super) fn of_json(e: &Map<String, Json>) -> Event<'_> {
    let kind = e.get("kind").and_then(Json::as_str).unwrap_or("");
    let text_of = |k: &str| e.get(k).and_then(Json::as_str);
    match kind {
        "SystemPromptEvent" => Event::SystemPrompt(Cow::Borrowed(
            e.get("system_prompt")
                .and_then(|p| p.get("text"))
                .and_then(Json::as_str)
                .unwrap_or(""),
        )),
        "MessageEvent" => Event::Message {
            agent: text_of("source") == Some("agent"),
            content: e
                .get("llm_message")
                .and_then(|m| m.get("content"))
                .map(Cow::Borrowed),
            response: id_text(e.get("llm_response_id")),
        },
        "ActionEvent" => {
            let recorded = e.get("tool_call");
            Event::Action {
                id: e
                    .get("tool_call_id")
                    .or_else(|| recorded.and_then(|c| c.get("id")))
                    .map(Cow::Borrowed),
                name: Cow::Borrowed(
                    recorded
                        .and_then(|c| c.get("name"))
                        .or_else(|| e.get("tool_name"))
                        .and_then(Json::as_str)
                        .unwrap_or(""),
                ),
                arguments: Cow::Borrowed(
                    recorded
                        .and_then(|c| c.get("arguments"))
                        .or_else(|| e.get("action"))
                        .unwrap_or(&Json::Null),
                ),
                thought: e.get("thought").map(Cow::Borrowed),
                response: id_text(e.get("llm_response_id")),
            }
        }
        "ObservationEvent" | "UserRejectObservation" | "AgentErrorEvent" => Event::Result {
            tool_call_id: e.get("tool_call_id").map(Cow::Borrowed),
            text: result_text(
                text_of("rejection_reason"),
                text_of("error"),
                e.get("observation"),
            ),
            failed: result_failed(kind, e.get("observation")),
        },
        "ConversationStateUpdateEvent" => Event::StateUpdate(e.get("value").map(Cow::Borrowed)),
        other => match known(other) {
            Some(k) => Event::Other(k),
            None => Event::Unknown(other.to_string()),
        },
    }
}

/// A JSONL line decoded as an event, when it is one (a known `kind` with
/// an `id`, `timestamp` or `source`); `None` when it is not, or cannot be
/// decoded this way (the line is then parsed whole and read as any other
/// record is).
pub(super) fn of_text(text: &str) -> Option<Event<'static>> {
    let line: Line<'_> = serde_json::from_str(text).ok()?;
    let kind = known(&line.kind)?;
    if !(line.id || line.timestamp || line.source.is_some()) {
        return None;
    }
    let owned = |v: Option<Json>| v.map(Cow::Owned);
    Some(match kind {
        "SystemPromptEvent" => Event::SystemPrompt(Cow::Owned(
            line.system_prompt
                .and_then(|p| p.text)
                .map(Cow::into_owned)
                .unwrap_or_default(),
        )),
        "MessageEvent" => Event::Message {
            agent: line.source.as_deref() == Some("agent"),
            content: owned(line.llm_message.and_then(|m| m.content)),
            response: id_text(line.llm_response_id.as_ref()),
        },
        "ActionEvent" => {
            let (call_id, call_name, call_arguments) = match line.tool_call {
                Some(c) => (c.id, c.name, c.arguments),
                None => (None, None, None),
            };
            // As [`of_json`] reads them: the recorded call's name, even
            // when it is not text.
            let name = match call_name {
                Some(Json::String(s)) => s,
                Some(_) => String::new(),
                None => line.tool_name.map(Cow::into_owned).unwrap_or_default(),
            };
            Event::Action {
                id: owned(line.tool_call_id.or(call_id)),
                name: Cow::Owned(name),
                arguments: Cow::Owned(call_arguments.or(line.action).unwrap_or(Json::Null)),
                thought: owned(line.thought),
                response: id_text(line.llm_response_id.as_ref()),
            }
        }
        "ObservationEvent" | "UserRejectObservation" | "AgentErrorEvent" => Event::Result {
            tool_call_id: owned(line.tool_call_id),
            text: result_text(
                line.rejection_reason.as_ref().and_then(Json::as_str),
                line.error.as_ref().and_then(Json::as_str),
                line.observation.as_ref(),
            ),
            failed: result_failed(kind, line.observation.as_ref()),
        },
        "ConversationStateUpdateEvent" => Event::StateUpdate(owned(line.value)),
        other => Event::Other(other),
    })
}

/// The fields of an event line that the conversion reads; the others are
/// skipped. A duplicated field or one of an unexpected type fails the
/// decoding, and the line is parsed whole instead.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(default, deserialize_with = "present")]
    id: bool,
    #[serde(default, deserialize_with = "present")]
    timestamp: bool,
    #[serde(default, borrow)]
    source: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    system_prompt: Option<Text<'a>>,
    #[serde(default)]
    llm_message: Option<LlmMessage>,
    #[serde(default)]
    llm_response_id: Option<Json>,
    #[serde(default)]
    tool_call: Option<ToolCall>,
    #[serde(default, deserialize_with = "some")]
    tool_call_id: Option<Json>,
    #[serde(default, borrow)]
    tool_name: Option<Cow<'a, str>>,
    #[serde(default)]
    action: Option<Json>,
    #[serde(default)]
    thought: Option<Json>,
    #[serde(default)]
    observation: Option<Json>,
    #[serde(default)]
    rejection_reason: Option<Json>,
    #[serde(default)]
    error: Option<Json>,
    #[serde(default)]
    value: Option<Json>,
}

#[derive(Deserialize)]
struct Text<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct LlmMessage {
    #[serde(default, deserialize_with = "some")]
    content: Option<Json>,
}

#[derive(Deserialize)]
struct ToolCall {
    #[serde(default, deserialize_with = "some")]
    id: Option<Json>,
    #[serde(default, deserialize_with = "some")]
    name: Option<Json>,
    #[serde(default, deserialize_with = "some")]
    arguments: Option<Json>,
}

/// Whether a field is there (whatever its value).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

/// A field that is there, `null` included (as the parsed event's `get`
/// finds it): `None` only when it is missing.
fn some<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Json>, D::Error> {
    Json::deserialize(d).map(Some)
}

/// An id written as a string or a number.
pub(super) fn id_text(v: Option<&Json>) -> Option<String> {
    match v? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What the model was shown for a call: the rejection, the error, or the
/// observation's text content (its `output` when it has none).
/// A result the harness marks as failed: an `AgentErrorEvent` (the tool
/// call raised), or an observation with `is_error: true`. A user's
/// rejection is not a failed tool.
fn result_failed(kind: &str, obs: Option<&Json>) -> bool {
    kind == "AgentErrorEvent"
        || obs.and_then(|o| o.get("is_error")).and_then(Json::as_bool) == Some(true)
}

fn result_text(rejection: Option<&str>, error: Option<&str>, obs: Option<&Json>) -> String {
    if let Some(reason) = rejection {
        return format!("Action rejected: {reason}");
    }
    if let Some(error) = error {
        return error.to_string();
    }
    let Some(obs) = obs else {
        return String::new();
    };
    match obs.get("content") {
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Json::as_str))
            .collect(),
        Some(Json::String(s)) => s.clone(),
        _ => obs
            .get("output")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}
