//! `analyze`, `diff` and `keywords` read their figures from one metrics
//! layer: on the same input, every figure they share must be equal, to the
//! last bit (docs/metrics.md). `diff` compares the input with itself, so its
//! base side is the input.

use serde_json::Value;

use crate::common::fixture_path as fixture;

fn json_of(args: &[&str]) -> Value {
    let out = crate::common::mirotrace()
        .args(args)
        .output()
        .expect("mirotrace runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a count, not {v}"))
}

/// A figure as `diff` reports it: numerator and denominator.
fn ratio(n: u64, d: u64) -> [u64; 2] {
    [n, d]
}

/// Attempts the loops reached, from analyze's report.
fn reached(a: &Value) -> u64 {
    u(&a["attempts"]) - u(&a["outcomes"]["unreachable"])
}

/// `diff`'s metrics that analyze's report also has, as numerator and
/// denominator computed from it.
fn from_analyze(metric: &str, a: &Value) -> Option<[u64; 2]> {
    let calls = u(&a["calls"]);
    let traces = u(&a["traces"]);
    let streaks = &a["streaks"];
    let reasons = [
        "format_error",
        "refusal",
        "duplicate_query",
        "unknown_tool",
        "tool_error",
        "empty_search",
    ];
    Some(match metric {
        "rollback_rate" => ratio(u(&a["rollbacks"]), reached(a)),
        r if reasons.contains(&r) => ratio(u(&a["rollback_reasons"][r]), reached(a)),
        "llm_failure_rate" => ratio(u(&a["outcomes"]["llm_failed"]), reached(a)),
        "repair_rate" => ratio(u(&a["calls_repaired"]), calls),
        r if r.starts_with("repair_") => ratio(u(&a["repairs"][&r["repair_".len()..]]), calls),
        "json_repaired_rate" => ratio(
            u(&a["json_paths"]["repaired"]) + u(&a["json_paths"]["lenient"]),
            calls,
        ),
        "json_failure_rate" => ratio(u(&a["json_paths"]["failed"]), calls),
        "limit_events_per_trace" => {
            let l = &a["limit_events"];
            let events = u(&l["loop_ended"]) + u(&l["duplicate_allowed"]) + u(&l["result_passed"]);
            ratio(events, traces)
        }
        "mean_streak" => {
            let lengths: u64 = streaks["histogram"]
                .as_object()
                .expect("histogram")
                .iter()
                .map(|(len, n)| len.parse::<u64>().expect("a length") * u(n))
                .sum();
            ratio(lengths, u(&streaks["count"]))
        }
        "recovery_rate" => ratio(u(&streaks["ended_by"]["recovered"]), u(&streaks["count"])),
        "early_end_rate" => {
            let early: u64 = a["traces_ended_early"]
                .as_object()
                .expect("causes")
                .values()
                .map(u)
                .sum();
            ratio(early, traces)
        }
        "discarded_output_share" => {
            let c = &a["cost"];
            ratio(
                c["discarded"]["output_tokens"].as_u64().unwrap_or(0),
                c["total"]["output_tokens"].as_u64().unwrap_or(0),
            )
        }
        "success_rate" => ratio(
            u(&a["task_results"]["success"]),
            u(&a["task_results"]["tasks"]),
        ),
        "model_error_rate" => ratio(u(&a["owners"]["model"]), reached(a)),
        "environment_error_rate" => ratio(u(&a["owners"]["environment"]), reached(a)),
        "unmatched_error_rate" => ratio(u(&a["blind_spots"]["tool_errors_unmatched"]), calls),
        "text_unknown_rate" => ratio(u(&a["blind_spots"]["text_unknown"]), u(&a["attempts"])),
        _ => return None,
    })
}

/// `diff`'s own comparison metrics, which analyze does not report (the
/// per-task cost figures divide by the traces that recorded usage or
/// durations, a count only diff keeps).
const DIFF_ONLY: [&str; 6] = [
    "duplicate_rate",
    "mean_longest_streak",
    "crash_rate",
    "input_tokens_per_task",
    "output_tokens_per_task",
    "llm_ms_per_task",
];

/// One side of a diff comparison against analyze's report (or group).
fn assert_side_agrees(what: &str, a: &Value, side: &Value, metrics: &[Value], pick: &str) {
    assert_eq!(side["traces"], a["traces"], "{what}: traces");
    assert_eq!(side["attempts"], a["attempts"], "{what}: attempts");
    assert_eq!(u(&side["reached"]), reached(a), "{what}: attempts reached");
    assert_eq!(side["calls"], a["calls"], "{what}: calls");
    assert_eq!(
        side["max_streak"], a["streaks"]["max"],
        "{what}: max_streak"
    );
    let mut shared = 0;
    for m in metrics {
        let id = m["metric"].as_str().expect("metric id");
        let Some(want) = from_analyze(id, a) else {
            assert!(DIFF_ONLY.contains(&id), "{id}: shared with analyze or not?");
            continue;
        };
        shared += 1;
        let counts = &m[format!("{pick}_counts")];
        assert_eq!(*counts, serde_json::json!(want), "{what}: {id}'s counts");
        // The JSON reader rounds the last digit; the counts above are exact.
        match (m[pick].as_f64(), want) {
            (None, [_, 0]) => {}
            (Some(v), [n, d]) => assert!((v - n as f64 / d as f64).abs() < 1e-15, "{what}: {id}"),
            (v, _) => panic!("{what}: {id} is {v:?}"),
        }
    }
    assert_eq!(shared, metrics.len() - DIFF_ONLY.len());
    let rollback = metrics
        .iter()
        .find(|m| m["metric"] == "rollback_rate")
        .expect("rollback_rate");
    assert_eq!(
        rollback[format!("{pick}_counts")],
        serde_json::json!([a["rollbacks"], reached(a)]),
        "{what}: rollbacks / attempts reached"
    );
    // Both printed from the same f64 by the same writer: the same text.
    assert_eq!(
        rollback[pick].to_string(),
        a["rollback_rate"]["value"].to_string(),
        "{what}: analyze's own rollback_rate"
    );
}

