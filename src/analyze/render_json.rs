//! `analyze --format json`: the machine interface. Every count equals what
//! the verdicts of `mirotrace replay` on the same input add up to.
//! Every figure is defined once in [`crate::metrics`] (docs/metrics.md).
//!
//! Top-level keys (schema `mirotrace.analyze/1`; keys are only ever added):
//!
//! | key | meaning |
//! |---|---|
//! | `files`, `traces`, `attempts`, `bad_lines` | inputs opened, traces, attempts (input lines replayed, reached or not), lines skipped |
//! | `input` | only when records that are not traces were skipped: `{"skipped": {kind: records}}`, kind `replay-verdicts`, `keywords-labels`, `partial` or `report` (mirotrace's own outputs given as input), or `FORMAT:KIND` for a format's records that are not attempts (`openhands-v1:ConversationStateUpdateEvent`) |
//! | `sessions` | `{total, main, sub_agent}` sessions with at least one line |
//! | `outcomes` | outcome → attempts (all eight outcomes, zeros included) |
//! | `rollbacks`, `rollback_rate` | attempts with outcome `rollback`; `{value, lo, hi, level, iterations, seed, method}`: rollbacks / attempts reached (`attempts` − `outcomes.unreachable`), the interval a bootstrap over traces |
//! | `rollback_reasons`, `end_reasons` | reason → attempts with outcome `rollback` / `end` |
//! | `traces_with_rollback`, `traces_by_reason` | traces with any rollback; reason → traces with a rollback of it |
//! | `refusal_keywords` | matched keyword → attempts (rollbacks and ends) |
//! | `tools` | tool → `{calls, executed, repaired, rollbacks: reason → n}`; `(no tool call)` holds format errors and refusals |
//! | `agents` | agent → `{traces, sessions, attempts, rollbacks, ends, ended_early}` |
//! | `calls`, `calls_executed`, `calls_repaired` | tool calls parsed; started by the loop; needing at least one in-place fix |
//! | `json_paths`, `repairs` | path → calls; repair kind → calls |
//! | `duplicate_hotspots` | top `--top` of `{tool, query, count, traces, rolled_back, allowed}`, most repeated first; `query` is upstream's whole fingerprint (`google_search_<q>`), `count` = attempts that hit it = `rolled_back + allowed` |
//! | `duplicate_hits`, `duplicate_queries`, `duplicate_counts_exact` | attempts with an exact repeat, distinct repeated queries, whether the bounded counter never dropped one |
//! | `near_duplicate_hotspots`, `near_duplicate_hits`, `near_duplicate_queries` | the same for repeats only equal after case/space/punctuation folding (upstream lets them through); `query` is the first spelling seen |
//! | `streaks` | `{histogram: length → streaks, max, count, ended_by, longest: [{length, trace_id, file, session, index, line, reasons, ended_by}]}`; length = rollbacks in a row (at most the limit − 1), `reasons` one per rollback |
//! | `limit_events` | `{loop_ended (outcome end), duplicate_allowed, result_passed}` (the flags `allowed_duplicate`, `tool_error_passed`) |
//! | `recovered` | attempts flagged `recovered` (streaks ended by `recovered` or `let_through`) |
//! | `traces_ended_early`, `sub_agent_sessions_ended_early` | `{limit, crash, context, turn_limit}` |
//! | `worst_traces` | top `--top` of `{trace_id, file, attempts, reached, rollbacks, rate, top_reason, longest_streak, ended_early}`; `rate` = rollbacks / `reached` (attempts reached) |
//! | `rollbacks_by_index` | where in a session rollbacks happen: `[{index, attempts, rollbacks}]` for every position within a session (the verdicts' `index`, from 0) up to the last reached; the entry at index 500 pools all later positions |
//! | `sources` | top level: where the verdicts came from, `{replayed, recorded}`, each `{attempts, outcomes, rollback_reasons}`: `replayed` the attempts judged from their text, `recorded` those whose verdict a task log's `step_logs` gave (rolled-back turns and failed calls upstream popped from its history); every other figure counts both |
//! | `recorded` | top level: `null` without task logs, else the cross-check of the task logs against the replay, `{traces, by_kind: kind → n, disagreements: [{kind, trace_id, session, index, turn, source, reason, origin, detail}]}`; kinds: `replay_differs` (a surviving turn judged otherwise), `state_differs` (turn or streak drifted from the log's), `unexplained_rollback` (a logged rollback the replay cannot reproduce from its message), `never_reached` |
//! | `mistakes` | `{format_errors, format_error: kind → n, format_error_shares: kind → share of format errors, repaired_calls, json_fixes: fix → repaired calls, json_fix_shares: fix → share of repaired calls, llm_failed / unknown_tool / tool_error / duplicate_query: kind → n (crate::detect::cause), owner: "<tool_error|llm_failed>.<model|environment|unclassified>" → n, by_agent / by_model: name → {"<family>.<kind>" → n}, examples: key → {file, line, trace_id, excerpt}}`; the kinds (and `unclassified`) add up to the format-error verdicts (docs/metrics.md, "Mistakes") |
//! | `blind_spots` | what the rules could not judge on this input (docs/metrics.md, "Blind spots"): `{tool_errors_unmatched, attempts_with_unmatched, text_unknown, text_unknown_hides: {format_errors, refusals}, results_unseen, native_tool_attempts, rules_idle: [{rule, why}]}`; `tool_errors_unmatched` counts tool results that read like errors (`Error`/`ERROR`/`error` then `:` or white space) yet are neither marked as failed nor match `tool_error_prefixes`; `text_unknown` the attempts whose text the input does not hold (verdict source `recorded`); `results_unseen` the attempts whose tool results the input does not hold (a recording's rolled-back turns) |
//! | `owners` | `tool_error` rollbacks and ends and `llm_failed` attempts by whose failure they are: `{model, environment, unclassified}` (crate::detect::cause::Owner; per family in `mistakes.owner`) |
//! | `groups` | `null`, or with `--group-by`: `{by, items: [{key, …every key above except groups}]}` |
//! | `cost`, `task_results` | what the attempts cost and the tasks' results against the rollbacks: see [`super::cost_json`] |
//! | `options` | `{top, group_by, rollback_limit, policy}`; `policy` is `null` for upstream's defaults, else `{file, fingerprint}` (`file` `null` in a merged report) |

