//! Partial reports: `analyze --format partial` on any split of the input,
//! `mirotrace merge`d in any order, gives byte for byte the JSON of one
//! `analyze` over all of it. Splits by whole files go through the binary;
//! splits by single traces (as a distributed job makes them) go through the
//! library, each partial written to JSON text and read back.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mirotrace::analyze::partial::{merge_all, Partial};
use mirotrace::analyze::{render_json, Collector, GroupBy, ReportOptions};
use mirotrace::crosscheck;
use mirotrace::engine::Workers;
use mirotrace::model::TracePos;
use mirotrace::policy::Policy;
use mirotrace::read::source::{expand, open_records, InputSpec, ReadOptions};
use mirotrace::read::Record;
use mirotrace::replay::Replayer;

fn bin() -> Command {
    crate::common::mirotrace()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mirotrace")
}

/// A small seeded generator, so each split is reproducible.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// Every input the corpus is made of: the bundled fixtures (every format,
/// broken files included) and the conformance corpora.
fn corpus() -> Vec<String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files: Vec<String> = expand(&[InputSpec::Path(fixtures)])
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            InputSpec::Path(p) => Some(p.display().to_string()),
            InputSpec::Stdin => None,
        })
        .collect();
    for name in ["replay/sanity.jsonl", "replay/dev.jsonl"] {
        files.push(common::path(name).display().to_string());
    }
    files.push(common::path("tasklogs/logs").display().to_string());
    assert!(files.len() > 20, "{files:?}");
    files
}

/// A page without its "Skipped input" section's content: one analyze
/// lists the skipped lines as its stderr said them, a merged page only how
/// many its partials skipped (a partial keeps the counts, not the lines).
fn without_skipped_lines(page: &[u8]) -> String {
    let page = String::from_utf8_lossy(page).into_owned();
    let open = "<section class=\"card\" id=\"skipped\">";
    match page.find(open) {
        Some(at) => {
            let end = page[at..].find("</section>").map_or(page.len(), |e| at + e);
            format!("{}{}", &page[..at + open.len()], &page[end..])
        }
        None => page,
    }
}

fn stdout_of(o: &Output) -> Vec<u8> {
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout.clone()
}

/// The options sets the splits are checked under.
const OPTIONS: [&[&str]; 3] = [
    &[],
    &["--group-by", "file", "--top", "3"],
    &[
        "--group-by",
        "agent",
        "--seed",
        "7",
        "--iterations",
        "300",
        "--top",
        "25",
    ],
];

