//! Task logs written by upstream's own `TaskLog` against the truth of that
//! run: `traces.verdicts.jsonl`, upstream's verdict for every attempt it
//! made (rolled back or not). Reading the logs alone must give the run's
//! figures, computed here from the verdict file, never typed in. The corpus
//! is the bundled one (`tests/data/tasklogs/`, read through `tests/common`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use mirotrace::detect::query_fingerprint;
use mirotrace::policy::Policy;
use mirotrace::pyjson;
use mirotrace::read::source::{expand, open_records, InputSpec, ReadOptions};
use mirotrace::read::Record;
use mirotrace::replay::{Outcome, Replayer};
use serde_json::Value as Json;

use crate::common;

/// The task logs (compressed; `mirotrace` reads `.zst`).
fn task_logs() -> PathBuf {
    common::path("tasklogs/logs")
}

pub(crate) fn truth_lines() -> Vec<Json> {
    common::read_to_string("tasklogs/traces.verdicts.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a verdict line is JSON"))
        .collect()
}

/// The figures `check.py` compares, from a verdict file.
#[derive(Debug, PartialEq)]
pub(crate) struct Figures {
    rollbacks: u64,
    llm_failed: u64,
    reasons: BTreeMap<String, u64>,
    histogram: BTreeMap<u64, u64>,
    max_streak: u64,
    loop_ended: u64,
    duplicate_allowed: u64,
}