use std::collections::BTreeMap;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde::Serialize as DeriveSerialize;

use super::aggregate::Aggregate;
use super::hotspots::QueryCounter;
use super::{Analysis, Scored};
use crate::detect::Reason;
use crate::metrics::mistakes::{Example, Mistakes};
use crate::metrics::stats::bootstrap::LEVEL;
use crate::metrics::tally::EARLY_ENDS;
use crate::metrics::{EarlyEnd, StreakEnd};
use crate::parse::JsonPath;
use crate::repair::Repair;
use crate::replay::Outcome;

/// The schema name written into every report.
pub const SCHEMA: &str = "mirotrace.analyze/1";

/// The keys every report has, in order (the stable part of the schema).
pub const REQUIRED_KEYS: [&str; 37] = [
    "schema",
    "files",
    "traces",
    "sessions",
    "attempts",
    "bad_lines",
    "outcomes",
    "rollbacks",
    "rollback_rate",
    "rollback_reasons",
    "end_reasons",
    "traces_with_rollback",
    "traces_by_reason",
    "refusal_keywords",
    "tools",
    "agents",
    "calls",
    "calls_executed",
    "calls_repaired",
    "json_paths",
    "repairs",
    "duplicate_hotspots",
    "duplicate_hits",
    "duplicate_queries",
    "duplicate_counts_exact",
    "near_duplicate_hotspots",
    "near_duplicate_hits",
    "near_duplicate_queries",
    "streaks",
    "limit_events",
    "recovered",
    "traces_ended_early",
    "sub_agent_sessions_ended_early",
    "worst_traces",
    "rollbacks_by_index",
    "groups",
    "options",
];

