//! The `cost` and `task_results` keys of `analyze --format json`.
//!
//! | key | meaning |
//! |---|---|
//! | `cost.total` | attempts upstream made (not `unreachable`): `{attempts, input_tokens, output_tokens, cached_input_tokens, seconds, known}`; `known` says for how many of `attempts` each count was recorded; a sum is `null` when none was |
//! | `cost.discarded`, `cost.failed` | the same for attempts with outcome `rollback` or `end`, and `llm_failed`; `share` is each sum over `cost.total`'s |
//! | `cost.by_reason` | reason → the discarded attempts of that reason, with `share` |
//! | `cost.by_tool` | tool → the discarded attempts blamed on it (`(no tool call)`: format errors, refusals, loop ends) |
//! | `cost.by_agent`, `cost.by_model` | name → `{total, discarded, failed}` |
//! | `cost.unreachable_recorded` | attempts never made that carry usage anyway (in no sum) |
//! | `cost.money` | `null`, or with `--prices`: `{total, discarded, failed, by_reason, priced_models, unpriced_models}`; sums of tokens × price per million, over the priced models' attempts |
//! | `task_results` | `{tasks, success, failure, score_only, success_rate, bases, rollback_rate: {success, failure}, by_reason, hit_limit, crashed}`; `tasks` have a pass/fail result; `rollback_rate.*` = `{value, lo, hi}` (cluster bootstrap over tasks); `by_reason.R` = `{with: {tasks, failed, failure_rate}, without: {…}, ratio: {value, lo, hi}}` (Katz log interval); `hit_limit`, `crashed` = `{tasks, success, success_rate}` |

use std::collections::BTreeMap;

use serde::Serialize;

use super::Scored;
use crate::detect::Reason;
use crate::metrics::cost::{CostSums, CostTally};
use crate::metrics::prices::{Money, Prices};
use crate::metrics::tally::ratio;
use crate::metrics::task_results::{ResultTally, Split, TaskResults};

/// `cost`.
#[derive(Serialize)]
pub struct Cost<'a> {
    total: Sums,
    discarded: Shared,
    failed: Shared,
    by_reason: BTreeMap<&'static str, Shared>,
    by_tool: BTreeMap<&'a str, Sums>,
    by_agent: BTreeMap<&'a str, Parts>,
    by_model: BTreeMap<&'a str, Parts>,
    unreachable_recorded: u64,
    money: Option<Money>,
}

/// One set of attempts' sums and coverage.
#[derive(Serialize)]
pub struct Sums {
    attempts: u64,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    seconds: Option<f64>,
    known: Known,
}

#[derive(Serialize)]
struct Known {
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
    seconds: u64,
}

/// A part of the run with its share of the run's sums.
#[derive(Serialize)]
pub struct Shared {
    #[serde(flatten)]
    sums: Sums,
    share: Share,
}

#[derive(Serialize)]
struct Share {
    attempts: Option<f64>,
    input_tokens: Option<f64>,
    output_tokens: Option<f64>,
    seconds: Option<f64>,
}

#[derive(Serialize)]
pub struct Parts {
    total: Sums,
    discarded: Sums,
    failed: Sums,
}

impl Sums {
    pub fn of(c: &CostSums) -> Sums {
        let known = |n: u64, v: u64| (n > 0).then_some(v);
        Sums {
            attempts: c.attempts,
            input_tokens: known(c.input_known, c.input_tokens),
            output_tokens: known(c.output_known, c.output_tokens),
            cached_input_tokens: known(c.cached_known, c.cached_input_tokens),
            seconds: (c.seconds_known > 0).then(|| c.seconds()),
            known: Known {
                input_tokens: c.input_known,
                output_tokens: c.output_known,
                cached_input_tokens: c.cached_known,
                seconds: c.seconds_known,
            },
        }
    }
}

impl Shared {
    fn of(part: &CostSums, total: &CostSums) -> Shared {
        let share = |a: u64, b: u64, known: bool| if known { ratio(a, b) } else { None };
        Shared {
            sums: Sums::of(part),
            share: Share {
                attempts: ratio(part.attempts, total.attempts),
                input_tokens: share(part.input_tokens, total.input_tokens, total.input_known > 0),
                output_tokens: share(
                    part.output_tokens,
                    total.output_tokens,
                    total.output_known > 0,
                ),
                seconds: share(part.nanos, total.nanos, total.seconds_known > 0),
            },
        }
    }
}

