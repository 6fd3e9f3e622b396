//! One agent loop (upstream's `run_main_agent` / `run_sub_agent` while-loop),
//! driven by a session's recorded attempts.
//!
//! An attempt whose verdict upstream's log decided (a task log's rolled-back
//! turn, failed call, …) is not judged again: its verdict is the log's, and
//! the loop state moves as upstream's loop moved it, so that the turns
//! replayed around it see the right turn count, streak and queries.

use super::attempt::{self, Response};
use super::verdict::{Flag, Outcome, QueryHit, Verdict};
use super::{PlainReply, TraceRun};
use crate::detect::cause::{self, After, Cause, FailCause};
use crate::detect::duplicate_query::{fingerprint_keys, PendingQuery, QueryCache, Seen};
use crate::detect::{bad_result, format_error, query_fingerprint, Reason};
use crate::model::{Finish, Outcome as LoggedOutcome, Recorded, UnseenResults};
use crate::policy::{Policy, QueryCommit};
use crate::pyjson::{PyStr, Value};
use crate::read::Attempt;
use crate::repair::Call;

/// Extra attempts allowed beyond `max_turns` (upstream's EXTRA_ATTEMPTS_BUFFER).
const EXTRA_ATTEMPTS_BUFFER: i64 = 200;

/// How a session's loop ended, as its caller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SessionEnd {
    Normal,
    /// An exception escaped the loop (upstream's `fix_tool_call_arguments` raised).
    Crashed,
}

/// The loop's counters and this session's duplicate-query cache.
#[derive(Default)]
struct LoopState {
    turn: i64,
    total_attempts: i64,
    streak: u32,
    queries: QueryCache,
    /// A logged attempt that was not rolled back ran calls the log does
    /// not show (their queries are unknown): whether an earlier recording
    /// of a query was rolled back can no longer be decided.
    hidden_kept: bool,
}

/// What happened to the calls of one attempt.
enum CallsEnd {
    Completed,
    RolledBack(Reason),
    Crashed(String),
    /// A call ran whose result the input does not hold
    /// ([`Attempt::unseen_results`]): not judged further.
    Unjudged(UnseenResults),
}

/// Result of the duplicate check for one call.
enum DupCheck {
    /// Go on; record this query once the call succeeds.
    Proceed(Option<PendingQuery>),
    RollBack,
    /// The check raised: the call fails, the attempt goes on.
    Raised,
}

