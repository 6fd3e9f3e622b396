//! What upstream itself recorded about its error correction: the rollback
//! events in a task log's `step_logs`, their counts, and how they compare
//! with the replay of the turns that survived in the message history.
//!
//! Rolled-back attempts are popped from upstream's message history, so a task
//! log holds two views of one run: the *recorded* events (every rollback,
//! with its reason text) and the *surviving* turns (which the replay runs).
//! [`RecordedTrace::disagreements`] lists where the two views do not fit.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::detect::{bad_result, query_fingerprint, refusal, Reason};
use crate::model::{ToolResult, Trace};
use crate::policy::Policy;
use crate::replay::{Flag, Outcome, Verdict};

/// The reason name used when a recorded message matches none of upstream's texts.
pub const UNKNOWN_REASON: &str = "unknown";

/// The kinds of error-correction steps upstream logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `… | Turn: N | Rollback`: an attempt was rolled back (turn given back).
    Rollback,
    /// `… | Turn: N | Allow Duplicate`: a duplicate query let through at the limit.
    AllowDuplicate,
    /// `… | Turn: N | End After Max Rollbacks`: a format error or refusal at the limit ended the loop.
    EndAfterMaxRollbacks,
    /// `… | Turn: N | Recovery`: a turn succeeded after a rollback streak.
    Recovery,
    /// `… | Too Many Rollbacks`: the loop guard broke the loop.
    TooManyRollbacks,
}

impl EventKind {
    pub const ALL: [EventKind; 5] = [
        EventKind::Rollback,
        EventKind::AllowDuplicate,
        EventKind::EndAfterMaxRollbacks,
        EventKind::Recovery,
        EventKind::TooManyRollbacks,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::Rollback => "rollback",
            EventKind::AllowDuplicate => "allow_duplicate",
            EventKind::EndAfterMaxRollbacks => "end_after_max_rollbacks",
            EventKind::Recovery => "recovery",
            EventKind::TooManyRollbacks => "too_many_rollbacks",
        }
    }

    /// The last `|`-segment of the step name upstream logs the event under.
    pub fn step_label(self) -> &'static str {
        match self {
            EventKind::Rollback => "Rollback",
            EventKind::AllowDuplicate => "Allow Duplicate",
            EventKind::EndAfterMaxRollbacks => "End After Max Rollbacks",
            EventKind::Recovery => "Recovery",
            EventKind::TooManyRollbacks => "Too Many Rollbacks",
        }
    }

    pub fn from_step_label(label: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.step_label() == label)
    }
}

/// One error-correction step from `step_logs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedEvent {
    /// `main` or the sub-agent session id (`agent-browsing_1`).
    pub session: String,
    pub kind: EventKind,
    /// The `Turn: N` of the step name (upstream logs rollbacks after giving the turn back).
    pub turn: Option<i64>,
    /// For rollbacks and loop ends: the replay's reason name for the
    /// recorded text, or [`UNKNOWN_REASON`].
    pub reason: Option<String>,
    pub tool: Option<String>,
    /// The duplicate query string (`<tool>_<query>`), for duplicate events.
    pub query: Option<String>,
    /// The quoted tool result of a tool-result rollback (upstream keeps 200 characters).
    pub result: Option<String>,
    /// The refusal keywords upstream listed.
    pub keywords: Vec<String>,
    /// The step's message, as logged.
    pub message: String,
    /// Position in `step_logs` (0-based).
    pub step: usize,
}

impl RecordedEvent {
    /// Reads one step; `None` for steps that are not error-correction events.
    pub fn from_step(
        session: &str,
        label: &str,
        turn: Option<i64>,
        message: &str,
        step: usize,
    ) -> Option<RecordedEvent> {
        let kind = EventKind::from_step_label(label)?;
        let mut ev = RecordedEvent {
            session: session.to_string(),
            kind,
            turn,
            reason: None,
            tool: None,
            query: None,
            result: None,
            keywords: Vec::new(),
            message: message.to_string(),
            step,
        };
        match kind {
            EventKind::Rollback => ev.read_rollback(message),
            EventKind::EndAfterMaxRollbacks => {
                let reason = if message.contains("consecutive MCP format errors") {
                    Reason::FormatError.name()
                } else if let Some(rest) = after(message, "consecutive refusals") {
                    ev.keywords = keyword_list(rest);
                    Reason::Refusal.name()
                } else {
                    UNKNOWN_REASON
                };
                ev.reason = Some(reason.to_string());
            }
            EventKind::AllowDuplicate => ev.read_duplicate(message),
            EventKind::Recovery | EventKind::TooManyRollbacks => {}
        }
        Some(ev)
    }