/// The report as pretty-printed JSON, with a final newline.
pub fn render(analysis: &Analysis) -> String {
    let groups = analysis.options.group_by.map(|by| Groups {
        by: by.name(),
        items: analysis
            .groups
            .iter()
            .map(|(key, scored)| Keyed {
                key,
                report: JsonReport::new(scored, analysis, None),
            })
            .collect(),
    });
    let report = JsonReport::new(&analysis.overall, analysis, Some(groups));
    let mut text =
        serde_json::to_string_pretty(&report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// A map serialized in a fixed key order.
struct Ordered<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Ordered<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Each of `all` (an enum's values in schema order) under its name.
fn named<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    count: impl Fn(T) -> u64,
) -> Ordered<&'static str, u64> {
    Ordered(all.iter().map(|x| (name(*x), count(*x))).collect())
}

/// A name-keyed map, each value as `f` writes it.
fn by_key<'a, T, V>(map: &'a BTreeMap<String, T>, f: impl Fn(&'a T) -> V) -> Ordered<&'a str, V> {
    Ordered(map.iter().map(|(k, v)| (k.as_str(), f(v))).collect())
}

fn by_reason(count: impl Fn(Reason) -> u64) -> Ordered<&'static str, u64> {
    named(&Reason::ALL, Reason::name, count)
}

fn by_early_end(counts: &[u64; EARLY_ENDS]) -> Ordered<&'static str, u64> {
    named(&EarlyEnd::ALL, EarlyEnd::name, |e| counts[e as usize])
}

/// One report (overall or a group's) as written.
#[derive(DeriveSerialize)]
struct JsonReport<'a> {
    schema: &'static str,
    /// Overall only, with `--fail-on`: each rule on the run and on each
    /// group, as `diff`'s `gates`.
    #[serde(skip_serializing_if = "Option::is_none")]
    gates: Option<Vec<crate::render::gates::GateOutcome>>,
    files: u64,
    traces: u64,
    sessions: Sessions,
    attempts: u64,
    bad_lines: u64,
    outcomes: Ordered<&'static str, u64>,
    rollbacks: u64,
    rollback_rate: Rate,
    rollback_reasons: Ordered<&'static str, u64>,
    end_reasons: Ordered<&'static str, u64>,
    traces_with_rollback: u64,
    traces_by_reason: Ordered<&'static str, u64>,
    refusal_keywords: Ordered<&'a str, u64>,
    tools: Ordered<&'a str, Tool>,
    agents: Ordered<&'a str, Agent>,
    calls: u64,
    calls_executed: u64,
    calls_repaired: u64,
    json_paths: Ordered<&'static str, u64>,
    repairs: Ordered<&'static str, u64>,
    duplicate_hotspots: Vec<Hotspot<'a>>,
    duplicate_hits: u64,
    duplicate_queries: usize,
    duplicate_counts_exact: bool,
    near_duplicate_hotspots: Vec<NearHotspot<'a>>,
    near_duplicate_hits: u64,
    near_duplicate_queries: usize,
    streaks: Streaks<'a>,
    limit_events: LimitEvents,
    recovered: u64,
    traces_ended_early: Ordered<&'static str, u64>,
    sub_agent_sessions_ended_early: Ordered<&'static str, u64>,
    worst_traces: Vec<WorstTrace<'a>>,
    rollbacks_by_index: Vec<IndexRow>,
    mistakes: MistakesJson<'a>,
    blind_spots: BlindSpotsJson,
    owners: crate::metrics::attribution::OwnerTally,
    cost: super::cost_json::Cost<'a>,
    task_results: super::cost_json::Results<'a>,
    /// Overall only: attempts by verdict source (see the table above).
    #[serde(skip_serializing_if = "Option::is_none")]
    sources: Option<serde_json::Value>,
    /// Overall only: task logs against the replay (see the table above).
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded: Option<serde_json::Value>,
    /// Only when the reading skipped records that are not traces
    /// (mirotrace's own outputs): `{"skipped": {kind: records}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<serde_json::Value>,
    /// `None` inside a group; `Some(None)` (null) overall without `--group-by`.
    #[serde(skip_serializing_if = "Option::is_none")]
    groups: Option<Option<Groups<'a>>>,
    options: Options,
}

#[derive(DeriveSerialize)]
struct Sessions {
    total: u64,
    main: u64,
    sub_agent: u64,
}

