//! Claude Code sessions → traces. A session file has one JSON object per
//! line: `user` and `assistant` lines carry an Anthropic Messages `message`
//! (`content` a string or blocks: `text`, `thinking`, `tool_use`,
//! `tool_result`); other lines (`summary`, `system`, file snapshots, queue
//! operations) are bookkeeping. One API response is written as several
//! assistant lines, one per content block, that share `message.id`: they
//! are joined back into one response. Since Claude Code 2.1.38 the
//! `tool_result` lines of a response's parallel tool calls are written
//! between those lines; a user line holding only tool results leaves the
//! response open, so it is still one attempt, its results matched to its
//! calls by `tool_use_id`. Lines of a sub-agent's side chain
//! (`isSidechain`) form a trace of their own, `<sessionId>/sidechain`; one
//! per sub-agent where the lines name it (`agentId`, as parallel `Task`
//! calls write them, one after another or interleaved):
//! `<sessionId>/sidechain/<agentId>`, so each sub-agent's loop is replayed
//! on its own, not as the continuation of the one before.
//!
//! Each response's `message.usage` (the last line's) is its attempt's
//! usage; its duration runs from the line before the response to its last
//! line, where both timestamps are read.
//!
//! The lines are rewritten as a message list and read as a chat
//! transcript, whose reader knows the content blocks ([`super::calls`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::chat::{self, ChatError, SessionTarget};
use super::clock;
use crate::model::{Attempt, Origin, Trace, Usage};

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
    #[serde(rename = "agentId", default)]
    agent: Option<Json>,
    #[serde(default)]
    message: Option<LineMessage>,
    #[serde(default)]
    timestamp: Option<String>,
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
    #[serde(default)]
    usage: Option<Json>,
}

/// One conversation being rebuilt.
struct Thread {
    id: String,
    /// A sub-agent's side chain (its traces come after the main ones).
    side: bool,
    first_line: u64,
    /// Messages since the last response converted (that response first).
    messages: Vec<Json>,
    /// Where in `messages` the last assistant message is: a response's
    /// lines are joined into it without searching back past the results
    /// written between them (that search took time quadratic in a
    /// response's calls).
    last_assistant: Option<usize>,
    /// `message.id` of the last assistant message, to join its lines.
    last_response: Option<String>,
    attempts: Vec<Attempt>,
    error: Option<SessionError>,
    /// The timestamp of the thread's latest line.
    last_timestamp: Option<String>,
    /// What the open response's lines record of its call.
    call: Call,
}

