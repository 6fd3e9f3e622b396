//! The step log as per-session timelines: one entry per LLM call of an
//! agent loop, with what the log says became of it.
//!
//! Upstream's loops log in a fixed order: the LLM call (`completed
//! successfully`, or `LLM Call Failed`/`ERROR`), then the turn's fate (a
//! `Rollback`, `End After Max Rollbacks`, the tool calls and a `Recovery`,
//! a retry after an empty answer, the end of the loop). A sub-agent runs
//! between `Session Start` and `Session End` inside the main-agent turn that
//! launched it. Steps that break that order, or that upstream does not
//! write, are reported as problems with their position and otherwise left
//! out; the rest is still read.

use std::collections::HashMap;

use serde_json::Value as Json;

use super::steps::{self, Agent, RollbackInfo, StepKind};
use crate::model::{LoggedCall, Outcome, Recorded};

/// The error of a call upstream's timeout cancelled (`with_timeout` raises
/// an `asyncio.TimeoutError`, whose text is empty).
pub const TIMED_OUT: &str =
    "asyncio.TimeoutError: upstream's timeout cancelled the call (LLM | Request Cancelled)";

/// Whether a turn's assistant message stayed in the message history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Popped (rolled back) or never added (no response).
    Absent,
    /// Kept: ok, final, an end at the limit, a context overflow.
    Present,
    /// An empty answer: kept as an empty message, unless the response had
    /// no message at all.
    EmptyText,
    /// Unknown: a crash (the history may have been saved before it), or a
    /// turn whose fate the log does not tell.
    Maybe,
}

/// One LLM call of a loop.
#[derive(Debug, Clone)]
pub struct Turn {
    pub rec: Recorded,
    pub presence: Presence,
    /// `Turn: N` of its LLM call.
    pub llm_turn: Option<i64>,
    /// The retry after a failed or empty answer was logged.
    retried: bool,
}

/// One agent loop as the log shows it.
#[derive(Debug, Clone)]
pub struct SessionLog {
    /// `main` or the sub-agent session id (`agent-browsing_2`).
    pub id: String,
    pub turns: Vec<Turn>,
    /// The loop sent its summary prompt: the history's last answer is the summary.
    pub summarised: bool,
    /// Upstream saved this session's history (sub-agents do at `Session End`).
    pub saved: bool,
    /// Sub-agent name (`agent-browsing`), `main` for the main agent.
    agent: String,
    loop_over: bool,
    /// Upstream's turn count after the last step read.
    turn_count: i64,
}

/// Something in the step log that does not fit upstream's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 0-based position in `step_logs`.
    pub step: Option<usize>,
    pub message: String,
}

/// The whole step log, read.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// In order of first appearance (`main` first when it runs first).
    pub sessions: Vec<SessionLog>,
    pub problems: Vec<Problem>,
}

/// Reads `step_logs`.
pub fn read(steps: &[Json]) -> Timeline {
    let mut b = Builder::default();
    for (i, step) in steps.iter().enumerate() {
        let Some(name) = step.get("step_name").and_then(Json::as_str) else {
            b.problem(i, "not a step (no string \"step_name\")".into());
            continue;
        };
        let message = step
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let session_id = step.pointer("/metadata/session_id").and_then(Json::as_str);
        b.step(i, name, message, session_id);
    }
    b.finish()
}

#[derive(Default)]
struct Builder {
    t: Timeline,
    by_id: HashMap<String, usize>,
    /// The sub-agent session running now.
    open_sub: Option<usize>,
    /// The client's error for the next failed call: (agent, error).
    client_error: Option<(String, String)>,
    /// The client logged `LLM | Request Cancelled` since the last call:
    /// upstream's timeout around the call (`with_timeout`, an
    /// `asyncio.wait_for`) cancelled it.
    cancelled: bool,
    /// The pipeline caught an exception; its last traceback line.
    task_failed: bool,
    task_error: Option<String>,
}

impl Builder {
    fn problem(&mut self, step: usize, message: String) {
        self.t.problems.push(Problem {
            step: Some(step),
            message,
        });
    }