#[test]
fn partials_of_file_splits_merge_to_the_whole_report() {
    let files = corpus();
    let dir = common::tempdir("file-splits");
    for (n, options) in OPTIONS.iter().enumerate() {
        let mut args: Vec<&str> = vec!["analyze", "-q", "--format", "json"];
        args.extend(files.iter().map(String::as_str));
        args.extend(options.iter());
        let whole = stdout_of(&run(&args));
        assert!(whole.len() > 2000);
        // Issue 28's families are in what the merge must reproduce.
        let report: serde_json::Value = serde_json::from_slice(&whole).expect("json");
        for family in [
            "llm_failed",
            "unknown_tool",
            "tool_error",
            "duplicate_query",
        ] {
            let kinds = report["mistakes"][family].as_object();
            assert!(kinds.is_some_and(|k| !k.is_empty()), "mistakes.{family}");
        }
        // Issue 38's blind spots and owners too.
        let blind = &report["blind_spots"];
        for key in [
            "tool_errors_unmatched",
            "text_unknown",
            "native_tool_attempts",
        ] {
            assert!(
                blind[key].as_u64().is_some_and(|n| n > 0),
                "blind_spots.{key}"
            );
        }
        for owner in ["model", "environment"] {
            assert!(
                report["owners"][owner].as_u64().is_some_and(|n| n > 0),
                "owners.{owner}"
            );
        }
        args[3] = "html";
        let whole_html = stdout_of(&run(&args));
        assert!(
            String::from_utf8_lossy(&whole_html).contains("class=\"data timeline\""),
            "the one-shot page shows timelines"
        );
        for seed in 1..=3u64 {
            let mut rng = Lcg(seed * 31 + n as u64);
            let k = 2 + rng.below(3);
            let mut shares: Vec<Vec<&str>> = vec![Vec::new(); k];
            for f in &files {
                shares[rng.below(k)].push(f);
            }
            let mut parts: Vec<PathBuf> = Vec::new();
            for (i, share) in shares.iter().enumerate() {
                if share.is_empty() {
                    continue;
                }
                let part = dir.join(format!("o{n}-s{seed}-{i}.part"));
                let out = part.to_str().expect("utf-8 path").to_string();
                let mut args: Vec<&str> = vec!["analyze", "-q", "--format", "partial", "-o", &out];
                args.extend(share.iter().copied());
                args.extend(options.iter());
                let o = run(&args);
                assert!(
                    matches!(o.status.code(), Some(0 | 3)),
                    "{}",
                    String::from_utf8_lossy(&o.stderr)
                );
                parts.push(part);
            }
            rng.shuffle(&mut parts);
            let mut args: Vec<String> = vec!["merge".into(), "--format".into(), "json".into()];
            args.extend(parts.iter().map(|p| p.display().to_string()));
            let merged = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(
                merged.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&merged.stderr)
            );
            assert!(
                merged.stdout == whole,
                "options {options:?}, seed {seed}: merged partials differ from one analyze"
            );
            // The page too, worst traces' timelines included.
            args[2] = "html".into();
            let page = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(!String::from_utf8_lossy(&page.stdout).contains("timeline not kept"));
            assert!(
                without_skipped_lines(&stdout_of(&page)) == without_skipped_lines(&whole_html),
                "options {options:?}, seed {seed}: merged page differs from one analyze's"
            );
        }
    }
}

