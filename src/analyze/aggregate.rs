//! The numbers behind `mirotrace analyze`, built from verdicts one trace at
//! a time.
//!
//! An [`Aggregate`] is the sum of the traces' [`Tally`]s (the figures every
//! command shares, defined in [`crate::metrics`]) plus what only `analyze`
//! shows: per tool and per agent counts, duplicate-query hotspots, the
//! streak histogram and the longest streaks, the worst traces. It holds
//! counters, bounded rankings and a bounded query counter, so its size does
//! not grow with the input. Aggregates merge: workers can each fold a share
//! of the traces and the results add up to what one pass would give
//! (rankings break ties by the traces' positions, [`TracePos`], so they do
//! not depend on the split either: not even across processes, which is what
//! makes partial reports merge exactly).

use crate::metrics::mistakes::Mistakes;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::by_index::ByIndex;
use super::cost::{CostBreakdown, TraceCost};
use super::hotspots::{QueryCounter, QueryKey};
use super::rank::{StreakRecord, TopK, TraceRecord};
use super::trace_tools::TraceTools;
use super::worst_timeline::{Timeline, WorstGate};
use crate::detect::{near_duplicate_key, Reason};
use crate::metrics::attempt::{call_repaired, rollback_reason};
use crate::metrics::stats::RatioHistogram;
use crate::metrics::tally::{add_arrays, top_reason, EARLY_ENDS, REASONS};
use crate::metrics::task_results::TaskResults;
use crate::metrics::{SessionSummary, Streak, Tally, TraceWalk};
use crate::model::{Attempt, TracePos};
use crate::pyjson::PyStr;
use crate::replay::{Outcome, QueryHit, Verdict};

/// Distinct tool or agent names tracked one by one; the rest are pooled
/// under [`OTHER`] (tool names come from the model and can be anything).
pub const MAX_NAMES: usize = 500;
/// The pool for names beyond [`MAX_NAMES`].
pub const OTHER: &str = "(other)";
/// The "tool" of format errors and refusals: they happen without a call.
pub const NO_CALL: &str = "(no tool call)";

/// Counts per tool (the tool name after repairs).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
    pub(super) fn merge(&mut self, o: &ToolStats) {
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentStats {
    pub traces: u64,
    pub sessions: u64,
    pub attempts: u64,
    /// Attempts the loops reached.
    pub reached: u64,
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
        self.reached += o.reached;
        self.ends += o.ends;
        add_arrays(&mut self.rollbacks, &o.rollbacks);
        add_arrays(&mut self.ended_early, &o.ended_early);
    }

    fn add_session(&mut self, s: &SessionSummary) {
        self.sessions += 1;
        self.attempts += s.attempts;
        self.reached += s.reached();
        self.ends += s.ends;
        add_arrays(&mut self.rollbacks, &s.rollbacks);
        if let Some(e) = s.ended_early() {
            self.ended_early[e as usize] += 1;
        }
    }

    pub fn total_rollbacks(&self) -> u64 {
        self.rollbacks.iter().sum()
    }
}

/// Streak lengths drawn one row (or bar) each while every length up to
/// the most allowed fits in this many; past it only lengths that occur.
pub const DENSE_STREAK_LENGTHS: u32 = 32;