    /// The reason, when it is one the replay knows.
    pub fn known_reason(&self) -> Option<Reason> {
        self.reason.as_deref().and_then(Reason::from_name)
    }

    fn read_rollback(&mut self, message: &str) {
        let reason = if message.starts_with("Tool call format incorrect") {
            Reason::FormatError.name()
        } else if let Some(rest) = after(message, "LLM refused to answer") {
            self.keywords = keyword_list(rest);
            Reason::Refusal.name()
        } else if message.starts_with("Duplicate query detected") {
            self.read_duplicate(message);
            Reason::DuplicateQuery.name()
        } else if let Some(rest) = message.strip_prefix("Tool result error - tool: ") {
            match rest.split_once(", result: '") {
                Some((tool, quoted)) => {
                    let quoted = quoted.strip_suffix('\'').unwrap_or(quoted);
                    self.tool = Some(tool.to_string());
                    self.result = Some(quoted.to_string());
                    result_reason(quoted).name()
                }
                None => UNKNOWN_REASON,
            }
        } else {
            UNKNOWN_REASON
        };
        self.reason = Some(reason.to_string());
    }

    /// `… tool: {tool}, query: '{query}', previous count: N…`
    fn read_duplicate(&mut self, message: &str) {
        let Some(rest) = after(message, "tool: ") else {
            return;
        };
        let Some((tool, rest)) = rest.split_once(", query: '") else {
            return;
        };
        self.tool = Some(tool.to_string());
        let query = match rest.rfind("', previous count:") {
            Some(end) => &rest[..end],
            None => rest.rsplit_once('\'').map_or(rest, |(q, _)| q),
        };
        self.query = Some(query.to_string());
    }
}

/// How the replay classifies a tool-result text that upstream rolled back on
/// (`should_rollback_result`): the prefixes first, else an empty search.
pub fn result_reason(text: &str) -> Reason {
    if text.starts_with("Unknown tool:") {
        Reason::UnknownTool
    } else if text.starts_with("Error executing tool") {
        Reason::ToolError
    } else {
        Reason::EmptySearch
    }
}

/// The text after the first `marker`.
fn after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.find(marker).map(|i| &text[i + marker.len()..])
}

/// The Python list of string reprs after `keywords: ` (`['a', "b's"]`).
fn keyword_list(text: &str) -> Vec<String> {
    let Some(list) = after(text, "keywords: [") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut chars = list.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == ',') {
            chars.next();
        }
        let Some(quote) = chars.next() else { break };
        if quote != '\'' && quote != '"' {
            break;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(other) => s.push(other),
                    None => break,
                },
                c if c == quote => break,
                c => s.push(c),
            }
        }
        out.push(s);
    }
    out
}

/// Event counts, the shape of `recorded` in `analyze --format json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedCounts {
    /// `Rollback` steps by reason name (only reasons that occurred).
    pub rollback_reasons: BTreeMap<String, u64>,
    /// `Allow Duplicate` steps.
    pub duplicate_allowed: u64,
    /// Loops ended by the rollback guards (`End After Max Rollbacks`, `Too Many Rollbacks`).
    pub loop_ended: u64,
    /// `Recovery` steps.
    pub recoveries: u64,
}

impl RecordedCounts {
    pub fn add(&mut self, ev: &RecordedEvent) {
        match ev.kind {
            EventKind::Rollback => {
                let reason = ev
                    .reason
                    .clone()
                    .unwrap_or_else(|| UNKNOWN_REASON.to_string());
                *self.rollback_reasons.entry(reason).or_default() += 1;
            }
            EventKind::AllowDuplicate => self.duplicate_allowed += 1,
            EventKind::EndAfterMaxRollbacks | EventKind::TooManyRollbacks => self.loop_ended += 1,
            EventKind::Recovery => self.recoveries += 1,
        }
    }

