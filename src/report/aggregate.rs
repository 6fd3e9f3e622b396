//! The numbers behind `mirotrace analyze`, built from verdicts one trace at
//! a time.
//!
//! An [`Aggregate`] holds counters, bounded rankings and a bounded query
//! counter, so its size does not grow with the input. Aggregates merge:
//! workers can each fold a share of the traces and the results add up to
//! what one pass would give (rankings break ties by the traces' input
//! ordinals, so they do not depend on the split either).

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::bootstrap::RatioHistogram;
use super::by_index::ByIndex;
use super::hotspots::{QueryCounter, QueryKey};
use super::rank::TopK;
use super::sessions::{EarlyEnd, SessionWalk, Streak, StreakEnd};
use super::timeline::{Timeline, WorstGate};
use crate::detect::{near_duplicate_key, Reason};
use crate::model::Attempt;
use crate::parse::JsonPath;
use crate::pyjson::PyStr;
use crate::repair::Repair;
use crate::replay::{Flag, Outcome, QueryHit, Verdict};

/// Distinct tool or agent names tracked one by one; the rest are pooled
/// under [`OTHER`] (tool names come from the model and can be anything).
pub const MAX_NAMES: usize = 500;
/// The pool for names beyond [`MAX_NAMES`].
pub const OTHER: &str = "(other)";
/// The "tool" of format errors and refusals: they happen without a call.
pub const NO_CALL: &str = "(no tool call)";

const OUTCOMES: usize = Outcome::ALL.len();
const REASONS: usize = Reason::ALL.len();
const PATHS: usize = JsonPath::ALL.len();
const REPAIRS: usize = Repair::ALL.len();
const STREAK_ENDS: usize = StreakEnd::ALL.len();
const EARLY_ENDS: usize = EarlyEnd::ALL.len();

/// Counts per tool (the tool name after repairs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolStats {
    /// Calls parsed.
    pub calls: u64,
    /// Calls the loop started on.
    pub executed: u64,
    /// Calls with at least one in-place fix.
    pub repaired: u64,
    /// Rollbacks caused by a call of this tool, by reason.
    pub rollbacks: [u64; REASONS],
}

impl ToolStats {
    fn merge(&mut self, o: &ToolStats) {
        self.calls += o.calls;
        self.executed += o.executed;
        self.repaired += o.repaired;
        add_arrays(&mut self.rollbacks, &o.rollbacks);
    }

    pub fn total_rollbacks(&self) -> u64 {
        self.rollbacks.iter().sum()
    }
}

/// Counts per agent (`main` or a sub-agent name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentStats {
    pub traces: u64,
    pub sessions: u64,
    pub attempts: u64,
    /// Rollbacks by reason.
    pub rollbacks: [u64; REASONS],
    /// Loops ended at the limit (`end`).
    pub ends: u64,
    /// Sessions whose loop stopped early, by cause.
    pub ended_early: [u64; EARLY_ENDS],
}

impl AgentStats {
    fn merge(&mut self, o: &AgentStats) {
        self.traces += o.traces;
        self.sessions += o.sessions;
        self.attempts += o.attempts;
        self.ends += o.ends;
        add_arrays(&mut self.rollbacks, &o.rollbacks);
        add_arrays(&mut self.ended_early, &o.ended_early);
    }

    pub fn total_rollbacks(&self) -> u64 {
        self.rollbacks.iter().sum()
    }
}

/// Parsed tool calls and the repairs applied to them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallStats {
    /// Every call the parser returned (also on attempts whose calls did not
    /// all run).
    pub parsed: u64,
    pub executed: u64,
    pub json_paths: [u64; PATHS],
    pub repairs: [u64; REPAIRS],
    /// Calls that needed at least one in-place fix: a repair kind, or
    /// arguments that only parsed after JSON repair or the lenient
    /// fallback. Without the layer they would have reached the tool broken
    /// (or not at all).
    pub repaired: u64,
}

impl CallStats {
    fn merge(&mut self, o: &CallStats) {
        self.parsed += o.parsed;
        self.executed += o.executed;
        self.repaired += o.repaired;
        add_arrays(&mut self.json_paths, &o.json_paths);
        add_arrays(&mut self.repairs, &o.repairs);
    }

    pub fn path(&self, p: JsonPath) -> u64 {
        self.json_paths[p as usize]
    }

    pub fn repair(&self, r: Repair) -> u64 {
        self.repairs[r as usize]
    }
}

