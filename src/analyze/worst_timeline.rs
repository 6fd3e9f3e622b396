//! A worst trace's timeline, kept so a report can open it: one row per
//! attempt with its outcome, reason, what caused it, calls and repairs.
//!
//! Only the worst traces keep one, and each is cut to [`MAX_ROWS`] rows
//! with short excerpts, so a report's size does not grow with its input.
//! Workers fold small parts of the input, and each part's own ranking
//! admits nearly every trace; a [`WorstGate`] shared by the parts of a run
//! lets a part build a timeline only for a trace that still ranks among
//! the worst seen anywhere, so few are built at all.

use std::cmp::Reverse;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::rank::TopK;
use crate::detect::Reason;
use crate::model::{Attempt, TracePos};
use crate::parse::JsonPath;
use crate::pyjson;
use crate::render::format::shorten;
use crate::repair::Repair;
use crate::replay::{Flag, Outcome, Verdict};

/// Attempts shown per timeline; the rest are counted in [`Timeline::omitted`].
pub const MAX_ROWS: usize = 200;
/// Longest excerpt of model output, tool results or errors, in characters.
pub const DETAIL_WIDTH: usize = 240;
/// Longest excerpt of a call's arguments, in characters.
pub const ARGUMENTS_WIDTH: usize = 160;

/// One trace's attempts, in file order (carried by partial reports, so a
/// merged report opens them too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    pub rows: Vec<Step>,
    /// Attempts past [`MAX_ROWS`], not kept.
    pub omitted: usize,
}

/// One attempt of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub line: u64,
    pub session: String,
    pub index: usize,
    pub turn: Option<i64>,
    pub outcome: Outcome,
    pub reason: Option<Reason>,
    /// What made it roll back, end, fail or crash (an excerpt).
    pub detail: Option<String>,
    pub streak: Option<u32>,
    pub flags: Vec<Flag>,
    pub calls: Vec<CallStep>,
}

/// One parsed tool call of an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStep {
    pub server: String,
    pub tool: String,
    pub arguments: String,
    pub json: JsonPath,
    pub repairs: Vec<Repair>,
    /// The loop started on it.
    pub executed: bool,
}

/// The worst-traces ranking's keys seen so far by every collector of one
/// run (rollbacks, then earlier input first, as [`super::aggregate::TraceRecord`]
/// ranks). A trace the gate refuses has `top` traces ranked above it
/// already, so it cannot be in the final ranking: every trace that is gets
/// its timeline, whatever the thread count.
#[derive(Debug)]
pub struct WorstGate {
    keys: Mutex<TopK<(u64, Reverse<TracePos>)>>,
}

impl WorstGate {
    /// A gate for a ranking of `top` traces; one per run.
    pub fn new(top: usize) -> Arc<WorstGate> {
        Arc::new(WorstGate {
            keys: Mutex::new(TopK::new(top)),
        })
    }

    /// Whether the trace at `at` with `rollbacks` ranks among the worst
    /// seen so far (it is recorded if so).
    pub fn admits(&self, rollbacks: u64, at: &TracePos) -> bool {
        let key = (rollbacks, Reverse(at.clone()));
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        // Equal keys too: two traces at one position are ranked by more.
        let admitted = keys.admits(|least| key >= *least);
        if admitted {
            keys.offer(key);
        }
        admitted
    }
}

/// The gate is a run's shared state, not a figure: any two compare equal.
impl PartialEq for WorstGate {
    fn eq(&self, _: &WorstGate) -> bool {
        true
    }
}

impl Timeline {
    /// The timeline of one trace's verdicts; `attempts` are the trace's
    /// lines in the same order (for excerpts of model output and tool
    /// results), or empty when not at hand.
    pub fn build<'v>(
        verdicts: impl Iterator<Item = &'v Verdict>,
        attempts: &[Attempt],
    ) -> Timeline {
        let mut rows = Vec::new();
        let mut omitted = 0;
        for (i, v) in verdicts.enumerate() {
            if rows.len() == MAX_ROWS {
                omitted += 1;
                continue;
            }
            // Verdicts come one per line, in line order; the origin check
            // guards against any reader that does not keep that promise.
            let attempt = attempts.get(i).filter(|a| a.origin == v.origin);
            rows.push(step(v, attempt));
        }
        Timeline { rows, omitted }
    }
}