    pub fn merge(&mut self, other: &RecordedCounts) {
        for (reason, n) in &other.rollback_reasons {
            *self.rollback_reasons.entry(reason.clone()).or_default() += n;
        }
        self.duplicate_allowed += other.duplicate_allowed;
        self.loop_ended += other.loop_ended;
        self.recoveries += other.recoveries;
    }

    pub fn rollbacks(&self) -> u64 {
        self.rollback_reasons.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        *self == RecordedCounts::default()
    }
}

/// What the step log says about one surviving attempt, when the log's
/// timeline could be aligned with the message history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SurvivorContext {
    /// The turn upstream ran it as.
    pub turn: Option<i64>,
    /// Consecutive rollbacks before it (at `rollback_limit - 1` upstream lets problems through).
    pub streak_before: u32,
    /// Position in `step_logs` of its LLM call (orders it among the events).
    pub step: usize,
    /// Indices into [`RecordedTrace::events`] logged while it ran.
    pub events: Vec<usize>,
}

/// A task log's recorded view, carried on its [`Trace`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedTrace {
    /// In `step_logs` order.
    pub events: Vec<RecordedEvent>,
    /// One entry per attempt of the trace (same order); `None` where the
    /// step log could not be aligned with the history.
    pub survivors: Vec<Option<SurvivorContext>>,
    /// Sessions whose step-log timeline did not match their message history.
    pub unaligned_sessions: Vec<String>,
}

/// Where the recorded and the replayed view do not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisagreementKind {
    /// A turn upstream kept, which the replay would roll back (or end on).
    ReplayRollsBackSurvivor,
    /// A recorded rollback whose reason the replay cannot reproduce from what was recorded.
    UnexplainedRollback,
}

impl DisagreementKind {
    pub fn name(self) -> &'static str {
        match self {
            DisagreementKind::ReplayRollsBackSurvivor => "replay_rolls_back_survivor",
            DisagreementKind::UnexplainedRollback => "unexplained_rollback",
        }
    }
}

/// One disagreement between the two views.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disagreement {
    pub kind: DisagreementKind,
    pub trace_id: String,
    pub session: String,
    pub turn: Option<i64>,
    /// The reason name in question.
    pub reason: String,
    /// `FILE:LINE` of the attempt, for survivors.
    pub origin: Option<String>,
    pub detail: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.trace_id, self.session)?;
        if let Some(t) = self.turn {
            write!(f, " turn {t}")?;
        }
        write!(
            f,
            ": {} ({}): {}",
            self.kind.name(),
            self.reason,
            self.detail
        )
    }
}

impl RecordedTrace {
    pub fn counts(&self) -> RecordedCounts {
        let mut c = RecordedCounts::default();
        for ev in &self.events {
            c.add(ev);
        }
        c
    }

    /// Compares the recorded events with the replay of the surviving turns
    /// (`verdicts` are the replay of `trace`, one per attempt).
    pub fn disagreements(
        &self,
        trace: &Trace,
        verdicts: &[Verdict],
        policy: &Policy,
    ) -> Vec<Disagreement> {
        let mut out = Vec::new();
        let limit_streak = policy.rollback_limit.saturating_sub(1);
        for (i, v) in verdicts.iter().enumerate() {
            if !matches!(v.outcome, Outcome::Rollback | Outcome::End) {
                continue;
            }
            let reason = v.reason.map_or(UNKNOWN_REASON, Reason::name);
            let ctx = self.survivors.get(i).and_then(Option::as_ref);
            if self.explains_survivor(v, ctx, limit_streak) {
                continue;
            }
            let verb = if v.outcome == Outcome::End {
                "end the loop on it"
            } else {
                "roll it back"
            };
            out.push(Disagreement {
                kind: DisagreementKind::ReplayRollsBackSurvivor,
                trace_id: trace.trace_id.to_string(),
                session: v.session.to_string(),
                turn: ctx.and_then(|c| c.turn).or(v.turn),
                reason: reason.to_string(),
                origin: Some(v.origin.to_string()),
                detail: format!("upstream kept this turn; the replay would {verb} ({reason})"),
            });
        }
        for (k, ev) in self.events.iter().enumerate() {
            if ev.kind != EventKind::Rollback {
                continue;
            }
            if let Some(why) = self.unexplained(k, ev, verdicts, policy) {
                out.push(Disagreement {
                    kind: DisagreementKind::UnexplainedRollback,
                    trace_id: trace.trace_id.to_string(),
                    session: ev.session.clone(),
                    turn: ev.turn,
                    reason: ev
                        .reason
                        .clone()
                        .unwrap_or_else(|| UNKNOWN_REASON.to_string()),
                    origin: None,
                    detail: why,
                });
            }
        }
        out
    }

