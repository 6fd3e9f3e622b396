//! Replay conformance: our verdicts against the ones upstream's Python code
//! produced (`tests/data/replay/`, `tests/data/tasklogs/`), field by field:
//! the fields of a verdict that `docs/trace-format.md` says are compared.

use crate::common;

use mirotrace::policy::Policy;
use mirotrace::pyjson::{self, PyStr, Value};
use mirotrace::read::{Record, TraceReader};
use mirotrace::replay::Replayer;

const SCALAR_FIELDS: [&str; 6] = [
    "outcome",
    "reason",
    "turn",
    "consecutive_rollbacks",
    "flags",
    "executed",
];
const CALL_FIELDS: [&str; 6] = [
    "server_name",
    "tool_name",
    "arguments",
    "id",
    "json",
    "repairs",
];

/// Our verdict lines for a corpus, in input order.
fn replay(name: &str, policy: Policy) -> Vec<Value> {
    let replayer = Replayer::new(policy);
    let mut out = Vec::new();
    for record in TraceReader::new(common::open(name), name.into(), usize::MAX) {
        match record {
            Record::Trace(t) => {
                for v in replayer.replay(&t) {
                    out.push(pyjson::loads(&v.to_json_line()).expect("our verdict line is JSON"));
                }
            }
            other => panic!("corpus line rejected: {other:?}"),
        }
    }
    out
}

fn golden(name: &str) -> Vec<Value> {
    common::lines(name)
        .map(|l| pyjson::loads(&l).expect("golden line is JSON"))
        .collect()
}

fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.as_dict()?.get(&PyStr::from(name))
}

fn key(v: &Value) -> String {
    let s = |n| field(v, n).map(pyjson::dump).unwrap_or_default();
    format!("{}/{}#{}", s("trace_id"), s("session"), s("index"))
}