/// The rollback limit's three behaviours, as often as they fired.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LimitEvents {
    /// Outcome `end`: a format error or refusal at the limit ended the loop.
    pub loop_ended: u64,
    /// Flag `allowed_duplicate`.
    pub duplicate_allowed: u64,
    /// Flag `tool_error_passed`.
    pub result_passed: u64,
}

/// A streak worth jumping to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreakRecord {
    pub length: u32,
    pub trace_ordinal: u64,
    pub trace_id: String,
    pub file: Arc<str>,
    pub session: String,
    pub start_index: usize,
    pub start_line: u64,
    pub reasons: Vec<Reason>,
    pub end: StreakEnd,
}

impl StreakRecord {
    /// A total order (every line of a task log or ATIF document is line 1,
    /// so session and index break the remaining ties): the kept streaks
    /// then never depend on how partial rankings were merged.
    fn rank(
        &self,
    ) -> (
        u32,
        Reverse<u64>,
        Reverse<u64>,
        Reverse<&str>,
        Reverse<usize>,
    ) {
        (
            self.length,
            Reverse(self.trace_ordinal),
            Reverse(self.start_line),
            Reverse(&self.session),
            Reverse(self.start_index),
        )
    }
}

impl Ord for StreakRecord {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for StreakRecord {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Rollback streaks: how long, how they ended, the longest ones.
#[derive(Debug, Clone, PartialEq)]
pub struct StreakStats {
    /// Streak length → number of streaks.
    pub histogram: BTreeMap<u32, u64>,
    pub ended_by: [u64; STREAK_ENDS],
    pub longest: TopK<StreakRecord>,
}

impl StreakStats {
    pub fn max(&self) -> u32 {
        self.histogram.keys().next_back().copied().unwrap_or(0)
    }

    pub fn count(&self) -> u64 {
        self.histogram.values().sum()
    }

    pub fn ended(&self, e: StreakEnd) -> u64 {
        self.ended_by[e as usize]
    }
}

/// A trace in the "worst traces" ranking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRecord {
    pub rollbacks: u64,
    pub ordinal: u64,
    pub trace_id: String,
    pub file: Arc<str>,
    pub attempts: u64,
    /// The most frequent rollback reason (ties: the first in [`Reason::ALL`]).
    pub top_reason: Option<Reason>,
    pub max_streak: u32,
    /// Why the main agent's loop stopped early, if it did.
    pub ended_early: Option<EarlyEnd>,
    /// Its attempts, when the aggregate keeps timelines (see
    /// [`Aggregate::keeping_timelines`]).
    pub timeline: Option<Box<Timeline>>,
}

impl Ord for TraceRecord {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.rollbacks, Reverse(self.ordinal)).cmp(&(other.rollbacks, Reverse(other.ordinal)))
    }
}

impl PartialOrd for TraceRecord {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Everything `analyze` reports, for any set of traces.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// Ordinal of the first trace added (orders groups by first appearance).
    pub first_trace: Option<u64>,
    pub files: u64,
    pub traces: u64,
    pub main_sessions: u64,
    pub sub_agent_sessions: u64,
    pub attempts: u64,
    pub bad_lines: u64,
    pub outcomes: [u64; OUTCOMES],
    /// Attempts with outcome `rollback`, by reason.
    pub rollback_reasons: [u64; REASONS],
    /// Attempts with outcome `end`, by reason.
    pub end_reasons: [u64; REASONS],
    /// Traces with at least one rollback of each reason.
    pub traces_with_reason: [u64; REASONS],
    pub traces_with_rollback: u64,
    /// Which refusal keyword matched (rollbacks and ends).
    pub refusal_keywords: BTreeMap<String, u64>,
    pub tools: BTreeMap<String, ToolStats>,
    pub agents: BTreeMap<String, AgentStats>,
    pub calls: CallStats,
    /// Exact repeats that upstream caught (rolled back or let through).
    pub duplicates: QueryCounter,
    /// Repeats upstream's exact match missed (same after folding).
    pub near_duplicates: QueryCounter,
    pub streaks: StreakStats,
    pub limit_events: LimitEvents,
    /// Attempts flagged `recovered`.
    pub recovered: u64,
    /// Traces whose main agent stopped early, by cause.
    pub main_ended_early: [u64; EARLY_ENDS],
    /// Sub-agent sessions that stopped early, by cause.
    pub sub_agent_ended_early: [u64; EARLY_ENDS],
    /// Per-trace (rollbacks, attempts), for the clustered interval.
    pub rollback_rate: RatioHistogram,
    /// Attempts and rollbacks by position within the session.
    pub by_index: ByIndex,
    pub worst_traces: TopK<TraceRecord>,
    /// With a gate, the worst traces keep their timelines.
    timelines: Option<Arc<WorstGate>>,
}