    /// Whether upstream's log shows why it kept a turn the replay rolls back:
    /// it ran at the rollback limit (where problems are let through), or the
    /// log records the limit behaviour itself.
    fn explains_survivor(
        &self,
        v: &Verdict,
        ctx: Option<&SurvivorContext>,
        limit_streak: u32,
    ) -> bool {
        if let Some(ctx) = ctx {
            if ctx.streak_before >= limit_streak {
                return true;
            }
            return ctx
                .events
                .iter()
                .filter_map(|&e| self.events.get(e))
                .any(|ev| self.limit_event_fits(ev, v));
        }
        // Unaligned: any limit event of the session that fits.
        self.events
            .iter()
            .any(|e| *e.session == *v.session && self.limit_event_fits(e, v))
    }

    fn limit_event_fits(&self, ev: &RecordedEvent, v: &Verdict) -> bool {
        match ev.kind {
            EventKind::EndAfterMaxRollbacks => {
                matches!(v.reason, Some(Reason::FormatError | Reason::Refusal))
            }
            EventKind::AllowDuplicate => {
                v.reason == Some(Reason::DuplicateQuery)
                    && (ev.query.is_none()
                        || v.duplicates.iter().any(|d| {
                            Some(d.query.to_string_lossy().as_ref()) == ev.query.as_deref()
                        }))
            }
            _ => false,
        }
    }

    /// Why the replay cannot reproduce recorded rollback `k`; `None` when it can.
    fn unexplained(
        &self,
        k: usize,
        ev: &RecordedEvent,
        verdicts: &[Verdict],
        policy: &Policy,
    ) -> Option<String> {
        match ev.known_reason() {
            None => Some(format!(
                "upstream's rollback message is not one the replay knows: {:?}",
                ev.message
            )),
            Some(Reason::FormatError) => policy
                .mcp_tags
                .is_empty()
                .then(|| "the policy has no MCP tags, so no format error can occur".to_string()),
            Some(Reason::Refusal) => {
                if ev.keywords.is_empty()
                    || ev
                        .keywords
                        .iter()
                        .any(|kw| refusal::refusal_keyword(kw, policy).is_some())
                {
                    None
                } else {
                    Some(format!(
                        "none of the recorded refusal keywords {:?} is in the policy",
                        ev.keywords
                    ))
                }
            }
            Some(Reason::DuplicateQuery) => {
                let query = ev.query.as_deref()?;
                let earlier = self.queries_before(k, &ev.session, verdicts);
                let seen_in_log = self.events[..k]
                    .iter()
                    .any(|e| e.session == ev.session && e.query.as_deref() == Some(query));
                (!earlier.contains(query) && !seen_in_log).then(|| {
                    format!("no earlier surviving turn of the session ran the query {query:?} (it may have run in a rolled-back attempt)")
                })
            }
            Some(reason @ (Reason::UnknownTool | Reason::ToolError | Reason::EmptySearch)) => {
                let tool = ev.tool.as_deref().unwrap_or_default();
                let quoted = ev.result.as_deref().unwrap_or_default();
                let as_result = ToolResult {
                    result: quoted.to_string(),
                    error: None,
                };
                let replayed = bad_result(tool, &as_result, policy).ok().flatten();
                // Upstream quotes 200 characters: a longer search result was cut.
                let truncated = quoted.chars().count() >= 200;
                let fits = replayed == Some(reason)
                    || (reason == Reason::EmptySearch
                        && truncated
                        && policy.empty_search_tools.iter().any(|t| t == tool));
                (!fits).then(|| match replayed {
                    Some(other) => format!("the replay classifies the recorded result of {tool} as {}", other.name()),
                    None => format!("the replay would not roll back on the recorded result of {tool}: {quoted:?}"),
                })
            }
        }
    }