/// The streak lengths a histogram shows, in order: every length from 1 to
/// the longer of `most_allowed` and the longest that occurs when that is at
/// most [`DENSE_STREAK_LENGTHS`] (upstream's limit of 5: 1 to 4, zeros
/// included); else only the lengths that occur, and `most_allowed` itself.
/// So a report's size follows the streaks in the data, never the policy's
/// `rollback_limit` (a limit of 10^9 draws as few rows as a limit of 5).
pub fn streak_axis(occurring: impl IntoIterator<Item = u32>, most_allowed: u32) -> Vec<u32> {
    let mut lengths: Vec<u32> = occurring.into_iter().filter(|&l| l > 0).collect();
    let span = lengths.iter().copied().max().unwrap_or(0).max(most_allowed);
    if span <= DENSE_STREAK_LENGTHS {
        return (1..=span).collect();
    }
    if most_allowed > 0 {
        lengths.push(most_allowed);
    }
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

/// Everything `analyze` reports, for any set of traces.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Aggregate {
    /// Position of the first trace added (orders groups).
    pub first_trace: Option<TracePos>,
    /// Traces added (tells traces apart in the query counters).
    #[serde(skip)]
    traces_added: u64,
    pub files: u64,
    pub bad_lines: u64,
    /// Records skipped as not traces (mirotrace's own outputs), per kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_traces: BTreeMap<String, u64>,
    /// The shared figures: the sum of the traces' tallies.
    pub tally: Tally,
    /// Which refusal keyword matched (rollbacks and ends).
    pub refusal_keywords: BTreeMap<String, u64>,
    pub tools: BTreeMap<String, ToolStats>,
    pub agents: BTreeMap<String, AgentStats>,
    /// Exact repeats that upstream caught (rolled back or let through).
    pub duplicates: QueryCounter,
    /// Repeats upstream's exact match missed (same after folding).
    pub near_duplicates: QueryCounter,
    /// Streak length → number of streaks.
    pub streak_lengths: BTreeMap<u32, u64>,
    pub longest_streaks: TopK<StreakRecord>,
    /// Per-trace (rollbacks, reached attempts), for the clustered interval.
    pub rate_by_trace: RatioHistogram,
    /// Attempts and rollbacks by position within the session.
    pub by_index: ByIndex,
    pub worst_traces: TopK<TraceRecord>,
    /// Format errors by kind, repaired arguments by fix.
    #[serde(default)]
    pub mistakes: Mistakes,
    /// Cost per agent, per model and per blamed tool.
    pub cost: CostBreakdown,
    /// Task results against what the layer did.
    pub task_results: TaskResults,
    /// With a gate, the worst traces keep their timelines.
    #[serde(skip)]
    timelines: Option<Arc<WorstGate>>,
}

impl Aggregate {
    /// The tools that were called, the most rolled-back first (ties: more
    /// calls, then by name); the rollbacks without a call are left out.
    pub fn tools_by_rollbacks(&self) -> Vec<(&String, &ToolStats)> {
        let mut tools: Vec<_> = self
            .tools
            .iter()
            .filter(|(name, _)| name.as_str() != NO_CALL)
            .collect();
        tools.sort_by(|(na, x), (nb, y)| {
            (y.total_rollbacks(), y.calls)
                .cmp(&(x.total_rollbacks(), x.calls))
                .then_with(|| na.cmp(nb))
        });
        tools
    }