impl Aggregate {
    /// An empty aggregate whose rankings keep `top` entries.
    pub fn new(top: usize) -> Aggregate {
        Aggregate {
            first_trace: None,
            files: 0,
            traces: 0,
            main_sessions: 0,
            sub_agent_sessions: 0,
            attempts: 0,
            bad_lines: 0,
            outcomes: [0; OUTCOMES],
            rollback_reasons: [0; REASONS],
            end_reasons: [0; REASONS],
            traces_with_reason: [0; REASONS],
            traces_with_rollback: 0,
            refusal_keywords: BTreeMap::new(),
            tools: BTreeMap::new(),
            agents: BTreeMap::new(),
            calls: CallStats::default(),
            duplicates: QueryCounter::default(),
            near_duplicates: QueryCounter::default(),
            streaks: StreakStats {
                histogram: BTreeMap::new(),
                ended_by: [0; STREAK_ENDS],
                longest: TopK::new(top),
            },
            limit_events: LimitEvents::default(),
            recovered: 0,
            main_ended_early: [0; EARLY_ENDS],
            sub_agent_ended_early: [0; EARLY_ENDS],
            rollback_rate: RatioHistogram::default(),
            by_index: ByIndex::default(),
            worst_traces: TopK::new(top),
            timelines: None,
        }
    }

    /// With a gate (one per run, shared by every part), the worst traces
    /// keep their timelines (bounded: a few hundred rows each, for `--top`
    /// traces), for a report that opens them.
    pub fn keeping_timelines(mut self, gate: Option<Arc<WorstGate>>) -> Aggregate {
        self.timelines = gate;
        self
    }

    /// Counts an input that was opened.
    pub fn add_file(&mut self) {
        self.files += 1;
    }

    /// Counts a skipped line.
    pub fn add_bad_line(&mut self) {
        self.bad_lines += 1;
    }

    pub fn outcome(&self, o: Outcome) -> u64 {
        self.outcomes[o as usize]
    }

    pub fn rollbacks(&self) -> u64 {
        self.outcome(Outcome::Rollback)
    }

    pub fn rollback_reason(&self, r: Reason) -> u64 {
        self.rollback_reasons[r as usize]
    }

    pub fn end_reason(&self, r: Reason) -> u64 {
        self.end_reasons[r as usize]
    }

    pub fn traces_with(&self, r: Reason) -> u64 {
        self.traces_with_reason[r as usize]
    }

    /// Rollbacks / attempts.
    pub fn rollback_rate(&self) -> Option<f64> {
        (self.attempts > 0).then(|| self.rollbacks() as f64 / self.attempts as f64)
    }

    /// The rollback reason with the most rollbacks (ties: first in [`Reason::ALL`]).
    pub fn top_reason(&self) -> Option<Reason> {
        top_reason(&self.rollback_reasons)
    }

    /// Adds one trace: its verdicts as [`crate::engine`] delivers them (file
    /// order), and its position in the input (`ordinal`, unique per trace;
    /// it breaks ties in the rankings).
    pub fn add_trace(&mut self, verdicts: &[Verdict], ordinal: u64) {
        self.add_trace_with_lines(verdicts, &[], ordinal);
    }

    /// [`Aggregate::add_trace`] with the trace's lines at hand (one per
    /// verdict, in the same order), for the excerpts of kept timelines.
    pub fn add_trace_with_lines(&mut self, verdicts: &[Verdict], lines: &[Attempt], ordinal: u64) {
        let gate = self.timelines.clone();
        self.add_run(verdicts.iter(), ordinal, |rollbacks| {
            gate.filter(|g| g.admits(rollbacks, ordinal))
                .map(|_| Box::new(Timeline::build(verdicts.iter(), lines)))
        });
    }

    /// [`Aggregate::add_trace`] for a subset of a trace's verdicts (one
    /// agent's or one model's), still in file order.
    pub fn add_verdicts(&mut self, verdicts: &[&Verdict], ordinal: u64) {
        self.add_run(verdicts.iter().copied(), ordinal, |_| None);
    }