/// The open response's usage and timing.
#[derive(Default)]
struct Call {
    usage: Option<Usage>,
    /// The timestamp of the line before the response's first line.
    asked: Option<String>,
    /// The timestamp of the response's latest line.
    answered: Option<String>,
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
        self.last_assistant = None;
        let call = std::mem::take(&mut self.call);
        match converted {
            Ok(mut attempts) => {
                // One response held: its attempt gets the call's figures.
                if let [attempt] = attempts.as_mut_slice() {
                    attempt.usage = call.usage;
                    attempt.duration_s =
                        clock::between(call.asked.as_deref(), call.answered.as_deref());
                }
                self.attempts.extend(attempts)
            }
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
                usage: m.remove("usage"),
            }),
            _ => None,
        };
        self.push_line(
            line,
            SessionLine {
                kind: text(entry.remove("type")).unwrap_or_default(),
                session: text(entry.remove("sessionId")),
                sidechain: entry.get("isSidechain").and_then(Json::as_bool),
                agent: entry.remove("agentId"),
                message,
                timestamp: text(entry.remove("timestamp")),
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
        let side = entry.sidechain == Some(true);
        let agent = match &entry.agent {
            Some(Json::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(n @ Json::Number(_)) => Some(n.to_string()),
            _ => None,
        };
        let id = match (side, agent) {
            (true, Some(agent)) => format!("{session}/sidechain/{agent}"),
            (true, None) => format!("{session}/sidechain"),
            (false, _) => session.to_string(),
        };
        let pos = match thread_of.get(&id) {
            Some(&p) => p,
            None => {
                thread_of.insert(id.clone(), threads.len());
                threads.push(Thread {
                    id,
                    side,
                    first_line: line,
                    messages: Vec::new(),
                    last_assistant: None,
                    last_response: None,
                    attempts: Vec::new(),
                    error: None,
                    last_timestamp: None,
                    call: Call::default(),
                });
                threads.len() - 1
            }
        };
        let t = &mut threads[pos];
        let content = message.content;
        let timestamp = entry.timestamp;
        if is_user {
            // The results of the open response's calls (written between
            // its lines since Claude Code 2.1.38) leave it open.
            if !only_tool_results(&content) {
                t.last_response = None;
            }
            t.messages.push(json!({"role": "user", "content": content}));
            if timestamp.is_some() {
                t.last_timestamp = timestamp;
            }
            return;
        }
        let response = message.id;
        // Claude Code names the messages it writes itself (an API error
        // shown as a reply) `<synthetic>`: not a model, so such an attempt
        // takes its session's (`read::attribution`).
        let model = message.model.filter(|m| m != "<synthetic>");
        let joins = response.is_some() && response == t.last_response;
        let blocks = match content {
            Json::Array(blocks) => blocks,
            Json::String(s) => vec![json!({"type": "text", "text": s})],
            _ => Vec::new(),
        };
        let stop = message.stop_reason;
        if !joins && t.last_assistant.is_some() {
            t.flush(&self.file);
        }
        if !joins {
            t.call.asked = t.last_timestamp.clone();
        }
        let usage = message.usage.as_ref().and_then(usage_of);
        if usage.is_some() {
            t.call.usage = usage;
        }
        if timestamp.is_some() {
            t.call.answered = timestamp.clone();
            t.last_timestamp = timestamp;
        }
        let open = match t.last_assistant.filter(|_| joins) {
            Some(at) => t.messages.get_mut(at),
            None => None,
        };
        match open {
            Some(Json::Object(last)) => {
                if let Some(Json::Array(existing)) = last.get_mut("content") {
                    existing.extend(blocks);
                }
                if !stop.is_null() {
                    last.insert("stop_reason".into(), stop);
                }
            }
            _ => {
                let mut m = json!({
                    "role": "assistant",
                    "content": blocks,
                    "stop_reason": stop,
                });
                if let Some(model) = model {
                    m["model"] = Json::from(model);
                }
                t.last_assistant = Some(t.messages.len());
                t.messages.push(m);
            }
        }
        t.last_response = response;
    }

    /// The session's traces: each main conversation, then side chains.
    pub fn finish(self) -> Result<Vec<Trace>, SessionError> {
        let mut threads = self.threads;
        threads.sort_by_key(|t| t.side);
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
                Ok(Trace::new(t.id, attempts))
            })
            .collect()
    }
}

/// Whether a user line's content is tool results only (no text typed).
fn only_tool_results(content: &Json) -> bool {
    match content {
        Json::Array(blocks) => {
            !blocks.is_empty()
                && blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Json::as_str) == Some("tool_result"))
        }
        _ => false,
    }
}