    /// An empty aggregate whose rankings keep `top` entries.
    pub fn new(top: usize) -> Aggregate {
        Aggregate {
            first_trace: None,
            traces_added: 0,
            files: 0,
            bad_lines: 0,
            not_traces: BTreeMap::new(),
            tally: Tally::default(),
            refusal_keywords: BTreeMap::new(),
            tools: BTreeMap::new(),
            agents: BTreeMap::new(),
            duplicates: QueryCounter::default(),
            near_duplicates: QueryCounter::default(),
            streak_lengths: BTreeMap::new(),
            longest_streaks: TopK::new(top),
            rate_by_trace: RatioHistogram::default(),
            by_index: ByIndex::default(),
            worst_traces: TopK::new(top),
            mistakes: Mistakes::default(),
            cost: CostBreakdown::default(),
            task_results: TaskResults::default(),
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

    /// Counts `n` records of mirotrace's own output of kind `kind`.
    pub fn add_not_traces(&mut self, kind: &str, n: u64) {
        *self.not_traces.entry(kind.to_string()).or_insert(0) += n;
    }

    /// Adds one trace: its verdicts as [`crate::engine`] delivers them (file
    /// order), and its position (`at`, the origin of its first line;
    /// it breaks ties in the rankings).
    pub fn add_trace(&mut self, verdicts: &[Verdict], at: &TracePos) {
        self.add_trace_with_lines(verdicts, &[], at);
    }

    /// [`Aggregate::add_trace`] with the trace's lines at hand (one per
    /// verdict, in the same order), for the excerpts of kept timelines.
    pub fn add_trace_with_lines(&mut self, verdicts: &[Verdict], lines: &[Attempt], at: &TracePos) {
        let gate = self.timelines.clone();
        self.add_run(verdicts.iter(), at, |rollbacks| {
            gate.filter(|g| g.admits(rollbacks, at))
                .map(|_| Box::new(Timeline::build(verdicts.iter(), lines)))
        });
    }

    /// [`Aggregate::add_trace`] for a subset of a trace's verdicts (one
    /// group's part), still in file order.
    pub fn add_verdicts(&mut self, verdicts: &[&Verdict], at: &TracePos) {
        self.add_run(verdicts.iter().copied(), at, |_| None);
    }

    fn add_run<'v>(
        &mut self,
        verdicts: impl Iterator<Item = &'v Verdict>,
        at: &TracePos,
        timeline: impl FnOnce(u64) -> Option<Box<Timeline>>,
    ) {
        let mut first: Option<&Verdict> = None;
        let mut result = None;
        let mut cost = TraceCost::default();
        let mut walk = TraceWalk::default();
        let mut tools = TraceTools::default();
        let serial = self.traces_added;
        self.traces_added += 1;
        for v in verdicts {
            let first = *first.get_or_insert(v);
            if result.is_none() {
                result = v.task_result.as_ref();
            }
            cost.count(v);
            self.add_details(v, serial, at, &mut tools);
            if tools.full() {
                tools.flush(&mut self.tools, &mut self.cost);
            }
            if let Some(s) = walk.observe(v) {
                self.add_streak(&s, first, at);
            }
        }
        tools.flush(&mut self.tools, &mut self.cost);
        let Some(first) = first else {
            return;
        };
        let trace = walk.finish();
        for s in &trace.last_streaks {
            self.add_streak(s, first, at);
        }
        if self.first_trace.as_ref().is_none_or(|f| at < f) {
            self.first_trace = Some(at.clone());
        }
        for (i, s) in trace.sessions.iter().enumerate() {
            // Per session rather than per attempt: one lookup by name.
            let agent = name_slot(&mut self.agents, s.agent);
            agent.add_session(s);
            if trace.sessions[..i]
                .iter()
                .all(|earlier| earlier.agent != s.agent)
            {
                agent.traces += 1;
            }
        }
        let t = &trace.tally;
        self.cost.add_trace(cost);
        self.task_results.add_trace(result, t);
        let rollbacks = t.rollbacks();
        self.rate_by_trace.add(rollbacks, t.reached());
        let candidate = (rollbacks, Reverse(at));
        if self
            .worst_traces
            .admits(|least| candidate >= (least.rollbacks, Reverse(&least.at)))
        {
            self.worst_traces.offer(TraceRecord {
                rollbacks,
                at: at.clone(),
                trace_id: first.trace_id.to_string(),
                file: first.origin.file.clone(),
                attempts: t.attempts,
                reached: t.reached(),
                top_reason: top_reason(&t.rollbacks_by_reason),
                longest_streak: t.streaks.longest,
                ended_early: trace.main_ended_early,
                timeline: timeline(rollbacks),
            });
        }
        self.tally.add(t);
    }

    /// What only `analyze` shows of one attempt: its tools, refusal keyword
    /// and duplicate queries.
    fn add_details<'v>(
        &mut self,
        v: &'v Verdict,
        serial: u64,
        at: &TracePos,
        tools: &mut TraceTools<'v>,
    ) {
        self.by_index.add(v.index, v.outcome == Outcome::Rollback);
        self.mistakes.add(v);
        if let Some(reason) = rollback_reason(v) {
            let tool = blamed_tool(v, reason);
            tools.stats(tool).rollbacks[reason as usize] += 1;
            tools.count_cost(v, tool);
        } else if v.outcome == Outcome::End {
            tools.count_cost(v, NO_CALL);
        }
        if let Some(k) = &v.refusal_keyword {
            match self.refusal_keywords.get_mut(k.as_str()) {
                Some(n) => *n += 1,
                None => {
                    self.refusal_keywords.insert(k.clone(), 1);
                }
            }
        }
        for (i, call) in v.calls.iter().enumerate() {
            let tool = tools.stats(&call.tool_name);
            tool.calls += 1;
            tool.executed += u64::from(i < v.executed);
            tool.repaired += u64::from(call_repaired(call));
        }
        count_queries(&mut self.duplicates, &v.duplicates, (serial, at), |q| {
            q.query.clone()
        });
        count_queries(
            &mut self.near_duplicates,
            &v.near_duplicates,
            (serial, at),
            |q| PyStr::from(near_duplicate_key(&q.query)),
        );
    }

