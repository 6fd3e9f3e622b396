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

use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use crate::model::{Attempt, Origin, Trace};

/// Why a session could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("line {line}: {source}")]
    Chat { line: u64, source: ChatError },
}

/// What the conversion reads of a session line; the rest (working
/// directory, versions, uuids, the duplicated `toolUseResult`) is skipped.
#[derive(Deserialize)]
struct SessionLine {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(rename = "sessionId", default)]
    session: Option<String>,
    #[serde(rename = "isSidechain", default)]
    sidechain: Option<bool>,
    #[serde(default)]
    message: Option<LineMessage>,
}

#[derive(Deserialize)]
struct LineMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Json,
    #[serde(default)]
    stop_reason: Json,
}

/// One conversation being rebuilt.
struct Thread {
    id: String,
    first_line: u64,
    /// Messages since the last response converted (that response first).
    messages: Vec<Json>,
    /// `message.id` of the last assistant message, to join its lines.
    last_response: Option<String>,
    model: Option<String>,
    attempts: Vec<Attempt>,
    error: Option<SessionError>,
}

impl Thread {
    /// Converts the messages held (a response and what answered it), so
    /// that only attempts are kept, not the lines' JSON.
    fn flush(&mut self, file: &Arc<str>) {
        if self.error.is_some() || self.messages.is_empty() {
            return;
        }
        let origin = Origin {
            file: file.clone(),
            line: self.first_line,
        };
        let converted = chat::convert_messages(
            &self.messages,
            SessionTarget {
                trace_id: &self.id,
                session: "main",
                agent: "main",
                origin: &origin,
                system_prompt: None,
            },
        );
        self.messages.clear();
        match converted {
            Ok(attempts) => self.attempts.extend(attempts),
            Err(source) => {
                self.error = Some(SessionError::Chat {
                    line: self.first_line,
                    source,
                })
            }
        }
    }
}

/// The session's lines, with their line numbers → its traces: the main
/// conversation of each session id, then side chains.
pub fn from_session_lines(
    lines: Vec<(u64, Json)>,
    file: &Arc<str>,
) -> Result<Vec<Trace>, SessionError> {
    let mut session = SessionReader::new(file.clone());
    for (line, value) in lines {
        session.push(line, value);
    }
    session.finish()
}

/// A session read line by line: each line's conversation is kept, the
/// rest of it dropped as soon as it is read, and each response is
/// converted once the next one starts.
pub struct SessionReader {
    file: Arc<str>,
    threads: Vec<Thread>,
    thread_of: HashMap<String, usize>,
}

impl SessionReader {
    pub fn new(file: Arc<str>) -> SessionReader {
        SessionReader {
            file,
            threads: Vec::new(),
            thread_of: HashMap::new(),
        }
    }

    /// Takes one line of the session (line number, parsed JSON).
    pub fn push(&mut self, line: u64, value: Json) {
        let Json::Object(mut entry) = value else {
            return;
        };
        let text = |v: Option<Json>| match v {
            Some(Json::String(s)) => Some(s),
            _ => None,
        };
        let message = match entry.remove("message") {
            Some(Json::Object(mut m)) => Some(LineMessage {
                id: text(m.remove("id")),
                model: text(m.remove("model")),
                content: m.remove("content").unwrap_or(Json::Null),
                stop_reason: m.remove("stop_reason").unwrap_or(Json::Null),
            }),
            _ => None,
        };
        self.push_line(
            line,
            SessionLine {
                kind: text(entry.remove("type")).unwrap_or_default(),
                session: text(entry.remove("sessionId")),
                sidechain: entry.get("isSidechain").and_then(Json::as_bool),
                message,
            },
        );
    }

    /// Takes one line of the session as its text; `false` when the text is
    /// not a JSON object of the expected shape (the caller then looks at it
    /// as JSON). Only the fields the conversion needs are decoded.
    pub fn push_text(&mut self, line: u64, text: &str) -> bool {
        match serde_json::from_str::<SessionLine>(text) {
            Ok(l) => {
                self.push_line(line, l);
                true
            }
            Err(_) => false,
        }
    }

    fn push_line(&mut self, line: u64, entry: SessionLine) {
        if entry.kind != "user" && entry.kind != "assistant" {
            return;
        }
        let is_user = entry.kind == "user";
        let Some(message) = entry.message else {
            return;
        };
        let (threads, thread_of) = (&mut self.threads, &mut self.thread_of);
        let session = entry.session.as_deref().unwrap_or("session");
        let id = if entry.sidechain == Some(true) {
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
                    attempts: Vec::new(),
                    error: None,
                });
                threads.len() - 1
            }
        };
        let t = &mut threads[pos];
        let content = message.content;
        if is_user {
            t.last_response = None;
            t.messages.push(json!({"role": "user", "content": content}));
            return;
        }
        let response = message.id;
        if t.model.is_none() {
            t.model = message.model;
        }
        let joins = response.is_some() && response == t.last_response;
        let blocks = match content {
            Json::Array(blocks) => blocks,
            Json::String(s) => vec![json!({"type": "text", "text": s})],
            _ => Vec::new(),
        };
        let stop = message.stop_reason;
        if !joins && t.messages.iter().any(|m| m["role"] == "assistant") {
            t.flush(&self.file);
        }
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
    pub fn finish(self) -> Result<Vec<Trace>, SessionError> {
        let mut threads = self.threads;
        threads.sort_by_key(|t| t.id.ends_with("/sidechain"));
        threads
            .into_iter()
            .map(|mut t| {
                t.flush(&self.file);
                if let Some(e) = t.error {
                    return Err(e);
                }
                let mut attempts = t.attempts;
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
