//! The cost and task-result figures of `analyze`, against figures computed
//! here from the generated input and upstream's golden verdicts.
//!
//! The input is the dev corpus (upstream-judged native lines) with a usage,
//! a duration and, on each trace's first line, a result added by a seeded
//! generator; some are left out, so coverage is checked too. The test
//! computes every expected figure itself from what it wrote and from
//! `dev.verdicts.jsonl`, never from mirotrace's own output.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::{json, Value};

/// A small seeded generator (the test must not depend on a crate's RNG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the generator added to one line.
#[derive(Default, Clone)]
struct Added {
    input: Option<u64>,
    output: Option<u64>,
    /// In thousandths of a second (written with three decimals).
    millis: Option<u64>,
}

#[derive(Default, Debug, Clone, Copy, PartialEq)]
struct Sums {
    attempts: u64,
    input: u64,
    input_known: u64,
    output: u64,
    millis: u64,
    seconds_known: u64,
}

impl Sums {
    fn add(&mut self, a: &Added) {
        self.attempts += 1;
        if let Some(n) = a.input {
            self.input += n;
            self.input_known += 1;
        }
        if let Some(n) = a.output {
            self.output += n;
        }
        if let Some(ms) = a.millis {
            self.millis += ms;
            self.seconds_known += 1;
        }
    }

    fn check(&self, got: &Value, what: &str) {
        assert_eq!(got["attempts"], json!(self.attempts), "{what}.attempts");
        if self.input_known > 0 {
            assert_eq!(
                got["input_tokens"],
                json!(self.input),
                "{what}.input_tokens"
            );
            assert_eq!(
                got["output_tokens"],
                json!(self.output),
                "{what}.output_tokens"
            );
        } else {
            assert!(got["input_tokens"].is_null(), "{what}: no usage known");
        }
        assert_eq!(
            got["known"]["input_tokens"],
            json!(self.input_known),
            "{what} coverage"
        );
        assert_eq!(got["known"]["seconds"], json!(self.seconds_known));
        if self.seconds_known > 0 {
            let s = got["seconds"].as_f64().expect("seconds");
            assert!(
                (s - self.millis as f64 / 1000.0).abs() < 1e-6,
                "{what}.seconds {s} vs {}",
                self.millis as f64 / 1000.0
            );
        }
    }
}

/// Appends `extra` (`"key": value, …`) to a JSON object's text.
fn append(line: &str, extra: &str) -> String {
    let body = line.trim_end();
    let body = body.strip_suffix('}').expect("a line is an object");
    format!("{body}, {extra}}}")
}

struct Generated {
    text: String,
    added: Vec<Added>,
    /// Trace id → passed, for traces given a pass/fail result.
    results: BTreeMap<String, bool>,
    score_only: u64,
}

fn generate(seed: u64) -> Generated {
    let mut rng = Lcg(seed);
    let mut text = String::new();
    let mut added = Vec::new();
    let mut results = BTreeMap::new();
    let mut score_only = 0;
    let mut last_trace = String::new();
    for line in common::lines("replay/dev.jsonl") {
        let v: Value = serde_json::from_str(&line).expect("dev lines are plain JSON");
        let trace = v["trace_id"].as_str().expect("trace_id").to_string();
        let mut a = Added::default();
        let mut extra = Vec::new();
        if rng.below(10) > 0 {
            let (i, o) = (rng.below(40_000), rng.below(2_000));
            a.input = Some(i);
            a.output = Some(o);
            extra.push(format!(
                "\"usage\": {{\"input_tokens\": {i}, \"output_tokens\": {o}}}"
            ));
        }
        if rng.below(8) > 0 {
            let ms = rng.below(90_000);
            a.millis = Some(ms);
            extra.push(format!("\"duration_s\": {}.{:03}", ms / 1000, ms % 1000));
        }
        if trace != last_trace {
            last_trace = trace.clone();
            let mut meta = v.get("meta").cloned().unwrap_or_else(|| json!({}));
            match rng.below(10) {
                0 => {}
                1 => {
                    meta["score"] = json!(0.25);
                    score_only += 1;
                    extra.push(format!("\"meta\": {meta}"));
                }
                _ => {
                    let passed = rng.below(2) == 0;
                    meta["success"] = json!(passed);
                    results.insert(trace.clone(), passed);
                    extra.push(format!("\"meta\": {meta}"));
                }
            }
        }
        let out = if extra.is_empty() {
            line.clone()
        } else {
            append(&line, &extra.join(", "))
        };
        text.push_str(&out);
        text.push('\n');
        added.push(a);
    }
    Generated {
        text,
        added,
        results,
        score_only,
    }
}