    fn add_streak(&mut self, s: &Streak, first: &Verdict, at: &TracePos) {
        *self.streak_lengths.entry(s.length).or_insert(0) += 1;
        let candidate = (
            s.length,
            Reverse(at),
            Reverse(s.start_line),
            Reverse(s.session),
            Reverse(s.start_index),
        );
        // Equal keys (two traces at one position) are settled by the
        // record's other fields: offer them.
        if self
            .longest_streaks
            .admits(|least| candidate >= least.rank())
        {
            self.longest_streaks.offer(StreakRecord {
                length: s.length,
                at: at.clone(),
                trace_id: first.trace_id.to_string(),
                file: first.origin.file.clone(),
                session: s.session.to_string(),
                start_index: s.start_index,
                start_line: s.start_line,
                reasons: s.reasons.clone(),
                end: s.end,
                limit_reason: s.limit_reason,
            });
        }
    }

    /// Adds `other` into `self`: the result is what one aggregate fed both
    /// inputs would hold.
    pub fn merge(&mut self, other: Aggregate) {
        self.first_trace = match (self.first_trace.take(), other.first_trace) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.traces_added += other.traces_added;
        self.files += other.files;
        self.bad_lines += other.bad_lines;
        for (k, n) in other.not_traces {
            *self.not_traces.entry(k).or_insert(0) += n;
        }
        self.tally.add(&other.tally);
        for (k, n) in other.refusal_keywords {
            *self.refusal_keywords.entry(k).or_insert(0) += n;
        }
        for (k, t) in &other.tools {
            name_slot(&mut self.tools, k).merge(t);
        }
        for (k, a) in &other.agents {
            name_slot(&mut self.agents, k).merge(a);
        }
        self.duplicates.merge(other.duplicates);
        self.near_duplicates.merge(other.near_duplicates);
        for (len, n) in other.streak_lengths {
            *self.streak_lengths.entry(len).or_insert(0) += n;
        }
        self.longest_streaks.merge(other.longest_streaks);
        self.rate_by_trace.merge(&other.rate_by_trace);
        self.by_index.merge(&other.by_index);
        self.worst_traces.merge(other.worst_traces);
        self.mistakes.merge(&other.mistakes);
        self.cost.merge(&other.cost);
        self.task_results.merge(&other.task_results);
    }
}

/// The tool a rollback is blamed on: the last call that ran, or the one a
/// task log names; format errors and refusals happen without a call.
fn blamed_tool(v: &Verdict, reason: Reason) -> &str {
    match reason {
        Reason::FormatError | Reason::Refusal => NO_CALL,
        _ => v
            .executed
            .checked_sub(1)
            .and_then(|i| v.calls.get(i))
            .map(|c| c.tool_name.as_str())
            // A verdict from a task log names the tool it logged.
            .or_else(|| v.recorded.as_ref().and_then(|r| r.blamed_tool()))
            .unwrap_or(NO_CALL),
    }
}

