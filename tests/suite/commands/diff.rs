//! `mirotrace diff` through the real binary, on generated corpora whose
//! truth is known (see `mirotrace::diff::synth`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use mirotrace::diff::synth::{corpus, CorpusSpec};
use serde_json::Value;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("diff-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write(dir: &Path, name: &str, spec: &CorpusSpec) -> String {
    let path = dir.join(name);
    std::fs::write(&path, corpus(spec)).expect("write corpus");
    path.display().to_string()
}

fn diff(args: &[&str]) -> Output {
    crate::common::mirotrace()
        .arg("diff")
        .args(args)
        .output()
        .expect("run mirotrace")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Metrics marked significant in the first comparison, with their assessment.
fn flagged(report: &Value, comparison: usize) -> BTreeSet<(String, String)> {
    report["comparisons"][comparison]["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter(|m| m["significant"] == Value::Bool(true))
        .map(|m| {
            (
                m["metric"].as_str().unwrap_or_default().to_string(),
                m["assessment"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn worse(names: &[&str]) -> BTreeSet<(String, String)> {
    names
        .iter()
        .map(|n| (n.to_string(), "worse".to_string()))
        .collect()
}

/// The base model: realistic background rates of every kind, no streaks,
/// so the only truth that changes below is what a test changes.
fn base_spec() -> CorpusSpec {
    CorpusSpec {
        tasks: 300,
        model: "base-model".into(),
        seed: 11,
        stuck: 0.0,
        ..CorpusSpec::default()
    }
}

/// Same tasks, a different model with clearly more refusals and
/// duplicate queries, everything else as the base.
fn raised_spec() -> CorpusSpec {
    CorpusSpec {
        model: "new-model".into(),
        seed: 12,
        refusal: 0.08,
        duplicate: 0.08,
        ..base_spec()
    }
}

#[test]
fn identical_inputs_show_no_change_and_exit_0() {
    let dir = temp_dir("identical");
    let a = write(&dir, "a.jsonl", &base_spec());
    let o = diff(&[
        "--base",
        &a,
        "--new",
        &a,
        "--format",
        "json",
        "--fail-on",
        "any-significant-change",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert!(flagged(&r, 0).is_empty(), "{:?}", flagged(&r, 0));
    for m in r["comparisons"][0]["metrics"].as_array().expect("metrics") {
        assert_eq!(m["base"], m["new"], "{}", m["metric"]);
    }
    let paired = &r["comparisons"][0]["paired"];
    assert_eq!(paired["shared"], 300);
    assert_eq!(paired["unchanged"], 300);
    assert_eq!(r["gates"][0]["fired"], false);
}

#[test]
fn raised_refusals_and_duplicates_are_flagged_on_exactly_those_metrics() {
    let dir = temp_dir("raised");
    let a = write(&dir, "base.jsonl", &base_spec());
    let b = write(&dir, "new.jsonl", &raised_spec());
    let o = diff(&[
        "--base",
        &a,
        "--new",
        &b,
        "--format",
        "json",
        "--fail-on",
        "any-significant-worse",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = json(&o);
    // Refusal and duplicate rollbacks rose, so the overall rollback rate did
    // too; nothing else changed in the generator.
    assert_eq!(
        flagged(&r, 0),
        worse(&[
            "duplicate_query",
            "duplicate_rate",
            "refusal",
            "rollback_rate"
        ])
    );
    let refusal = r["comparisons"][0]["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["metric"] == "refusal"))
        .expect("refusal row")
        .clone();
    let ci = refusal["ci"].as_array().expect("ci");
    assert!(
        ci[0].as_f64().unwrap_or(0.0) > 0.0,
        "interval above 0: {ci:?}"
    );
    assert!(refusal["p_adjusted"].as_f64().unwrap_or(1.0) < 0.05);
    // The gate message names the rule and the figures.
    let err = stderr(&o);
    assert!(err.contains("gate fired: any-significant-worse"), "{err}");
    assert!(err.contains("refusal") && err.contains(" pp"), "{err}");
    // Same tasks: the paired view sees more tasks get worse, significantly.
    let paired = &r["comparisons"][0]["paired"];
    assert_eq!(paired["shared"], 300);
    assert!(paired["worse"].as_u64() > paired["better"].as_u64());
    assert_eq!(paired["significant"], true);
    assert!(!paired["top_worse"].as_array().expect("top").is_empty());
}

#[test]
fn same_rates_with_a_different_seed_flag_nothing() {
    let dir = temp_dir("same-rates");
    // Streaks on, so streak and limit metrics carry noise too.
    let base = CorpusSpec {
        stuck: 0.25,
        ..base_spec()
    };
    let same = CorpusSpec {
        seed: 99,
        model: "other-run".into(),
        ..base.clone()
    };
    let a = write(&dir, "base.jsonl", &base);
    let b = write(&dir, "same.jsonl", &same);
    let o = diff(&[
        "--base",
        &a,
        "--new",
        &b,
        "--format",
        "json",
        "--fail-on",
        "any-significant-worse",
        "--fail-on",
        "paired-worse",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert!(flagged(&r, 0).is_empty(), "{:?}", flagged(&r, 0));
    // The draws did differ: this is not the identical-input case.
    let rollback = &r["comparisons"][0]["metrics"][0];
    assert_ne!(rollback["base"], rollback["new"]);
    assert!(r["comparisons"][0]["tested"].as_u64().unwrap_or(0) >= 15);
}

#[test]
fn results_are_reproducible_for_a_seed() {
    let dir = temp_dir("seeded");
    let a = write(&dir, "base.jsonl", &base_spec());
    let b = write(&dir, "new.jsonl", &raised_spec());
    let args = |seed: &'static str| {
        diff(&[
            "--base",
            &a,
            "--new",
            &b,
            "--format",
            "json",
            "--seed",
            seed,
            "-j",
            if seed == "5" { "1" } else { "3" },
        ])
    };
    let first = args("5");
    let again = args("5");
    assert_eq!(first.stdout, again.stdout, "same seed, same report");
    let other = args("6");
    assert_ne!(json(&first)["comparisons"], json(&other)["comparisons"]);
}

#[test]
fn threshold_gates_compare_the_change() {
    let dir = temp_dir("thresholds");
    let a = write(&dir, "base.jsonl", &base_spec());
    let b = write(&dir, "new.jsonl", &raised_spec());
    // Point-estimate rules do not need a fine bootstrap.
    let fires = |rule: &str| {
        let o = diff(&[
            "--base",
            &a,
            "--new",
            &b,
            "--iterations",
            "200",
            "--fail-on",
            rule,
        ]);
        match o.status.code() {
            Some(1) => true,
            Some(0) => false,
            other => panic!("{rule}: exit {other:?}: {}", stderr(&o)),
        }
    };
    assert!(fires("rollback_rate>+1pp"));
    assert!(!fires("rollback_rate>+50pp"));
    assert!(fires("refusal>+20%"));
    assert!(!fires("format_error>+1pp"));
    assert!(!fires("mean_streak>0.5"));
    assert!(fires("refusal_rate >= 2pp"));
    let o = diff(&["--base", &a, "--new", &b, "--fail-on", "refusal>+20%"]);
    assert!(
        stderr(&o).contains("gate fired: refusal>+20%"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn malformed_rules_are_usage_errors_that_show_the_grammar() {
    let dir = temp_dir("malformed");
    let a = write(
        &dir,
        "a.jsonl",
        &CorpusSpec {
            tasks: 5,
            ..base_spec()
        },
    );
    for rule in [
        "rollback_rate>1",
        "nope>+1pp",
        "refusal>>1pp",
        "everything-worse",
    ] {
        let o = diff(&["--base", &a, "--new", &a, "--fail-on", rule]);
        assert_eq!(o.status.code(), Some(2), "{rule}");
        let err = stderr(&o);
        assert!(err.contains(rule), "{err}");
        assert!(err.contains("accepted --fail-on rules"), "{err}");
    }
    let o = diff(&["--base", &a, "--new", &a, "--alpha", "1.5"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_fired_gate_outranks_skipped_input() {
    let dir = temp_dir("skipped");
    let a = write(&dir, "base.jsonl", &base_spec());
    let b = dir.join("new.jsonl");
    let mut text = corpus(&raised_spec());
    text.push_str("this line is not JSON\n");
    std::fs::write(&b, text).expect("write");
    let b = b.display().to_string();
    let gated = diff(&[
        "--base",
        &a,
        "--new",
        &b,
        "--fail-on",
        "any-significant-worse",
    ]);
    assert_eq!(gated.status.code(), Some(1), "{}", stderr(&gated));
    assert!(stderr(&gated).contains("line skipped"));
    let ungated = diff(&["--base", &a, "--new", &b]);
    assert_eq!(ungated.status.code(), Some(3));
    let strict = diff(&["--base", &a, "--new", &b, "--strict"]);
    assert_eq!(strict.status.code(), Some(3));
    assert!(strict.stdout.is_empty(), "no report after a --strict stop");
}

#[test]
fn an_unreadable_side_is_nothing_readable() {
    let dir = temp_dir("unreadable");
    let a = write(
        &dir,
        "a.jsonl",
        &CorpusSpec {
            tasks: 5,
            ..base_spec()
        },
    );
    let missing = dir.join("missing.jsonl").display().to_string();
    let o = diff(&["--base", &a, "--new", &missing]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("--new"), "{}", stderr(&o));
}

#[test]
fn group_by_model_compares_each_model_with_the_base() {
    let dir = temp_dir("grouped");
    let a = write(&dir, "base.jsonl", &base_spec());
    let worse_model = write(&dir, "raised.jsonl", &raised_spec());
    let same_model = write(
        &dir,
        "same.jsonl",
        &CorpusSpec {
            model: "steady-model".into(),
            seed: 13,
            ..base_spec()
        },
    );
    let o = diff(&[
        "--base",
        &a,
        "--new",
        &worse_model,
        &same_model,
        "--group-by",
        "model",
        "--format",
        "json",
        "--fail-on",
        "any-significant-worse",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r = json(&o);
    let groups: Vec<&str> = r["comparisons"]
        .as_array()
        .expect("comparisons")
        .iter()
        .map(|c| c["group"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(groups, ["new-model", "steady-model"]);
    assert_eq!(
        flagged(&r, 0),
        worse(&[
            "duplicate_query",
            "duplicate_rate",
            "refusal",
            "rollback_rate"
        ])
    );
    assert!(flagged(&r, 1).is_empty(), "{:?}", flagged(&r, 1));
    let fired: Vec<&str> = r["gates"]
        .as_array()
        .expect("gates")
        .iter()
        .filter(|g| g["fired"] == true)
        .map(|g| g["group"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(fired, ["new-model"]);
}

#[test]
fn markdown_reads_as_a_pull_request_comment() {
    let dir = temp_dir("markdown");
    let a = write(&dir, "base.jsonl", &base_spec());
    let b = write(&dir, "new.jsonl", &raised_spec());
    let out = dir.join("comment.md");
    let o = diff(&[
        "--base",
        &a,
        "--new",
        &b,
        "--format",
        "markdown",
        "--fail-on",
        "any-significant-worse",
        "-o",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let md = std::fs::read_to_string(&out).expect("markdown written");
    assert!(
        md.starts_with("## mirotrace diff\\: ❌ gate fired · 🔴 4 significantly worse"),
        "{md}"
    );
    // Trace and report text alike is escaped (docs/limits.md, "Robustness").
    assert!(md.contains("| metric | base | new | change | 95\\% CI | p \\(Holm\\) | result |"));
    assert!(md.contains("| **refusal** |"), "{md}");
    assert!(md.contains("<details>") && md.contains("</details>"));
    assert!(md.contains("**Paired by task\\:** 300 shared tasks"));
    assert!(md.contains("❌ `any-significant-worse`"), "{md}");
    assert!(md.contains("Holm–Bonferroni"));
    // Every table row has the header's column count.
    for line in md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("pp"))
    {
        let cells = line.matches(" | ").count();
        assert!(cells == 6 || cells == 3, "{line}");
    }
}

#[test]
fn disjoint_task_ids_have_no_paired_view() {
    let dir = temp_dir("disjoint");
    let a = write(
        &dir,
        "a.jsonl",
        &CorpusSpec {
            tasks: 30,
            ..base_spec()
        },
    );
    let b = write(
        &dir,
        "b.jsonl",
        &CorpusSpec {
            tasks: 30,
            prefix: "other".into(),
            ..base_spec()
        },
    );
    let o = diff(&["--base", &a, "--new", &b, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["comparisons"][0]["paired"], Value::Null);
    let table = diff(&["--base", &a, "--new", &b, "--no-color"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("Paired by task: the sides share no task id"),
        "{text}"
    );
    assert!(text.contains("rollback_rate"));
}

/// The documented CI gate (docs/diff.md, README): `sig:` rules fire only on
/// a change the same report calls significant. On the bundled model-a /
/// model-b the report says "no significant change" and the gate passes,
/// though the point estimate is above the threshold; on a pair whose
/// rollback rate is significantly up it fires.
#[test]
fn the_documented_ci_gate_agrees_with_the_report() {
    let fixture = |n: &str| format!("{}/fixtures/{n}", env!("CARGO_MANIFEST_DIR"));
    let (a, b) = (fixture("model-a.jsonl"), fixture("model-b.jsonl"));
    let gate = "sig:rollback_rate>+1pp";
    let o = diff(&["--base", &a, "--new", &b, "--fail-on", gate]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("no significant change"), "{out}");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("gate passed: sig:rollback_rate>+1pp") && err.contains("but not significant"),
        "{err}"
    );
    // The same threshold as a point-estimate rule fires: it was asked for.
    let o = diff(&["--base", &a, "--new", &b, "--fail-on", "rollback_rate>+1pp"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("point estimate is beyond +1 pp"),
        "{}",
        stderr(&o)
    );

    let dir = temp_dir("sig-gate");
    let base = write(&dir, "base.jsonl", &base_spec());
    let raised = write(&dir, "new.jsonl", &raised_spec());
    let o = diff(&["--base", &base, "--new", &raised, "--fail-on", gate]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("gate fired: sig:rollback_rate>+1pp")
            && stderr(&o).contains("and significant"),
        "{}",
        stderr(&o)
    );
    // Significantly up, but not by the threshold: passes, saying so.
    let o = diff(&[
        "--base",
        &base,
        "--new",
        &raised,
        "--fail-on",
        "sig:rollback_rate>+50pp",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("change is not beyond +50 pp"),
        "{}",
        stderr(&o)
    );
}

/// Issue 39: `diff --new-policy` replays the same traces under both
/// policies, pairs each trace with itself and lists the verdicts whose
/// outcome or reason changes: on the dev corpus, with upstream pull
/// request #121 as the new policy, exactly the ones upstream's own runs
/// differ in (`dev.verdicts.jsonl` against `dev.pr121.verdicts.jsonl`).
#[test]
fn a_policy_diff_lists_the_verdicts_a_policy_changes() {
    use std::collections::BTreeMap;
    let dir = temp_dir("policies");
    let policy = dir.join("pr121.toml");
    std::fs::write(&policy, "query_commit = \"per_turn\"\n").expect("write policy");
    let dev = dir.join("dev.jsonl");
    std::fs::write(&dev, crate::common::read_to_string("replay/dev.jsonl")).expect("write dev");
    let golden = |name: &str| -> BTreeMap<String, (Value, Value)> {
        crate::common::lines(name)
            .map(|l| serde_json::from_str::<Value>(&l).expect("golden line"))
            .map(|v| {
                let key = format!("{}/{}#{}", v["trace_id"], v["session"], v["index"]);
                (key, (v["outcome"].clone(), v["reason"].clone()))
            })
            .collect()
    };
    let (before, after) = (
        golden("replay/dev.verdicts.jsonl"),
        golden("replay/dev.pr121.verdicts.jsonl"),
    );
    let want: BTreeSet<String> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(want.len(), 40);
    let want_tasks: BTreeSet<String> = want
        .iter()
        .map(|k| {
            k.split('/')
                .next()
                .unwrap_or_default()
                .trim_matches('"')
                .to_string()
        })
        .collect();

    let out = diff(&[
        "--new-policy",
        policy.to_str().expect("path"),
        dev.to_str().expect("path"),
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json(&out);
    let changes = &report["policy_changes"];
    assert_eq!(changes["changed"], 40);
    assert_eq!(changes["verdicts"], 3346);
    let tasks = changes["changed_tasks"].as_array().expect("tasks");
    let got: BTreeSet<String> = tasks
        .iter()
        .flat_map(|t| {
            let id = t["trace_id"].as_str().unwrap_or_default().to_string();
            t["changes"].as_array().into_iter().flatten().map(move |c| {
                format!(
                    "\"{id}\"/\"{}\"#{}",
                    c["session"].as_str().unwrap_or_default(),
                    c["index"]
                )
            })
        })
        .collect();
    assert_eq!(got, want);
    let got_tasks: BTreeSet<String> = tasks
        .iter()
        .map(|t| t["trace_id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(got_tasks, want_tasks);
    // Each trace is paired with itself.
    let paired = &report["comparisons"][0]["paired"];
    assert_eq!(paired["shared"], 300, "{paired}");
    // The layer's own duplicates are gone on the new side.
    let kind = report["comparisons"][0]["kind_shares"]
        .as_array()
        .expect("kind shares")
        .iter()
        .find(|k| k["metric"] == "duplicate_query_share.after_rolled_back")
        .expect("after_rolled_back compared")
        .clone();
    assert_eq!(kind["new"], 0.0, "{kind}");

    // The table says it first, and names the tasks.
    let table = diff(&[
        "--new-policy",
        policy.to_str().expect("path"),
        dev.to_str().expect("path"),
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.lines()
            .next()
            .unwrap_or_default()
            .contains("40 of 3,346 verdicts change outcome or reason"),
        "{text}"
    );
    assert!(want_tasks.iter().all(|t| text.contains(t.as_str())));
    // So does the page.
    let page = dir.join("policies.html");
    let html = diff(&[
        "--new-policy",
        policy.to_str().expect("path"),
        dev.to_str().expect("path"),
        "--format",
        "html",
        "-o",
        page.to_str().expect("path"),
    ]);
    assert!(html.status.success(), "{}", stderr(&html));
    let page = std::fs::read_to_string(&page).expect("the page");
    assert!(page.contains("id=\"policy-changes\"") && page.contains("40 of 3,346 verdicts"));
    assert!(want_tasks.iter().all(|t| page.contains(t.as_str())));

    // Misuse is a usage error.
    for args in [
        vec![dev.to_str().expect("path")],
        vec!["--new-policy", policy.to_str().expect("path")],
        vec![
            "--new-policy",
            policy.to_str().expect("path"),
            "--base",
            dev.to_str().expect("path"),
            "--new",
            dev.to_str().expect("path"),
        ],
    ] {
        let out = diff(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}

/// Copies of one run in two folders, typed as a relative path on one side
/// and an absolute one on the other: every task pairs with its copy (a
/// trace's id is the file's own, never the path typed), and each side
/// counts each task once.
#[test]
fn copies_of_a_run_in_two_folders_pair_every_task() {
    let root = crate::common::scratch("diff-copies");
    let files = [
        "harnesses/swe-agent/function_calling_simple.traj",
        "harnesses/swe-agent/networking_1.traj",
        "harnesses/openhands/basic.json",
        "harnesses/mini-swe-agent/text-actions.traj.json",
        "atif/eiffel-height.json",
        "chat/openai-tool-calls.jsonl",
    ];
    for side in ["a", "b"] {
        let dir = root.join("runs").join(side);
        std::fs::create_dir_all(&dir).expect("folder");
        for f in files {
            let from = crate::common::fixture_path(f);
            std::fs::copy(&from, dir.join(from.file_name().unwrap())).expect("copy");
        }
    }
    let out = crate::common::mirotrace()
        .current_dir(&root)
        .args(["diff", "--base", "runs/a", "--new"])
        .arg(root.join("runs/b"))
        .args(["--format", "json", "-q"])
        .output()
        .expect("runs");
    let report = json(&out);
    let comparison = &report["comparisons"][0];
    let traces = comparison["base"]["traces"].as_u64().expect("traces");
    assert!(traces >= files.len() as u64, "{traces}");
    assert_eq!(comparison["new"]["traces"], traces);
    assert_eq!(
        comparison["paired"]["shared"], traces,
        "{}",
        comparison["paired"]
    );
    assert_eq!(comparison["paired"]["unchanged"], traces);
}