    fn step(&mut self, i: usize, name: &str, message: &str, session_id: Option<&str>) {
        if name.trim_start_matches(|c: char| !c.is_alphanumeric()) == "LLM | Request Cancelled" {
            self.cancelled = true;
            return;
        }
        let step = steps::read(name, message);
        let agent = match (&step.kind, step.agent) {
            (StepKind::NotAgent | StepKind::Other, _) => return,
            (StepKind::UnknownName, _) => {
                self.problem(i, format!("unknown step name {name:?}"));
                return;
            }
            (StepKind::UnknownMessage, _) => {
                self.problem(
                    i,
                    format!("{name:?}: unknown message {:?}", shorten(message)),
                );
                return;
            }
            (StepKind::TaskError { details }, _) => {
                self.task_failed = true;
                if let Some(d) = details {
                    self.task_error = d
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(|l| l.trim().to_string());
                }
                return;
            }
            (StepKind::ClientError { error }, Some(agent)) => {
                self.client_error = Some((agent_name(agent).to_string(), error.to_string()));
                return;
            }
            (_, Some(agent)) => agent,
            (_, None) => return,
        };
        if agent == Agent::Main {
            if let Some(sub) = self.open_sub.take() {
                // The sub-agent's loop raised: its session never ended.
                let error = match &step.kind {
                    StepKind::ToolFailed { error, .. } => Some(error.to_string()),
                    _ => None,
                };
                self.abandon(sub, error);
            }
        }
        match (step.kind, agent) {
            (StepKind::SessionStart { session }, Agent::Sub(name)) => {
                let sid = session_id.or(session).unwrap_or(name).to_string();
                self.start_session(i, sid, name);
            }
            (StepKind::SessionEnd { session }, Agent::Sub(name)) => match self.open_sub.take() {
                Some(idx) if self.t.sessions[idx].agent == name => {
                    let s = &mut self.t.sessions[idx];
                    s.saved = true;
                    let id = s.id.clone();
                    self.close_turn(idx);
                    self.t.sessions[idx].loop_over = true;
                    if let Some(ended) = session_id.or(session) {
                        if ended != id {
                            self.problem(i, format!("session {ended} ends while {id} runs"));
                        }
                    }
                }
                other => {
                    self.open_sub = other;
                    self.problem(i, format!("{name} ends a session it did not start"));
                }
            },
            (StepKind::SessionStart { .. } | StepKind::SessionEnd { .. }, Agent::Main) => {
                self.problem(i, format!("unknown step name {name:?}"));
            }
            (kind, agent) => {
                let idx = match agent {
                    Agent::Main => self.session("main", "main", true),
                    Agent::Sub(name) => match self.open_sub {
                        Some(idx) if self.t.sessions[idx].agent == name => idx,
                        _ => {
                            self.problem(i, format!("a step of {name} outside any {name} session"));
                            return;
                        }
                    },
                };
                self.turn_step(idx, i, step.turn, kind, message);
            }
        }
    }

    /// The session with this id, created when first seen.
    fn session(&mut self, id: &str, agent: &str, saved: bool) -> usize {
        if let Some(&idx) = self.by_id.get(id) {
            return idx;
        }
        self.t.sessions.push(SessionLog {
            id: id.to_string(),
            turns: Vec::new(),
            summarised: false,
            saved,
            agent: agent.to_string(),
            loop_over: false,
            turn_count: 0,
        });
        let idx = self.t.sessions.len() - 1;
        self.by_id.insert(id.to_string(), idx);
        idx
    }

    fn start_session(&mut self, i: usize, sid: String, name: &str) {
        if let Some(prev) = self.open_sub.take() {
            let running = self.t.sessions[prev].id.clone();
            self.problem(i, format!("session {sid} starts while {running} runs"));
            self.abandon(prev, None);
        }
        if self.by_id.contains_key(&sid) {
            self.problem(i, format!("session {sid} starts a second time"));
        }
        let idx = self.session(&sid, name, false);
        self.open_sub = Some(idx);
        // The main-agent turn running now launched it.
        let launcher = self
            .by_id
            .get("main")
            .and_then(|&m| self.t.sessions[m].turns.last_mut())
            .filter(|t| t.rec.outcome.is_none());
        match launcher {
            Some(t) => t.rec.launched.push(sid),
            None => self.problem(i, format!("session {sid} starts outside a main-agent turn")),
        }
    }

    /// A sub-agent session that stopped without `Session End`: the loop
    /// raised out of the turn it was in.
    fn abandon(&mut self, idx: usize, error: Option<String>) {
        let s = &mut self.t.sessions[idx];
        s.loop_over = true;
        if let Some(t) = s.turns.last_mut().filter(|t| t.rec.outcome.is_none()) {
            t.rec.outcome = Some(Outcome::Crash);
            t.rec.turn = t.llm_turn;
            t.rec.error = error.or_else(|| self.task_error.clone());
            t.presence = Presence::Absent;
        }
    }