fn step(v: &Verdict, attempt: Option<&Attempt>) -> Step {
    Step {
        line: v.origin.line,
        session: v.session.to_string(),
        index: v.index,
        turn: v.turn,
        outcome: v.outcome,
        reason: v.reason,
        detail: detail(v, attempt),
        streak: v.consecutive_rollbacks,
        flags: v.flags.clone(),
        calls: v
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| CallStep {
                server: shorten(&c.server_name, ARGUMENTS_WIDTH),
                tool: shorten(&c.tool_name, ARGUMENTS_WIDTH),
                arguments: shorten(&pyjson::dump(&c.arguments), ARGUMENTS_WIDTH),
                json: c.json,
                repairs: c.repairs.clone(),
                executed: i < v.executed,
            })
            .collect(),
    }
}

/// Why the attempt went the way it did, in the words of the trace (an
/// excerpt of [`DETAIL_WIDTH`] characters; `replay --trace` shows it too):
/// the leaked tag of a format error, the matched refusal keyword, the
/// repeated query and where it was first made, the first line of a tool's
/// error, and what each repair changed (before → after). `attempt` is the
/// verdict's line, when at hand.
pub fn detail(v: &Verdict, attempt: Option<&Attempt>) -> Option<String> {
    // The mistake's kind first (`why.kind` of the verdict line).
    let why = match (v.why_kind(), why(v, attempt)) {
        (Some(kind), Some(w)) => Some(format!("[{kind}] {w}")),
        (Some(kind), None) => Some(format!("[{kind}]")),
        (None, w) => w,
    };
    let repaired = attempt.and_then(|a| repairs(v, a));
    let text = match (why, repaired) {
        (Some(w), Some(r)) => format!("{w}; {r}"),
        (w, r) => w.or(r)?,
    };
    Some(shorten(&text, DETAIL_WIDTH))
}

fn why(v: &Verdict, attempt: Option<&Attempt>) -> Option<String> {
    let content = attempt.map(|a| a.content.as_str());
    if v.outcome == Outcome::Crash {
        return v.error.clone();
    }
    if v.outcome == Outcome::LlmFailed {
        return attempt.and_then(|a| a.llm_error.clone());
    }
    let Some(reason) = v.reason else {
        // A let-through at the limit still says what was let through.
        return v
            .duplicates
            .iter()
            .find(|d| d.allowed)
            .map(|d| format!("repeated query let through: {}", repeat(d)));
    };
    match reason {
        Reason::FormatError => match (v.leaked_tag.as_deref(), content) {
            (Some(tag), Some(text)) => Some(format!("leaked {tag} in: {}", around(text, tag))),
            (Some(tag), None) => Some(format!("leaked {tag}")),
            (None, text) => text.map(str::to_string),
        },
        Reason::Refusal => {
            let keyword = v.refusal_keyword.as_deref().unwrap_or("?");
            Some(match content {
                Some(text) => format!("keyword \"{keyword}\" in: {}", around(text, keyword)),
                None => format!("keyword \"{keyword}\""),
            })
        }
        Reason::DuplicateQuery => v
            .duplicates
            .iter()
            .find(|d| !d.allowed)
            .map(|d| format!("repeats {}", repeat(d))),
        Reason::UnknownTool | Reason::ToolError | Reason::EmptySearch => {
            let at = v.executed.checked_sub(1)?;
            let tool = v.calls.get(at).map_or("?", |c| c.tool_name.as_str());
            let result = attempt
                .and_then(|a| a.tool_results.get(at))
                .map(|r| first_line(r.effective_text()).to_string());
            Some(match result {
                Some(text) => format!("{tool} returned: {text}"),
                None => format!("{tool} failed"),
            })
        }
    }
}

