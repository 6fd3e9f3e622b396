//! Claude Code sessions → traces. A session file has one JSON object per
//! line: `user` and `assistant` lines carry an Anthropic Messages `message`
//! (`content` a string or blocks: `text`, `thinking`, `tool_use`,
//! `tool_result`); other lines (`summary`, `system`, file snapshots, queue
//! operations) are bookkeeping. One API response is written as several
//! assistant lines, one per content block, that share `message.id`: they
//! are joined back into one response. Lines of a sub-agent's side chain
//! (`isSidechain`) form a trace of their own, `<sessionId>/sidechain`.
//!
//! The lines are rewritten as a message list and read as a chat
//! transcript, whose reader knows the content blocks ([`super::calls`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use crate::model::{Origin, Trace};

/// Why a session could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("line {line}: {source}")]
    Chat { line: u64, source: ChatError },
}

/// One conversation being rebuilt.
struct Thread {
    id: String,
    first_line: u64,
    messages: Vec<Json>,
    /// `message.id` of the last assistant message, to join its lines.
    last_response: Option<String>,
    model: Option<String>,
}

/// The session's lines, with their line numbers → its traces: the main
/// conversation of each session id, then side chains.
pub fn from_session_lines(
    lines: Vec<(u64, Json)>,
    file: &Arc<str>,
) -> Result<Vec<Trace>, SessionError> {
    let mut session = SessionReader::default();
    for (line, value) in lines {
        session.push(line, value);
    }
    session.finish(file)
}

/// A session read line by line: each line's conversation is kept, the
/// rest of it dropped as soon as it is read.
#[derive(Default)]
pub struct SessionReader {
    threads: Vec<Thread>,
    thread_of: HashMap<String, usize>,
}

impl SessionReader {
    /// Takes one line of the session (line number, parsed JSON).
    pub fn push(&mut self, line: u64, value: Json) {
        let Json::Object(mut entry) = value else {
            return;
        };
        let kind = entry.get("type").and_then(Json::as_str).unwrap_or("");
        if kind != "user" && kind != "assistant" {
            return;
        }
        let is_user = kind == "user";
        let Some(Json::Object(mut message)) = entry.remove("message") else {
            return;
        };
        let (threads, thread_of) = (&mut self.threads, &mut self.thread_of);
        let session = entry
            .get("sessionId")
            .and_then(Json::as_str)
            .unwrap_or("session");
        let id = if entry.get("isSidechain").and_then(Json::as_bool) == Some(true) {
            format!("{session}/sidechain")
        } else {
            session.to_string()
        };
        let pos = match thread_of.get(&id) {
            Some(&p) => p,
            None => {
                thread_of.insert(id.clone(), threads.len());
                threads.push(Thread {
                    id,
                    first_line: line,
                    messages: Vec::new(),
                    last_response: None,
                    model: None,
                });
                threads.len() - 1
            }
        };
        let t = &mut threads[pos];
        let content = message.remove("content").unwrap_or(Json::Null);
        if is_user {
            t.last_response = None;
            t.messages.push(json!({"role": "user", "content": content}));
            return;
        }
        let response = message.get("id").and_then(Json::as_str).map(str::to_string);
        if t.model.is_none() {
            t.model = message
                .get("model")
                .and_then(Json::as_str)
                .map(str::to_string);
        }
        let joins = response.is_some() && response == t.last_response;
        let blocks = match content {
            Json::Array(blocks) => blocks,
            Json::String(s) => vec![json!({"type": "text", "text": s})],
            _ => Vec::new(),
        };
        let stop = message.remove("stop_reason").unwrap_or(Json::Null);
        match t.messages.last_mut().filter(|_| joins) {
            Some(Json::Object(last)) => {
                if let Some(Json::Array(existing)) = last.get_mut("content") {
                    existing.extend(blocks);
                }
                if !stop.is_null() {
                    last.insert("stop_reason".into(), stop);
                }
            }
            _ => t.messages.push(json!({
                "role": "assistant",
                "content": blocks,
                "stop_reason": stop,
            })),
        }
        t.last_response = response;
    }

    /// The session's traces: each main conversation, then side chains.
    pub fn finish(self, file: &Arc<str>) -> Result<Vec<Trace>, SessionError> {
        let mut threads = self.threads;
        threads.sort_by_key(|t| t.id.ends_with("/sidechain"));
        convert_threads(threads, file)
    }
}

fn convert_threads(threads: Vec<Thread>, file: &Arc<str>) -> Result<Vec<Trace>, SessionError> {
    threads
        .into_iter()
        .map(|t| {
            let origin = Origin {
                file: file.clone(),
                line: t.first_line,
            };
            let mut attempts = chat::convert_messages(
                &t.messages,
                SessionTarget {
                    trace_id: &t.id,
                    session: "main",
                    agent: "main",
                    origin: &origin,
                    system_prompt: None,
                },
            )
            .map_err(|source| SessionError::Chat {
                line: t.first_line,
                source,
            })?;
            for a in &mut attempts {
                a.native_tools = true;
            }
            if let (Some(first), Some(model)) = (attempts.first_mut(), t.model) {
                first.set_meta(json!({ "model": model }));
            }
            Ok(Trace::new(t.id, attempts))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: Json) -> Json {
        v
    }

    #[test]
    fn lines_of_one_response_are_joined() {
        let s = "s1";
        let lines = vec![
            line(json!({"type": "summary", "summary": "x", "leafUuid": "u"})),
            line(
                json!({"type": "user", "sessionId": s, "message": {"role": "user", "content": "hi"}}),
            ),
            line(
                json!({"type": "assistant", "sessionId": s, "message": {"id": "m1", "model": "claude-x", "role": "assistant",
                "content": [{"type": "thinking", "thinking": "hmm"}], "stop_reason": null}}),
            ),
            line(
                json!({"type": "assistant", "sessionId": s, "message": {"id": "m1", "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}], "stop_reason": "tool_use"}}),
            ),
            line(
                json!({"type": "user", "sessionId": s, "message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]}}),
            ),
            line(
                json!({"type": "assistant", "sessionId": s, "isSidechain": true, "message": {"id": "m9", "role": "assistant",
                "content": [{"type": "text", "text": "side"}]}}),
            ),
            line(
                json!({"type": "assistant", "sessionId": s, "message": {"id": "m2", "role": "assistant",
                "content": [{"type": "text", "text": "There is a.txt."}], "stop_reason": "end_turn"}}),
            ),
        ];
        let numbered = lines
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, v))
            .collect();
        let traces = from_session_lines(numbered, &"s.jsonl".into()).unwrap();
        assert_eq!(traces.len(), 2);
        let main = &traces[0];
        assert_eq!(&*main.trace_id, "s1");
        assert_eq!(main.attempts.len(), 2);
        assert_eq!(main.attempts[0].tool_results[0].result, "a.txt");
        assert_eq!(main.attempts[0].model.as_deref(), Some("claude-x"));
        assert_eq!(main.attempts[1].content, "There is a.txt.");
        assert_eq!(&*traces[1].trace_id, "s1/sidechain");
    }
}