/// The traces of `files`, replayed, with the counts a run adds besides.
struct Replayed {
    traces: Vec<(mirotrace::read::Trace, Vec<mirotrace::replay::Verdict>)>,
    files: Vec<String>,
    bad: Vec<String>,
    /// (file, kind, records) of mirotrace's own outputs met.
    not_traces: Vec<(String, &'static str, u64)>,
}

fn replay_all(files: &[String]) -> Replayed {
    let replayer = Replayer::new(Policy::default());
    let specs: Vec<InputSpec> = files.iter().map(|f| InputSpec::parse(f)).collect();
    let read = ReadOptions {
        keep_meta: false,
        ..ReadOptions::default()
    };
    let mut out = Replayed {
        traces: Vec::new(),
        files: Vec::new(),
        bad: Vec::new(),
        not_traces: Vec::new(),
    };
    for spec in expand(&specs).into_iter().flatten() {
        let Ok(records) = open_records(&spec, &read) else {
            continue;
        };
        out.files.push(spec.label().to_string());
        for r in records {
            match r {
                Record::Trace(t) => {
                    let v = replayer.replay(&t);
                    out.traces.push((t, v));
                }
                Record::Bad(b) => out.bad.push(b.origin.file.to_string()),
                Record::NoAttempt(n) => out.bad.push(n.file.to_string()),
                Record::NotTraces(n) => {
                    out.not_traces
                        .push((n.origin.file.to_string(), n.output.name, n.count))
                }
                Record::Failed(_) => {}
            }
        }
    }
    out
}

#[test]
fn partials_of_single_traces_merge_to_the_whole_report() {
    let files = corpus();
    let all = replay_all(&files);
    assert!(all.traces.len() > 300, "{}", all.traces.len());
    let policy = Policy::default();
    let workers = Workers::new(Some(2)).expect("threads");
    for (n, group_by) in [None, Some(GroupBy::Model), Some(GroupBy::File)]
        .into_iter()
        .enumerate()
    {
        let report = ReportOptions {
            top: 4,
            group_by,
            ..ReportOptions::default()
        };
        let mut args: Vec<&str> = vec!["analyze", "-q", "--format", "json", "--top", "4"];
        args.extend(files.iter().map(String::as_str));
        if let Some(g) = group_by {
            args.extend(["--group-by", g.name()]);
        }
        let whole = stdout_of(&run(&args));
        let mut rng = Lcg(99 + n as u64);
        let k = 7;
        let mut parts: Vec<(Collector, crosscheck::Summary)> = (0..k)
            .map(|_| (Collector::new(&report), crosscheck::Summary::default()))
            .collect();
        for (trace, verdicts) in &all.traces {
            let at = TracePos::of_trace(trace);
            let (c, x) = &mut parts[rng.below(k)];
            x.add(&at, trace, verdicts, &policy);
            c.add_trace(verdicts, &at);
            // As analyze's fold: records a reader counted, not attempts.
            for (kind, n) in &trace.not_attempts {
                c.add_not_traces(&at.file, kind, *n);
            }
        }
        for f in &all.files {
            parts[rng.below(k)].0.add_file(f);
        }
        for f in &all.bad {
            parts[rng.below(k)].0.add_bad_line(f);
        }
        for (f, kind, n) in &all.not_traces {
            parts[rng.below(k)].0.add_not_traces(f, kind, *n);
        }
        let mut texts: Vec<(String, Vec<u8>)> = parts
            .into_iter()
            .enumerate()
            .map(|(i, (c, x))| {
                let text = Partial::new(c, x, &report, &policy)
                    .to_json()
                    .expect("json");
                (format!("part-{i}"), text.into_bytes())
            })
            .collect();
        rng.shuffle(&mut texts);
        let merged = merge_all(texts).expect("merge");
        let analysis = workers.install(|| merged.finish());
        assert!(
            render_json::render(&analysis).as_bytes() == whole.as_slice(),
            "group_by {group_by:?}: merged trace partials differ from one analyze"
        );
    }
}

fn partial_of(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/model-a.jsonl");
    let out = dir.join(name);
    let mut args = vec![
        "analyze",
        "-q",
        "--format",
        "partial",
        "-o",
        out.to_str().expect("utf-8"),
        input.to_str().expect("utf-8"),
    ];
    args.extend(extra);
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

fn refused(parts: &[&Path], message: &str) {
    let mut args = vec!["merge".to_string(), "--format".into(), "json".into()];
    args.extend(parts.iter().map(|p| p.display().to_string()));
    let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert!(err.contains(message), "{err}");
}

#[test]
fn partials_made_differently_are_refused() {
    let dir = common::tempdir("refused");
    let plain = partial_of(&dir, "plain", &[]);
    let top = partial_of(&dir, "top", &["--top", "3"]);
    refused(&[&plain, &top], "different report options");
    let seed = partial_of(&dir, "seed", &["--seed", "1"]);
    refused(&[&plain, &seed], "different report options");

    let policy_file = dir.join("policy.toml");
    let o = run(&["policy"]);
    let text = String::from_utf8(o.stdout).expect("utf-8");
    assert!(text.contains("rollback_limit = 5"));
    std::fs::write(
        &policy_file,
        text.replace("rollback_limit = 5", "rollback_limit = 4"),
    )
    .expect("write");
    let strict = partial_of(
        &dir,
        "strict",
        &["--policy", policy_file.to_str().expect("utf-8")],
    );
    refused(&[&plain, &strict], "different policies");

    let old = dir.join("old");
    let text = std::fs::read_to_string(&plain).expect("read");
    let version = format!("\"mirotrace_version\":\"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&version));
    std::fs::write(
        &old,
        text.replace(&version, "\"mirotrace_version\":\"0.0.1\""),
    )
    .expect("write");
    refused(&[&plain, &old], "different mirotrace versions");

    let future = dir.join("future");
    std::fs::write(
        &future,
        text.replace(mirotrace::analyze::partial::FORMAT, "mirotrace.partial/9"),
    )
    .expect("write");
    refused(
        &[&plain, &future],
        "partial report format \"mirotrace.partial/9\"",
    );

    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/model-a.jsonl");
    refused(&[&plain, &traces], "not a mirotrace partial report");

    // The same partial twice would count everything twice: refused (issue 23).
    refused(&[&plain, &plain], "the same partial as");
}

#[test]
fn a_merged_partial_merges_again() {
    let dir = common::tempdir("tree");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let (a, b) = (
        fixtures.join("model-a.jsonl"),
        fixtures.join("model-b.jsonl"),
    );
    let whole = stdout_of(&run(&[
        "analyze",
        "-q",
        "--format",
        "json",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]));
    let pa = partial_of(&dir, "a", &[]);
    let pb = dir.join("b");
    let o = run(&[
        "analyze",
        "-q",
        "--format",
        "partial",
        "-o",
        pb.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let ab = dir.join("ab");
    let o = run(&[
        "merge",
        "--format",
        "partial",
        "-o",
        ab.to_str().unwrap(),
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["merge", "--format", "json", ab.to_str().unwrap()]);
    assert_eq!(o.stdout, whole);
}

/// `diff --format partial` over a share of either side, or both.
fn diff_partial(out: &Path, base: &[&str], new: &[&str], options: &[&str]) {
    let mut args: Vec<&str> = vec!["diff", "-q", "--format", "partial", "-o"];
    args.push(out.to_str().expect("utf-8"));
    if !base.is_empty() {
        args.push("--base");
        args.extend(base);
    }
    if !new.is_empty() {
        args.push("--new");
        args.extend(new);
    }
    args.extend(options);
    let o = run(&args);
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The options sets diff splits are checked under.
const DIFF_OPTIONS: [&[&str]; 3] = [
    &["--iterations", "300"],
    &["--group-by", "file", "--iterations", "200", "--seed", "5"],
    &[
        "--group-by",
        "model",
        "--fail-on",
        "rollback_rate>+0pp",
        "--iterations",
        "250",
        "--top",
        "2",
    ],
];

#[test]
fn partial_diffs_of_any_split_merge_to_the_whole_diff() {
    let files = corpus();
    let (base, new): (Vec<&str>, Vec<&str>) = {
        let (b, n): (Vec<_>, Vec<_>) = files.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        (
            b.into_iter().map(|(_, f)| f.as_str()).collect(),
            n.into_iter().map(|(_, f)| f.as_str()).collect(),
        )
    };
    let dir = common::tempdir("diff-splits");
    for (n, options) in DIFF_OPTIONS.iter().enumerate() {
        let mut whole_args: Vec<&str> = vec!["diff", "-q", "--format", "json", "--base"];
        whole_args.extend(&base);
        whole_args.push("--new");
        whole_args.extend(&new);
        whole_args.extend(options.iter());
        let whole = run(&whole_args);
        let code = whole.status.code();
        assert!(
            matches!(code, Some(0 | 1 | 3)),
            "{}",
            String::from_utf8_lossy(&whole.stderr)
        );
        assert!(whole.stdout.len() > 2000);
        whole_args[3] = "markdown";
        let whole_md = run(&whole_args).stdout;
        for seed in 1..=3u64 {
            let mut rng = Lcg(seed * 17 + n as u64);
            let k = 2 + rng.below(3);
            let mut shares: Vec<(Vec<&str>, Vec<&str>)> = vec![(Vec::new(), Vec::new()); k];
            for f in &base {
                shares[rng.below(k)].0.push(f);
            }
            for f in &new {
                shares[rng.below(k)].1.push(f);
            }
            let mut parts: Vec<String> = Vec::new();
            for (i, (b, nw)) in shares.iter().enumerate() {
                if b.is_empty() && nw.is_empty() {
                    continue;
                }
                let part = dir.join(format!("o{n}-s{seed}-{i}.part"));
                diff_partial(&part, b, nw, options);
                parts.push(part.display().to_string());
            }
            rng.shuffle(&mut parts);
            let mut args: Vec<&str> = vec!["merge", "--format", "json"];
            args.extend(parts.iter().map(String::as_str));
            let merged = run(&args);
            assert_eq!(
                merged.status.code(),
                code,
                "{}",
                String::from_utf8_lossy(&merged.stderr)
            );
            assert!(
                merged.stdout == whole.stdout,
                "options {options:?}, seed {seed}: merged partial diffs differ from one diff"
            );
            args[2] = "markdown";
            assert!(run(&args).stdout == whole_md);
        }
    }
}

#[test]
fn partial_diffs_merge_again_and_refuse_what_differs() {
    let dir = common::tempdir("diff-refused");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let a = fixtures.join("model-a.jsonl");
    let b = fixtures.join("model-b.jsonl");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let whole = run(&["diff", "-q", "--format", "json", "--base", a, "--new", b]);
    let (pa, pb, pab) = (dir.join("a"), dir.join("b"), dir.join("ab"));
    diff_partial(&pa, &[a], &[], &[]);
    diff_partial(&pb, &[], &[b], &[]);
    let o = run(&[
        "merge",
        "--format",
        "partial",
        "-o",
        pab.to_str().unwrap(),
        pb.to_str().unwrap(),
        pa.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["merge", "--format", "json", pab.to_str().unwrap()]);
    assert_eq!(o.stdout, whole.stdout);

    // One side alone is not a comparison.
    let o = run(&["merge", "--format", "json", pa.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Without --format partial, both sides are required.
    let o = run(&["diff", "-q", "--base", a]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--new is required"));

    let seed = dir.join("seed");
    diff_partial(&seed, &[], &[b], &["--seed", "1"]);
    refused(&[&pa, &seed], "different diff options");
    let gate = dir.join("gate");
    diff_partial(&gate, &[], &[b], &["--fail-on", "rollback_rate>+1pp"]);
    refused(&[&pa, &gate], "different diff options");

    let policy_file = dir.join("policy.toml");
    let text = String::from_utf8(run(&["policy"]).stdout).expect("utf-8");
    std::fs::write(
        &policy_file,
        text.replace("rollback_limit = 5", "rollback_limit = 4"),
    )
    .expect("write");
    let strict = dir.join("strict");
    diff_partial(
        &strict,
        &[],
        &[b],
        &["--policy", policy_file.to_str().unwrap()],
    );
    refused(&[&pa, &strict], "different policies");

    let text = std::fs::read_to_string(&pa).expect("read");
    let old = dir.join("old");
    let version = format!("\"mirotrace_version\":\"{}\"", env!("CARGO_PKG_VERSION"));
    std::fs::write(
        &old,
        text.replace(&version, "\"mirotrace_version\":\"0.0.1\""),
    )
    .expect("write");
    refused(&[&pb, &old], "different mirotrace versions");

    let report = partial_of(&dir, "report", &[]);
    refused(&[&pa, &report], "cannot merge a partial diff");
    refused(&[&report, &pa], "cannot merge a partial diff");
}

#[test]
fn a_missing_part_ends_the_run_before_any_report() {
    let o = run(&["merge", "-q", "no-such-part.json"]);
    assert_eq!(o.status.code(), Some(4), "missing input's exit code");
    assert!(o.stdout.is_empty(), "no report of zeros");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no-such-part.json"), "{err}");
}

/// One partial merged twice (the same file, or a copy of it) would count
/// its traces twice: refused, naming both.
#[test]
fn one_partial_merged_twice_is_refused() {
    let dir = common::tempdir("twice");
    let once = partial_of(&dir, "once", &[]);
    let copy = dir.join("copy");
    std::fs::copy(&once, &copy).expect("copy");
    refused(&[&once, &once], "the same partial as");
    refused(&[&once, &copy], "the same partial as");
}

/// A partial of `input` (`analyze --format partial`, or `diff` with the
/// same file on both sides) as JSON, to forge.
fn partial_json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("partial JSON")
}

/// Writes each part, merges them; (exit code, stderr).
fn merge_forged(tag: &str, parts: &[serde_json::Value]) -> (Option<i32>, String) {
    let dir = common::scratch(tag);
    let files: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f = dir.join(format!("part-{i}.json"));
            std::fs::write(&f, p.to_string()).expect("write");
            f.display().to_string()
        })
        .collect();
    let mut args = vec!["merge", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Issue 23: partials are input too. A forged or edited one is refused
/// with one line naming the part and the field, exit 2: a histogram of
/// 10^15 traces (the bootstrap ran for ever), counts whose sum passes
/// 2^64 (it wrapped), options the CLI refuses, the same part twice.
#[test]
fn forged_partials_are_refused_naming_part_and_field() {
    let a = common::fixture("model-a.jsonl");
    let b = common::fixture("model-b.jsonl");
    let pa = partial_json(&["analyze", "-q", "--format", "partial", &a]);
    let pb = partial_json(&["analyze", "-q", "--format", "partial", &b]);
    assert_eq!(
        merge_forged("forged-ok", &[pa.clone(), pb.clone()]).0,
        Some(0)
    );

    let mut cases: Vec<(&str, Vec<serde_json::Value>, &str)> = Vec::new();
    let mut weighty = pa.clone();
    weighty["collector"]["overall"]["rate_by_trace"][0][2] = 1_000_000_000_000_000u64.into();
    cases.push(("weights", vec![weighty], "rate_by_trace"));
    // Consistent within each part, but the two attempt counts pass 2^64.
    let huge = |p: &serde_json::Value| {
        let mut p = p.clone();
        let t = &mut p["collector"]["overall"]["tally"];
        let add = 1u64 << 63;
        t["attempts"] = (t["attempts"].as_u64().unwrap() + add).into();
        let last = t["outcomes"].as_array().unwrap().len() - 1;
        t["outcomes"][last] = (t["outcomes"][last].as_u64().unwrap() + add).into();
        p
    };
    cases.push((
        "overflow",
        vec![huge(&pa), huge(&pb)],
        "collector.overall.tally.attempts",
    ));
    let mut drawn = pa.clone();
    drawn["options"]["iterations"] = 1_000_000_000_000u64.into();
    cases.push(("iterations", vec![drawn], "options.iterations"));
    let mut limit = pa.clone();
    limit["options"]["rollback_limit"] = 0.into();
    cases.push(("limit", vec![limit], "options.rollback_limit"));
    cases.push((
        "twice",
        vec![pa.clone(), pb.clone(), pa.clone()],
        "the same partial as",
    ));
    let pd = partial_json(&[
        "diff", "-q", "--format", "partial", "--base", &a, "--new", &b,
    ]);
    let mut alpha = pd.clone();
    alpha["options"]["compare"]["alpha"] = 5.0.into();
    cases.push(("alpha", vec![alpha], "options.compare.alpha"));
    let mut rows = pd.clone();
    rows["base"]["rows"][0]["counts"][0] = u64::MAX.into();
    let mut rows2 = pd.clone();
    rows2["base"]["rows"][0]["counts"][0] = u64::MAX.into();
    rows2["base"]["inputs"] = serde_json::json!(["other"]);
    cases.push(("rows", vec![rows, rows2], "base.rows[].counts[0]"));
    for (tag, parts, field) in cases {
        let (code, err) = merge_forged(tag, &parts);
        assert_eq!(code, Some(2), "{tag}: {err}");
        assert!(err.contains(field), "{tag}: {err}");
        assert!(err.contains("part-"), "{tag}: names the part: {err}");
        assert_eq!(err.lines().count(), 1, "{tag}: {err}");
    }
}