#[derive(DeriveSerialize)]
struct Rate {
    value: Option<f64>,
    lo: Option<f64>,
    hi: Option<f64>,
    level: f64,
    method: &'static str,
    iterations: usize,
    seed: u64,
}

#[derive(DeriveSerialize)]
struct Tool {
    calls: u64,
    executed: u64,
    repaired: u64,
    rollbacks: Ordered<&'static str, u64>,
}

#[derive(DeriveSerialize)]
struct Agent {
    traces: u64,
    sessions: u64,
    attempts: u64,
    rollbacks: Ordered<&'static str, u64>,
    ends: u64,
    ended_early: Ordered<&'static str, u64>,
}

#[derive(DeriveSerialize)]
struct Hotspot<'a> {
    tool: &'a str,
    query: String,
    count: u64,
    traces: u64,
    rolled_back: u64,
    allowed: u64,
}

#[derive(DeriveSerialize)]
struct NearHotspot<'a> {
    tool: &'a str,
    query: String,
    count: u64,
    traces: u64,
}

#[derive(DeriveSerialize)]
struct Streaks<'a> {
    histogram: Ordered<String, u64>,
    max: u32,
    count: u64,
    ended_by: Ordered<&'static str, u64>,
    longest: Vec<LongStreak<'a>>,
}

#[derive(DeriveSerialize)]
struct LongStreak<'a> {
    length: u32,
    trace_id: &'a str,
    file: &'a str,
    session: &'a str,
    index: usize,
    line: u64,
    reasons: Vec<&'static str>,
    ended_by: &'static str,
}

#[derive(DeriveSerialize)]
struct LimitEvents {
    loop_ended: u64,
    duplicate_allowed: u64,
    result_passed: u64,
}

#[derive(DeriveSerialize)]
struct IndexRow {
    index: usize,
    attempts: u64,
    rollbacks: u64,
}

#[derive(DeriveSerialize)]
struct WorstTrace<'a> {
    trace_id: &'a str,
    file: &'a str,
    attempts: u64,
    /// The denominator of `rate`.
    reached: u64,
    rollbacks: u64,
    rate: f64,
    top_reason: Option<&'static str>,
    longest_streak: u32,
    ended_early: Option<&'static str>,
}

#[derive(DeriveSerialize)]
struct Groups<'a> {
    by: &'static str,
    items: Vec<Keyed<'a>>,
}

#[derive(DeriveSerialize)]
struct Keyed<'a> {
    key: &'a str,
    #[serde(flatten)]
    report: JsonReport<'a>,
}

#[derive(DeriveSerialize)]
struct Options {
    top: usize,
    group_by: Option<&'static str>,
    rollback_limit: u32,
    /// `null` for upstream's defaults.
    policy: Option<super::CustomPolicy>,
}

