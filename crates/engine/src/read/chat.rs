//! Chat transcripts → attempts. A conversation in OpenAI chat form (the
//! form of MiroVerse-style training sets and of upstream's `collect-trace`
//! converters) holds one agent session: each assistant message is an
//! attempt; the `tool` messages after it, or else the next `user` message
//! (MiroThinker feeds MCP tool results back as user text), carry its tool
//! results; a system message is the session's system prompt.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value as Json};

use super::calls;
use super::sniff::is_message_list;
use crate::model::{agent_of_session, Attempt, Finish, Origin, ToolResult};

/// Openings of upstream's final-summary prompts (`generate_agent_summarize_prompt`,
/// main agent and `agent-browsing`). Once one is sent the agent loop is
/// over: the answer to it is not a loop turn and is not replayed.
pub const SUMMARY_PROMPT_OPENINGS: [&str; 2] = [
    "Summarize the above conversation, and output the FINAL ANSWER",
    "This is a direct instruction to you (the assistant), not the result of a tool call.",
];

/// Why a conversation could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChatError {
    #[error("\"messages\" is not a list")]
    NotAList,
    #[error("message {index} is not an object")]
    NotAnObject { index: usize },
    #[error("message {index} has no string \"role\"")]
    NoRole { index: usize },
    #[error("message {index} has unknown role {role:?}")]
    UnknownRole { index: usize, role: String },
    #[error("message {index}: \"content\" is {found}, not text")]
    BadContent { index: usize, found: &'static str },
}

/// Where the attempts of one conversation go.
#[derive(Debug, Clone)]
pub struct SessionTarget<'a> {
    pub trace_id: &'a str,
    pub session: &'a str,
    pub agent: &'a str,
    pub origin: &'a Origin,
    /// A system prompt kept outside the messages (task logs store it apart).
    pub system_prompt: Option<String>,
}

/// An assistant message waiting for the results that follow it.
struct Open {
    attempt: Attempt,
    call_ids: Vec<Option<String>>,
    /// Call id, text, marked as failed ([`is_failed`]).
    tool_messages: Vec<(Option<String>, String, bool)>,
    user_text: Option<String>,
}

impl Open {
    fn finish(mut self) -> Attempt {
        self.attempt.tool_results = if !self.tool_messages.is_empty() {
            match_tool_messages(&self.call_ids, self.tool_messages)
        } else {
            self.user_text
                .map(|text| {
                    vec![ToolResult {
                        result: text,
                        error: None,
                        failed: false,
                    }]
                })
                .unwrap_or_default()
        };
        self.attempt
    }
}

/// Tool messages in call order: by `tool_call_id` where the ids match the
/// calls, else in the order they came. Each call takes the first message
/// of its id not taken yet, found through an index of the ids (a search
/// per call took time quadratic in a response's parallel calls).
fn match_tool_messages(
    call_ids: &[Option<String>],
    messages: Vec<(Option<String>, String, bool)>,
) -> Vec<ToolResult> {
    let mut ids = Vec::with_capacity(messages.len());
    let mut texts = Vec::with_capacity(messages.len());
    for (id, text, failed) in messages {
        ids.push(id);
        texts.push((text, failed));
    }
    let mut index: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            index.entry(id.as_str()).or_default().push_back(i);
        }
    }
    let by_id = call_ids
        .iter()
        .flatten()
        .any(|id| index.contains_key(id.as_str()));
    let texts: Vec<(String, bool)> = if by_id {
        let mut texts: Vec<Option<(String, bool)>> = texts.into_iter().map(Some).collect();
        call_ids
            .iter()
            .map(|id| {
                id.as_deref()
                    .and_then(|id| index.get_mut(id)?.pop_front())
                    .and_then(|p| texts[p].take())
                    .unwrap_or_default()
            })
            .collect()
    } else {
        texts
    };
    texts
        .into_iter()
        .map(|(result, failed)| ToolResult {
            result,
            error: None,
            failed,
        })
        .collect()
}

