//! Scoring keyword lists on traces.
//!
//! Every trace is replayed once per list, with the list in the policy: a
//! different refusal decision changes streaks, loop ends and every later
//! verdict. An attempt is *flagged* by a list when its verdict in that
//! list's replay is a refusal (`rollback` or `end` with reason `refusal`),
//! so flags, flips and label scores describe what the layer would do with
//! the list, and the current list's flags are upstream's own verdicts.
//!
//! Refusal checks only run on refusal-eligible attempts (an answer with
//! text, no parsed tool call, no MCP-tag leak). Which attempts those are,
//! and their text, is what the current list's replay saw
//! ([`Replayer::replay_observed`]): the tool→server mapping follows the
//! loops' execution order, as upstream's does. An attempt no loop reaches
//! is read with the mapping in force when the replay ended. A labelled
//! attempt that is not eligible, or that a list's replay never reaches
//! (`unreachable`), is predicted "not a refusal" for that list. Unlabelled
//! attempts are not scored. `eligible` counts the attempts that would be
//! checked if reached, and those are what suggestions are mined from.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;

use super::excerpt;
use super::labels::{Labels, LineKey};
use super::lists::KeywordList;
use super::suggest::{
    background_doc, gives_final_answer, is_placeholder, near_misses_in, visible_text,
    ForegroundDoc, NearMiss,
};
use crate::detect::format_error::leaks_mcp_tag;
use crate::detect::refusal::find_keyword;
use crate::detect::Reason;
use crate::metrics::Tally;
use crate::policy::Policy;
use crate::read::{Attempt, Trace};
use crate::repair::Repairs;
use crate::replay::attempt::{response_of, Response};
use crate::replay::{Outcome, PlainReply, Replayer, Verdict};

/// One attempt in a flip or error list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineNote {
    #[serde(flatten)]
    pub at: LineKey,
    /// The keyword that matched (none for a missed refusal).
    pub keyword: Option<String>,
    /// A short excerpt around the match (or of the answer's start).
    pub excerpt: String,
}

/// What a replay with a list did: figures of its [`Tally`], named and
/// defined as in `analyze` (docs/metrics.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReplayCounts {
    /// Attempts some loop reached (not `unreachable`).
    pub reached: u64,
    pub rollbacks: u64,
    pub refusal_rollbacks: u64,
    /// Loops ended at the rollback limit (`end`: format error or refusal;
    /// analyze's `limit_events.loop_ended`).
    pub ended_at_limit: u64,
    pub refusal_ends: u64,
    pub finals: u64,
}

impl ReplayCounts {
    pub fn of(t: &Tally) -> ReplayCounts {
        ReplayCounts {
            reached: t.reached(),
            rollbacks: t.rollbacks(),
            refusal_rollbacks: t.rollback_reason(Reason::Refusal),
            ended_at_limit: t.limit_events.loop_ended,
            refusal_ends: t.end_reason(Reason::Refusal),
            finals: t.outcome(Outcome::Final),
        }
    }
}

/// Confusion counts against labels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    pub tp: u64,
    pub fp: u64,
    pub fn_: u64,
    pub tn: u64,
}

impl Confusion {
    fn merge(&mut self, o: &Confusion) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
        self.tn += o.tn;
    }

    /// 0 when nothing was flagged (scikit-learn's `zero_division=0`).
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    /// 0 when nothing is labelled a refusal.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    pub fn f1(&self) -> f64 {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Everything one list collected.
#[derive(Debug, Clone, Default)]
pub struct ListTally {
    /// Attempts whose verdict in the list's replay is a refusal.
    pub flagged: u64,
    /// The list's replay.
    pub replay: Tally,
    /// Flagged by this list, not by the current one.
    pub newly_flagged: Vec<LineNote>,
    /// Flagged by the current list, not by this one.
    pub no_longer_flagged: Vec<LineNote>,
    pub confusion: Confusion,
    pub false_positives: Vec<LineNote>,
    pub false_negatives: Vec<LineNote>,
}

impl ListTally {
    fn merge(&mut self, o: ListTally) {
        self.flagged += o.flagged;
        self.replay.add(&o.replay);
        self.newly_flagged.extend(o.newly_flagged);
        self.no_longer_flagged.extend(o.no_longer_flagged);
        self.confusion.merge(&o.confusion);
        self.false_positives.extend(o.false_positives);
        self.false_negatives.extend(o.false_negatives);
    }
}

/// What one trace contributed.
#[derive(Debug, Default)]
pub struct TraceFindings {
    pub attempts: u64,
    pub eligible: u64,
    pub tool_calling: u64,
    pub text_unknown: u64,
    pub labelled_found: u64,
    pub lists: Vec<ListTally>,
    pub foreground: Vec<ForegroundDoc>,
    pub background: Vec<Vec<u64>>,
    pub near_misses: Vec<NearMiss>,
}

/// Totals over the run.
#[derive(Debug, Default)]
pub struct Totals {
    pub attempts: u64,
    pub eligible: u64,
    pub tool_calling: u64,
    pub text_unknown: u64,
    pub labelled_found: u64,
    pub lists: Vec<ListTally>,
}