fn analyze_json(path: &std::path::Path) -> Value {
    let out = crate::common::mirotrace()
        .args(["analyze", "--format", "json", "-q"])
        .arg(path)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

#[test]
fn cost_and_results_equal_figures_computed_from_the_input() {
    let g = generate(25);
    let dir = common::scratch("cost");
    let path = dir.join("dev-with-cost.jsonl");
    std::fs::write(&path, &g.text).expect("write");
    let report = analyze_json(&path);
    let verdicts: Vec<Value> = common::lines("replay/dev.verdicts.jsonl")
        .map(|l| serde_json::from_str(&l).expect("verdict"))
        .collect();
    assert_eq!(verdicts.len(), g.added.len());

    let (mut total, mut discarded, mut failed) =
        (Sums::default(), Sums::default(), Sums::default());
    let mut by_reason: BTreeMap<String, Sums> = BTreeMap::new();
    // Per trace: (rollbacks, reached, reasons rolled back).
    let mut traces: BTreeMap<String, (u64, u64, Vec<String>)> = BTreeMap::new();
    for (v, a) in verdicts.iter().zip(&g.added) {
        let outcome = v["outcome"].as_str().expect("outcome");
        let t = traces
            .entry(v["trace_id"].as_str().expect("id").to_string())
            .or_default();
        if outcome == "unreachable" {
            continue;
        }
        t.1 += 1;
        total.add(a);
        match outcome {
            "rollback" | "end" => {
                discarded.add(a);
                let reason = v["reason"].as_str().expect("a reason").to_string();
                by_reason.entry(reason.clone()).or_default().add(a);
                if outcome == "rollback" {
                    t.0 += 1;
                    t.2.push(reason);
                }
            }
            "llm_failed" => failed.add(a),
            _ => {}
        }
    }
    let cost = &report["cost"];
    total.check(&cost["total"], "total");
    discarded.check(&cost["discarded"], "discarded");
    failed.check(&cost["failed"], "failed");
    assert!(discarded.attempts > 100, "the corpus has rollbacks");
    for (reason, sums) in &by_reason {
        sums.check(&cost["by_reason"][reason], reason);
    }
    let share = cost["discarded"]["share"]["output_tokens"]
        .as_f64()
        .expect("share");
    assert!((share - discarded.output as f64 / total.output as f64).abs() < 1e-12);

    // Task results.
    let r = &report["task_results"];
    let passed = g.results.values().filter(|p| **p).count() as u64;
    assert_eq!(r["tasks"], json!(g.results.len()));
    assert_eq!(r["success"], json!(passed));
    assert_eq!(r["failure"], json!(g.results.len() as u64 - passed));
    assert_eq!(r["score_only"], json!(g.score_only));
    for (key, want) in [("success", true), ("failure", false)] {
        let (n, d) = g
            .results
            .iter()
            .filter(|(_, p)| **p == want)
            .fold((0, 0), |(n, d), (id, _)| {
                (n + traces[id].0, d + traces[id].1)
            });
        let got = &r["rollback_rate"][key];
        let value = got["value"].as_f64().expect("rate");
        assert!((value - n as f64 / d as f64).abs() < 1e-9, "{key} rate");
        let (lo, hi) = (
            got["lo"].as_f64().expect("lo"),
            got["hi"].as_f64().expect("hi"),
        );
        assert!(lo <= value && value <= hi, "{key}: {lo} {value} {hi}");
    }
    for reason in ["format_error", "refusal", "duplicate_query", "tool_error"] {
        let (mut with, mut without) = ([0u64; 2], [0u64; 2]);
        for (id, p) in &g.results {
            let had = traces[id].2.iter().any(|r| r == reason);
            let slot = if had { &mut with } else { &mut without };
            slot[0] += 1;
            slot[1] += u64::from(!p);
        }
        let got = &r["by_reason"][reason];
        assert_eq!(got["with"]["tasks"], json!(with[0]), "{reason}");
        assert_eq!(got["with"]["failed"], json!(with[1]), "{reason}");
        assert_eq!(got["without"]["tasks"], json!(without[0]), "{reason}");
        if with[0] > 0 && without[1] > 0 {
            let want = (with[1] as f64 / with[0] as f64) / (without[1] as f64 / without[0] as f64);
            let value = got["ratio"]["value"].as_f64().expect("ratio");
            assert!((value - want).abs() < 1e-9, "{reason} ratio");
        }
    }
}

#[test]
fn partials_of_halves_merge_to_the_whole_cost_report() {
    let g = generate(7);
    let dir = common::scratch("cost-partial");
    // Split at a trace boundary near the middle.
    let lines: Vec<&str> = g.text.lines().collect();
    let id = |l: &str| -> String {
        serde_json::from_str::<Value>(l).expect("json")["trace_id"]
            .as_str()
            .expect("id")
            .to_string()
    };
    let mut cut = lines.len() / 2;
    while id(lines[cut]) == id(lines[cut - 1]) {
        cut += 1;
    }
    let whole = dir.join("whole.jsonl");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&whole, &g.text).expect("write");
    std::fs::write(&a, lines[..cut].join("\n") + "\n").expect("write");
    std::fs::write(&b, lines[cut..].join("\n") + "\n").expect("write");
    let bin = crate::common::BIN;
    let run = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(bin).args(args).output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let os = |s: &str| std::ffi::OsString::from(s);
    let (pa, pb) = (dir.join("a.partial"), dir.join("b.partial"));
    for (input, part) in [(&a, &pa), (&b, &pb)] {
        run(&[
            &os("analyze"),
            &os("-q"),
            &os("--format"),
            &os("partial"),
            &os("-o"),
            part.as_os_str(),
            input.as_os_str(),
        ]);
    }
    // Both partials name their files; the whole run reads both files too.
    let merged = run(&[
        &os("merge"),
        &os("--format"),
        &os("json"),
        pa.as_os_str(),
        pb.as_os_str(),
    ]);
    let one = run(&[
        &os("analyze"),
        &os("-q"),
        &os("--format"),
        &os("json"),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    let (m, o): (Value, Value) = (
        serde_json::from_slice(&merged).expect("json"),
        serde_json::from_slice(&one).expect("json"),
    );
    assert_eq!(m["cost"], o["cost"]);
    assert_eq!(m["task_results"], o["task_results"]);
    assert!(o["cost"]["total"]["input_tokens"].as_u64().unwrap_or(0) > 0);
}

/// Seconds of `YYYY-MM-DD HH:MM:SS`, counted from year 0 (only differences
/// are used): written apart from the reader's own arithmetic.
fn stamp(ts: &str) -> f64 {
    let (date, time) = ts.split_at(10);
    let d: Vec<i64> = date.split('-').map(|p| p.parse().expect("date")).collect();
    let t: Vec<f64> = time
        .trim()
        .split(':')
        .map(|p| p.parse().expect("time"))
        .collect();
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut days: i64 = (0..d[0]).map(|y| if leap(y) { 366 } else { 365 }).sum();
    for (m, n) in month_days.iter().enumerate().take((d[1] - 1) as usize) {
        days += n + i64::from(m == 1 && leap(d[0]));
    }
    days += d[2] - 1;
    days as f64 * 86_400.0 + t[0] * 3600.0 + t[1] * 60.0 + t[2]
}

#[test]
fn task_log_seconds_and_results_equal_the_logs() {
    let logs = common::path("tasklogs/logs");
    let bin = crate::common::BIN;
    let replay = Command::new(bin)
        .args(["replay", "--format", "jsonl"])
        .arg(&logs)
        .output()
        .expect("runs");
    assert!(replay.status.success());
    // Each log's steps and result, by task id.
    let mut steps: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut files: Vec<(String, String)> = Vec::new();
    let (mut tasks, mut passed) = (0u64, 0u64);
    for entry in std::fs::read_dir(&logs).expect("logs") {
        let name = entry
            .expect("entry")
            .file_name()
            .into_string()
            .expect("utf-8");
        let stem = name.strip_suffix(".zst").expect("zstd");
        let doc: Value =
            serde_json::from_str(&common::read_to_string(&format!("tasklogs/logs/{stem}")))
                .expect("a task log");
        match doc["status"].as_str() {
            Some("success") => {
                tasks += 1;
                passed += 1;
            }
            Some("failed") => tasks += 1,
            _ => {}
        }
        let id = doc["task_id"].as_str().expect("task_id").to_string();
        files.push((id.clone(), name.clone()));
        steps.insert(id, doc["step_logs"].as_array().expect("steps").clone());
    }
    // A rolled-back turn upstream popped from its history is the log's own
    // verdict and names its LLM call's step; per file (`--group-by file`),
    // where every discarded attempt is such a one, their seconds are known
    // from the file alone.
    let mut per_task: BTreeMap<String, (f64, u64, bool)> = BTreeMap::new();
    for line in String::from_utf8_lossy(&replay.stdout).lines() {
        let v: Value = serde_json::from_str(line).expect("verdict");
        if !matches!(v["outcome"].as_str(), Some("rollback" | "end")) {
            continue;
        }
        let id = v["trace_id"].as_str().expect("id").to_string();
        let e = per_task.entry(id.clone()).or_insert((0.0, 0, true));
        match v["logged"]["step"].as_u64() {
            Some(step) => {
                let s = &steps[&id];
                let at = |i: usize| stamp(s[i]["timestamp"].as_str().expect("timestamp"));
                e.0 += at(step as usize) - at(step as usize - 1);
                e.1 += 1;
            }
            None => e.2 = false,
        }
    }
    let grouped = Command::new(bin)
        .args(["analyze", "-q", "--format", "json", "--group-by", "file"])
        .arg(&logs)
        .output()
        .expect("runs");
    let grouped: Value = serde_json::from_slice(&grouped.stdout).expect("JSON");
    let mut checked = 0;
    for item in grouped["groups"]["items"].as_array().expect("groups") {
        let key = item["key"].as_str().expect("key");
        let Some((id, _)) = files.iter().find(|(_, f)| key.ends_with(f.as_str())) else {
            panic!("group {key} is one of the logs");
        };
        let Some((want, n, all_logged)) = per_task.get(id) else {
            continue;
        };
        if !all_logged {
            continue;
        }
        let d = &item["cost"]["discarded"];
        assert_eq!(d["known"]["seconds"], json!(n), "{key}");
        let got = d["seconds"].as_f64().expect("seconds");
        assert!((got - want).abs() < 1e-6, "{key}: {got} vs {want}");
        checked += 1;
    }
    assert!(checked > 20, "{checked} logs checked");
    let report = analyze_json(&logs);
    let total = &report["cost"]["total"];
    assert_eq!(
        total["known"]["seconds"], total["attempts"],
        "every call timed"
    );
    assert_eq!(
        total["known"]["input_tokens"],
        json!(0),
        "task logs record no tokens"
    );
    let r = &report["task_results"];
    assert_eq!(
        (r["tasks"].clone(), r["success"].clone()),
        (json!(tasks), json!(passed))
    );
    assert_eq!(r["bases"]["status"], json!(tasks), "no log was judged");
}

#[test]
fn diff_compares_success_and_cost_and_lists_flips() {
    let (a, b) = (generate(25), generate(26));
    let dir = common::scratch("cost-diff");
    let (pa, pb) = (dir.join("base.jsonl"), dir.join("new.jsonl"));
    std::fs::write(&pa, &a.text).expect("write");
    std::fs::write(&pb, &b.text).expect("write");
    let out = crate::common::mirotrace()
        .args([
            "diff",
            "-q",
            "--format",
            "json",
            "--iterations",
            "200",
            "--base",
        ])
        .arg(&pa)
        .arg("--new")
        .arg(&pb)
        .args(["--fail-on", "success_rate<-50pp"])
        .output()
        .expect("runs");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let c = &report["comparisons"][0];
    let metric = |id: &str| {
        c["metrics"]
            .as_array()
            .expect("metrics")
            .iter()
            .find(|m| m["metric"] == id)
            .unwrap_or_else(|| panic!("{id} compared"))
            .clone()
    };
    let rate =
        |g: &Generated| g.results.values().filter(|p| **p).count() as f64 / g.results.len() as f64;
    let s = metric("success_rate");
    assert!((s["base"].as_f64().expect("base") - rate(&a)).abs() < 1e-9);
    assert!((s["new"].as_f64().expect("new") - rate(&b)).abs() < 1e-9);
    assert!(s["ci"].is_array(), "an interval");
    let out_tokens: u64 = a.added.iter().filter_map(|x| x.output).sum();
    assert!(
        metric("output_tokens_per_task")["base_counts"][0]
            .as_u64()
            .expect("n")
            <= out_tokens
    );
    let (mut p2f, mut f2p) = (0, 0);
    for (id, pa) in &a.results {
        match (pa, b.results.get(id)) {
            (true, Some(false)) => p2f += 1,
            (false, Some(true)) => f2p += 1,
            _ => {}
        }
    }
    let r = &c["results"];
    assert_eq!(r["pass_to_fail"], json!(p2f));
    assert_eq!(r["fail_to_pass"], json!(f2p));
    assert!(p2f > 0 && f2p > 0);
}
