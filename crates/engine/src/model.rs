//! The trace model: one [`Attempt`] per recorded LLM call, grouped into [`Trace`]s.
//!
//! Also the vocabulary a verdict is made of ([`Outcome`], [`Reason`]): an
//! input can carry a verdict upstream itself logged ([`Recorded`], from a
//! task log's `step_logs`), which the replay then takes as decided.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Why an attempt rolled back (or ended the loop at the limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    FormatError,
    Refusal,
    DuplicateQuery,
    UnknownTool,
    ToolError,
    EmptySearch,
}

impl Reason {
    pub const ALL: [Reason; 6] = [
        Reason::FormatError,
        Reason::Refusal,
        Reason::DuplicateQuery,
        Reason::UnknownTool,
        Reason::ToolError,
        Reason::EmptySearch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::FormatError => "format_error",
            Reason::Refusal => "refusal",
            Reason::DuplicateQuery => "duplicate_query",
            Reason::UnknownTool => "unknown_tool",
            Reason::ToolError => "tool_error",
            Reason::EmptySearch => "empty_search",
        }
    }

    pub fn from_name(name: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// What the loop did with an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Final,
    Rollback,
    End,
    LlmFailed,
    ContextExceeded,
    Crash,
    Unreachable,
}

impl Outcome {
    pub const ALL: [Outcome; 8] = [
        Outcome::Ok,
        Outcome::Final,
        Outcome::Rollback,
        Outcome::End,
        Outcome::LlmFailed,
        Outcome::ContextExceeded,
        Outcome::Crash,
        Outcome::Unreachable,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Final => "final",
            Outcome::Rollback => "rollback",
            Outcome::End => "end",
            Outcome::LlmFailed => "llm_failed",
            Outcome::ContextExceeded => "context_exceeded",
            Outcome::Crash => "crash",
            Outcome::Unreachable => "unreachable",
        }
    }
}

/// Where a verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The replay judged the attempt's recorded text.
    Replayed,
    /// Upstream's log says what happened; the text is gone (a task log's
    /// rolled-back turns, failed LLM calls).
    Recorded,
}

impl Source {
    pub const ALL: [Source; 2] = [Source::Replayed, Source::Recorded];

    pub fn name(self) -> &'static str {
        match self {
            Source::Replayed => "replayed",
            Source::Recorded => "recorded",
        }
    }
}

/// A duplicate query as upstream logged it (`Duplicate query detected`,
/// `Allowing duplicate query`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoggedQuery {
    pub tool: String,
    /// Upstream's fingerprint string (`<tool>_<query>`).
    pub query: String,
    /// `previous count: N`: times the query had run before.
    pub previous: Option<u32>,
}

/// A tool call as the log shows it running.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoggedCall {
    pub tool: String,
    /// The server, where the log names it (sub-agents' `Executing … on …`).
    pub server: Option<String>,
    /// `completed in …ms`: the call returned (its result, where logged).
    pub completed: bool,
    pub result: Option<String>,
    /// `failed to execute: …`: the call raised.
    pub error: Option<String>,
}

/// What a task log's `step_logs` say about one attempt.
///
/// An attempt whose text the log no longer holds (upstream popped a
/// rolled-back turn from its message history; a failed LLM call never got
/// there; a crashed sub-agent's history was never saved) is `decided`: the
/// replay takes `outcome` as given and moves its loop state as upstream's
/// loop did. A surviving turn is replayed from its text, and what the log
/// says about it is kept for the cross-check.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Recorded {
    pub decided: bool,
    /// What upstream did with it; `None` where the log stops before saying.
    pub outcome: Option<Outcome>,
    /// For rollbacks and loop ends whose message the reader knows.
    pub reason: Option<Reason>,
    /// Upstream's `turn_count` after the attempt (the `Turn: N` of the step
    /// that decided it).
    pub turn: Option<i64>,
    /// The rollback streak after the attempt, where the log states it.
    pub streak: Option<u32>,
    /// Refusal keywords upstream listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// The tool a rollback names.
    pub tool: Option<String>,
    /// The duplicate query a rollback names (`<tool>_<query>`).
    pub query: Option<String>,
    /// The tool result a rollback quotes (upstream keeps 200 characters).
    pub result: Option<String>,
    /// The error of a failed LLM call or of a crash.
    pub error: Option<String>,
    /// The message of the step that decided it, as logged.
    pub message: Option<String>,
    /// 0-based position in `step_logs` of its LLM call.
    pub step: usize,
    /// Duplicate queries let through at the rollback limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<LoggedQuery>,
    /// Sub-agent sessions started while it ran, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launched: Vec<String>,
    /// The tool calls the log shows, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<LoggedCall>,
    /// A `Recovery` step: the streak this attempt ended.
    pub recovered: Option<u32>,
    /// Not a log's verdict: the replay could not judge the attempt, a rule
    /// needing a tool result the input does not hold
    /// ([`Attempt::unseen_results`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unjudged: Option<UnseenResults>,
}