const INPUTS: [&str; 3] = ["model-a.jsonl", "model-b.jsonl", "analyze/sample.jsonl"];

#[test]
fn analyze_and_diff_agree_on_every_shared_figure() {
    for input in INPUTS {
        let path = fixture(input);
        let p = path.to_str().expect("path");
        let a = json_of(&["analyze", "-q", "--format", "json", p]);
        let d = json_of(&["diff", "-q", "--format", "json", "--base", p, "--new", p]);
        let c = &d["comparisons"][0];
        let metrics = c["metrics"].as_array().expect("metrics");
        assert_side_agrees(input, &a, &c["base"], metrics, "base");
        assert_side_agrees(input, &a, &c["new"], metrics, "new");
    }
}

#[test]
fn groups_agree_too() {
    let (ma, mb) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let (ma, mb) = (ma.to_str().expect("path"), mb.to_str().expect("path"));
    for by in ["model", "file"] {
        let a = json_of(&[
            "analyze",
            "-q",
            "--format",
            "json",
            "--group-by",
            by,
            ma,
            mb,
        ]);
        let d = json_of(&[
            "diff",
            "-q",
            "--format",
            "json",
            "--group-by",
            by,
            "--base",
            ma,
            "--new",
            ma,
            mb,
        ]);
        let groups = a["groups"]["items"].as_array().expect("groups");
        let comparisons = d["comparisons"].as_array().expect("comparisons");
        assert_eq!(
            groups.len(),
            comparisons.len(),
            "{by}: one comparison per group"
        );
        for c in comparisons {
            let key = c["group"].as_str().expect("a group key");
            let g = groups
                .iter()
                .find(|g| g["key"] == key)
                .unwrap_or_else(|| panic!("{by} {key} in analyze's groups"));
            let metrics = c["metrics"].as_array().expect("metrics");
            let what = format!("--group-by {by} {key}");
            assert_side_agrees(&what, g, &c["new"], metrics, "new");
        }
    }
}

#[test]
fn keywords_reads_the_same_replay_figures() {
    for input in [
        "model-a.jsonl",
        "analyze/sample.jsonl",
        "keywords/traces.jsonl",
    ] {
        let path = fixture(input);
        let p = path.to_str().expect("path");
        let a = json_of(&["analyze", "-q", "--format", "json", p]);
        let k = json_of(&["keywords", "-q", "--format", "json", p]);
        let current = &k["lists"][0];
        assert_eq!(current["name"], "current");
        assert_eq!(k["attempts"], a["attempts"], "{input}: attempts");
        assert_eq!(u(&current["reached"]), reached(&a), "{input}: reached");
        assert_eq!(current["rollbacks"], a["rollbacks"], "{input}: rollbacks");
        assert_eq!(
            current["rollback_rate"].as_f64(),
            a["rollback_rate"]["value"].as_f64(),
            "{input}: rollback_rate"
        );
        assert_eq!(
            current["refusal_rollbacks"], a["rollback_reasons"]["refusal"],
            "{input}: refusal rollbacks"
        );
        assert_eq!(
            current["refusal_ends"], a["end_reasons"]["refusal"],
            "{input}: refusal ends"
        );
        assert_eq!(
            current["ended_at_limit"], a["limit_events"]["loop_ended"],
            "{input}: loops ended at the limit"
        );
        assert_eq!(current["finals"], a["outcomes"]["final"], "{input}: finals");
    }
}

/// `diff`'s kind shares are `analyze`'s mistake counts: a kind's verdicts
/// over its family's (`llm_failed` kinds without their `:` parameter), a
/// fix's calls over the calls json_repair repaired.
#[test]
fn kind_shares_are_analyzes_mistakes() {
    let inputs = INPUTS.iter().chain(&["diff-kinds/new.jsonl"]);
    let mut compared = 0;
    for input in inputs {
        let path = fixture(input);
        let p = path.to_str().expect("path");
        let a = json_of(&["analyze", "-q", "--format", "json", p]);
        let mistakes = &a["mistakes"];
        let d = json_of(&[
            "diff",
            "-q",
            "--format",
            "json",
            "--iterations",
            "50",
            "--base",
            p,
            "--new",
            p,
        ]);
        let shares = d["comparisons"][0]["kind_shares"]
            .as_array()
            .expect("kind_shares");
        for m in shares {
            let id = m["metric"].as_str().expect("id");
            let (prefix, kind) = id.split_once('.').expect("<family>_share.<kind>");
            let family = prefix.strip_suffix("_share").expect("_share");
            let counts = mistakes[family]
                .as_object()
                .expect("a family of analyze's mistakes");
            let of_kind = |k: &str| counts.get(k).map_or(0, u);
            let want = if family == "json_fixes" {
                [of_kind(kind), u(&mistakes["repaired_calls"])]
            } else if family == "llm_failed" {
                let group = |k: &String| k.split(':').next().unwrap_or(k).to_string();
                let n = counts
                    .iter()
                    .filter(|(k, _)| group(k) == kind)
                    .map(|(_, v)| u(v))
                    .sum();
                [n, counts.values().map(u).sum()]
            } else {
                [of_kind(kind), counts.values().map(u).sum()]
            };
            assert_eq!(m["base_counts"], serde_json::json!(want), "{input}: {id}");
            compared += usize::from(want[0] > 0);
        }
    }
    assert!(compared >= 10, "kinds that occur: {compared}");
}