    fn turn_step(
        &mut self,
        idx: usize,
        i: usize,
        turn: Option<i64>,
        kind: StepKind<'_>,
        message: &str,
    ) {
        if let StepKind::LlmResponded | StepKind::LlmFailed { .. } = kind {
            self.close_turn(idx);
            let client_error = self.client_error.take();
            let cancelled = std::mem::take(&mut self.cancelled);
            let s = &mut self.t.sessions[idx];
            let mut problems = Vec::new();
            if s.loop_over {
                problems.push(format!("{}: an LLM call after its loop ended", s.id));
            }
            let expected = s.turn_count.saturating_add(1);
            if turn != Some(expected) {
                problems.push(format!(
                    "{}: turn {} follows turn {}",
                    s.id,
                    turn.map_or("?".to_string(), |t| t.to_string()),
                    s.turn_count
                ));
            }
            s.turn_count = turn.unwrap_or(expected);
            let mut t = Turn {
                rec: Recorded {
                    step: i,
                    turn,
                    ..Recorded::default()
                },
                presence: Presence::Maybe,
                llm_turn: turn,
                retried: false,
            };
            if let StepKind::LlmFailed { error } = kind {
                t.rec.outcome = Some(Outcome::LlmFailed);
                let error = match client_error {
                    Some((agent, e)) if agent == s.agent => e,
                    _ => error.to_string(),
                };
                // `asyncio.TimeoutError` says nothing (`str(e)` is empty):
                // the cancelled request says what it was.
                t.rec.error = Some(if error.trim().is_empty() && cancelled {
                    TIMED_OUT.to_string()
                } else {
                    error
                });
                t.rec.message = Some(message.to_string());
                t.presence = Presence::Absent;
            }
            s.turns.push(t);
            for p in problems {
                self.problem(i, p);
            }
            return;
        }
        let s = &mut self.t.sessions[idx];
        let sid = s.id.clone();
        let Some(t) = s.turns.last_mut() else {
            self.problem(
                i,
                format!("{sid}: {message:?} before any LLM call of the session"),
            );
            return;
        };
        let open = t.rec.outcome.is_none();
        let mut loop_over = false;
        let mut problem = None;
        match kind {
            StepKind::RetryAfterEmpty => match t.rec.outcome {
                _ if t.retried => problem = Some("a second retry for one turn".to_string()),
                None => {
                    t.rec.outcome = Some(Outcome::LlmFailed);
                    t.rec.message = Some(message.to_string());
                    t.presence = Presence::EmptyText;
                    t.rec.turn = turn;
                    t.retried = true;
                }
                Some(Outcome::LlmFailed) => {
                    t.rec.turn = turn;
                    t.retried = true;
                }
                Some(_) => problem = Some("a retry after the turn was decided".to_string()),
            },
            StepKind::ShouldBreak if open => {
                decide(
                    t,
                    Outcome::ContextExceeded,
                    Presence::Present,
                    turn,
                    message,
                );
                loop_over = true;
            }
            StepKind::NoToolCalls if open => {
                decide(t, Outcome::Final, Presence::Present, turn, message);
                loop_over = true;
            }
            StepKind::ToolStarted { tool, server } if open => t.rec.calls.push(LoggedCall {
                tool: tool.to_string(),
                server: Some(server.to_string()),
                ..LoggedCall::default()
            }),
            StepKind::ToolCompleted { tool, result } if open => {
                let call = running_call(&mut t.rec.calls, tool);
                call.completed = true;
                call.result = result.map(str::to_string);
            }
            StepKind::ToolFailed { tool, error } if open => {
                running_call(&mut t.rec.calls, tool).error = Some(error.to_string());
            }
            StepKind::Rollback(info) if open => {
                if info.reason.is_none() {
                    problem = Some(format!(
                        "a rollback message the reader does not know: {:?}",
                        shorten(message)
                    ));
                }
                if let (Some(after), Some(before)) = (turn, t.llm_turn) {
                    if after != before.saturating_sub(1) {
                        problem = Some(format!(
                            "a rollback of turn {before} logged at turn {after}"
                        ));
                    }
                }
                set_info(&mut t.rec, info);
                decide(t, Outcome::Rollback, Presence::Absent, turn, message);
            }
            StepKind::AllowDuplicate { query, .. } if open => t.rec.allowed.push(query),
            StepKind::EndAfterMaxRollbacks { info } if open => {
                set_info(&mut t.rec, info);
                decide(t, Outcome::End, Presence::Present, turn, message);
                loop_over = true;
            }
            StepKind::Recovery { streak } if open => {
                t.rec.recovered = streak;
                ok(t);
            }
            StepKind::ContextLimit => {
                if open {
                    ok(t);
                }
                loop_over = true;
            }
            StepKind::TooManyRollbacks | StepKind::LoopOver => loop_over = true,
            StepKind::FinalSummary => {
                loop_over = true;
                s.summarised = true;
            }
            _ => {
                problem = Some(format!(
                    "{message:?} after turn {} was decided",
                    t.llm_turn.map_or("?".to_string(), |n| n.to_string())
                ))
            }
        }
        if let Some(after) = s.turns.last().and_then(|t| t.rec.turn) {
            s.turn_count = after;
        }
        if loop_over {
            self.close_turn(idx);
            self.t.sessions[idx].loop_over = true;
        }
        if let Some(p) = problem {
            self.problem(i, format!("{sid}: {p}"));
        }
    }