    /// Query strings run by surviving attempts of `session` before event `k`
    /// (all of the session's survivors when the log is not aligned).
    fn queries_before(&self, k: usize, session: &str, verdicts: &[Verdict]) -> HashSet<String> {
        let step = self.events.get(k).map_or(usize::MAX, |e| e.step);
        let mut out = HashSet::new();
        for (i, v) in verdicts.iter().enumerate() {
            if *v.session != *session {
                continue;
            }
            let before = self
                .survivors
                .get(i)
                .and_then(Option::as_ref)
                .map_or(true, |ctx| ctx.step < step);
            if !before {
                continue;
            }
            for call in v.calls.iter().take(v.executed) {
                if let Ok(Some(q)) = query_fingerprint(&call.tool_name, &call.arguments) {
                    out.insert(q.to_string_lossy().into_owned());
                }
            }
        }
        out
    }
}

/// The recorded view across a run, for reports: counts summed over every
/// trace that carries one, and every disagreement in input order.
#[derive(Debug, Clone, Default)]
pub struct RecordedSummary {
    /// Traces that carried a recorded view (task logs).
    pub traces: u64,
    pub counts: RecordedCounts,
    /// The same categories from the replay of those traces' surviving turns:
    /// rollbacks by reason, `allowed_duplicate` flags, loops ended (`end`),
    /// `recovered` flags.
    pub replayed: RecordedCounts,
    /// Sessions whose step log could not be aligned with their history.
    pub unaligned_sessions: u64,
    /// With the ordinal of their trace in the input, for a stable order.
    disagreements: Vec<(u64, Disagreement)>,
}

impl RecordedSummary {
    /// Adds one replayed trace (`ordinal`: its position in the input); a
    /// trace without a recorded view is ignored.
    pub fn add(&mut self, ordinal: u64, trace: &Trace, verdicts: &[Verdict], policy: &Policy) {
        let Some(rec) = &trace.recorded else { return };
        self.traces += 1;
        self.counts.merge(&rec.counts());
        for v in verdicts {
            match v.outcome {
                Outcome::Rollback => {
                    let reason = v.reason.map_or(UNKNOWN_REASON, Reason::name);
                    *self
                        .replayed
                        .rollback_reasons
                        .entry(reason.to_string())
                        .or_default() += 1;
                }
                Outcome::End => self.replayed.loop_ended += 1,
                _ => {}
            }
            for f in &v.flags {
                match f {
                    Flag::AllowedDuplicate => self.replayed.duplicate_allowed += 1,
                    Flag::Recovered => self.replayed.recoveries += 1,
                    Flag::ToolErrorPassed => {}
                }
            }
        }
        self.unaligned_sessions += rec.unaligned_sessions.len() as u64;
        self.disagreements.extend(
            rec.disagreements(trace, verdicts, policy)
                .into_iter()
                .map(|d| (ordinal, d)),
        );
    }

    pub fn merge(&mut self, other: RecordedSummary) {
        self.traces += other.traces;
        self.counts.merge(&other.counts);
        self.replayed.merge(&other.replayed);
        self.unaligned_sessions += other.unaligned_sessions;
        self.disagreements.extend(other.disagreements);
    }

    /// Every disagreement, in input order.
    pub fn disagreements(&self) -> Vec<&Disagreement> {
        let mut all: Vec<&(u64, Disagreement)> = self.disagreements.iter().collect();
        all.sort_by_key(|(ordinal, _)| *ordinal);
        all.into_iter().map(|(_, d)| d).collect()
    }