pub(crate) fn truth_figures(lines: &[Json]) -> Figures {
    let mut f = Figures {
        rollbacks: 0,
        llm_failed: 0,
        reasons: BTreeMap::new(),
        histogram: BTreeMap::new(),
        max_streak: 0,
        loop_ended: 0,
        duplicate_allowed: 0,
    };
    // A streak: consecutive_rollbacks rises from 0; its length is the highest value reached.
    let mut previous: HashMap<(String, String), u64> = HashMap::new();
    let mut open: HashMap<(String, String), u64> = HashMap::new();
    for v in lines {
        let key = (
            v["trace_id"].as_str().unwrap().to_string(),
            v["session"].as_str().unwrap().to_string(),
        );
        match v["outcome"].as_str().unwrap() {
            "rollback" => {
                f.rollbacks += 1;
                *f.reasons
                    .entry(v["reason"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
            "llm_failed" => f.llm_failed += 1,
            "end" => f.loop_ended += 1,
            _ => {}
        }
        let flags = v["flags"].as_array().unwrap();
        f.duplicate_allowed += flags.iter().filter(|x| *x == "allowed_duplicate").count() as u64;
        let c = v["consecutive_rollbacks"].as_u64().unwrap_or(0);
        let p = previous.get(&key).copied().unwrap_or(0);
        if c > 0 {
            let best = open.entry(key.clone()).or_insert(0);
            *best = (*best).max(c);
        } else if p > 0 {
            if let Some(best) = open.remove(&key) {
                *f.histogram.entry(best).or_default() += 1;
            }
        }
        previous.insert(key, c);
    }
    for best in open.into_values() {
        *f.histogram.entry(best).or_default() += 1;
    }
    f.max_streak = f.histogram.keys().copied().max().unwrap_or(0);
    f
}

pub(crate) fn report_figures(report: &Json) -> Figures {
    let counts = |v: &Json| -> BTreeMap<String, u64> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
            .filter(|(_, n)| *n > 0)
            .collect()
    };
    Figures {
        rollbacks: report["outcomes"]["rollback"].as_u64().unwrap(),
        llm_failed: report["outcomes"]["llm_failed"].as_u64().unwrap(),
        reasons: counts(&report["rollback_reasons"]),
        histogram: counts(&report["streaks"]["histogram"])
            .into_iter()
            .map(|(k, n)| (k.parse().unwrap(), n))
            .collect(),
        max_streak: report["streaks"]["max"].as_u64().unwrap(),
        loop_ended: report["limit_events"]["loop_ended"].as_u64().unwrap(),
        duplicate_allowed: report["limit_events"]["duplicate_allowed"]
            .as_u64()
            .unwrap(),
    }
}

/// The most repeated query of the run: (tool, query, attempts that hit it,
/// traces), ranked as `analyze` ranks (attempts, traces, first seen). A
/// duplicate rollback hits the query of its last executed call; an
/// allowed duplicate, the executed calls whose query ran before in the session.
fn truth_top_hotspot(lines: &[Json]) -> (String, String, u64, u64) {
    let mut hits: HashMap<(String, String), (u64, HashSet<String>, usize)> = HashMap::new();
    let mut ran: HashMap<(String, String), HashSet<(String, String)>> = HashMap::new();
    let mut first_trace: HashMap<String, usize> = HashMap::new();
    for v in lines {
        let trace = v["trace_id"].as_str().unwrap().to_string();
        let n = first_trace.len();
        let ordinal = *first_trace.entry(trace.clone()).or_insert(n);
        let session = (trace.clone(), v["session"].as_str().unwrap().to_string());
        let executed = v["executed"].as_u64().unwrap() as usize;
        let queries: Vec<(String, String)> = v["calls"]
            .as_array()
            .unwrap()
            .iter()
            .take(executed)
            .filter_map(|c| {
                let tool = c["tool_name"].as_str()?.to_string();
                let args = pyjson::loads(&c["arguments"].to_string()).ok()?;
                let q = query_fingerprint(&tool, &args).ok()??;
                Some((tool, q.to_string_lossy().into_owned()))
            })
            .collect();
        let mut hit = |q: &(String, String)| {
            let e = hits
                .entry(q.clone())
                .or_insert((0, HashSet::new(), ordinal));
            e.0 += 1;
            e.1.insert(trace.clone());
        };
        let seen = ran.entry(session).or_default();
        if v["reason"] == "duplicate_query" {
            if let Some(q) = queries.last() {
                hit(q);
            }
        } else if v["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "allowed_duplicate")
        {
            for q in queries.iter().filter(|q| seen.contains(*q)) {
                hit(q);
            }
        }
        seen.extend(queries);
    }
    let ((tool, query), (count, traces, _)) = hits
        .into_iter()
        .min_by_key(|((t, q), (count, traces, first))| {
            (
                std::cmp::Reverse(*count),
                std::cmp::Reverse(traces.len()),
                *first,
                t.clone(),
                q.clone(),
            )
        })
        .expect("the run has duplicate queries");
    (tool, query, count, traces.len() as u64)
}

#[test]
fn analyze_on_the_task_logs_equals_the_runs_truth() {
    let logs = task_logs();
    let o = crate::common::mirotrace()
        .args(["analyze", "--format", "json", "-q"])
        .arg(&logs)
        .output()
        .expect("run mirotrace");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: Json = serde_json::from_slice(&o.stdout).unwrap();
    let truth = truth_lines();
    assert_eq!(report_figures(&report), truth_figures(&truth));

    let (tool, query, count, traces) = truth_top_hotspot(&truth);
    let top = &report["duplicate_hotspots"][0];
    assert_eq!(
        (
            top["tool"].as_str().unwrap(),
            top["query"].as_str().unwrap(),
            top["count"].as_u64().unwrap(),
            top["traces"].as_u64().unwrap()
        ),
        (tool.as_str(), query.as_str(), count, traces)
    );
    // Nothing in these logs is out of upstream's order: every verdict of a
    // surviving turn agrees with the log.
    assert_eq!(report["recorded"]["disagreements"], Json::Array(Vec::new()));
    assert_eq!(report["recorded"]["traces"], 60);
}

/// (trace_id, session, index)
type Key = (String, String, usize);
/// (outcome, reason, turn, consecutive_rollbacks)
type Judged = (Outcome, Option<&'static str>, Option<i64>, Option<u32>);

#[test]
fn every_attempt_gets_upstreams_verdict() {
    let replayer = Replayer::new(Policy::default());
    let mut ours: HashMap<Key, Judged> = HashMap::new();
    let specs = [InputSpec::Path(task_logs())];
    for spec in expand(&specs) {
        let spec = spec.expect("a task log");
        for record in open_records(&spec, &ReadOptions::default()).expect("opens") {
            let Record::Trace(t) = record else {
                panic!("{record:?}");
            };
            for v in replayer.replay(&t) {
                ours.insert(
                    (v.trace_id.to_string(), v.session.to_string(), v.index),
                    (
                        v.outcome,
                        v.reason.map(|r| r.name()),
                        v.turn,
                        v.consecutive_rollbacks,
                    ),
                );
            }
        }
    }
    let mut compared = 0;
    for v in truth_lines() {
        let outcome = v["outcome"].as_str().unwrap();
        let key = (
            v["trace_id"].as_str().unwrap().to_string(),
            v["session"].as_str().unwrap().to_string(),
            v["index"].as_u64().unwrap() as usize,
        );
        // Upstream never reached these lines: no log has them.
        if outcome == "unreachable" {
            assert!(!ours.contains_key(&key), "{key:?}");
            continue;
        }
        let got = ours
            .remove(&key)
            .unwrap_or_else(|| panic!("no verdict for {key:?}"));
        assert_eq!(
            (got.0.name(), got.1, got.2, got.3.map(i64::from)),
            (
                outcome,
                v["reason"].as_str(),
                v["turn"].as_i64(),
                v["consecutive_rollbacks"].as_i64()
            ),
            "{key:?}"
        );
        compared += 1;
    }
    assert!(compared > 600, "{compared}");
    // The rest are the answers the recording harness gave when a session's
    // lines ran out (trace-format §2: no verdict is written for them);
    // upstream logged them as real final answers.
    for (key, (outcome, ..)) in &ours {
        assert_eq!(*outcome, Outcome::Final, "{key:?}");
    }
    assert!(ours.len() < 10, "{ours:?}");
}

#[test]
fn diff_between_folders_of_task_logs_compares_whole_runs() {
    // Two sides: every other log of the corpus.
    let plain = common::unpack("tasklogs/logs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&*plain)
        .expect("read the task logs")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    let root = common::tempdir("tasklog-diff");
    let mut ids: [HashSet<String>; 2] = Default::default();
    for (i, f) in files.iter().enumerate() {
        let side = root.join(if i % 2 == 0 { "base" } else { "new" });
        std::fs::create_dir_all(&side).unwrap();
        std::fs::copy(f, side.join(f.file_name().unwrap())).unwrap();
        let doc: Json = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        ids[i % 2].insert(doc["task_id"].as_str().unwrap().to_string());
    }
    let mut rollbacks = [0u64; 2];
    for v in truth_lines() {
        let id = v["trace_id"].as_str().unwrap();
        for side in 0..2 {
            // The rollback rate counts rollbacks; a loop ended by the guard is
            // a limit event, not a rollback (docs/metrics.md).
            if ids[side].contains(id) && v["outcome"] == "rollback" {
                rollbacks[side] += 1;
            }
        }
    }
    let o = crate::common::mirotrace()
        .args([
            "diff",
            "--format",
            "json",
            "-q",
            "--iterations",
            "50",
            "--base",
        ])
        .arg(root.join("base"))
        .arg("--new")
        .arg(root.join("new"))
        .output()
        .expect("run mirotrace");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: Json = serde_json::from_slice(&o.stdout).unwrap();
    let rate = report["comparisons"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "rollback_rate")
        .expect("a rollback rate");
    assert_eq!(rate["base_counts"][0].as_u64(), Some(rollbacks[0]));
    assert_eq!(rate["new_counts"][0].as_u64(), Some(rollbacks[1]));
}