impl Recorded {
    /// The tool a rollback is blamed on: the one the message names, else
    /// the last call the log shows.
    pub fn blamed_tool(&self) -> Option<&str> {
        self.tool
            .as_deref()
            .or_else(|| self.calls.last().map(|c| c.tool.as_str()))
    }
}

/// What a task log's LLM call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallPurpose {
    /// A loop turn: an attempt (its `Recorded::step` is the call's step).
    Turn,
    /// A final summary or final answer (`Final Summary (attempt k/3)`, a
    /// sub-agent's `Final summary`, `Failure Experience Summary`): a call,
    /// never an attempt.
    Summary,
}

/// One LLM call as a task log's step log shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedLlmCall {
    /// 0-based position in `step_logs` of its `LLM Call` (or failure) step.
    pub step: usize,
    /// `main` or the sub-agent session it ran in.
    pub session: String,
    pub purpose: CallPurpose,
    /// No response came back (`LLM Call Failed`, `LLM Call ERROR`).
    pub failed: bool,
    /// Upstream's own retries inside the call, as logged before it: the
    /// warning step names (`LLM | Length Limit Reached`, `LLM | API Error`, …).
    pub retries: Vec<String>,
}

/// How a session's conversation opens, from its saved message history.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionOpening {
    pub session: String,
    pub system_prompt: Option<String>,
    /// The text of its first user message (the task or the subtask).
    pub first_user: Option<String>,
    /// The assistant texts the history kept, in order.
    pub kept: Vec<String>,
}

/// Every LLM call of a task log, in step order, with what is needed to
/// pair them with a recording of the same run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallLog {
    pub calls: Vec<LoggedLlmCall>,
    pub sessions: Vec<SessionOpening>,
    /// `start_time` / `end_time` as written (upstream's UTC+8 local time).
    pub start_time: Option<String>,
    pub end_time: Option<String>,
}

/// Where an input line came from. Ordered by file label, then line: a
/// trace's first line is its position ([`TracePos`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Origin {
    pub file: Arc<str>,
    /// 1-based line number (for whole-file formats, the first line of the record).
    pub line: u64,
}

/// Where a trace starts (the origin of its first line). Rankings break ties
/// by it, earlier first, and groups are listed by it: a key every process
/// can compute for its own share of the input, so reports made of partial
/// reports of any split equal one report of the whole (docs/partial.md).
pub type TracePos = Origin;

impl TracePos {
    /// The position of a trace whose first line has this origin; an empty
    /// trace sorts first.
    pub fn of_trace(trace: &Trace) -> TracePos {
        trace
            .attempts
            .first()
            .map_or_else(TracePos::nowhere, |a| a.origin.clone())
    }

    /// The position of nothing (an empty trace).
    pub fn nowhere() -> TracePos {
        Origin {
            file: Arc::from(""),
            line: 0,
        }
    }
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
    /// The harness marked the result as failed in a field of its own
    /// (Claude Code `is_error`, Inspect's `error`, an OpenHands error
    /// observation, …; docs/input-formats.md, "Failed tool results"): the
    /// replay takes it as upstream's executor takes an exception in the
    /// tool, a tool error, whatever the text says. MiroThinker's own
    /// formats have no such field: always `false` there.
    pub failed: bool,
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
    /// The model that made this call: the format's own record of it
    /// (`meta.model`, a message's or response's `model`, …), else the one
    /// `read::attribution::settle` gives it from its trace.
    pub model: Option<Arc<str>>,
    /// `meta.max_turns`: the main agent's turn limit, read from a trace's first line.
    pub max_turns: Option<i64>,
    /// What upstream logged about this attempt (task logs only).
    pub recorded: Option<Arc<Recorded>>,
    /// Written by a harness that calls tools natively (another harness's
    /// transcript, not a MiroThinker line): a response with tool calls is a
    /// tool-call turn whatever its text, and a `finish_reason` of
    /// `tool_calls` is an ordinary end (upstream's client rejects it only
    /// because MiroThinker never sends tool definitions).
    pub native_tools: bool,
    /// Tokens this LLM call used, where the format records them per call.
    pub usage: Option<Usage>,
    /// The LLM call's duration in seconds, where the format records it.
    pub duration_s: Option<f64>,
    /// The task's result, carried by the trace's first attempt (the reader
    /// puts it there; later attempts leave it `None`).
    pub task_result: Option<TaskResult>,
    /// The attempt's calls may have run but the input holds none of their
    /// results (a recording: upstream popped the rolled-back turn, so no
    /// later request shows what its tools returned). The rules that judge
    /// a result do not judge this attempt's: its verdict is marked as not
    /// judged ([`UnseenResults`]), never counted clean.
    pub unseen_results: Option<UnseenResults>,
}