impl Totals {
    pub fn merge(&mut self, f: &mut TraceFindings) {
        self.attempts += f.attempts;
        self.eligible += f.eligible;
        self.tool_calling += f.tool_calling;
        self.text_unknown += f.text_unknown;
        self.labelled_found += f.labelled_found;
        if self.lists.len() < f.lists.len() {
            self.lists.resize_with(f.lists.len(), ListTally::default);
        }
        for (t, l) in self.lists.iter_mut().zip(f.lists.drain(..)) {
            t.merge(l);
        }
    }
}

/// How the error-correction layer sees one attempt.
#[derive(Clone)]
enum Seen {
    /// Refusals are checked on this text.
    Eligible(String),
    /// Calls were parsed; this is the text around them.
    ToolCalling(String),
    /// A failed call, an empty or truncated answer, or a format leak.
    Other(String),
}

impl Seen {
    /// `r` is what the layer made of `attempt`.
    fn of(r: &Response, attempt: &Attempt, policy: &Policy) -> Seen {
        match r {
            Response::Answer {
                text,
                calls,
                context_exceeded: false,
            } if !text.is_empty() => {
                if !calls.is_empty() {
                    Seen::ToolCalling(text.to_string())
                } else if leaks_mcp_tag(text, policy) {
                    Seen::Other(text.to_string())
                } else {
                    Seen::Eligible(text.to_string())
                }
            }
            Response::Answer { text, .. } => Seen::Other(text.to_string()),
            // No response: the recorded text, if any, is all there is.
            Response::Failed { .. } => Seen::Other(attempt.content.clone()),
        }
    }
}

/// Scores lists trace by trace; shared read-only across workers.
pub struct Evaluator {
    base: Policy,
    lists: Vec<KeywordList>,
    /// The current list's replay (the base policy's).
    current: Replayer,
    /// Each list's replay; `None` where a list replays like the current
    /// one (its verdicts are reused).
    replayers: Vec<Option<Replayer>>,
    repairs: Repairs,
    labels: Option<Labels>,
    mine: bool,
}

impl Evaluator {
    /// The replays with another rule for replies without a tool call.
    pub fn with_plain_reply(mut self, plain_reply: PlainReply) -> Evaluator {
        self.replayers = std::mem::take(&mut self.replayers)
            .into_iter()
            .map(|r| r.map(|r| r.with_plain_reply(plain_reply)))
            .collect();
        self.current = self.current.with_plain_reply(plain_reply);
        self
    }

    /// `lists[0]` must be the current list (the base policy's).
    pub fn new(
        base: Policy,
        lists: Vec<KeywordList>,
        labels: Option<Labels>,
        mine: bool,
    ) -> Evaluator {
        let replayers = lists
            .iter()
            .map(|l| l.policy_for(&base))
            .map(|p| (p != base).then(|| Replayer::new(p)))
            .collect();
        Evaluator {
            repairs: Repairs::new(&base),
            current: Replayer::new(base.clone()),
            base,
            lists,
            replayers,
            labels,
            mine,
        }
    }

    pub fn lists(&self) -> &[KeywordList] {
        &self.lists
    }

    pub fn base(&self) -> &Policy {
        &self.base
    }

    pub fn labels(&self) -> Option<&Labels> {
        self.labels.as_ref()
    }

    /// How the layer sees each attempt of `trace`, and its verdicts under
    /// the current list, from one replay.
    fn current_replay(&self, trace: &Trace) -> (Vec<Seen>, Vec<Verdict>) {
        let mut seen: Vec<Option<Seen>> = vec![None; trace.attempts.len()];
        let (verdicts, last_mapping) = self.current.replay_observed(trace, &mut |pos, r| {
            if let (Some(slot), Some(a)) = (seen.get_mut(pos), trace.attempts.get(pos)) {
                *slot = Some(Seen::of(r, a, &self.base));
            }
        });
        let seen = seen
            .into_iter()
            .zip(&trace.attempts)
            .map(|(s, a)| {
                s.unwrap_or_else(|| {
                    let r = response_of(a, &last_mapping, &self.repairs);
                    Seen::of(&r, a, &self.base)
                })
            })
            .collect();
        (seen, verdicts)
    }