    /// The `recorded` object of `analyze --format json`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "traces": self.traces,
            "rollback_reasons": self.counts.rollback_reasons,
            "duplicate_allowed": self.counts.duplicate_allowed,
            "loop_ended": self.counts.loop_ended,
            "recoveries": self.counts.recoveries,
            "replayed": self.replayed,
            "unaligned_sessions": self.unaligned_sessions,
            "disagreements": self.disagreements(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(label: &str, message: &str) -> RecordedEvent {
        RecordedEvent::from_step("main", label, Some(3), message, 0).unwrap()
    }

    #[test]
    fn rollback_messages_map_to_reason_names() {
        let r = |m: &str| ev("Rollback", m).reason.unwrap();
        assert_eq!(
            r("Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 1/5, Total attempts: 2/220"),
            "format_error"
        );
        assert_eq!(r("LLM refused to answer - found refusal keywords: ['time constraint']. Consecutive rollbacks: 1/5"), "refusal");
        assert_eq!(
            r("Duplicate query detected - tool: google_search, query: 'google_search_x', previous count: 1. Consecutive rollbacks: 1/5"),
            "duplicate_query"
        );
        assert_eq!(
            r("Tool result error - tool: google_search, result: 'Unknown tool: x'"),
            "unknown_tool"
        );
        assert_eq!(
            r("Tool result error - tool: scrape, result: 'Error executing tool scrape: 500'"),
            "tool_error"
        );
        assert_eq!(
            r("Tool result error - tool: google_search, result: '{\"organic\": []}'"),
            "empty_search"
        );
        assert_eq!(r("Something new"), UNKNOWN_REASON);
        assert_eq!(
            ev(
                "Recovery",
                "Successfully recovered after 2 consecutive rollbacks"
            )
            .reason,
            None
        );
        assert!(RecordedEvent::from_step("main", "LLM Call", None, "x", 0).is_none());
    }

    #[test]
    fn duplicate_details_and_keywords_are_read() {
        let e = ev(
            "Rollback",
            "Duplicate query detected - tool: google_search, query: 'google_search_it's, previous count: 2', previous count: 1. Consecutive rollbacks: 1/5, Total attempts: 3/220",
        );
        assert_eq!(e.tool.as_deref(), Some("google_search"));
        assert_eq!(
            e.query.as_deref(),
            Some("google_search_it's, previous count: 2")
        );
        let e = ev(
            "End After Max Rollbacks",
            "Ending agent loop after 4 consecutive refusals with keywords: ['time constraint', \"I'm sorry, I cannot solve\"]",
        );
        assert_eq!(e.reason.as_deref(), Some("refusal"));
        assert_eq!(
            e.keywords,
            vec![
                "time constraint".to_string(),
                "I'm sorry, I cannot solve".to_string()
            ]
        );
        let e = ev(
            "Allow Duplicate",
            "Allowing duplicate query after 4 rollbacks - tool: scrape_website, query: 'scrape_website_https://a.b', previous count: 1",
        );
        assert_eq!(e.query.as_deref(), Some("scrape_website_https://a.b"));
    }

    #[test]
    fn counts_add_and_merge() {
        let mut c = RecordedCounts::default();
        c.add(&ev(
            "Rollback",
            "Tool call format incorrect - found MCP tags in response.",
        ));
        c.add(&ev(
            "Rollback",
            "Tool call format incorrect - found MCP tags in response.",
        ));
        c.add(&ev(
            "Allow Duplicate",
            "Allowing duplicate query after 4 rollbacks - tool: a, query: 'a_b', previous count: 1",
        ));
        c.add(&ev(
            "Too Many Rollbacks",
            "Reached 5 consecutive rollbacks, breaking loop.",
        ));
        c.add(&ev(
            "Recovery",
            "Successfully recovered after 1 consecutive rollbacks",
        ));
        let mut total = RecordedCounts::default();
        total.merge(&c);
        total.merge(&c);
        assert_eq!(total.rollback_reasons.get("format_error"), Some(&4));
        assert_eq!(
            (total.duplicate_allowed, total.loop_ended, total.recoveries),
            (2, 2, 2)
        );
        assert_eq!(total.rollbacks(), 4);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(
            json["rollback_reasons"],
            serde_json::json!({"format_error": 2})
        );
    }
}
