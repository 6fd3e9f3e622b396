//! `--fail-on` in `analyze` and `diff` (issue 41): the gate's result comes
//! first in every view, one grammar serves both commands (levels of one
//! run or side beside diff's changes), and a comparison says what its
//! sizes let it detect.

use std::process::Output;

use mirotrace::diff::synth::{corpus, CorpusSpec};
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    crate::common::mirotrace()
        .args(args)
        .output()
        .expect("run mirotrace")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(o)))
}

fn fixtures() -> (String, String) {
    let f = |n: &str| crate::common::fixture_path(n).display().to_string();
    (f("model-a.jsonl"), f("model-b.jsonl"))
}

/// A rate as a percentage with two decimals, for a threshold just off it.
fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

#[test]
fn analyze_gates_a_figure_of_the_run_against_a_number() {
    let (a, b) = fixtures();
    let plain = run(&["analyze", &a, &b, "--format", "json"]);
    let report = json(&plain);
    let rate = report["rollback_rate"]["value"].as_f64().expect("a rate");
    assert!(report.get("gates").is_none(), "no rules, no gates key");
    let below = pct(rate - 0.01);
    let above = pct(rate + 0.01);
    // Above the threshold: fires, exit 1, the line says the figure.
    let o = run(&[
        "analyze",
        &a,
        &b,
        "--format",
        "json",
        "--fail-on",
        &format!("rollback_rate>{below}"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let gates = json(&o)["gates"].clone();
    assert_eq!(gates[0]["result"], "fired", "{gates}");
    let why = gates[0]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("rollback_rate of this run is") && why.contains(&format!("above {below}")),
        "{why}"
    );
    assert!(
        stderr(&o).contains("gate fired: rollback_rate>"),
        "{}",
        stderr(&o)
    );
    // The same as a fraction, and passed when the run is below it.
    let fraction = format!("rollback_rate>{:.4}", rate + 0.01);
    let o = run(&["analyze", &a, &b, "--fail-on", &fraction]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("gates passed: 1 rule, none fired\n"),
        "{text}"
    );
    assert!(text.contains(&format!("not above {above}")), "{text}");
    // Several rules are OR-ed; a fired one leads the terminal, Markdown
    // and page.
    let rules = [
        "--fail-on",
        &fraction,
        "--fail-on",
        &format!("rollback_rate>={below}"),
    ];
    let o = run(&[&["analyze", &a, &b][..], &rules].concat());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("gate fired: rollback_rate>="),
        "{}",
        stdout(&o)
    );
    let md = run(&[&["analyze", &a, &b, "--format", "markdown"][..], &rules].concat());
    let first = stdout(&md).lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with("# ") && first.contains("gate fired"),
        "{first}"
    );
    let dir = crate::common::scratch("gates-analyze-page");
    let page = dir.join("a.html");
    let o = run(&[
        &[
            "analyze",
            &a,
            &b,
            "--format",
            "html",
            "-o",
            &page.display().to_string(),
        ][..],
        &rules,
    ]
    .concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(html.contains("<title>gate fired · rollback report</title>"));
    assert!(html.contains("gate-banner fired"));
}

#[test]
fn analyze_gates_every_group_too() {
    let (a, b) = fixtures();
    let o = run(&[
        "analyze",
        &a,
        &b,
        "--group-by",
        "file",
        "--format",
        "json",
        "--fail-on",
        "rollback_rate>=0%",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let gates = json(&o)["gates"].as_array().cloned().unwrap_or_default();
    // The whole run, then one per file.
    assert_eq!(gates.len(), 3, "{gates:?}");
    assert!(gates[0]["group"].is_null());
    for g in &gates[1..] {
        assert!(
            g["group"].as_str().is_some_and(|k| k.ends_with(".jsonl")),
            "{g}"
        );
        assert_eq!(g["result"], "fired");
    }
}

#[test]
fn analyze_refuses_rules_that_compare_two_runs() {
    let (a, _) = fixtures();
    for rule in [
        "sig:rollback_rate>+1pp",
        "new:rollback_rate>0.3",
        "any-significant-worse",
        "rollback_rate>30",
        "rollback_rate>1pp",
    ] {
        let o = run(&["analyze", &a, "--fail-on", rule]);
        assert_eq!(o.status.code(), Some(2), "{rule}: {}", stderr(&o));
        assert!(stderr(&o).contains("accepted --fail-on rules"), "{rule}");
        assert!(o.stdout.is_empty(), "{rule}: nothing is replayed");
    }
    let o = run(&[
        "analyze",
        &a,
        "--format",
        "partial",
        "--fail-on",
        "refusal>5%",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn diff_levels_of_one_side_and_the_result_first() {
    let (a, b) = fixtures();
    let plain = json(&run(&[
        "diff", "--base", &a, "--new", &b, "--format", "json",
    ]));
    let rollback = plain["comparisons"][0]["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["metric"] == "rollback_rate"))
        .cloned()
        .expect("rollback_rate");
    let (base, new) = (
        rollback["base"].as_f64().expect("base"),
        rollback["new"].as_f64().expect("new"),
    );
    // A level between the sides fires on the higher side only.
    let mid = (base + new) / 2.0;
    let (low, high) = if new > base {
        ("base", "new")
    } else {
        ("new", "base")
    };
    let fired = format!("{high}:rollback_rate>{:.4}", mid);
    let passed = format!("{low}:rollback_rate>{:.4}", mid);
    let o = run(&[
        "diff",
        "--base",
        &a,
        "--new",
        &b,
        "--format",
        "markdown",
        "--fail-on",
        &passed,
        "--fail-on",
        &fired,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let md = stdout(&o);
    let mut lines = md.lines();
    let heading = lines.next().unwrap_or_default();
    assert!(
        heading.starts_with("## mirotrace diff") && heading.contains("gate fired"),
        "{heading}"
    );
    let first = md.lines().find(|l| l.starts_with("- ")).unwrap_or_default();
    assert!(
        first.contains("gate fired") && first.contains("1 of 2 rules"),
        "{first}"
    );
    // The gates come before the figures.
    let gates_at = md.find("### Gates").expect("gates");
    assert!(gates_at < md.find("| metric |").expect("table"), "{md}");
    let err = stderr(&o);
    assert!(err.contains(&format!("gate passed: {passed}")), "{err}");
    assert!(err.contains(&format!("of the {high} side is")), "{err}");
    // Passing rules: the title says so.
    let o = run(&[
        "diff",
        "--base",
        &a,
        "--new",
        &b,
        "--format",
        "markdown",
        "--fail-on",
        &passed,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o)
        .lines()
        .next()
        .unwrap_or_default()
        .contains("gates passed"));
    // Levels take a fraction or a percentage, never pp, nor with sig:.
    for bad in [
        "new:rollback_rate>1pp",
        "sig:new:rollback_rate>0.3",
        "base:mean_streak>5%",
    ] {
        let o = run(&["diff", "--base", &a, "--new", &b, "--fail-on", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
    }
}

fn spec(tasks: usize, prefix: &str, seed: u64) -> CorpusSpec {
    CorpusSpec {
        tasks,
        prefix: prefix.into(),
        seed,
        ..CorpusSpec::default()
    }
}

fn min_detectable(report: &Value) -> f64 {
    report["comparisons"][0]["power"]["min_detectable_pp"]
        .as_f64()
        .unwrap_or_else(|| panic!("no power figure: {}", report["comparisons"][0]["power"]))
}

/// The smallest detectable change shrinks as the sides grow; a small run
/// says in words that it cannot see small changes, and a `sig:` gate that
/// passes on it says so too.
#[test]
fn power_says_what_the_sizes_can_detect() {
    let dir = crate::common::scratch("gates-power");
    let mut mde = Vec::new();
    for tasks in [20, 400] {
        let a = dir.join(format!("a{tasks}.jsonl"));
        let b = dir.join(format!("b{tasks}.jsonl"));
        std::fs::write(&a, corpus(&spec(tasks, "t", 1))).expect("write");
        std::fs::write(&b, corpus(&spec(tasks, "t", 2))).expect("write");
        let (a, b) = (a.display().to_string(), b.display().to_string());
        let o = run(&[
            "diff",
            "--base",
            &a,
            "--new",
            &b,
            "--format",
            "json",
            "--fail-on",
            "sig:rollback_rate>+1pp",
        ]);
        let r = json(&o);
        let power = &r["comparisons"][0]["power"];
        assert_eq!(power["power"], 0.8);
        let m = min_detectable(&r);
        let underpowered = power["underpowered"].as_bool().expect("flag");
        assert_eq!(
            underpowered,
            m > r["method"]["noise_pp"].as_f64().unwrap_or(1.0)
        );
        let why = r["gates"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if underpowered {
            let note = power["note"].as_str().expect("a note");
            assert!(
                note.contains(&format!("with {tasks} traces a side"))
                    && note.contains(&format!("below {m:.0} pp")),
                "{note}"
            );
            if r["gates"][0]["result"] == "passed" {
                assert!(why.contains("underpowered"), "{why}");
            }
            let text = stdout(&run(&["diff", "--base", &a, "--new", &b]));
            assert!(text.contains(note), "{text}");
        } else {
            assert!(power.get("note").is_none());
            assert!(!why.contains("underpowered"), "{why}");
        }
        mde.push(m);
    }
    // 20× the tasks: about √20 ≈ 4.5× smaller.
    assert!(mde[1] * 3.0 < mde[0], "{mde:?}");
}