/// Whether a tool message is marked as failed in a field of its own:
/// `is_error: true` (Anthropic-style results, OpenHands), or an `error`
/// that says something: `true`, a non-empty text or object (Inspect's
/// `{type, message}`, tau2's `error: true`); `null`, `false`, `""` and `{}`
/// say no error. The text is not read: which texts are errors is the
/// policy's `tool_error_prefixes`.
pub fn is_failed(message: &Json) -> bool {
    let said = |e: &Json| match e {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::String(s) => !s.is_empty(),
        Json::Object(o) => !o.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Number(_) => true,
    };
    message.get("is_error").and_then(Json::as_bool) == Some(true)
        || message.get("error").is_some_and(said)
}

/// Whether a user message is upstream's final-summary prompt.
pub fn is_summary_prompt(text: &str) -> bool {
    let text = text.trim_start();
    SUMMARY_PROMPT_OPENINGS.iter().any(|p| text.starts_with(p))
}

/// The text of a message's `content`: a string, null, or a list of parts
/// (`{"type": "text", "text": …}` or plain strings; other parts such as
/// images carry no text).
pub fn content_text(content: Option<&Json>, index: usize) -> Result<String, ChatError> {
    match content {
        None | Some(Json::Null) => Ok(String::new()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(Json::Array(parts)) => {
            let mut out = String::new();
            for part in parts {
                match part {
                    Json::String(s) => out.push_str(s),
                    Json::Object(p) => {
                        if let Some(t) = p.get("text").and_then(Json::as_str) {
                            out.push_str(t);
                        }
                    }
                    _ => {
                        return Err(ChatError::BadContent {
                            index,
                            found: "a list with a non-text part",
                        })
                    }
                }
            }
            Ok(out)
        }
        Some(Json::Object(_)) => Err(ChatError::BadContent {
            index,
            found: "an object",
        }),
        Some(_) => Err(ChatError::BadContent {
            index,
            found: "a number or boolean",
        }),
    }
}

/// Converts one session's messages into its attempts, in order. Messages
/// after upstream's final-summary prompt are not loop turns and are left out.
pub fn convert_messages(
    messages: &[Json],
    target: SessionTarget<'_>,
) -> Result<Vec<Attempt>, ChatError> {
    convert_message_refs(messages, target)
}

/// [`convert_messages`] over borrowed messages, so a reader that rewrites a
/// few of them need not copy the rest.
pub fn convert_message_refs<'m>(
    messages: impl IntoIterator<Item = &'m Json>,
    target: SessionTarget<'_>,
) -> Result<Vec<Attempt>, ChatError> {
    let mut attempts = Vec::new();
    let mut system = target.system_prompt.clone();
    let mut open: Option<Open> = None;
    for (index, message) in messages.into_iter().enumerate() {
        let obj = message
            .as_object()
            .ok_or(ChatError::NotAnObject { index })?;
        let role = obj
            .get("role")
            .and_then(Json::as_str)
            .ok_or(ChatError::NoRole { index })?;
        // SWE-agent's demonstrations are examples in the prompt, not turns.
        if obj.get("is_demo").and_then(Json::as_bool) == Some(true) {
            continue;
        }
        match role {
            "system" | "developer" => system = Some(content_text(obj.get("content"), index)?),
            // Anthropic: tool results come back in a user message.
            "user"
                if obj
                    .get("content")
                    .and_then(Json::as_array)
                    .is_some_and(|parts| calls::has_call_blocks(parts)) =>
            {
                let parts = obj.get("content").and_then(Json::as_array);
                let blocks = calls::split_blocks(parts.map_or(&[][..], Vec::as_slice));
                if let Some(o) = open.as_mut() {
                    o.tool_messages.extend(blocks.results);
                }
            }
            "user" => {
                let text = content_text(obj.get("content"), index)?;
                if is_summary_prompt(&text) {
                    break;
                }
                if let Some(o) = open
                    .as_mut()
                    .filter(|o| o.tool_messages.is_empty() && o.user_text.is_none())
                {
                    o.user_text = Some(text);
                }
            }
            "tool" | "function" => {
                let mut text = content_text(obj.get("content"), index)?;
                if text.is_empty() {
                    // Inspect records a failed call as `error: {type, message}`.
                    if let Some(e) = obj.get("error").filter(|e| !e.is_null()) {
                        text = e
                            .get("message")
                            .and_then(Json::as_str)
                            .map_or_else(|| e.to_string(), str::to_string);
                    }
                }
                if let Some(o) = open.as_mut() {
                    // SWE-agent: `tool_call_ids`, a list.
                    let id = obj
                        .get("tool_call_id")
                        .or_else(|| obj.get("tool_call_ids").and_then(|ids| ids.get(0)))
                        .and_then(Json::as_str)
                        .map(str::to_string);
                    o.tool_messages.push((id, text, is_failed(message)));
                }
            }
            "assistant" => {
                attempts.extend(open.take().map(Open::finish));
                open = Some(assistant(obj, index, &target, system.take())?);
            }
            other => {
                return Err(ChatError::UnknownRole {
                    index,
                    role: other.to_string(),
                })
            }
        }
    }
    attempts.extend(open.map(Open::finish));
    Ok(attempts)
}