    /// Decides the last turn of a session when the next step shows it went
    /// on: a turn that ran tools and was neither rolled back nor ended is ok.
    fn close_turn(&mut self, idx: usize) {
        let s = &mut self.t.sessions[idx];
        let Some(t) = s.turns.last_mut().filter(|t| t.rec.outcome.is_none()) else {
            return;
        };
        // Otherwise it stays undecided: the history may still hold it.
        if !t.rec.calls.is_empty() || !t.rec.launched.is_empty() {
            ok(t);
        }
    }

    fn finish(mut self) -> Timeline {
        // A sub-agent still running when the task failed raised out of its
        // loop; one still running in a log that just stops (cut short, a
        // run still going) is left as far as it got.
        if let Some(sub) = self.open_sub.take() {
            if self.task_failed {
                let error = self.task_error.clone();
                self.abandon(sub, error);
            }
        }
        if let Some(&main) = self.by_id.get("main") {
            let open = self.t.sessions[main]
                .turns
                .last()
                .is_some_and(|t| t.rec.outcome.is_none());
            if open && self.task_failed {
                // The task raised out of the main loop inside this turn.
                let error = self.task_error.clone();
                if let Some(t) = self.t.sessions[main].turns.last_mut() {
                    t.rec.outcome = Some(Outcome::Crash);
                    t.rec.turn = t.llm_turn;
                    t.rec.error = error;
                }
            }
        }
        self.t
    }
}

/// The call a completion or failure step is about: the last one started
/// for that tool and not finished (sub-agents log the start), else a new one.
fn running_call<'c>(calls: &'c mut Vec<LoggedCall>, tool: &str) -> &'c mut LoggedCall {
    let started = calls
        .iter()
        .rposition(|c| c.tool == tool && !c.completed && c.error.is_none() && c.server.is_some());
    let at = match started {
        Some(at) => at,
        None => {
            calls.push(LoggedCall {
                tool: tool.to_string(),
                ..LoggedCall::default()
            });
            calls.len() - 1
        }
    };
    &mut calls[at]
}

fn set_info(rec: &mut Recorded, info: RollbackInfo) {
    rec.reason = info.reason;
    rec.streak = info.streak;
    rec.keywords = info.keywords;
    rec.result = info.result;
    rec.tool = info.tool;
    rec.query = info.query.map(|q| q.query);
}

fn decide(t: &mut Turn, outcome: Outcome, presence: Presence, turn: Option<i64>, message: &str) {
    t.rec.outcome = Some(outcome);
    t.presence = presence;
    t.rec.turn = turn.or(t.llm_turn);
    t.rec.message = Some(message.to_string());
}

/// The turn's tool calls went through: the streak is reset.
fn ok(t: &mut Turn) {
    t.rec.outcome = Some(Outcome::Ok);
    t.rec.streak = Some(0);
    t.rec.turn = t.llm_turn;
    t.presence = Presence::Present;
}

fn agent_name(agent: Agent<'_>) -> &str {
    match agent {
        Agent::Main => "main",
        Agent::Sub(name) => name,
    }
}

/// A message cut for a problem report.
fn shorten(message: &str) -> String {
    match message.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_upstreams_timeout_cancelled_is_a_timeout() {
        let steps = [
            json!({"step_name": "🧠 LLM | Token Usage", "message": "x"}),
            json!({"step_name": "🧠 LLM | Request Cancelled", "message": "Request was cancelled: "}),
            json!({"step_name": "🧠 Main agent | Turn: 1 | LLM Call ERROR", "message": "Main agent | Turn: 1 error: "}),
            json!({"step_name": "👑 Main Agent | Turn: 0 | LLM Call", "message": "No valid response from LLM, retrying"}),
            json!({"step_name": "🧠 Main agent | Turn: 1 | LLM Call ERROR", "message": "Main agent | Turn: 1 error: "}),
        ];
        let t = read(&steps);
        assert!(t.problems.is_empty(), "{:?}", t.problems);
        let turns = &t.sessions[0].turns;
        assert_eq!(turns[0].rec.error.as_deref(), Some(TIMED_OUT));
        // Without the cancellation the empty error stays as logged.
        assert_eq!(turns[1].rec.error.as_deref(), Some(""));
    }
}