impl TraceRun<'_> {
    /// Runs session `sid` to the end of its loop, writing a verdict for every
    /// line it reaches.
    pub(super) fn run_session(&mut self, sid: &str, max_turns: Option<i64>) -> SessionEnd {
        if self.started.contains(sid) {
            return SessionEnd::Normal;
        }
        self.started.insert(sid.into());
        let is_main = sid == "main";
        let replayer = self.replayer;
        let policy = &replayer.policy;
        let lines = self.sessions.get(sid).cloned().unwrap_or_default();
        let mut st = LoopState::default();
        for (index, &pos) in lines.iter().enumerate() {
            if let Some(max) = max_turns {
                if !(st.turn < max && st.total_attempts < max.saturating_add(EXTRA_ATTEMPTS_BUFFER))
                {
                    break;
                }
            }
            st.turn += 1;
            st.total_attempts += 1;
            if st.streak >= policy.rollback_limit {
                break;
            }
            let attempt = &self.trace.attempts[pos];
            if let Some(prompt) = &attempt.system_prompt {
                // Most lines repeat their session's prompt: parse it once.
                let same = self
                    .mapping_prompt
                    .as_ref()
                    .is_some_and(|p| std::sync::Arc::ptr_eq(p, prompt) || p == prompt);
                if !same {
                    self.mapping = replayer.mapping_for(prompt);
                    self.mapping_prompt = Some(prompt.clone());
                }
            }
            if let Some(rec) = attempt.decided() {
                let (v, flow) = self.logged_verdict(attempt, rec, index, is_main, &mut st);
                st.queries.end_attempt(v.outcome == Outcome::Rollback);
                if v.outcome == Outcome::Ok {
                    st.hidden_kept = true;
                }
                self.record(pos, v, &st);
                match flow {
                    Flow::Next => continue,
                    Flow::Stop => break,
                    Flow::Crashed => return SessionEnd::Crashed,
                }
            }
            if let Some(rec) = &attempt.recorded {
                // The log shows queries run before (perhaps in turns it alone knows).
                for q in &rec.allowed {
                    seed_query(&mut st, &q.tool, &q.query, policy);
                }
            }
            let mut v = Verdict::blank(attempt, index, Outcome::Ok);
            let as_written = self.parsed.get_mut(pos).and_then(Option::take);
            let response =
                attempt::response_given(attempt, &self.mapping, &replayer.repairs, as_written);
            if let Some(observe) = self.observer.as_mut() {
                observe(pos, &response);
            }
            let keep_going = match response {
                Response::Failed { cause, .. } => {
                    self.llm_failed(&mut st, &mut v, is_main);
                    v.cause = Some(Cause::LlmFailed(cause));
                    true
                }
                Response::Answer {
                    text,
                    calls,
                    context_exceeded,
                } => {
                    v.calls = calls;
                    if context_exceeded {
                        v.outcome = Outcome::ContextExceeded;
                        false
                    } else if text.is_empty() && (!attempt.native_tools || v.calls.is_empty()) {
                        // Upstream: an empty text is a failed call even with
                        // calls; a native-tool harness's call needs no text.
                        self.llm_failed(&mut st, &mut v, is_main);
                        v.cause = Some(Cause::LlmFailed(FailCause::EmptyText));
                        true
                    } else if v.calls.is_empty() {
                        self.no_calls(&text, attempt.finish == Finish::Length, &mut st, &mut v)
                    } else {
                        let calls = std::mem::take(&mut v.calls);
                        let end = self.run_calls(&calls, attempt, is_main, &mut st, &mut v);
                        v.calls = calls;
                        match end {
                            CallsEnd::Completed => {
                                v.outcome = Outcome::Ok;
                                if st.streak > 0 {
                                    add_flag(&mut v, Flag::Recovered);
                                }
                                st.streak = 0;
                                true
                            }
                            CallsEnd::RolledBack(reason) => {
                                rollback(&mut st, &mut v, reason);
                                true
                            }
                            CallsEnd::Unjudged(unseen) => {
                                unjudged(&mut st, &mut v, unseen);
                                true
                            }
                            CallsEnd::Crashed(error) => {
                                v.outcome = Outcome::Crash;
                                v.error = Some(error);
                                self.record(pos, v, &st);
                                return SessionEnd::Crashed;
                            }
                        }
                    }
                }
            };
            st.queries.end_attempt(v.outcome == Outcome::Rollback);
            self.record(pos, v, &st);
            if !keep_going {
                break;
            }
        }
        SessionEnd::Normal
    }

    /// The verdict upstream logged for an attempt the log alone knows, with
    /// the loop state moved as upstream's loop moved it.
    fn logged_verdict(
        &mut self,
        attempt: &Attempt,
        rec: &Recorded,
        index: usize,
        is_main: bool,
        st: &mut LoopState,
    ) -> (Verdict, Flow) {
        let policy = &self.replayer.policy;
        // A reader never hands over an undecided outcome; read one as a crash.
        let outcome = rec.outcome.unwrap_or(LoggedOutcome::Crash);
        let mut v = Verdict::blank(attempt, index, outcome);
        v.recorded = attempt.recorded.clone();
        let mut allowed_rolled_back = false;
        for q in &rec.allowed {
            v.duplicates.push(QueryHit {
                tool: q.tool.clone(),
                query: PyStr::from(q.query.as_str()),
                allowed: true,
                first_line: None,
            });
            add_flag(&mut v, Flag::AllowedDuplicate);
            allowed_rolled_back |= seed_query(st, &q.tool, &q.query, policy) == After::RolledBack;
            // Its own run counts in this attempt (kept or rolled back with it).
            let (_, own) = st
                .queries
                .lookup(&q.tool, &PyStr::from(q.query.as_str()), policy);
            st.queries.record(own);
        }
        // Sub-agents it launched ran inside it.
        for sid in &rec.launched {
            self.launches = launch_number(sid).unwrap_or(self.launches.saturating_add(1));
            if self.sessions.contains_key(sid.as_str()) {
                self.run_session(sid, None);
            }
        }
        v.cause = logged_cause(attempt, rec, outcome, policy);
        if allowed_rolled_back && v.cause.is_none() {
            v.cause = Some(Cause::DuplicateQuery {
                after: After::RolledBack,
                first_line: None,
            });
        }
        let flow = match outcome {
            Outcome::Rollback => {
                if let (Some(query), Some(tool)) = (&rec.query, &rec.tool) {
                    v.duplicates.push(QueryHit {
                        tool: tool.clone(),
                        query: PyStr::from(query.as_str()),
                        allowed: false,
                        first_line: None,
                    });
                    let earlier = seed_query(st, tool, query, policy);
                    if let Some(Cause::DuplicateQuery { after, .. }) = &mut v.cause {
                        *after = earlier;
                    }
                }
                st.turn -= 1;
                st.streak += 1;
                v.reason = rec.reason;
                v.refusal_keyword = refusal_keyword(rec);
                Flow::Next
            }
            Outcome::LlmFailed => {
                if is_main {
                    st.turn -= 1;
                }
                Flow::Next
            }
            Outcome::Ok => {
                if st.streak > 0 {
                    add_flag(&mut v, Flag::Recovered);
                }
                st.streak = 0;
                Flow::Next
            }
            Outcome::End => {
                v.reason = rec.reason;
                v.refusal_keyword = refusal_keyword(rec);
                Flow::Stop
            }
            Outcome::Final | Outcome::ContextExceeded | Outcome::Unreachable => Flow::Stop,
            Outcome::Crash => {
                v.error = rec.error.clone();
                Flow::Crashed
            }
        };
        (v, flow)
    }

    /// Stores the verdict of the line at trace position `pos`.
    fn record(&mut self, pos: usize, mut v: Verdict, st: &LoopState) {
        v.turn = Some(st.turn);
        v.consecutive_rollbacks = Some(st.streak);
        if let Some(slot) = self.verdicts.get_mut(pos) {
            *slot = Some(v);
        }
    }

    /// No usable response: retried. The main agent gives the turn back.
    fn llm_failed(&self, st: &mut LoopState, v: &mut Verdict, is_main: bool) {
        v.outcome = Outcome::LlmFailed;
        if is_main {
            st.turn -= 1;
        }
    }

    /// An answer without tool calls: a format error or refusal rolls back
    /// (or ends the loop at the limit); anything else ends the loop normally.
    /// With [`PlainReply::Continue`] an ending reply ends only the agent's
    /// turn of a conversation: the next attempt starts afresh. Returns
    /// whether the loop goes on.
    fn no_calls(&self, text: &str, length: bool, st: &mut LoopState, v: &mut Verdict) -> bool {
        let goes_on = self.judge_plain_reply(text, length, st, v);
        if !goes_on && self.replayer.plain_reply == PlainReply::Continue {
            st.streak = 0;
            return true;
        }
        goes_on
    }

    fn judge_plain_reply(
        &self,
        text: &str,
        length: bool,
        st: &mut LoopState,
        v: &mut Verdict,
    ) -> bool {
        let policy = &self.replayer.policy;
        let reason = if let Some(tag) = format_error::leaked_mcp_tag(text, policy) {
            v.leaked_tag = Some(tag.to_string());
            v.format_why = Some(format_error::classify(text, length, tag));
            Some(Reason::FormatError)
        } else if let Some(k) = self.replayer.refusals.find(text, policy) {
            v.refusal_keyword = Some(k.to_string());
            Some(Reason::Refusal)
        } else {
            None
        };
        match reason {
            None => {
                v.outcome = Outcome::Final;
                false
            }
            Some(r) if below_limit(st, policy.rollback_limit) => {
                rollback(st, v, r);
                true
            }
            Some(r) => {
                v.outcome = Outcome::End;
                v.reason = Some(r);
                false
            }
        }
    }

    /// Runs the calls of one attempt in order, as upstream's per-call loop.
    fn run_calls(
        &mut self,
        calls: &[Call],
        attempt: &Attempt,
        is_main: bool,
        st: &mut LoopState,
        v: &mut Verdict,
    ) -> CallsEnd {
        let policy = &self.replayer.policy;
        // Sub-agent launches so far in this attempt.
        let mut launched = 0;
        for (k, call) in calls.iter().enumerate() {
            v.executed = k + 1;
            if let Some(error) = &call.fix_error {
                return CallsEnd::Crashed(error.clone());
            }
            v.query_calls += u32::from(fingerprint_keys(&call.tool_name).is_some());
            v.search_calls += u32::from(policy.empty_search_tools.contains(&call.tool_name));
            let launches_sub_agent =
                is_main && call.server_name.starts_with("agent-") && !policy.sub_agents.is_empty();
            let record = match self.check_duplicate(call, st, v) {
                DupCheck::RollBack => return CallsEnd::RolledBack(Reason::DuplicateQuery),
                DupCheck::Raised => continue,
                DupCheck::Proceed(record) => record,
            };
            if launches_sub_agent {
                if self.launch_sub_agent(call, attempt, &mut launched) {
                    remember(st, record.map(|r| r.went(After::Success)), policy);
                }
                continue;
            }
            if let (Some(unseen), None) = (attempt.unseen_results, attempt.tool_results.get(k)) {
                remember(st, record.map(|r| r.went(After::Unknown)), policy);
                return CallsEnd::Unjudged(unseen);
            }
            let result = attempt.tool_results.get(k).cloned().unwrap_or_default();
            let bad = bad_result(&call.tool_name, &result, policy);
            if result.error.is_none() {
                remember(st, record.map(|r| r.went(After::of_result(&bad))), policy);
            }
            match bad {
                Ok(Some(reason)) if below_limit(st, policy.rollback_limit) => {
                    v.cause = match reason {
                        Reason::UnknownTool => {
                            let prompt = attempt
                                .system_prompt
                                .as_ref()
                                .or(self.mapping_prompt.as_ref());
                            let listed = prompt.map(|p| cause::prompt_tools(p)).unwrap_or_default();
                            Some(cause::unknown_tool(&call.tool_name, listed))
                        }
                        Reason::ToolError => Some(cause::tool_error(result.effective_text())),
                        _ => None,
                    };
                    return CallsEnd::RolledBack(reason);
                }
                Ok(Some(_)) => add_flag(v, Flag::ToolErrorPassed),
                Ok(None) | Err(_) => {}
            }
        }
        CallsEnd::Completed
    }

    /// Upstream's `_check_duplicate_query` for one call.
    fn check_duplicate(&self, call: &Call, st: &mut LoopState, v: &mut Verdict) -> DupCheck {
        let policy = &self.replayer.policy;
        let fingerprint = match query_fingerprint(&call.tool_name, &call.arguments) {
            Ok(Some(f)) => f,
            Ok(None) => return DupCheck::Proceed(None),
            Err(_) => return DupCheck::Raised,
        };
        let (seen, pending) = st.queries.lookup(&call.tool_name, &fingerprint, policy);
        let pending = pending.made_at(v.origin.line);
        match seen {
            Seen::Repeat => {
                let allowed = !below_limit(st, policy.rollback_limit);
                v.duplicates.push(QueryHit {
                    tool: call.tool_name.clone(),
                    query: fingerprint,
                    allowed,
                    first_line: pending.first_made_at(),
                });
                let after = layer_blame(st, &pending);
                if !allowed {
                    v.cause = Some(Cause::DuplicateQuery {
                        after,
                        first_line: pending.first_made_at(),
                    });
                    return DupCheck::RollBack;
                }
                add_flag(v, Flag::AllowedDuplicate);
                // A duplicate the layer caused itself, let through at the
                // limit, says so (unless another cause is already named).
                if after == After::RolledBack && v.cause.is_none() {
                    v.cause = Some(Cause::DuplicateQuery {
                        after: After::RolledBack,
                        first_line: pending.first_made_at(),
                    });
                }
            }
            Seen::NearRepeat => v.near_duplicates.push(QueryHit {
                tool: call.tool_name.clone(),
                query: fingerprint,
                allowed: true,
                first_line: None,
            }),
            Seen::New => {}
        }
        DupCheck::Proceed(Some(pending))
    }

    /// `run_sub_agent(server_name, arguments["subtask"])`. Returns whether the
    /// call succeeded (a failed launch or a crash inside makes it a failed
    /// tool call). Where the log names the session this launch started
    /// (the `launched`-th of the attempt), that session runs.
    fn launch_sub_agent(&mut self, call: &Call, attempt: &Attempt, launched: &mut usize) -> bool {
        let Value::Dict(args) = &call.arguments else {
            return false;
        };
        // `task_description += "..."` works for a str (and, oddly, a list).
        match args.get(&PyStr::from("subtask")) {
            Some(Value::Str(_) | Value::List(_)) => {}
            _ => return false,
        }
        let logged = attempt
            .recorded
            .as_ref()
            .and_then(|r| r.launched.get(*launched))
            .filter(|sid| sid.starts_with(call.server_name.as_str()));
        *launched += 1;
        let sid = match logged {
            Some(sid) => {
                self.launches = launch_number(sid).unwrap_or(self.launches.saturating_add(1));
                sid.clone()
            }
            None => {
                self.launches = self.launches.saturating_add(1);
                format!("{}_{}", call.server_name, self.launches)
            }
        };
        let configured = self.replayer.policy.sub_agents.contains(&call.server_name);
        // The log shows this session ran: it is a sub-agent of that run.
        let ran = logged.is_some() && self.sessions.contains_key(sid.as_str());
        if !(configured || ran) {
            return false;
        }
        self.run_session(&sid, None) == SessionEnd::Normal
    }
}