    fn add_run<'v>(
        &mut self,
        verdicts: impl Iterator<Item = &'v Verdict>,
        ordinal: u64,
        timeline: impl FnOnce(u64) -> Option<Box<Timeline>>,
    ) {
        let mut first: Option<&Verdict> = None;
        let mut attempts = 0u64;
        let mut trace_reasons = [0u64; REASONS];
        let mut walk = SessionWalk::default();
        let mut max_streak = 0;
        for v in verdicts {
            let first = *first.get_or_insert(v);
            attempts += 1;
            self.add_verdict(v, ordinal, &mut trace_reasons);
            if let Some(s) = walk.observe(v) {
                max_streak = max_streak.max(s.length);
                self.add_streak(&s, first, ordinal);
            }
        }
        let Some(first) = first else {
            return;
        };
        self.first_trace = Some(self.first_trace.map_or(ordinal, |f| f.min(ordinal)));
        self.traces += 1;
        self.attempts += attempts;
        let (open_streaks, sessions) = walk.finish();
        for s in &open_streaks {
            max_streak = max_streak.max(s.length);
            self.add_streak(s, first, ordinal);
        }
        let mut main_end = None;
        for (i, s) in sessions.iter().enumerate() {
            let early = s.ended_early();
            if s.session == "main" {
                self.main_sessions += 1;
                main_end = early;
                if let Some(e) = early {
                    self.main_ended_early[e as usize] += 1;
                }
            } else {
                self.sub_agent_sessions += 1;
                if let Some(e) = early {
                    self.sub_agent_ended_early[e as usize] += 1;
                }
            }
            // Per session rather than per attempt: one lookup by name.
            let agent = name_slot(&mut self.agents, s.agent);
            agent.sessions += 1;
            agent.attempts += s.attempts;
            agent.ends += s.ends;
            add_arrays(&mut agent.rollbacks, &s.rollbacks);
            if let Some(e) = early {
                agent.ended_early[e as usize] += 1;
            }
            if sessions[..i].iter().all(|earlier| earlier.agent != s.agent) {
                agent.traces += 1;
            }
        }
        for (i, &n) in trace_reasons.iter().enumerate() {
            self.traces_with_reason[i] += u64::from(n > 0);
        }
        let rollbacks: u64 = trace_reasons.iter().sum();
        self.traces_with_rollback += u64::from(rollbacks > 0);
        self.rollback_rate.add(rollbacks, attempts);
        let candidate = (rollbacks, Reverse(ordinal));
        if self
            .worst_traces
            .admits(|least| candidate > (least.rollbacks, Reverse(least.ordinal)))
        {
            self.worst_traces.offer(TraceRecord {
                rollbacks,
                ordinal,
                trace_id: first.trace_id.to_string(),
                file: first.origin.file.clone(),
                attempts,
                top_reason: top_reason(&trace_reasons),
                max_streak,
                ended_early: main_end,
                timeline: timeline(rollbacks),
            });
        }
    }

    fn add_verdict(&mut self, v: &Verdict, ordinal: u64, trace_reasons: &mut [u64; REASONS]) {
        self.outcomes[v.outcome as usize] += 1;
        self.by_index.add(v.index, v.outcome == Outcome::Rollback);
        match (v.outcome, v.reason) {
            (Outcome::Rollback, Some(reason)) => {
                self.rollback_reasons[reason as usize] += 1;
                trace_reasons[reason as usize] += 1;
                let tool = match reason {
                    Reason::FormatError | Reason::Refusal => NO_CALL,
                    _ => v
                        .executed
                        .checked_sub(1)
                        .and_then(|i| v.calls.get(i))
                        .map(|c| c.tool_name.as_str())
                        // A verdict from a task log names the tool it logged.
                        .or_else(|| v.recorded.as_ref().and_then(|r| r.blamed_tool()))
                        .unwrap_or(NO_CALL),
                };
                name_slot(&mut self.tools, tool).rollbacks[reason as usize] += 1;
            }
            (Outcome::End, Some(reason)) => {
                self.end_reasons[reason as usize] += 1;
            }
            _ => {}
        }
        if let Some(k) = &v.refusal_keyword {
            match self.refusal_keywords.get_mut(k.as_str()) {
                Some(n) => *n += 1,
                None => {
                    self.refusal_keywords.insert(k.clone(), 1);
                }
            }
        }
        if v.outcome == Outcome::End {
            self.limit_events.loop_ended += 1;
        }
        for flag in &v.flags {
            match flag {
                Flag::AllowedDuplicate => self.limit_events.duplicate_allowed += 1,
                Flag::ToolErrorPassed => self.limit_events.result_passed += 1,
                Flag::Recovered => self.recovered += 1,
            }
        }
        for (i, call) in v.calls.iter().enumerate() {
            let executed = i < v.executed;
            let repaired = !call.repairs.is_empty()
                || matches!(call.json, JsonPath::Repaired | JsonPath::Lenient);
            self.calls.parsed += 1;
            self.calls.executed += u64::from(executed);
            self.calls.repaired += u64::from(repaired);
            self.calls.json_paths[call.json as usize] += 1;
            for r in &call.repairs {
                self.calls.repairs[*r as usize] += 1;
            }
            let tool = name_slot(&mut self.tools, &call.tool_name);
            tool.calls += 1;
            tool.executed += u64::from(executed);
            tool.repaired += u64::from(repaired);
        }
        count_queries(&mut self.duplicates, &v.duplicates, ordinal, |q| {
            q.query.clone()
        });
        count_queries(
            &mut self.near_duplicates,
            &v.near_duplicates,
            ordinal,
            |q| PyStr::from(near_duplicate_key(&q.query)),
        );
    }

    fn add_streak(&mut self, s: &Streak, first: &Verdict, ordinal: u64) {
        *self.streaks.histogram.entry(s.length).or_insert(0) += 1;
        self.streaks.ended_by[s.end as usize] += 1;
        let candidate = (
            s.length,
            Reverse(ordinal),
            Reverse(s.start_line),
            Reverse(s.session),
            Reverse(s.start_index),
        );
        if self
            .streaks
            .longest
            .admits(|least| candidate > least.rank())
        {
            self.streaks.longest.offer(StreakRecord {
                length: s.length,
                trace_ordinal: ordinal,
                trace_id: first.trace_id.to_string(),
                file: first.origin.file.clone(),
                session: s.session.to_string(),
                start_index: s.start_index,
                start_line: s.start_line,
                reasons: s.reasons.clone(),
                end: s.end,
            });
        }
    }

    /// Adds `other` into `self`: the result is what one aggregate fed both
    /// inputs would hold.
    pub fn merge(&mut self, other: Aggregate) {
        self.first_trace = match (self.first_trace, other.first_trace) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.files += other.files;
        self.traces += other.traces;
        self.main_sessions += other.main_sessions;
        self.sub_agent_sessions += other.sub_agent_sessions;
        self.attempts += other.attempts;
        self.bad_lines += other.bad_lines;
        add_arrays(&mut self.outcomes, &other.outcomes);
        add_arrays(&mut self.rollback_reasons, &other.rollback_reasons);
        add_arrays(&mut self.end_reasons, &other.end_reasons);
        add_arrays(&mut self.traces_with_reason, &other.traces_with_reason);
        self.traces_with_rollback += other.traces_with_rollback;
        for (k, n) in other.refusal_keywords {
            *self.refusal_keywords.entry(k).or_insert(0) += n;
        }
        for (k, t) in &other.tools {
            name_slot(&mut self.tools, k).merge(t);
        }
        for (k, a) in &other.agents {
            name_slot(&mut self.agents, k).merge(a);
        }
        self.calls.merge(&other.calls);
        self.duplicates.merge(other.duplicates);
        self.near_duplicates.merge(other.near_duplicates);
        for (len, n) in other.streaks.histogram {
            *self.streaks.histogram.entry(len).or_insert(0) += n;
        }
        add_arrays(&mut self.streaks.ended_by, &other.streaks.ended_by);
        self.streaks.longest.merge(other.streaks.longest);
        self.limit_events.loop_ended += other.limit_events.loop_ended;
        self.limit_events.duplicate_allowed += other.limit_events.duplicate_allowed;
        self.limit_events.result_passed += other.limit_events.result_passed;
        self.recovered += other.recovered;
        add_arrays(&mut self.main_ended_early, &other.main_ended_early);
        add_arrays(
            &mut self.sub_agent_ended_early,
            &other.sub_agent_ended_early,
        );
        self.rollback_rate.merge(&other.rollback_rate);
        self.by_index.merge(&other.by_index);
        self.worst_traces.merge(other.worst_traces);
    }
}