fn parts(c: &CostTally) -> Parts {
    Parts {
        total: Sums::of(&c.total),
        discarded: Sums::of(&c.discarded),
        failed: Sums::of(&c.failed),
    }
}

impl<'a> Cost<'a> {
    pub fn new(scored: &'a Scored, prices: Option<&Prices>) -> Cost<'a> {
        let a = &scored.aggregate;
        let c = &a.tally.cost;
        Cost {
            total: Sums::of(&c.total),
            discarded: Shared::of(&c.discarded, &c.total),
            failed: Shared::of(&c.failed, &c.total),
            by_reason: Reason::ALL
                .iter()
                .map(|r| (r.name(), Shared::of(c.reason(*r), &c.total)))
                .collect(),
            by_tool: a
                .cost
                .by_tool
                .iter()
                .map(|(k, v)| (k.as_str(), Sums::of(v)))
                .collect(),
            by_agent: a
                .cost
                .by_agent
                .iter()
                .map(|(k, v)| (k.as_str(), parts(v)))
                .collect(),
            by_model: a
                .cost
                .by_model
                .iter()
                .map(|(k, v)| (k.as_str(), parts(v)))
                .collect(),
            unreachable_recorded: c.unreachable_recorded,
            money: prices.map(|p| p.money(&a.cost.by_model)),
        }
    }
}

/// `task_results`.
#[derive(Serialize)]
pub struct Results<'a> {
    tasks: u64,
    success: u64,
    failure: u64,
    score_only: u64,
    success_rate: Option<f64>,
    bases: &'a BTreeMap<String, u64>,
    rollback_rate: RateByResult,
    by_reason: BTreeMap<&'static str, ReasonRisk>,
    hit_limit: SuccessOf,
    crashed: SuccessOf,
}

#[derive(Serialize)]
struct RateByResult {
    success: Interval,
    failure: Interval,
}

/// A figure with its 95% interval.
#[derive(Serialize)]
pub struct Interval {
    pub value: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Interval {
    pub fn new(value: Option<f64>, interval: Option<(f64, f64)>) -> Interval {
        Interval {
            value,
            lo: interval.map(|i| i.0),
            hi: interval.map(|i| i.1),
        }
    }
}

#[derive(Serialize)]
struct GroupRate {
    tasks: u64,
    failed: u64,
    failure_rate: Option<f64>,
}

fn group(s: Split) -> GroupRate {
    GroupRate {
        tasks: s[0] + s[1],
        failed: s[1],
        failure_rate: ratio(s[1], s[0] + s[1]),
    }
}

#[derive(Serialize)]
struct ReasonRisk {
    with: GroupRate,
    without: GroupRate,
    ratio: Interval,
}

#[derive(Serialize)]
struct SuccessOf {
    tasks: u64,
    success: u64,
    success_rate: Option<f64>,
}

fn success_of(s: Split) -> SuccessOf {
    SuccessOf {
        tasks: s[0] + s[1],
        success: s[0],
        success_rate: ratio(s[0], s[0] + s[1]),
    }
}

impl<'a> Results<'a> {
    pub fn new(scored: &'a Scored) -> Results<'a> {
        let r: &TaskResults = &scored.aggregate.task_results;
        let t: &ResultTally = &scored.aggregate.tally.results;
        let [ok, failed] = scored.result_intervals;
        Results {
            tasks: t.tasks,
            success: t.success,
            failure: t.failure,
            score_only: t.score_only,
            success_rate: t.success_rate(),
            bases: &r.bases,
            rollback_rate: RateByResult {
                success: Interval::new(r.rate_success.ratio(), ok),
                failure: Interval::new(r.rate_failure.ratio(), failed),
            },
            by_reason: Reason::ALL
                .iter()
                .map(|&reason| {
                    let risk = r.reason_risk(reason, t);
                    (
                        reason.name(),
                        ReasonRisk {
                            with: group(risk.with),
                            without: group(risk.without),
                            ratio: Interval {
                                value: risk.ratio.map(|x| x.0),
                                lo: risk.ratio.map(|x| x.1),
                                hi: risk.ratio.map(|x| x.2),
                            },
                        },
                    )
                })
                .collect(),
            hit_limit: success_of(r.hit_limit),
            crashed: success_of(r.crashed),
        }
    }
}
