//! Task results across the two sides (issue 25): the tasks that flipped
//! (passed on one side, failed on the other) with each one's rollback
//! change, and pass^k per side where a task ran several times.
//!
//! A task's runs are the rows whose trace id is the task's id followed by a
//! trial or epoch (`ID#2`, chat records; `ID_epoch_2`, Inspect); a plain id
//! is one run. A task passed on a side when every one of its runs with a
//! result passed. pass^k is tau-bench's: the mean over tasks with at least
//! `k` runs of C(c, k) / C(n, k), `n` runs with a result of which `c` passed.

use serde::Serialize;

use super::RowSet;
use crate::metrics::figures::Count;

/// Flipped tasks listed at most, each way.
const MAX_FLIPS: usize = 50;

/// One task that flipped.
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    pub task: String,
    pub base_rollbacks: u64,
    pub base_reached: u64,
    pub new_rollbacks: u64,
    pub new_reached: u64,
}

/// Flips and pass^k.
#[derive(Debug, Clone, Serialize)]
pub struct ResultsView {
    /// Tasks with a result on both sides.
    pub shared: usize,
    pub pass_to_fail: usize,
    pub fail_to_pass: usize,
    /// The first [`MAX_FLIPS`] of each, by task id.
    pub pass_to_fail_tasks: Vec<Flip>,
    pub fail_to_pass_tasks: Vec<Flip>,
    /// `[k, pass^k]` for k = 1.. while some task ran k times; empty when
    /// no task ran more than once.
    pub base_pass_k: Vec<(u64, f64)>,
    pub new_pass_k: Vec<(u64, f64)>,
}

/// One task on one side: runs with a result, passed, rollbacks, reached.
#[derive(Debug, Clone, Copy, Default)]
struct Task {
    runs: u64,
    passed: u64,
    rollbacks: u64,
    reached: u64,
}

/// The task id of a trace id: without a `#N` trial or `_epoch_N` suffix.
pub fn task_of(id: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((task, n)) = id.rsplit_once('#') {
        if digits(n) {
            return task;
        }
    }
    if let Some((task, n)) = id.rsplit_once("_epoch_") {
        if digits(n) {
            return task;
        }
    }
    id
}

fn tasks(rows: &RowSet) -> std::collections::BTreeMap<String, Task> {
    let mut out: std::collections::BTreeMap<String, Task> = Default::default();
    for i in 0..rows.len() {
        let c = rows.counts(i);
        let id = rows.id(i);
        let t = out.entry(task_of(&id).to_string()).or_default();
        t.runs += c.get(Count::TracesWithResult.slot());
        t.passed += c.get(Count::TracesPassed.slot());
        t.rollbacks += c.get(Count::Rollbacks.slot());
        t.reached += c.get(Count::Reached.slot());
    }
    out.retain(|_, t| t.runs > 0);
    out
}

/// C(n, k) as a float (small n: trials per task).
fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

fn pass_k(tasks: &std::collections::BTreeMap<String, Task>) -> Vec<(u64, f64)> {
    let most = tasks.values().map(|t| t.runs).max().unwrap_or(0);
    if most < 2 {
        return Vec::new();
    }
    (1..=most)
        .filter_map(|k| {
            let eligible: Vec<&Task> = tasks.values().filter(|t| t.runs >= k).collect();
            (!eligible.is_empty()).then(|| {
                let sum: f64 = eligible
                    .iter()
                    .map(|t| choose(t.passed, k) / choose(t.runs, k))
                    .sum();
                (k, sum / eligible.len() as f64)
            })
        })
        .collect()
}

/// The results view; `None` when neither side recorded a result.
pub fn results_view(base: &RowSet, new: &RowSet) -> Option<ResultsView> {
    let (b, n) = (tasks(base), tasks(new));
    if b.is_empty() && n.is_empty() {
        return None;
    }
    let mut view = ResultsView {
        shared: 0,
        pass_to_fail: 0,
        fail_to_pass: 0,
        pass_to_fail_tasks: Vec::new(),
        fail_to_pass_tasks: Vec::new(),
        base_pass_k: pass_k(&b),
        new_pass_k: pass_k(&n),
    };
    for (id, bt) in &b {
        let Some(nt) = n.get(id) else { continue };
        view.shared += 1;
        let (b_pass, n_pass) = (bt.passed == bt.runs, nt.passed == nt.runs);
        let flip = || Flip {
            task: id.clone(),
            base_rollbacks: bt.rollbacks,
            base_reached: bt.reached,
            new_rollbacks: nt.rollbacks,
            new_reached: nt.reached,
        };
        match (b_pass, n_pass) {
            (true, false) => {
                view.pass_to_fail += 1;
                if view.pass_to_fail_tasks.len() < MAX_FLIPS {
                    view.pass_to_fail_tasks.push(flip());
                }
            }
            (false, true) => {
                view.fail_to_pass += 1;
                if view.fail_to_pass_tasks.len() < MAX_FLIPS {
                    view.fail_to_pass_tasks.push(flip());
                }
            }
            _ => {}
        }
    }
    Some(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::counts::Counts;

    fn row(set: &mut RowSet, id: &str, passed: bool, rollbacks: u64) {
        let mut c = Counts::default();
        c.0[Count::TracesWithResult.slot()] = 1;
        c.0[Count::TracesPassed.slot()] = u64::from(passed);
        c.0[Count::Rollbacks.slot()] = rollbacks;
        c.0[Count::Reached.slot()] = 10;
        set.push(id, &c);
    }

    #[test]
    fn flips_and_pass_k() {
        let (mut base, mut new) = (RowSet::default(), RowSet::default());
        row(&mut base, "a", true, 1);
        row(&mut new, "a", false, 4);
        row(&mut base, "b", false, 0);
        row(&mut new, "b", true, 0);
        // Task c ran 3 times on the base side: 2 passes.
        for (i, p) in [true, true, false].into_iter().enumerate() {
            row(&mut base, &format!("c#{i}"), p, 0);
        }
        let v = results_view(&base, &new).expect("results");
        assert_eq!((v.shared, v.pass_to_fail, v.fail_to_pass), (2, 1, 1));
        assert_eq!(v.pass_to_fail_tasks[0].new_rollbacks, 4);
        // pass^1 = mean(1, 0, 2/3); pass^2 over c only = C(2,2)/C(3,2) = 1/3.
        assert!((v.base_pass_k[0].1 - (1.0 + 0.0 + 2.0 / 3.0) / 3.0).abs() < 1e-12);
        assert!((v.base_pass_k[1].1 - 1.0 / 3.0).abs() < 1e-12);
        assert!(v.new_pass_k.is_empty(), "no task ran twice");
        assert_eq!(task_of("x_epoch_3"), "x");
        assert_eq!(task_of("x#y"), "x#y");
    }
}