/// Counts each query once per attempt, under `key_of` (upstream's
/// fingerprint or its folded form).
fn count_queries(
    counter: &mut QueryCounter,
    hits: &[QueryHit],
    ordinal: u64,
    key_of: impl Fn(&QueryHit) -> PyStr,
) {
    for (i, hit) in hits.iter().enumerate() {
        let key = QueryKey {
            tool: hit.tool.clone(),
            key: key_of(hit),
        };
        let seen_in_attempt = hits[..i]
            .iter()
            .any(|earlier| earlier.tool == hit.tool && key_of(earlier) == key.key);
        if !seen_in_attempt {
            counter.add(key, &hit.query, hit.allowed, ordinal);
        }
    }
}

/// The entry for `name`, pooled under [`OTHER`] once [`MAX_NAMES`] are tracked.
fn name_slot<'m, T: Default>(map: &'m mut BTreeMap<String, T>, name: &str) -> &'m mut T {
    let key = if map.len() < MAX_NAMES || map.contains_key(name) {
        name
    } else {
        OTHER
    };
    if !map.contains_key(key) {
        map.insert(key.to_string(), T::default());
    }
    map.get_mut(key).expect("inserted above")
}

/// The reason with the highest count (ties: the first in [`Reason::ALL`]).
pub fn top_reason(counts: &[u64; REASONS]) -> Option<Reason> {
    let mut best: Option<(Reason, u64)> = None;
    for r in Reason::ALL {
        let n = counts[r as usize];
        if n > 0 && best.is_none_or(|(_, m)| n > m) {
            best = Some((r, n));
        }
    }
    best.map(|(r, _)| r)
}