/// A repeated query: the tool, the query, and where it was first made.
fn repeat(d: &crate::replay::QueryHit) -> String {
    let query = d.query.to_string_lossy();
    match d.first_line {
        Some(line) => format!("{} query {query} (first made at line {line})", d.tool),
        None => format!("{} query {query}", d.tool),
    }
}

/// The first non-blank line of `text` (an error's message, not its traceback).
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// What the repairs of an attempt's calls changed, before → after: the
/// calls as parsed from the line's own text, before any repair, against
/// the calls the loop ran.
fn repairs(v: &Verdict, attempt: &Attempt) -> Option<String> {
    if v.calls.iter().all(|c| c.repairs.is_empty()) {
        return None;
    }
    let before = crate::parse::toolcalls::parse_tool_calls(
        &attempt.content,
        attempt.tool_calls.as_ref(),
        attempt.output.as_ref(),
    )
    .ok()
    .filter(|b| b.len() == v.calls.len());
    let mut out = Vec::new();
    for (i, call) in v.calls.iter().enumerate() {
        if call.repairs.is_empty() {
            continue;
        }
        let names: Vec<&str> = call.repairs.iter().map(|r| r.name()).collect();
        let Some(b) = before.as_ref().and_then(|b| b.get(i)) else {
            out.push(format!("repaired {}", names.join(",")));
            continue;
        };
        let mut changes = Vec::new();
        if (b.server_name.as_str(), b.tool_name.as_str())
            != (call.server_name.as_str(), call.tool_name.as_str())
        {
            changes.push(format!(
                "{}/{} → {}/{}",
                b.server_name, b.tool_name, call.server_name, call.tool_name
            ));
        }
        let (was, now) = (pyjson::dump(&b.arguments), pyjson::dump(&call.arguments));
        if was != now {
            changes.push(format!(
                "{} → {}",
                shorten(&was, ARGUMENTS_WIDTH / 2),
                shorten(&now, ARGUMENTS_WIDTH / 2)
            ));
        }
        if call.repairs.contains(&Repair::NoneFiltered) {
            changes.push("null arguments dropped".into());
        }
        out.push(format!(
            "repaired {}: {}",
            names.join(","),
            changes.join(", ")
        ));
    }
    Some(out.join("; "))
}

/// The text from a little before `needle` on (it may sit deep in a long answer).
fn around(text: &str, needle: &str) -> String {
    let Some(at) = text.find(needle) else {
        return text.to_string();
    };
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(60)
        .map_or(0, |(i, _)| i);
    let prefix = if start > 0 { "…" } else { "" };
    format!("{prefix}{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64) -> TracePos {
        TracePos {
            file: "f".into(),
            line,
        }
    }

    #[test]
    fn the_gate_admits_only_what_can_still_rank() {
        let gate = WorstGate::new(2);
        assert!(gate.admits(3, &at(10)));
        assert!(gate.admits(1, &at(11)));
        assert!(!gate.admits(1, &at(12)), "ties go to the earlier trace");
        // Ranked now: 5@13, 3@10.
        assert!(gate.admits(5, &at(13)));
        assert!(!gate.admits(2, &at(9)), "below both");
        assert!(
            gate.admits(3, &at(9)),
            "a tie with an earlier trace ranks above it"
        );
        assert!(!gate.admits(3, &at(10)));
    }

    #[test]
    fn around_starts_a_little_before_the_needle() {
        let text = format!("{}I cannot help", "x".repeat(100));
        let got = around(&text, "I cannot");
        assert!(got.starts_with('…'));
        assert!(got.ends_with("I cannot help"));
        assert!(got.chars().count() < 80);
        assert_eq!(around("short I cannot", "I cannot"), "short I cannot");
        assert_eq!(around("no match", "zzz"), "no match");
    }
}
