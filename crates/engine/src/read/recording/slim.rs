//! What reading a recording alone keeps of each call until the file ends.
//! A request resends its whole conversation, so a run of many turns holds
//! its history once per call: kept whole, a recording of a benchmark run
//! would be held many times over in memory. Each call keeps its answer
//! and, of its request, the last turn (from its last assistant message
//! on: the results a turn got are read from there), its length, hashes of
//! its conversation and of its opening, and its system prompt shared with
//! every call that sends the same one.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use serde_json::Value as Json;

use super::call::RecordedCall;
use super::conversation::is_summary;

/// A call, slimmed.
#[derive(Debug, Clone, PartialEq)]
pub struct Slim {
    /// The call, its request's messages cut to the last turn and its
    /// system prompt moved to [`Slim::system_prompt`].
    pub call: RecordedCall,
    pub system_prompt: Option<Arc<str>>,
    /// How many messages the request sent.
    pub len: usize,
    /// Where the kept messages start among the request's.
    pub tail_from: usize,
    /// The system prompt and every message, hashed: requests that send the
    /// same conversation hash alike.
    pub conversation: u64,
    /// The system prompt and first user message, hashed: which
    /// conversation the call belongs to.
    pub key: u64,
    /// The request holds no assistant message (a conversation's opening).
    pub opening: bool,
    /// An opening's first user message (a sub-agent's is its subtask).
    pub first_user: Option<String>,
    /// A final-answer or summary call ([`is_summary`]).
    pub summary: bool,
}

impl Slim {
    /// Whether two calls sent the same conversation (their model and
    /// limits may differ).
    pub fn same_conversation(&self, other: &Slim) -> bool {
        self.call.request.unreadable.is_none()
            && other.call.request.unreadable.is_none()
            && self.conversation == other.conversation
    }

    /// The request's message at `index`, where it is kept.
    pub fn message(&self, index: usize) -> Option<&Json> {
        let at = index.checked_sub(self.tail_from)?;
        self.call.request.messages.get(at)
    }
}

/// A hasher that takes JSON text as it is written.
struct HashWriter(DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn role(m: &Json) -> Option<&str> {
    m.get("role").and_then(Json::as_str)
}

/// Slims calls, sharing the system prompts they send.
#[derive(Default)]
pub struct Slimmer {
    prompts: HashMap<u64, Arc<str>>,
}

impl Slimmer {
    pub fn slim(&mut self, mut call: RecordedCall) -> Slim {
        let request = &mut call.request;
        let prompt = request.system_prompt.take();
        let mut key = DefaultHasher::new();
        prompt.hash(&mut key);
        let first_user = request.first_user_text();
        first_user.hash(&mut key);
        let mut whole = HashWriter(DefaultHasher::new());
        prompt.hash(&mut whole.0);
        // Writing a JSON value to a hasher cannot fail.
        let _ = serde_json::to_writer(&mut whole, &request.messages);
        let system_prompt = prompt.map(|p| {
            let mut h = DefaultHasher::new();
            p.hash(&mut h);
            self.prompts
                .entry(h.finish())
                .or_insert_with(|| Arc::from(p))
                .clone()
        });
        let summary = is_summary(request);
        let len = request.messages.len();
        let last_assistant = request
            .messages
            .iter()
            .rposition(|m| role(m) == Some("assistant"));
        let tail_from = last_assistant.unwrap_or(len);
        request.messages.drain(..tail_from);
        request.messages.shrink_to_fit();
        Slim {
            call,
            system_prompt,
            len,
            tail_from,
            conversation: whole.0.finish(),
            key: key.finish(),
            opening: last_assistant.is_none(),
            first_user: first_user.filter(|_| last_assistant.is_none()),
            summary,
        }
    }
}