/// Why an attempt's tool results are not in the input, and what the input
/// shows of its fate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnseenResults {
    /// The next request of its conversation repeats the attempt's own:
    /// the turn was rolled back.
    RolledBack,
    /// No later request of its conversation carries on from it (the last
    /// call of a session, or a history rewritten): its fate is unknown.
    Unknown,
}

impl UnseenResults {
    /// Why its verdict is not judged, as reports say it.
    pub fn message(self) -> &'static str {
        match self {
            UnseenResults::RolledBack => "rolled back (the next request repeats it); its tool results are in no later request, so the rules that judge a result could not judge it",
            UnseenResults::Unknown => "its tool results are in no later request, so the rules that judge a result could not judge it",
        }
    }
}

/// Tokens one LLM call used, as its harness recorded them. Each count is
/// `None` where the format does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Input tokens served from a prompt cache (part of `input_tokens`).
    pub cached_input_tokens: Option<u64>,
}

/// A task's result, as the harness or its judge recorded it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskResult {
    /// Passed (`true`) or failed (`false`); `None` when only a score is known.
    pub success: Option<bool>,
    /// A numeric score or reward, when recorded.
    pub score: Option<f64>,
    /// Where the result was read from (`meta.success`, `final_judge_result`,
    /// `status`, `reward`, an Inspect scorer's name, …), for the report to say.
    pub basis: Arc<str>,
}

impl Attempt {
    /// An attempt with nothing recorded yet: no text, no calls, no results, a
    /// plain stop. Readers fill in what their format carries.
    pub fn blank(
        origin: Origin,
        trace_id: Arc<str>,
        session: Arc<str>,
        agent: Arc<str>,
    ) -> Attempt {
        Attempt {
            origin,
            trace_id,
            session,
            agent,
            system_prompt: None,
            content: String::new(),
            tool_calls: None,
            output: None,
            finish: Finish::Stop,
            llm_error: None,
            tool_results: Vec::new(),
            meta: None,
            model: None,
            max_turns: None,
            recorded: None,
            native_tools: false,
            usage: None,
            duration_s: None,
            task_result: None,
            unseen_results: None,
        }
    }

    /// An attempt known only from upstream's log: no text, its verdict decided.
    pub fn recorded_only(
        origin: Origin,
        trace_id: Arc<str>,
        session: Arc<str>,
        agent: Arc<str>,
        recorded: Recorded,
    ) -> Attempt {
        Attempt {
            recorded: Some(Arc::new(Recorded {
                decided: true,
                ..recorded
            })),
            ..Attempt::blank(origin, trace_id, session, agent)
        }
    }

    /// The verdict upstream logged, when the replay is to take it as decided.
    pub fn decided(&self) -> Option<&Recorded> {
        self.recorded.as_deref().filter(|r| r.decided)
    }

    /// Sets `meta` and the fields read from it. A model the attempt
    /// already has (its own, read from its message) is kept: `meta` here
    /// is a record's, and names the run's.
    pub fn set_meta(&mut self, meta: serde_json::Value) {
        if self.model.is_none() {
            self.model = meta
                .get("model")
                .and_then(serde_json::Value::as_str)
                .map(Arc::from);
        }
        self.max_turns = meta.get("max_turns").and_then(serde_json::Value::as_i64);
        self.meta = Some(meta);
    }
}

/// All attempts of one task run, in input order (for task logs: in the
/// order upstream ran them).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub trace_id: Arc<str>,
    pub attempts: Vec<Attempt>,
    /// The model the run names as a whole (a task log's `env_info`,
    /// Inspect's `eval.model`, …): the model of its attempts that name
    /// none of their own (`read::attribution`).
    pub model: Option<Arc<str>>,
    /// Records of the trace that its format knows and that are not
    /// attempts nor their context (an OpenHands V1 state update, a tau2
    /// user's tool result), counted per kind (`FORMAT:KIND`), so every
    /// record read is accounted for (`input.skipped` in the JSON report).
    pub not_attempts: Vec<(String, u64)>,
    /// Every LLM call a task log's step log shows (task logs only): what
    /// a recording of the same run is joined against (`read::join`).
    pub call_log: Option<Arc<CallLog>>,
}

impl Trace {
    pub fn new(trace_id: impl Into<Arc<str>>, attempts: Vec<Attempt>) -> Trace {
        Trace {
            trace_id: trace_id.into(),
            attempts,
            model: None,
            not_attempts: Vec::new(),
            call_log: None,
        }
    }

    /// Whether some attempt carries what upstream logged (a task log).
    pub fn has_log(&self) -> bool {
        self.attempts.iter().any(|a| a.recorded.is_some())
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
            failed: false,
        };
        assert_eq!(r.effective_text(), "Error executing tool x");
        assert_eq!(ToolResult::default().effective_text(), "None");
    }
}