/// Field-level differences, each named by its field (`calls[i].<field>` for
/// a call's).
fn differences(g: &Value, p: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let same = |a: Option<&Value>, b: Option<&Value>| match (a, b) {
        (Some(a), Some(b)) => a.py_eq(b),
        (None, None) => true,
        _ => false,
    };
    for f in SCALAR_FIELDS {
        if !same(field(g, f), field(p, f)) {
            out.push(format!(
                "{f}: golden={} ours={}",
                field(g, f).map(pyjson::dump).unwrap_or_default(),
                field(p, f).map(pyjson::dump).unwrap_or_default()
            ));
        }
    }
    let calls = |v| match field(v, "calls") {
        Some(Value::List(l)) => l.clone(),
        _ => Vec::new(),
    };
    let (gc, pc) = (calls(g), calls(p));
    if gc.len() != pc.len() {
        out.push(format!(
            "calls.length: golden={} ours={}",
            gc.len(),
            pc.len()
        ));
    }
    for (i, (a, b)) in gc.iter().zip(&pc).enumerate() {
        for f in CALL_FIELDS {
            if !same(field(a, f), field(b, f)) {
                out.push(format!(
                    "calls[{i}].{f}: golden={} ours={}",
                    field(a, f).map(pyjson::dump).unwrap_or_default(),
                    field(b, f).map(pyjson::dump).unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// Agreement on one corpus; prints the first mismatches.
fn agreement(name: &str) -> (usize, usize) {
    agreement_with(name, "verdicts", Policy::default())
}

/// Agreement of corpus `name` replayed with `policy` with its golden
/// verdicts `<name>.<golden>.jsonl`.
fn agreement_with(name: &str, golden_name: &str, policy: Policy) -> (usize, usize) {
    let ours = replay(&format!("{name}.jsonl"), policy);
    let gold = golden(&format!("{name}.{golden_name}.jsonl"));
    assert_eq!(ours.len(), gold.len(), "{name}: one verdict per input line");
    let mut agree = 0;
    let mut shown = 0;
    for (g, p) in gold.iter().zip(&ours) {
        assert_eq!(key(g), key(p), "{name}: verdicts out of order");
        let d = differences(g, p);
        if d.is_empty() {
            agree += 1;
        } else if shown < 10 {
            shown += 1;
            eprintln!("{name} {}: {}", key(g), d.join("; "));
        }
    }
    eprintln!("{name}: agreement {agree}/{} lines", gold.len());
    (agree, gold.len())
}

#[test]
fn sanity_corpus_agrees_fully() {
    let (agree, total) = agreement("replay/sanity");
    assert_eq!(agree, total);
}

#[test]
fn dev_corpus_agrees_fully() {
    let (agree, total) = agreement("replay/dev");
    assert_eq!(agree, total);
}

/// `query_commit = "per_turn"` against upstream patched with pull request
/// #121 (its verdicts on the dev corpus).
#[test]
fn dev_corpus_agrees_fully_with_upstreams_per_turn_commit() {
    use mirotrace::policy::QueryCommit;
    let policy = Policy {
        query_commit: QueryCommit::PerTurn,
        ..Policy::default()
    };
    let (agree, total) = agreement_with("replay/dev", "pr121.verdicts", policy);
    assert_eq!(agree, total);
}

/// The duplicates (rolled back or let through) whose `why.kind` is
/// `after_rolled_back` are exactly the ones `dev.blame.jsonl` (made from
/// upstream's own cache, recording by recording) blames on the layer, and
/// the others are the model's.
#[test]
fn dev_duplicates_blamed_on_the_layer_are_the_labelled_ones() {
    use std::collections::BTreeMap;
    let s = |v: &Value, n: &str| field(v, n).map(pyjson::dump).unwrap_or_default();
    let labels: BTreeMap<String, (String, String)> = golden("replay/dev.blame.jsonl")
        .iter()
        .map(|l| (key(l), (s(l, "kind"), s(l, "blame"))))
        .collect();
    let ours = replay("replay/dev.jsonl", Policy::default());
    let why_kind = |v: &Value| {
        field(v, "why")
            .and_then(|w| field(w, "kind"))
            .map(pyjson::dump)
            .unwrap_or_default()
    };
    let layer = "\"after_rolled_back\"";
    let mut counts = BTreeMap::new();
    for v in &ours {
        let k = key(v);
        let ours_layer = why_kind(v) == layer;
        match labels.get(&k) {
            Some((kind, blame)) => {
                assert_eq!(ours_layer, blame == layer, "{k}: labelled {blame}");
                *counts.entry((kind.clone(), blame.clone())).or_insert(0) += 1;
            }
            None => assert!(!ours_layer, "{k}: not a labelled duplicate"),
        }
    }
    let count = |kind: &str, blame: &str| {
        counts
            .get(&(format!("\"{kind}\""), format!("\"{blame}\"")))
            .copied()
            .unwrap_or(0)
    };
    // Every labelled verdict was found; 31 rollbacks and 6 let-throughs
    // are the layer's.
    assert_eq!(counts.values().sum::<usize>(), labels.len());
    assert_eq!(count("duplicate_query", "after_rolled_back"), 31);
    assert_eq!(count("duplicate_allowed", "after_rolled_back"), 6);
    assert_eq!(count("duplicate_query", "model"), 154);
}

#[test]
fn jsonrepair_corpus_agrees_at_least_995_per_mille() {
    let (agree, total) = agreement("replay/jsonrepair-dev");
    assert!(agree * 1000 >= total * 995, "{agree}/{total} below 99.5%");
}

/// The native traces whose run wrote the task logs of `tests/data/tasklogs/`.
#[test]
fn tasklog_traces_agree_fully() {
    let (agree, total) = agreement("tasklogs/traces");
    assert_eq!(agree, total);
}

/// With a reader thread, the reader parses traces ahead while the workers
/// are busy (`Replayer::parse`): the verdicts must be the ones of a replay
/// that parses as it goes, also where the server-name repair rewrites a
/// text and what was parsed ahead is set aside.
#[test]
fn parsing_ahead_changes_no_verdict() {
    use mirotrace::repair::Repair;
    let replayer = Replayer::new(Policy::default());
    let mut renamed = 0;
    for name in [
        "replay/dev.jsonl",
        "replay/sanity.jsonl",
        "replay/jsonrepair-dev.jsonl",
        "tasklogs/traces.jsonl",
    ] {
        for record in TraceReader::new(common::open(name), name.into(), usize::MAX) {
            let Record::Trace(t) = record else {
                panic!("{name}: corpus line rejected");
            };
            let as_it_goes = replayer.replay(&t);
            // As lines: a NaN argument is not equal to itself.
            let lines = |vs: &[mirotrace::replay::Verdict]| -> Vec<String> {
                vs.iter().map(|v| v.to_json_line()).collect()
            };
            assert_eq!(
                lines(&replayer.replay_parsed(&t, replayer.parse(&t))),
                lines(&as_it_goes),
                "{name}: trace {}",
                t.trace_id
            );
            renamed += as_it_goes
                .iter()
                .flat_map(|v| &v.calls)
                .filter(|c| c.repairs.contains(&Repair::ServerName))
                .count();
        }
    }
    assert!(renamed > 0, "the corpora hold server-name repairs");
}