/// What the loop does after a logged verdict.
enum Flow {
    Next,
    Stop,
    Crashed,
}

/// The `N` of a session id `<server>_<N>`.
fn launch_number(sid: &str) -> Option<u32> {
    sid.rsplit_once('_')?.1.parse().ok()
}

/// What a log's own verdict says of its cause, where it says enough: the
/// client's error of a failed call, the tool an unknown-tool result named,
/// the error line of a tool error. A logged repeat's first run is not known.
fn logged_cause(
    attempt: &Attempt,
    rec: &Recorded,
    outcome: LoggedOutcome,
    policy: &Policy,
) -> Option<Cause> {
    if outcome == LoggedOutcome::LlmFailed {
        return rec
            .error
            .as_deref()
            .map(|e| Cause::LlmFailed(FailCause::error(e)));
    }
    if !matches!(outcome, LoggedOutcome::Rollback | LoggedOutcome::End) {
        return None;
    }
    match rec.reason? {
        Reason::UnknownTool => {
            let listed = attempt.system_prompt.as_deref().map(cause::prompt_tools);
            Some(cause::unknown_tool(
                rec.tool.as_deref()?,
                listed.unwrap_or_default(),
            ))
        }
        Reason::ToolError => [&rec.error, &rec.result]
            .into_iter()
            .flatten()
            .find(|t| crate::detect::bad_tool_result::error_prefix(t, policy))
            .map(|t| cause::tool_error(t)),
        Reason::DuplicateQuery => Some(Cause::DuplicateQuery {
            after: After::Unknown,
            first_line: None,
        }),
        _ => None,
    }
}