    /// Scores one trace.
    pub fn trace(&self, trace: &Trace) -> TraceFindings {
        let n = self.lists.len();
        let mut out = TraceFindings {
            attempts: trace.attempts.len() as u64,
            lists: vec![ListTally::default(); n],
            ..TraceFindings::default()
        };
        let (seen_all, current) = self.current_replay(trace);
        let replays: Vec<Cow<'_, [Verdict]>> = self
            .replayers
            .iter()
            .map(|r| match r {
                None => Cow::Borrowed(current.as_slice()),
                Some(r) => Cow::Owned(r.replay(trace)),
            })
            .collect();
        for (tally, verdicts) in out.lists.iter_mut().zip(&replays) {
            tally.replay = Tally::of(verdicts.iter());
        }
        let mut index_in_session: HashMap<&str, usize> = HashMap::new();
        for ((pos, a), seen) in trace.attempts.iter().enumerate().zip(seen_all) {
            let idx = index_in_session.entry(&*a.session).or_insert(0);
            let at = LineKey {
                trace_id: a.trace_id.to_string(),
                session: a.session.to_string(),
                index: *idx,
            };
            *idx += 1;
            let label = self.labels.as_ref().and_then(|l| l.get(&at));
            out.labelled_found += u64::from(label.is_some());
            // A task log's turn known only from its step log: no text to judge.
            if a.decided().is_some() {
                out.text_unknown += 1;
                continue;
            }
            let text = match &seen {
                Seen::Eligible(t) | Seen::ToolCalling(t) | Seen::Other(t) => t.as_str(),
            };
            let hits: Vec<Option<LineNote>> = replays
                .iter()
                .zip(&self.lists)
                .map(|(verdicts, list)| flag_of(verdicts.get(pos)?, list, text, &at))
                .collect();
            self.tally(&hits, label, text, &at, &mut out);
            match &seen {
                Seen::Eligible(text) => {
                    out.eligible += 1;
                    // "LLM response is empty." is upstream's text, not the
                    // model's; so are a harness's placeholders.
                    if self.mine && !a.content.trim().is_empty() && !is_placeholder(text) {
                        self.mine_answer(text, &at, label, hits[0].is_some(), &mut out);
                    }
                }
                Seen::ToolCalling(text) => {
                    out.tool_calling += 1;
                    if self.mine && label != Some(true) {
                        out.background.push(background_doc(&visible_text(text)));
                    }
                }
                Seen::Other(_) => {}
            }
        }
        out
    }

    /// Counts one attempt's flags, flips and label scores for every list.
    fn tally(
        &self,
        hits: &[Option<LineNote>],
        label: Option<bool>,
        text: &str,
        at: &LineKey,
        out: &mut TraceFindings,
    ) {
        for (i, hit) in hits.iter().enumerate() {
            let tally = &mut out.lists[i];
            tally.flagged += u64::from(hit.is_some());
            if i > 0 {
                match (hit, &hits[0]) {
                    (Some(h), None) => tally.newly_flagged.push(h.clone()),
                    (None, Some(h)) => tally.no_longer_flagged.push(h.clone()),
                    _ => {}
                }
            }
            if let Some(truth) = label {
                score(tally, truth, hit.as_ref(), || lead(text, at));
            }
        }
    }

    /// Feeds a refusal-eligible answer to the miner and the near-miss scan.
    fn mine_answer(
        &self,
        text: &str,
        at: &LineKey,
        label: Option<bool>,
        flagged: bool,
        out: &mut TraceFindings,
    ) {
        let visible = visible_text(text);
        let foreground = match label {
            Some(truth) => truth,
            None => !gives_final_answer(&visible),
        };
        if foreground {
            out.foreground
                .push(ForegroundDoc::new(at.clone(), &visible, flagged));
        } else {
            out.background.push(background_doc(&visible));
        }
        // A reply that ends the task with an answer is no refusal however
        // close to a keyword it comes ("Time constraints aside, … \boxed{…}").
        if label != Some(true) && gives_final_answer(&visible) {
            return;
        }
        out.near_misses.extend(near_misses_in(
            text,
            &self.lists[0].phrases,
            self.lists[0].mode,
            at,
        ));
    }
}

/// The attempt as a list's replay saw it: flagged when its verdict is a
/// refusal rollback or end.
fn flag_of(v: &Verdict, list: &KeywordList, text: &str, at: &LineKey) -> Option<LineNote> {
    if v.reason != Some(Reason::Refusal) {
        return None;
    }
    let keyword = v.refusal_keyword.clone();
    let range = keyword
        .as_deref()
        .and_then(|k| find_keyword(text, k, list.mode));
    Some(LineNote {
        at: at.clone(),
        excerpt: excerpt(text, range.unwrap_or(0..0)),
        keyword,
    })
}

fn score(
    tally: &mut ListTally,
    truth: bool,
    hit: Option<&LineNote>,
    lead: impl FnOnce() -> LineNote,
) {
    let c = &mut tally.confusion;
    match (truth, hit) {
        (true, Some(_)) => c.tp += 1,
        (false, None) => c.tn += 1,
        (false, Some(h)) => {
            c.fp += 1;
            tally.false_positives.push(h.clone());
        }
        (true, None) => {
            c.fn_ += 1;
            tally.false_negatives.push(lead());
        }
    }
}

/// A missed refusal: the start of what the model said.
fn lead(text: &str, at: &LineKey) -> LineNote {
    let visible = visible_text(text);
    let shown = if visible.trim().is_empty() {
        text
    } else {
        visible.trim()
    };
    LineNote {
        at: at.clone(),
        keyword: None,
        excerpt: excerpt(shown, 0..0),
    }
}