fn add_arrays<const N: usize>(into: &mut [u64; N], from: &[u64; N]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;
    use crate::read::{Record, TraceReader};
    use crate::replay::Replayer;

    /// The bundled sample, replayed: one verdict list per trace.
    fn sample_verdicts() -> Vec<Vec<Verdict>> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/analyze/sample.jsonl");
        let text = std::fs::read(path).expect("fixtures/analyze/sample.jsonl");
        let replayer = Replayer::new(Policy::default());
        TraceReader::new(&text[..], "sample.jsonl".into(), 1 << 20)
            .filter_map(|r| match r {
                Record::Trace(t) => Some(replayer.replay(&t)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn merging_shares_equals_one_pass() {
        let traces = sample_verdicts();
        assert!(traces.len() > 10);
        let mut whole = Aggregate::new(3);
        for (i, v) in traces.iter().enumerate() {
            whole.add_trace(v, i as u64);
        }
        // Three interleaved shares, merged in a different order.
        let mut shares: Vec<Aggregate> = (0..3).map(|_| Aggregate::new(3)).collect();
        for (i, v) in traces.iter().enumerate() {
            shares[i % 3].add_trace(v, i as u64);
        }
        let mut merged = shares.pop().expect("a share");
        for share in shares {
            merged.merge(share);
        }
        assert_eq!(merged, whole);
    }

    #[test]
    fn counts_add_up() {
        let traces = sample_verdicts();
        let mut a = Aggregate::new(5);
        for (i, v) in traces.iter().enumerate() {
            a.add_trace(v, i as u64);
        }
        let verdicts: Vec<&Verdict> = traces.iter().flatten().collect();
        assert_eq!(a.attempts, verdicts.len() as u64);
        assert_eq!(a.outcomes.iter().sum::<u64>(), a.attempts);
        assert_eq!(a.rollback_reasons.iter().sum::<u64>(), a.rollbacks());
        assert_eq!(
            a.agents.values().map(|s| s.attempts).sum::<u64>(),
            a.attempts
        );
        let tool_rollbacks: u64 = a.tools.values().map(ToolStats::total_rollbacks).sum();
        assert_eq!(
            tool_rollbacks,
            a.rollbacks(),
            "every rollback is attributed once"
        );
        assert_eq!(
            a.calls.parsed,
            verdicts.iter().map(|v| v.calls.len() as u64).sum::<u64>()
        );
        assert_eq!(a.rollback_rate.clusters(), a.traces);
        let positive = verdicts
            .iter()
            .filter(|v| v.consecutive_rollbacks > Some(0))
            .count() as u64;
        assert!(a.streaks.count() > 0 && a.streaks.count() <= positive);
        assert_eq!(
            a.streaks.ended_by.iter().sum::<u64>(),
            a.streaks.count(),
            "every streak ends one way"
        );
        let worst = a.worst_traces.items();
        assert!(worst.windows(2).all(|w| w[0].rollbacks >= w[1].rollbacks));
    }
}