/// The keyword a logged refusal is counted under: the first one upstream listed.
fn refusal_keyword(rec: &Recorded) -> Option<String> {
    (rec.reason == Some(Reason::Refusal))
        .then(|| rec.keywords.first().cloned())
        .flatten()
}

/// Records a query the log shows had run before (the duplicate check only
/// asks whether it ran at all), and says how its earlier runs stand:
/// [`After::RolledBack`] when every one was made in a rolled-back attempt,
/// else how the first run the replay saw went ([`After::Unknown`] when it
/// saw none: a log does not say how a run went).
///
/// A query the replay has not seen ran only in attempts whose text is
/// gone. The attempts a log alone knows are its rolled-back turns, unless
/// a logged attempt that was not rolled back hid its calls too
/// (`hidden_kept`): then it cannot be decided.
fn seed_query(st: &mut LoopState, tool: &str, query: &str, policy: &Policy) -> After {
    let (seen, pending) = st.queries.lookup(tool, &PyStr::from(query), policy);
    if seen == Seen::Repeat {
        // How the first run the replay saw went, when it saw one.
        return layer_blame(st, &pending);
    }
    let rolled_back = !st.hidden_kept;
    st.queries.record_earlier(pending, rolled_back);
    if rolled_back {
        After::RolledBack
    } else {
        After::Unknown
    }
}

