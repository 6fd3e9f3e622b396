//! Logs written by the current release of a harness (scripts/test-writers.sh
//! writes them and names them in `MIROTRACE_WRITER_*`): what the reader makes
//! of them against what the harness's own reader counted. Without the
//! variable (a plain `cargo test`) there is nothing to check.

use std::path::PathBuf;

use mirotrace::read::source::{open_records, InputSpec, ReadOptions};
use mirotrace::read::Record;
use serde_json::Value as Json;

/// Inspect: each sample's attempts, usage (output tokens of its model
/// events), durations and score, as `read_eval_log` reported them.
#[test]
fn inspect_logs_are_read_with_usage_and_scores() {
    let Some(expected) = std::env::var_os("MIROTRACE_WRITER_INSPECT") else {
        eprintln!("MIROTRACE_WRITER_INSPECT not set: run scripts/test-writers.sh");
        return;
    };
    let expected: Json =
        serde_json::from_str(&std::fs::read_to_string(expected).expect("expected.json"))
            .expect("expected JSON");
    let log = PathBuf::from(expected["log"].as_str().expect("log path"));
    let samples = expected["samples"].as_object().expect("samples");
    let mut seen = 0;
    for record in open_records(&InputSpec::Path(log), &ReadOptions::default()).expect("opens") {
        let Record::Trace(t) = record else {
            panic!("not read as it is: {record:?}");
        };
        let want = &samples[&*t.trace_id];
        seen += 1;
        assert_eq!(
            t.attempts.len() as u64,
            want["assistant_messages"].as_u64().unwrap(),
            "{}",
            t.trace_id
        );
        let output: u64 = t
            .attempts
            .iter()
            .map(|a| a.usage.and_then(|u| u.output_tokens).expect("usage"))
            .sum();
        assert_eq!(
            output,
            want["output_tokens"].as_u64().unwrap(),
            "{}",
            t.trace_id
        );
        assert!(
            t.attempts.iter().all(|a| a.duration_s.is_some()),
            "{}",
            t.trace_id
        );
        let result = t.attempts[0].task_result.as_ref().expect("a score");
        match &want["score"] {
            Json::String(s) if s == "C" => assert_eq!(result.success, Some(true)),
            Json::String(s) if s == "I" => assert_eq!(result.success, Some(false)),
            Json::Number(n) => assert_eq!(result.score, n.as_f64()),
            other => panic!("{}: a score this test does not know: {other}", t.trace_id),
        }
        assert!(t.attempts[1..].iter().all(|a| a.task_result.is_none()));
    }
    assert_eq!(seen, samples.len());
}
