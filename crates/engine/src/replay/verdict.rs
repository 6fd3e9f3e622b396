//! Verdicts: what upstream did with each input line.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::detect::cause::{Cause, Field};
use crate::detect::format_error::FormatWhy;
use crate::detect::Reason;
use crate::model::{Recorded, TaskResult, Usage};
use crate::pyjson::{self, PyStr};
use crate::read::{Attempt, Origin};
use crate::repair::Call;

pub use crate::model::{Outcome, Source};

/// Limit behaviours and recoveries marked on an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    AllowedDuplicate,
    Recovered,
    ToolErrorPassed,
}

impl Flag {
    pub fn name(self) -> &'static str {
        match self {
            Flag::AllowedDuplicate => "allowed_duplicate",
            Flag::Recovered => "recovered",
            Flag::ToolErrorPassed => "tool_error_passed",
        }
    }
}

/// A duplicate-query hit: the call's fingerprint was already recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryHit {
    pub tool: String,
    /// Upstream's fingerprint string, e.g. `google_search_<q>`.
    pub query: PyStr,
    /// Let through at the rollback limit instead of rolled back.
    pub allowed: bool,
    /// The line of the attempt that first made the query, when the replay
    /// saw it (not for a task log's own verdicts). Shown by timelines only.
    pub first_line: Option<u64>,
}

/// The verdict for one input line.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub trace_id: Arc<str>,
    pub session: Arc<str>,
    pub agent: Arc<str>,
    /// 0-based position within its session.
    pub index: usize,
    pub origin: Origin,
    pub outcome: Outcome,
    pub reason: Option<Reason>,
    pub turn: Option<i64>,
    pub consecutive_rollbacks: Option<u32>,
    /// Sorted.
    pub flags: Vec<Flag>,
    pub calls: Vec<Call>,
    pub executed: usize,
    /// The exception text, for `crash`.
    pub error: Option<String>,
    /// Exact duplicates met (rolled back or allowed), in call order.
    pub duplicates: Vec<QueryHit>,
    /// Queries that upstream's exact match let through but that equal an
    /// earlier query of the session after case/space/punctuation folding.
    pub near_duplicates: Vec<QueryHit>,
    /// The refusal keyword that matched, for refusal rollbacks and ends.
    pub refusal_keyword: Option<String>,
    /// The MCP tag a format error leaked. Shown by timelines only.
    pub leaked_tag: Option<String>,
    /// Which mistake a replayed format error is (`why` in the JSON line).
    pub format_why: Option<FormatWhy>,
    /// Which failed call, invented tool, tool error or repeated query a
    /// replayed `llm_failed`, `unknown_tool`, `tool_error` or
    /// `duplicate_query` verdict is (`why` in the JSON line).
    pub cause: Option<Cause>,
    /// `meta.model` of the line, when recorded.
    pub model: Option<Arc<str>>,
    /// What upstream logged, when the verdict is the log's (source `recorded`).
    pub recorded: Option<Arc<Recorded>>,
    /// The attempt's tokens, as its reader found them (for the cost figures).
    pub usage: Option<Usage>,
    /// The LLM call's seconds, as its reader found them.
    pub duration_s: Option<f64>,
    /// The task's result, on the verdict of the trace's first attempt.
    pub task_result: Option<TaskResult>,
    /// The attempt's tool results that read like errors yet that the
    /// rules could not judge ([`crate::detect::bad_tool_result::unmatched_error`]),
    /// counted over every result the attempt holds, run or not. Not in
    /// the verdict line: a blind-spot figure (docs/metrics.md).
    pub unmatched_errors: u32,
    /// Written by a native tool-calling harness ([`Attempt::native_tools`]).
    pub native_tools: bool,
    /// Calls started ([`Verdict::executed`]) of tools with a duplicate-query
    /// fingerprint: where none is, that rule cannot fire (a blind spot).
    pub query_calls: u32,
    /// Calls started of the policy's empty-search tools (the same for the
    /// empty-search rule).
    pub search_calls: u32,
}

impl Verdict {
    /// A verdict for `attempt` (the `index`-th of its session) with nothing
    /// decided yet but the outcome.
    pub fn blank(attempt: &Attempt, index: usize, outcome: Outcome) -> Verdict {
        Verdict {
            trace_id: attempt.trace_id.clone(),
            session: attempt.session.clone(),
            agent: attempt.agent.clone(),
            index,
            origin: attempt.origin.clone(),
            outcome,
            reason: None,
            turn: None,
            consecutive_rollbacks: None,
            flags: Vec::new(),
            calls: Vec::new(),
            executed: 0,
            error: None,
            duplicates: Vec::new(),
            near_duplicates: Vec::new(),
            refusal_keyword: None,
            leaked_tag: None,
            format_why: None,
            cause: None,
            model: attempt.model.clone(),
            recorded: None,
            usage: attempt.usage,
            duration_s: attempt.duration_s,
            task_result: attempt.task_result.clone(),
            unmatched_errors: 0,
            native_tools: attempt.native_tools,
            query_calls: 0,
            search_calls: 0,
        }
    }

    /// Whether the replay judged the attempt or took upstream's logged verdict.
    pub fn source(&self) -> Source {
        if self.recorded.is_some() {
            Source::Recorded
        } else {
            Source::Replayed
        }
    }