fn assistant(
    obj: &Map<String, Json>,
    index: usize,
    target: &SessionTarget<'_>,
    system_prompt: Option<String>,
) -> Result<Open, ChatError> {
    let (content, block_calls) = match obj.get("content") {
        Some(Json::Array(parts)) if calls::has_call_blocks(parts) => {
            let blocks = calls::split_blocks(parts);
            (blocks.text, blocks.calls)
        }
        other => (content_text(other, index)?, Vec::new()),
    };
    let tool_calls = match obj.get("tool_calls").filter(|t| !t.is_null()) {
        Some(recorded) => Some(calls::normalize_tool_calls(recorded)),
        None if !block_calls.is_empty() => Some(Json::Array(block_calls)),
        // The legacy single `function_call`.
        None => obj
            .get("function_call")
            .and_then(|f| Some((f, f.get("name")?.as_str()?)))
            .map(|(f, name)| {
                Json::Array(vec![calls::chat_call(
                    None,
                    name,
                    f.get("arguments").unwrap_or(&Json::Null),
                )])
            }),
    };
    let call_ids = match &tool_calls {
        Some(Json::Array(calls)) => calls
            .iter()
            .map(|c| c.get("id").and_then(Json::as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let finish = finish_of(obj.get("finish_reason").or_else(|| obj.get("stop_reason")));
    Ok(Open {
        attempt: Attempt {
            system_prompt: system_prompt.map(Into::into),
            content,
            tool_calls,
            finish,
            // A message that keeps its response's usage (SDK and LiteLLM
            // logs, OpenHands' responses).
            usage: obj.get("usage").and_then(super::usage::of),
            duration_s: obj.get("duration_s").and_then(super::usage::seconds),
            // The model that wrote this message, where the harness keeps it
            // (Inspect, OpenHands' responses, OpenTelemetry spans).
            model: obj.get("model").and_then(Json::as_str).map(Into::into),
            ..Attempt::blank(
                target.origin.clone(),
                target.trace_id.into(),
                target.session.into(),
                target.agent.into(),
            )
        },
        call_ids,
        tool_messages: Vec::new(),
        user_text: None,
    })
}

/// A recorded finish reason, in OpenAI's words (see [`calls::openai_finish`]).
pub fn finish_of(reason: Option<&Json>) -> Finish {
    match reason {
        None | Some(Json::Null) => Finish::Stop,
        Some(Json::String(s)) => match calls::openai_finish(s) {
            "stop" => Finish::Stop,
            "length" => Finish::Length,
            other => Finish::Unsupported(other.to_string()),
        },
        Some(other) => Finish::Unsupported(other.to_string()),
    }
}

/// One conversation record (`{"messages": [...]}`, a JSONL line or an
/// element of a merged file) → its trace id and attempts. The trace id is
/// the record's `trace_id` or `id`, else its file's stem (`STEM:LINE` after
/// the first line: [`super::attribution::unnamed`]); a `session` key puts
/// the conversation into that session of its trace.
pub fn from_record(
    obj: &Map<String, Json>,
    origin: &Origin,
) -> Result<(String, Vec<Attempt>), ChatError> {
    let (messages, inner_system) = find_messages(obj).ok_or(ChatError::NotAList)?;
    from_record_messages(obj, messages, inner_system, origin)
}

/// [`from_record`] with the record's messages given apart (rewritten by
/// the caller, or found elsewhere).
pub fn from_record_messages<'m>(
    obj: &Map<String, Json>,
    messages: impl IntoIterator<Item = &'m Json>,
    inner_system: Option<&str>,
    origin: &Origin,
) -> Result<(String, Vec<Attempt>), ChatError> {
    let trace_id = record_id(obj).unwrap_or_else(|| super::attribution::unnamed(origin));
    let session = obj.get("session").and_then(Json::as_str).unwrap_or("main");
    let agent = obj
        .get("agent")
        .and_then(Json::as_str)
        .map_or_else(|| agent_of_session(session), str::to_string);
    let system_prompt = ["system_prompt", "system"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Json::as_str))
        .or(inner_system)
        .map(str::to_string);
    let mut attempts = convert_message_refs(
        messages,
        SessionTarget {
            trace_id: &trace_id,
            session,
            agent: &agent,
            origin,
            system_prompt,
        },
    )?;
    for a in &mut attempts {
        a.native_tools = true;
    }
    let meta = match (obj.get("meta"), obj.get("model")) {
        (Some(meta @ Json::Object(_)), _) => Some(meta.clone()),
        (_, Some(Json::String(model))) => Some(serde_json::json!({ "model": model })),
        _ => None,
    };
    // The record's model is the run's: every attempt without its own.
    let run_model = meta
        .as_ref()
        .and_then(|m| m.get("model"))
        .and_then(Json::as_str);
    super::attribution::give_run_model(&mut attempts, run_model);
    if let (Some(first), Some(meta)) = (attempts.first_mut(), meta) {
        first.set_meta(meta);
    }
    // tau-bench's results: the record's `reward`.
    if let (Some(first), Some(result)) = (
        attempts.first_mut(),
        obj.get("reward").and_then(super::usage::reward),
    ) {
        first.task_result = Some(result);
    }
    Ok((trace_id, attempts))
}

/// Keys under which a record keeps its conversation, in the order looked
/// at: OpenAI-style `messages`; MiroFlow's `message_history` (a list, or an
/// object holding `message_history` and `system_prompt`); SWE-agent's and
/// others' `history`; tau-bench's `traj`; `trajectory`.
pub const MESSAGE_KEYS: [&str; 5] = [
    "messages",
    "message_history",
    "history",
    "traj",
    "trajectory",
];

/// A record's message list and a system prompt kept beside it, wherever
/// the record keeps them. `messages` is taken whatever its elements (an
/// empty conversation is still one); other keys only for a message list.
pub fn find_messages(obj: &Map<String, Json>) -> Option<(&[Json], Option<&str>)> {
    for key in MESSAGE_KEYS {
        match obj.get(key) {
            Some(Json::Array(items)) if key == "messages" || is_message_list(items) => {
                return Some((items, None))
            }
            Some(Json::Object(inner)) => {
                let items = inner
                    .get("message_history")
                    .or_else(|| inner.get("messages"))
                    .and_then(Json::as_array);
                if let Some(items) = items.filter(|i| is_message_list(i)) {
                    let system = inner.get("system_prompt").and_then(Json::as_str);
                    return Some((items, system));
                }
            }
            _ => {}
        }
    }
    None
}

/// Keys that name a record, in the order looked at.
pub const ID_KEYS: [&str; 7] = [
    "trace_id",
    "id",
    "task_id",
    "instance_id",
    "sample_id",
    "session_id",
    "sessionId",
];

/// A record's own name: its first id key, with its `trial` or `epoch`
/// (tau-bench runs each task several times) as `ID#TRIAL`.
pub fn record_id(obj: &Map<String, Json>) -> Option<String> {
    let text = |v: &Json| match v {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let base = ID_KEYS.iter().find_map(|k| obj.get(*k).and_then(text))?;
    Some(
        match ["trial", "epoch"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(text))
        {
            Some(trial) => format!("{base}#{trial}"),
            None => base,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> Origin {
        Origin {
            file: "c.jsonl".into(),
            line: 4,
        }
    }

    fn convert(v: Json) -> Result<(String, Vec<Attempt>), ChatError> {
        from_record(v.as_object().unwrap(), &origin())
    }

    #[test]
    fn tool_messages_marked_failed_are_failed_results() {
        let call = |id: &str| {
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": "t", "arguments": "{}"}}]})
        };
        let (_, attempts) = convert(json!({"messages": [
            call("a"),
            {"role": "tool", "tool_call_id": "a", "content": "", "error": {"type": "x", "message": "boom"}},
            call("b"),
            {"role": "tool", "tool_call_id": "b", "content": "fine", "error": null},
            call("c"),
            {"role": "tool", "tool_call_id": "c", "content": "ran", "error": true},
            call("d"),
            {"role": "tool", "tool_call_id": "d", "content": "ok", "error": false, "is_error": false},
            call("g"),
            {"role": "tool", "tool_call_id": "g", "content": "fine too", "error": ""},
            call("e"),
            {"role": "tool", "tool_call_id": "e", "content": "exit 1", "is_error": true},
            call("f"),
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "f", "content": "no", "is_error": true}]},
        ]}))
        .unwrap();
        let got: Vec<(&str, bool)> = attempts
            .iter()
            .map(|a| (a.tool_results[0].result.as_str(), a.tool_results[0].failed))
            .collect();
        assert_eq!(
            got,
            [
                ("boom", true),
                ("fine", false),
                ("ran", true),
                ("ok", false),
                ("fine too", false),
                ("exit 1", true),
                ("no", true)
            ]
        );
    }

    #[test]
    fn mcp_style_results_come_from_the_next_user_message() {
        let (id, attempts) = convert(json!({"messages": [
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "<use_mcp_tool>x</use_mcp_tool>"},
            {"role": "user", "content": "result one"},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        ]}))
        .unwrap();
        assert_eq!(id, "c:4");
        assert_eq!(attempts.len(), 2);
        assert_eq!(attempts[0].system_prompt.as_deref(), Some("SYS"));
        assert_eq!(attempts[1].system_prompt, None);
        assert_eq!(attempts[0].tool_results[0].result, "result one");
        assert_eq!(attempts[1].content, "done");
        assert!(attempts[1].tool_results.is_empty());
    }

    #[test]
    fn tool_messages_match_calls_by_id() {
        let (id, attempts) = convert(json!({"id": 7, "session": "agent-browsing_2", "messages": [
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "s-t", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "s-u", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "b", "content": "B"},
            {"role": "tool", "tool_call_id": "a", "content": "A"},
            {"role": "user", "content": "ignored: tool messages came first"},
        ]}))
        .unwrap();
        assert_eq!(id, "7");
        let a = &attempts[0];
        assert_eq!(
            (&*a.session, &*a.agent),
            ("agent-browsing_2", "agent-browsing")
        );
        let texts: Vec<&str> = a.tool_results.iter().map(|r| r.result.as_str()).collect();
        assert_eq!(texts, ["A", "B"]);
    }

    #[test]
    fn the_summary_answer_is_not_a_turn() {
        let (_, attempts) = convert(json!({"messages": [
            {"role": "assistant", "content": "<use_mcp_tool>…"},
            {"role": "user", "content": "Summarize the above conversation, and output the FINAL ANSWER to the original question."},
            {"role": "assistant", "content": "\\boxed{4}"},
        ]}))
        .unwrap();
        assert_eq!(attempts.len(), 1);
        assert!(attempts[0].tool_results.is_empty());
    }

    #[test]
    fn bad_conversations_are_errors() {
        let err = convert(json!({"messages": [{"role": "robot", "content": "x"}]})).unwrap_err();
        assert_eq!(err.to_string(), "message 0 has unknown role \"robot\"");
        assert_eq!(
            convert(json!({"messages": [3]})).unwrap_err(),
            ChatError::NotAnObject { index: 0 }
        );
        assert!(matches!(
            convert(json!({"messages": [{"role": "assistant", "content": {"a": 1}}]})),
            Err(ChatError::BadContent { .. })
        ));
    }
}