impl<'a> JsonReport<'a> {
    fn new(
        scored: &'a Scored,
        analysis: &Analysis,
        groups: Option<Option<Groups<'a>>>,
    ) -> JsonReport<'a> {
        let a: &'a Aggregate = &scored.aggregate;
        let t = &a.tally;
        let options = &analysis.options;
        JsonReport {
            schema: SCHEMA,
            gates: (groups.is_some() && !analysis.gates.is_empty()).then(|| analysis.gates.clone()),
            files: a.files,
            traces: t.traces,
            sessions: Sessions {
                total: t.main_sessions + t.sub_agent_sessions,
                main: t.main_sessions,
                sub_agent: t.sub_agent_sessions,
            },
            attempts: t.attempts,
            bad_lines: a.bad_lines,
            outcomes: named(&Outcome::ALL, Outcome::name, |o| t.outcome(o)),
            rollbacks: t.rollbacks(),
            rollback_rate: Rate {
                value: t.rollback_rate(),
                lo: scored.interval.map(|(lo, _)| lo),
                hi: scored.interval.map(|(_, hi)| hi),
                level: LEVEL,
                method: "percentile bootstrap resampling whole traces",
                iterations: options.iterations,
                seed: options.seed,
            },
            rollback_reasons: by_reason(|r| t.rollback_reason(r)),
            end_reasons: by_reason(|r| t.end_reason(r)),
            traces_with_rollback: t.traces_with_rollback,
            traces_by_reason: by_reason(|r| t.traces_with(r)),
            refusal_keywords: by_key(&a.refusal_keywords, |n| *n),
            tools: by_key(&a.tools, |t| Tool {
                calls: t.calls,
                executed: t.executed,
                repaired: t.repaired,
                rollbacks: by_reason(|r| t.rollbacks[r as usize]),
            }),
            agents: by_key(&a.agents, |s| Agent {
                traces: s.traces,
                sessions: s.sessions,
                attempts: s.attempts,
                rollbacks: by_reason(|r| s.rollbacks[r as usize]),
                ends: s.ends,
                ended_early: by_early_end(&s.ended_early),
            }),
            calls: t.calls.parsed,
            calls_executed: t.calls.executed,
            calls_repaired: t.calls.repaired,
            json_paths: named(&JsonPath::ALL, JsonPath::name, |p| t.calls.path(p)),
            repairs: named(&Repair::ALL, Repair::name, |r| t.calls.repair(r)),
            duplicate_hotspots: a
                .duplicates
                .top(options.top)
                .into_iter()
                .map(|(key, s)| Hotspot {
                    tool: &key.tool,
                    query: key.key.to_string_lossy().into_owned(),
                    count: s.count(),
                    traces: s.traces,
                    rolled_back: s.rolled_back,
                    allowed: s.allowed,
                })
                .collect(),
            duplicate_hits: a.duplicates.total(),
            duplicate_queries: a.duplicates.len(),
            duplicate_counts_exact: a.duplicates.is_exact(),
            near_duplicate_hotspots: near(&a.near_duplicates, options.top),
            near_duplicate_hits: a.near_duplicates.total(),
            near_duplicate_queries: a.near_duplicates.len(),
            streaks: Streaks {
                histogram: Ordered(
                    a.streak_lengths
                        .iter()
                        .map(|(len, n)| (len.to_string(), *n))
                        .collect(),
                ),
                max: t.streaks.longest,
                count: t.streaks.count,
                ended_by: named(&StreakEnd::ALL, StreakEnd::name, |e| t.streaks.ended(e)),
                longest: a
                    .longest_streaks
                    .items()
                    .iter()
                    .map(|s| LongStreak {
                        length: s.length,
                        trace_id: &s.trace_id,
                        file: &s.file,
                        session: &s.session,
                        index: s.start_index,
                        line: s.start_line,
                        reasons: s.reasons.iter().map(|r| r.name()).collect(),
                        ended_by: s.end.name(),
                    })
                    .collect(),
            },
            limit_events: LimitEvents {
                loop_ended: t.limit_events.loop_ended,
                duplicate_allowed: t.limit_events.duplicate_allowed,
                result_passed: t.limit_events.result_passed,
            },
            recovered: t.recovered_flags,
            traces_ended_early: by_early_end(&t.main_ended_early),
            sub_agent_sessions_ended_early: by_early_end(&t.sub_agent_ended_early),
            worst_traces: a
                .worst_traces
                .items()
                .iter()
                .map(|t| WorstTrace {
                    trace_id: &t.trace_id,
                    file: &t.file,
                    attempts: t.attempts,
                    reached: t.reached,
                    rollbacks: t.rollbacks,
                    rate: t.rate().unwrap_or(0.0),
                    top_reason: t.top_reason.map(Reason::name),
                    longest_streak: t.longest_streak,
                    ended_early: t.ended_early.map(EarlyEnd::name),
                })
                .collect(),
            rollbacks_by_index: a
                .by_index
                .rows()
                .map(|(index, attempts, rollbacks)| IndexRow {
                    index,
                    attempts,
                    rollbacks,
                })
                .collect(),
            mistakes: MistakesJson::new(&a.mistakes, t.calls.path(JsonPath::Repaired)),
            blind_spots: BlindSpotsJson::new(&t.blind, t.attempts),
            owners: t.owners,
            cost: super::cost_json::Cost::new(scored, options.prices.as_deref()),
            task_results: super::cost_json::Results::new(scored),
            sources: groups.is_some().then(|| analysis.crosscheck.sources_json()),
            recorded: groups.is_some().then(|| analysis.crosscheck.to_json()),
            input: (!a.not_traces.is_empty())
                .then(|| serde_json::json!({ "skipped": a.not_traces })),
            groups,
            options: Options {
                top: options.top,
                group_by: options.group_by.map(|g| g.name()),
                rollback_limit: options.rollback_limit,
                policy: options.policy.clone(),
            },
        }
    }
}

