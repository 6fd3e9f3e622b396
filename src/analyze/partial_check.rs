//! A partial is input too: before `merge` adds one up, its options must
//! be ones the CLI accepts, its figures must agree with the counts they
//! claim (a bootstrap histogram of as many traces as the tally counts,
//! no more rollbacks than attempts), and the parts' counts must add up
//! without passing 2^64 − 1. A forged or edited partial is refused with
//! one line naming the part and the field, never merged into a
//! plausible report (or a bootstrap that runs for ever).

use serde_json::Value as Json;

use super::aggregate::Aggregate;
use super::partial::{Options, Partial, PartialError};
use crate::metrics::stats::bootstrap::MAX_ITERATIONS;
use crate::replay::Outcome;

/// The refusal for `file`'s `field`.
pub(crate) fn invalid(file: &str, field: &str, reason: impl Into<String>) -> PartialError {
    PartialError::Invalid {
        file: file.to_string(),
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// Checks one part as read.
pub(super) fn check(p: &Partial, file: &str) -> Result<(), PartialError> {
    check_options(&p.header.options).map_err(|(field, why)| invalid(file, field, why))?;
    check_aggregate(&p.collector.overall)
        .map_err(|(field, why)| invalid(file, &format!("collector.overall.{field}"), why))?;
    if let Some(groups) = &p.collector.groups {
        for (key, a) in groups.aggregates() {
            check_aggregate(a).map_err(|(field, why)| {
                invalid(file, &format!("collector.groups[{key:?}].{field}"), why)
            })?;
        }
    }
    Ok(())
}

/// The CLI's own limits (`--iterations`, the policy's `rollback_limit`).
fn check_options(o: &Options) -> Result<(), (&'static str, String)> {
    if o.iterations > MAX_ITERATIONS {
        return Err((
            "options.iterations",
            format!(
                "{} is not in 0..={MAX_ITERATIONS}, the range `--iterations` accepts",
                o.iterations
            ),
        ));
    }
    crate::policy::check_rollback_limit(o.rollback_limit)
        .map_err(|why| ("options.rollback_limit", why))
}

type Problem = (&'static str, String);

fn sum(xs: &[u64], field: &'static str) -> Result<u64, Problem> {
    xs.iter()
        .try_fold(0u64, |acc, &x| acc.checked_add(x))
        .ok_or((field, "its counts add up past 2^64 − 1".into()))
}

fn at_most(field: &'static str, value: u64, bound: u64, of: &str) -> Result<(), Problem> {
    if value > bound {
        return Err((
            field,
            format!("{value} is more than the {bound} {of} it counts"),
        ));
    }
    Ok(())
}

fn equal(field: &'static str, value: u64, want: u64, of: &str) -> Result<(), Problem> {
    if value != want {
        return Err((field, format!("{value}, but {of} is {want}")));
    }
    Ok(())
}

/// One aggregate's figures against each other.
fn check_aggregate(a: &Aggregate) -> Result<(), Problem> {
    let t = &a.tally;
    equal(
        "tally.outcomes",
        sum(&t.outcomes, "tally.outcomes")?,
        t.attempts,
        "tally.attempts",
    )?;
    let rollbacks = t.outcomes[Outcome::Rollback as usize];
    let ends = t.outcomes[Outcome::End as usize];
    let reached = t.attempts - t.outcomes[Outcome::Unreachable as usize];
    equal(
        "tally.rollbacks_by_reason",
        sum(&t.rollbacks_by_reason, "tally.rollbacks_by_reason")?,
        rollbacks,
        "the rollback outcomes",
    )?;
    equal(
        "tally.ends_by_reason",
        sum(&t.ends_by_reason, "tally.ends_by_reason")?,
        ends,
        "the end outcomes",
    )?;
    for &n in &t.traces_with_reason {
        at_most("tally.traces_with_reason", n, t.traces, "traces")?;
    }
    at_most(
        "tally.traces_with_rollback",
        t.traces_with_rollback,
        t.traces,
        "traces",
    )?;
    at_most(
        "tally.traces_with_crash",
        t.traces_with_crash,
        t.traces,
        "traces",
    )?;
    let s = &t.streaks;
    equal(
        "tally.streaks.ended_by",
        sum(&s.ended_by, "tally.streaks.ended_by")?,
        s.count,
        "tally.streaks.count",
    )?;
    let lengths: Vec<u64> = a.streak_lengths.values().copied().collect();
    equal(
        "streak_lengths",
        sum(&lengths, "streak_lengths")?,
        s.count,
        "tally.streaks.count",
    )?;
    // The bootstrap draws as many traces as the histogram weighs: it must
    // weigh the traces counted, and its pairs add up to the tally's figures.
    let (traces, num, den) = a.rate_by_trace.checked_totals().ok_or((
        "rate_by_trace",
        "its counts add up past 2^64 − 1".to_string(),
    ))?;
    equal("rate_by_trace", traces, t.traces, "tally.traces")?;
    equal(
        "rate_by_trace (rollbacks)",
        num,
        rollbacks,
        "the rollback outcomes",
    )?;
    equal(
        "rate_by_trace (reached)",
        den,
        reached,
        "the attempts reached",
    )?;
    Ok(())
}

/// Fields summed with saturation, in `analyze` and `merge` alike.
const HELD_SUMS: [&str; 4] = [
    ".input_tokens",
    ".output_tokens",
    ".cached_input_tokens",
    ".nanos",
];

/// Per field, the sum of every part's numbers so far, to refuse a part
/// whose counts would carry a sum past 2^64 − 1. Array elements share
/// their array's field (a ranking's or a list's items are not added
/// element by element), so the sum bounds every merged figure.
#[derive(Default)]
pub(super) struct Sums {
    by_field: foldhash::HashMap<String, u128>,
}

impl Sums {
    /// Adds the numbers of a part's figures (`collector`, `crosscheck`).
    pub(super) fn add(&mut self, part: &Json, file: &str) -> Result<(), PartialError> {
        for key in ["collector", "crosscheck"] {
            if let Some(v) = part.get(key) {
                let mut path = key.to_string();
                self.walk(v, &mut path, file)?;
            }
        }
        Ok(())
    }

    fn walk(&mut self, v: &Json, path: &mut String, file: &str) -> Result<(), PartialError> {
        match v {
            Json::Number(n) => {
                let Some(n) = n.as_u64() else { return Ok(()) };
                // Recorded token counts and durations are data, not counts
                // of records: their sums are held at 2^64 − 1 when merged,
                // as one `analyze` over all the input holds them (one rule).
                if HELD_SUMS.iter().any(|f| path.ends_with(f)) {
                    return Ok(());
                }
                let total = self.by_field.entry(path.clone()).or_insert(0);
                *total += u128::from(n);
                if *total > u128::from(u64::MAX) {
                    return Err(invalid(
                        file,
                        path,
                        "with the parts before it, its counts add up past 2^64 − 1",
                    ));
                }
            }
            Json::Array(items) => {
                let len = path.len();
                path.push_str("[]");
                for item in items {
                    self.walk(item, path, file)?;
                }
                path.truncate(len);
            }
            Json::Object(map) => {
                for (k, item) in map {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    self.walk(item, path, file)?;
                    path.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }
}
