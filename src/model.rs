//! The trace model: one [`Attempt`] per recorded LLM call, grouped into [`Trace`]s.

use std::sync::Arc;

use crate::read::RecordedTrace;

/// Where an input line came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: Arc<str>,
    /// 1-based line number (for whole-file formats, the first line of the record).
    pub line: u64,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// How the model's response ended (`finish_reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// `"stop"`, absent, or null.
    Stop,
    /// `"length"`: truncated output.
    Length,
    /// Anything else: upstream's client raises on it (a failed LLM call).
    Unsupported(String),
}

/// One tool's answer, as upstream's tool manager would have returned it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult {
    /// The `result` text ("" when absent); non-string values are their JSON text.
    pub result: String,
    /// The `error` value's text when the key is present (`None` text for null).
    pub error: Option<String>,
}

impl ToolResult {
    /// `tool_result.get("result") if tool_result.get("result") else tool_result.get("error")`,
    /// as `str()` sees it.
    pub fn effective_text(&self) -> &str {
        if !self.result.is_empty() {
            &self.result
        } else {
            self.error.as_deref().unwrap_or("None")
        }
    }
}

/// One recorded LLM attempt (one input line of the native format).
///
/// The strings that repeat from line to line are shared (`Arc<str>`), so a
/// verdict can carry them without a copy.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub origin: Origin,
    pub trace_id: Arc<str>,
    /// `"main"` or a sub-agent session id such as `agent-browsing_1`.
    pub session: Arc<str>,
    /// `"main"` or the sub-agent name.
    pub agent: Arc<str>,
    /// Replaces the tool→server mapping from this line on, when present.
    pub system_prompt: Option<Arc<str>>,
    /// The assistant text (`null` → `""`).
    pub content: String,
    /// Chat Completions `tool_calls`, as recorded (parsed by the pipeline).
    pub tool_calls: Option<serde_json::Value>,
    /// Responses API `output` items, as recorded (present and not null).
    pub output: Option<serde_json::Value>,
    pub finish: Finish,
    /// The LLM call failed with this error and gave no response.
    pub llm_error: Option<String>,
    pub tool_results: Vec<ToolResult>,
    /// The whole `meta` object, when the reader was asked to keep it (export).
    pub meta: Option<serde_json::Value>,
    /// `meta.model`, when a string.
    pub model: Option<Arc<str>>,
    /// `meta.max_turns`: the main agent's turn limit, read from a trace's first line.
    pub max_turns: Option<i64>,
}

impl Attempt {
    /// Sets `meta` and the fields read from it.
    pub fn set_meta(&mut self, meta: serde_json::Value) {
        self.model = meta
            .get("model")
            .and_then(serde_json::Value::as_str)
            .map(Arc::from);
        self.max_turns = meta.get("max_turns").and_then(serde_json::Value::as_i64);
        self.meta = Some(meta);
    }
}

/// All attempts of one task run, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub trace_id: Arc<str>,
    pub attempts: Vec<Attempt>,
    /// What upstream itself logged about this run (task logs only).
    pub recorded: Option<Box<RecordedTrace>>,
}

impl Trace {
    /// A trace without a recorded view.
    pub fn new(trace_id: impl Into<Arc<str>>, attempts: Vec<Attempt>) -> Trace {
        Trace {
            trace_id: trace_id.into(),
            attempts,
            recorded: None,
        }
    }
}

/// Default agent name for a session: the session id without its `_N` suffix.
pub fn agent_of_session(session: &str) -> String {
    if session == "main" {
        return "main".into();
    }
    match session.rsplit_once('_') {
        Some((agent, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            agent.to_string()
        }
        _ => session.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_strips_launch_counter() {
        assert_eq!(agent_of_session("agent-browsing_3"), "agent-browsing");
        assert_eq!(agent_of_session("main"), "main");
        assert_eq!(agent_of_session("odd_name"), "odd_name");
    }

    #[test]
    fn effective_text_prefers_nonempty_result() {
        let r = ToolResult {
            result: String::new(),
            error: Some("Error executing tool x".into()),
        };
        assert_eq!(r.effective_text(), "Error executing tool x");
        assert_eq!(ToolResult::default().effective_text(), "None");
    }
}