/// An Anthropic Messages `usage`: `input_tokens` counts only the uncached
/// input, the cache reads and writes are counted apart.
fn usage_of(u: &Json) -> Option<Usage> {
    let count = |k: &str| u.get(k).and_then(Json::as_u64);
    let (input, output) = (count("input_tokens"), count("output_tokens"));
    if input.is_none() && output.is_none() {
        return None;
    }
    let read = count("cache_read_input_tokens").unwrap_or(0);
    let write = count("cache_creation_input_tokens").unwrap_or(0);
    Some(Usage {
        input_tokens: input.map(|i| i.saturating_add(read).saturating_add(write)),
        output_tokens: output,
        cached_input_tokens: input.map(|_| read),
    })
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
                json!({"type": "assistant", "sessionId": s, "message": {"id": "m2", "model": "<synthetic>", "role": "assistant",
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
        // A message Claude Code wrote itself names no model.
        assert_eq!(main.attempts[1].model, None);
        assert_eq!(main.attempts[1].content, "There is a.txt.");
        assert_eq!(&*traces[1].trace_id, "s1/sidechain");
    }

    /// Claude Code 2.1.38+: the results of parallel calls come between
    /// the lines of their response, in any order.
    #[test]
    fn results_between_the_lines_of_a_response_keep_it_one_attempt() {
        let s = "s2";
        let usage = json!({"input_tokens": 3, "cache_creation_input_tokens": 10,
                           "cache_read_input_tokens": 100, "output_tokens": 7});
        let call = |id: &str, n: &str, ts: &str| {
            json!({"type": "assistant", "sessionId": s,
            "timestamp": ts, "message": {"id": id, "role": "assistant", "usage": usage,
            "content": [{"type": "tool_use", "id": n, "name": "Bash", "input": {"command": n}}]}})
        };
        let result = |n: &str, ts: &str| {
            json!({"type": "user", "sessionId": s, "timestamp": ts,
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": n, "content": format!("out {n}")}]}})
        };
        let lines = vec![
            json!({"type": "user", "sessionId": s, "timestamp": "2026-02-10T09:00:00Z",
                   "message": {"role": "user", "content": "go"}}),
            call("m1", "t1", "2026-02-10T09:00:01Z"),
            result("t1", "2026-02-10T09:00:01.5Z"),
            call("m1", "t2", "2026-02-10T09:00:02Z"),
            call("m1", "t3", "2026-02-10T09:00:02.5Z"),
            result("t3", "2026-02-10T09:00:03Z"),
            result("t2", "2026-02-10T09:00:04Z"),
            json!({"type": "assistant", "sessionId": s, "timestamp": "2026-02-10T09:00:06Z",
                   "message": {"id": "m2", "role": "assistant",
                   "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}}),
        ];
        let numbered = lines
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, v))
            .collect();
        let traces = from_session_lines(numbered, &"s.jsonl".into()).unwrap();
        let a = &traces[0].attempts;
        assert_eq!(a.len(), 2);
        let calls: Vec<&str> = a[0]
            .tool_calls
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(calls, ["t1", "t2", "t3"]);
        let results: Vec<&str> = a[0]
            .tool_results
            .iter()
            .map(|r| r.result.as_str())
            .collect();
        assert_eq!(results, ["out t1", "out t2", "out t3"]);
        assert_eq!(
            a[0].usage,
            Some(Usage {
                input_tokens: Some(113),
                output_tokens: Some(7),
                cached_input_tokens: Some(100)
            })
        );
        assert_eq!(a[0].duration_s, Some(2.5));
        // From the last result to the answer; no usage recorded.
        assert_eq!(a[1].duration_s, Some(2.0));
        assert_eq!(a[1].usage, None);
    }

    #[test]
    fn typed_text_closes_the_response() {
        let s = "s3";
        let line = |kind: &str, id: Option<&str>, content: Json| json!({"type": kind, "sessionId": s, "message": {"id": id, "role": kind, "content": content}});
        let lines = vec![
            line(
                "assistant",
                Some("m1"),
                json!([{"type": "text", "text": "a"}]),
            ),
            line("user", None, json!("and then?")),
            line(
                "assistant",
                Some("m1"),
                json!([{"type": "text", "text": "b"}]),
            ),
        ];
        let numbered = lines
            .into_iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, v))
            .collect();
        let traces = from_session_lines(numbered, &"s.jsonl".into()).unwrap();
        assert_eq!(traces[0].attempts.len(), 2);
    }
}