/// Counts each query once per attempt, under `key_of` (upstream's
/// fingerprint or its folded form).
fn count_queries(
    counter: &mut QueryCounter,
    hits: &[QueryHit],
    (serial, at): (u64, &TracePos),
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
            counter.add(key, &hit.query, hit.allowed, serial, at);
        }
    }
}

/// The entry for `name`, pooled under [`OTHER`] once [`MAX_NAMES`] are tracked.
pub(super) fn name_slot<'m, T: Default>(map: &'m mut BTreeMap<String, T>, name: &str) -> &'m mut T {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;
    use crate::read::{Record, TraceReader};
    use crate::replay::Replayer;

    fn at(i: usize) -> TracePos {
        TracePos {
            file: "sample.jsonl".into(),
            line: i as u64,
        }
    }

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
            whole.add_trace(v, &at(i));
        }
        // Three interleaved shares, merged in a different order.
        let mut shares: Vec<Aggregate> = (0..3).map(|_| Aggregate::new(3)).collect();
        for (i, v) in traces.iter().enumerate() {
            shares[i % 3].add_trace(v, &at(i));
        }
        let mut merged = shares.pop().expect("a share");
        for share in shares {
            merged.merge(share);
        }
        assert_eq!(merged, whole);
        // The mistake counts add up to the format-error verdicts.
        let t = &whole.tally;
        let format_errors =
            t.rollback_reason(Reason::FormatError) + t.end_reason(Reason::FormatError);
        assert!(format_errors > 0);
        assert_eq!(whole.mistakes.format_errors(), format_errors);
        assert_eq!(merged.mistakes, whole.mistakes);
    }

    #[test]
    fn counts_add_up() {
        let traces = sample_verdicts();
        let mut a = Aggregate::new(5);
        for (i, v) in traces.iter().enumerate() {
            a.add_trace(v, &at(i));
        }
        let t = &a.tally;
        let verdicts: Vec<&Verdict> = traces.iter().flatten().collect();
        assert_eq!(t.attempts, verdicts.len() as u64);
        assert_eq!(t.outcomes.iter().sum::<u64>(), t.attempts);
        assert_eq!(t.rollbacks_by_reason.iter().sum::<u64>(), t.rollbacks());
        assert_eq!(
            a.agents.values().map(|s| s.attempts).sum::<u64>(),
            t.attempts
        );
        assert_eq!(
            a.agents.values().map(|s| s.reached).sum::<u64>(),
            t.reached()
        );
        let tool_rollbacks: u64 = a.tools.values().map(ToolStats::total_rollbacks).sum();
        assert_eq!(
            tool_rollbacks,
            t.rollbacks(),
            "every rollback is attributed once"
        );
        assert_eq!(
            t.calls.parsed,
            verdicts.iter().map(|v| v.calls.len() as u64).sum::<u64>()
        );
        assert_eq!(a.rate_by_trace.clusters(), t.traces);
        assert_eq!(a.rate_by_trace.ratio(), t.rollback_rate());
        let s = &t.streaks;
        assert_eq!(a.streak_lengths.values().sum::<u64>(), s.count);
        assert_eq!(
            a.streak_lengths
                .iter()
                .map(|(l, n)| u64::from(*l) * n)
                .sum::<u64>(),
            s.total_length
        );
        assert_eq!(
            s.total_length,
            t.rollbacks(),
            "every rollback is in a streak"
        );
        assert_eq!(
            s.ended_by.iter().sum::<u64>(),
            s.count,
            "every streak ends one way"
        );
        assert_eq!(
            t.recovered_flags,
            s.recovered() + s.ended(crate::metrics::StreakEnd::LetThrough),
            "upstream's recovered flag marks both"
        );
        for r in a.longest_streaks.items() {
            assert_eq!(r.reasons.len(), r.length as usize);
        }
        let worst = a.worst_traces.items();
        assert!(worst.windows(2).all(|w| w[0].rollbacks >= w[1].rollbacks));
    }
}