fn near(counter: &QueryCounter, top: usize) -> Vec<NearHotspot<'_>> {
    counter
        .top(top)
        .into_iter()
        .map(|(key, s)| NearHotspot {
            tool: &key.tool,
            query: s.example.to_string_lossy().into_owned(),
            count: s.count(),
            traces: s.traces,
        })
        .collect()
}

/// `blind_spots`: what the rules could not judge (crate::metrics::attribution).
#[derive(DeriveSerialize)]
struct BlindSpotsJson {
    tool_errors_unmatched: u64,
    attempts_with_unmatched: u64,
    text_unknown: u64,
    text_unknown_hides: TextUnknownHides,
    results_unseen: u64,
    native_tool_attempts: u64,
    rules_idle: Vec<IdleRule>,
}

#[derive(DeriveSerialize)]
struct TextUnknownHides {
    format_errors: u64,
    refusals: u64,
}

#[derive(DeriveSerialize)]
struct IdleRule {
    rule: &'static str,
    why: &'static str,
}

impl BlindSpotsJson {
    fn new(b: &crate::metrics::attribution::BlindSpots, attempts: u64) -> BlindSpotsJson {
        BlindSpotsJson {
            tool_errors_unmatched: b.tool_errors_unmatched,
            attempts_with_unmatched: b.attempts_with_unmatched,
            text_unknown: b.text_unknown,
            text_unknown_hides: TextUnknownHides {
                format_errors: b.text_unknown_format_errors,
                refusals: b.text_unknown_refusals,
            },
            results_unseen: b.results_unseen,
            native_tool_attempts: b.native_tool_attempts,
            rules_idle: b
                .idle_rules(attempts)
                .map(|(rule, why)| IdleRule {
                    rule: rule.name(),
                    why,
                })
                .collect(),
        }
    }
}

/// `mistakes`: the model's mistakes by kind (crate::metrics::mistakes).
#[derive(DeriveSerialize)]
struct MistakesJson<'a> {
    format_errors: u64,
    format_error: Ordered<&'static str, u64>,
    format_error_shares: Ordered<&'static str, Option<f64>>,
    repaired_calls: u64,
    json_fixes: Ordered<&'static str, u64>,
    json_fix_shares: Ordered<&'static str, Option<f64>>,
    llm_failed: &'a BTreeMap<String, u64>,
    unknown_tool: &'a BTreeMap<String, u64>,
    tool_error: &'a BTreeMap<String, u64>,
    duplicate_query: &'a BTreeMap<String, u64>,
    owner: &'a BTreeMap<String, u64>,
    by_agent: &'a BTreeMap<String, BTreeMap<String, u64>>,
    by_model: &'a BTreeMap<String, BTreeMap<String, u64>>,
    examples: &'a BTreeMap<String, Example>,
}

impl<'a> MistakesJson<'a> {
    fn new(m: &'a Mistakes, repaired_calls: u64) -> MistakesJson<'a> {
        let total = m.format_errors();
        let kinds = m.format_kinds();
        let fixes = m.fixes();
        let share = |n: u64, d: u64| crate::metrics::tally::ratio(n, d);
        MistakesJson {
            format_errors: total,
            format_error_shares: Ordered(
                kinds.iter().map(|&(k, n)| (k, share(n, total))).collect(),
            ),
            format_error: Ordered(kinds),
            repaired_calls,
            json_fix_shares: Ordered(
                fixes
                    .iter()
                    .map(|&(f, n)| (f, share(n, repaired_calls)))
                    .collect(),
            ),
            json_fixes: Ordered(fixes),
            llm_failed: &m.llm_failed,
            unknown_tool: &m.unknown_tool,
            tool_error: &m.tool_error,
            duplicate_query: &m.duplicate_query,
            owner: &m.owner,
            by_agent: &m.by_agent,
            by_model: &m.by_model,
            examples: &m.examples,
        }
    }
}