/// How a repeat's earlier runs went, as the cause says it: every one
/// rolled back is the layer's doing, unless a logged attempt that was kept
/// may have run the query unseen (then it cannot be decided).
fn layer_blame(st: &LoopState, pending: &PendingQuery) -> After {
    match pending.first_went() {
        After::RolledBack if st.hidden_kept => After::Unknown,
        after => after,
    }
}

/// Records a query whose call succeeded: at once (`per_call`), or when
/// the attempt ends without a rollback (`per_turn`).
fn remember(st: &mut LoopState, query: Option<PendingQuery>, policy: &Policy) {
    if let Some(query) = query {
        match policy.query_commit {
            QueryCommit::PerCall => st.queries.record(query),
            QueryCommit::PerTurn => st.queries.defer(query),
        }
    }
}

/// The guard at every rollback site: `consecutive_rollbacks < MAX - 1`.
fn below_limit(st: &LoopState, limit: u32) -> bool {
    i64::from(st.streak) < i64::from(limit) - 1
}

fn rollback(st: &mut LoopState, v: &mut Verdict, reason: Reason) {
    st.turn -= 1;
    st.streak += 1;
    v.outcome = Outcome::Rollback;
    v.reason = Some(reason);
}

/// An attempt a rule that needs a tool result could not judge: its
/// verdict is marked as not the replay's own (source `recorded`, counted
/// with the blind spots' `text_unknown`), as a log's verdict is, and the
/// loop moves as the input shows it went (a repeated request: rolled back,
/// without a reason the rules could give).
fn unjudged(st: &mut LoopState, v: &mut Verdict, unseen: UnseenResults) {
    v.outcome = match unseen {
        UnseenResults::RolledBack => {
            st.turn -= 1;
            st.streak += 1;
            Outcome::Rollback
        }
        UnseenResults::Unknown => {
            st.streak = 0;
            Outcome::Ok
        }
    };
    v.recorded = Some(std::sync::Arc::new(Recorded {
        decided: true,
        outcome: Some(v.outcome),
        message: Some(unseen.message().to_string()),
        unjudged: Some(unseen),
        ..Recorded::default()
    }));
}

fn add_flag(v: &mut Verdict, flag: Flag) {
    if let Err(at) = v.flags.binary_search(&flag) {
        v.flags.insert(at, flag);
    }
}