    /// Appends the verdict as one JSON line (the spec's fields, `source`,
    /// `error` for crashes and, for a logged verdict, what the log said
    /// under `logged`), Python-compatible: `NaN`, big ints and surrogates
    /// in arguments survive.
    pub fn write_json_line(&self, out: &mut String) {
        out.push_str("{\"trace_id\": ");
        push_json_str(out, &self.trace_id);
        out.push_str(", \"session\": ");
        push_json_str(out, &self.session);
        out.push_str(&format!(
            ", \"index\": {}, \"outcome\": \"{}\"",
            self.index,
            self.outcome.name()
        ));
        out.push_str(", \"reason\": ");
        match self.reason {
            Some(r) => out.push_str(&format!("\"{}\"", r.name())),
            None => out.push_str("null"),
        }
        out.push_str(", \"turn\": ");
        match self.turn {
            Some(t) => out.push_str(&t.to_string()),
            None => out.push_str("null"),
        }
        out.push_str(", \"consecutive_rollbacks\": ");
        match self.consecutive_rollbacks {
            Some(c) => out.push_str(&c.to_string()),
            None => out.push_str("null"),
        }
        out.push_str(", \"flags\": [");
        for (i, f) in self.flags.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&format!("\"{}\"", f.name()));
        }
        out.push_str("], \"calls\": [");
        for (i, c) in self.calls.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_call(c, out);
        }
        out.push_str(&format!("], \"executed\": {}", self.executed));
        out.push_str(&format!(", \"source\": \"{}\"", self.source().name()));
        if let Some(e) = &self.error {
            out.push_str(", \"error\": ");
            push_json_str(out, e);
        }
        if let Some(why) = self.why_json() {
            out.push_str(", \"why\": ");
            out.push_str(&why);
        }
        if let Some(r) = &self.recorded {
            out.push_str(", \"logged\": ");
            write_logged(r, out);
        }
        out.push('}');
    }

    /// The JSON text of the line's `why` field, for a replayed format
    /// error or a verdict with a [`Cause`].
    pub fn why_json(&self) -> Option<String> {
        if let Some(c) = &self.cause {
            let mut out = String::from("{\"kind\": ");
            push_json_str(&mut out, &c.kind());
            for (key, value) in c.fields() {
                out.push_str(&format!(", \"{key}\": "));
                match value {
                    Field::Text(Some(t)) => push_json_str(&mut out, &t),
                    Field::Num(Some(n)) => out.push_str(&n.to_string()),
                    Field::Text(None) | Field::Num(None) => out.push_str("null"),
                }
            }
            out.push('}');
            return Some(out);
        }
        self.format_why.as_ref().map(|w| {
            let mut out = format!("{{\"kind\": \"{}\", \"tag\": ", w.kind.name());
            push_json_str(&mut out, &w.tag);
            out.push_str(&format!(", \"offset\": {}}}", w.offset));
            out
        })
    }

    /// The `kind` of the line's `why`: a format error's or a cause's.
    pub fn why_kind(&self) -> Option<String> {
        match (&self.cause, &self.format_why) {
            (Some(c), _) => Some(c.kind()),
            (None, Some(w)) => Some(w.kind.name().to_string()),
            (None, None) => None,
        }
    }

    /// The JSON text of the line's `logged` field, for a logged verdict.
    pub fn logged_json(&self) -> Option<String> {
        self.recorded.as_ref().map(|r| {
            let mut s = String::new();
            write_logged(r, &mut s);
            s
        })
    }

    /// The verdict as a JSON line (without the newline).
    pub fn to_json_line(&self) -> String {
        let mut s = String::new();
        self.write_json_line(&mut s);
        s
    }
}

/// What the log said of an attempt, for `logged`: the step that decided it
/// and the details upstream quoted.
fn write_logged(r: &Recorded, out: &mut String) {
    let mut obj = serde_json::Map::new();
    obj.insert("step".into(), r.step.into());
    let mut text = |key: &str, v: &Option<String>| {
        if let Some(v) = v {
            obj.insert(key.into(), v.clone().into());
        }
    };
    text("message", &r.message);
    text("tool", &r.tool);
    text("query", &r.query);
    text("result", &r.result);
    text("error", &r.error);
    if !r.keywords.is_empty() {
        obj.insert("keywords".into(), r.keywords.clone().into());
    }
    if !r.launched.is_empty() {
        obj.insert("launched".into(), r.launched.clone().into());
    }
    if !r.calls.is_empty() {
        let tools: Vec<&str> = r.calls.iter().map(|c| c.tool.as_str()).collect();
        obj.insert("tools".into(), tools.into());
    }
    if let Some(u) = r.unjudged {
        obj.insert(
            "unjudged".into(),
            serde_json::to_value(u).unwrap_or_default(),
        );
    }
    out.push_str(&serde_json::Value::Object(obj).to_string());
}

fn write_call(c: &Call, out: &mut String) {
    out.push_str("{\"server_name\": ");
    push_json_str(out, &c.server_name);
    out.push_str(", \"tool_name\": ");
    push_json_str(out, &c.tool_name);
    out.push_str(", \"arguments\": ");
    pyjson::dump_to(&c.arguments, out);
    out.push_str(", \"id\": ");
    out.push_str(&serde_json::to_string(&c.id).unwrap_or_else(|_| "null".into()));
    out.push_str(&format!(
        ", \"json\": \"{}\", \"repairs\": [",
        c.json.name()
    ));
    for (i, r) in c.repairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&format!("\"{}\"", r.name()));
    }
    out.push(']');
    if c.json == crate::parse::JsonPath::Repaired {
        out.push_str(", \"fixes\": [");
        for (i, f) in c.fixes.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&format!("\"{}\"", f.name()));
        }
        out.push(']');
    }
    out.push('}');
}

fn push_json_str(out: &mut String, s: &str) {
    pyjson::dump_to(&pyjson::Value::str(s), out);
}
