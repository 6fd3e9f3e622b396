//! `mirotrace keywords` on generated, labelled traces: refusal variants and
//! other languages that upstream's list misses, false friends that a good
//! list must not flag, ordinary tool calls and final answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

fn bin() -> Command {
    crate::common::mirotrace()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mirotrace")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("kw-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn ok_json(o: &Output) -> Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON report")
}

/// Deterministic xorshift: the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Refusals upstream's list catches (curly apostrophes, its exact phrases).
const CAUGHT: &[&str] = &[
    "I\u{2019}m sorry, but I can\u{2019}t help with that request.",
    "I'm sorry, I cannot solve this problem with the tools available.",
    "Given the time constraint, I will stop here.",
];
/// Refusals upstream's list misses, by family: (family marker, sentences).
const MISSED: &[(&str, &[&str])] = &[
    (
        "straight",
        &[
            "I'm sorry, but I can't help with that request.",
            "I'm sorry, but I can't help with this one.",
        ],
    ),
    (
        "assist",
        &[
            "I cannot assist with this request.",
            "Unfortunately, I cannot assist with that.",
        ],
    ),
    (
        "zh-wufa",
        &["抱歉，我无法完成这个任务。", "抱歉，我无法完成该请求。"],
    ),
    (
        "zh-buneng",
        &[
            "很抱歉，我不能提供这方面的帮助。",
            "很抱歉，我不能回答这个问题。",
        ],
    ),
];
/// Look like refusals, are not: hedged answers, apologies before a retry.
const FALSE_FRIENDS: &[&str] = &[
    "I'm sorry for the confusion, let me search again.",
    "I'm sorry for the confusion earlier. The answer is @A.",
    "I'm sorry, but I can't be fully certain; my best estimate is \\boxed{@A}.",
    "I\u{2019}m sorry, but I can\u{2019}t be fully certain; my best estimate is \\boxed{@A}.",
    "抱歉，我无法完全确定，但答案可能是 \\boxed{@A}。",
    "Time constraints aside, the evidence points to \\boxed{@A}.",
];
const FINALS: &[&str] = &[
    "Based on the evidence, the answer is \\boxed{@A}.",
    "The answer is @A.",
    "根据搜索结果，答案是@A。",
    "## Findings\n\n- The source states @A.\n- Confidence: medium.",
];
const TOPICS: &[&str] = &[
    "Ada Lovelace",
    "the Eiffel Tower height",
    "长江 全长",
    "Python 3.12 release date",
    "Marie Curie Nobel prizes",
    "the boiling point of ethanol",
    "曹雪芹 生卒年",
    "GDP of Kenya",
];
const ANSWERS: &[&str] = &["Paris", "42", "1911", "曹雪芹", "Marie Curie", "6,300 km"];
const THOUGHTS: &[&str] = &[
    "Let me search for {T} first.",
    "I need to find {T}.",
    "Sorry, the previous search was not useful. I'll try another query for {T}.",
    "用户问的是{T}，我需要先搜索一下。",
];

struct Line {
    json: Value,
    refusal: bool,
}

fn tool_call(rng: &mut Rng, trace: usize, k: usize) -> Value {
    let topic = rng.pick(TOPICS);
    let thought = rng.pick(THOUGHTS).replace("{T}", topic);
    let lead = rng.pick(&[
        "I'll search for it.",
        "Let me run a tool.",
        "我来查一下。",
        "",
    ]);
    let content = format!(
        "<think>\n{thought}\n</think>\n\n{lead}\n\n<use_mcp_tool>\n<server_name>tool-google-search</server_name>\n<tool_name>google_search</tool_name>\n<arguments>\n{{\"q\": \"{topic} {trace} {k}\"}}\n</arguments>\n</use_mcp_tool>"
    );
    json!({"content": content, "tool_results": [{"result": "{\"organic\": [{\"title\": \"x\"}]}"}]})
}

fn answer(rng: &mut Rng, template: &str) -> Value {
    let text = template.replace("@A", rng.pick(ANSWERS));
    let think = rng.pick(&[
        "",
        "<think>\nThis is hard.\n</think>\n\n",
        "<think>\nI have enough.\n</think>\n\n",
    ]);
    json!({ "content": format!("{think}{text}") })
}

/// Traces of 3–6 attempts: tool calls, at most one refusal or false friend
/// (then more tool calls: a caught refusal is retried), and a final answer.
fn corpus(seed: u64, traces: usize) -> Vec<(String, Line)> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for t in 0..traces {
        let id = format!("t{seed}-{t:03}");
        let mut lines: Vec<Line> = Vec::new();
        for k in 0..1 + rng.below(2) {
            lines.push(Line {
                json: tool_call(&mut rng, t, k),
                refusal: false,
            });
        }
        match rng.below(10) {
            0..=1 => {
                let s = rng.pick(CAUGHT);
                lines.push(Line {
                    json: answer(&mut rng, s),
                    refusal: true,
                });
            }
            2..=5 => {
                let (_, family) = MISSED[rng.below(MISSED.len())];
                let s = rng.pick(family);
                lines.push(Line {
                    json: answer(&mut rng, s),
                    refusal: true,
                });
            }
            6..=8 => {
                let s = rng.pick(FALSE_FRIENDS);
                let mut j = answer(&mut rng, s);
                if s.contains("search again") && rng.below(2) == 0 {
                    // The apology comes with a tool call.
                    let call = tool_call(&mut rng, t, 9);
                    let content = format!(
                        "{}\n\n{}",
                        j["content"].as_str().unwrap(),
                        call["content"].as_str().unwrap()
                    );
                    j = json!({"content": content, "tool_results": call["tool_results"].clone()});
                }
                lines.push(Line {
                    json: j,
                    refusal: false,
                });
            }
            _ => {}
        }
        lines.push(Line {
            json: tool_call(&mut rng, t, 5),
            refusal: false,
        });
        let fin = rng.pick(FINALS);
        lines.push(Line {
            json: answer(&mut rng, fin),
            refusal: false,
        });
        for l in lines {
            out.push((id.clone(), l));
        }
    }
    out
}

/// Writes the corpus and its labels; returns (traces, labels) paths.
fn write_corpus(dir: &Path, seed: u64, traces: usize) -> (PathBuf, PathBuf, Vec<(String, Line)>) {
    let lines = corpus(seed, traces);
    let mut traces_text = String::new();
    let mut labels_text = String::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (id, l) in &lines {
        let mut j = l.json.clone();
        j["trace_id"] = json!(id);
        traces_text.push_str(&j.to_string());
        traces_text.push('\n');
        let i = index.entry(id.clone()).or_insert(0);
        labels_text.push_str(
            &json!({"trace_id": id, "session": "main", "index": *i, "refusal": l.refusal})
                .to_string(),
        );
        labels_text.push('\n');
        *i += 1;
    }
    let t = dir.join(format!("traces-{seed}.jsonl"));
    let l = dir.join(format!("labels-{seed}.jsonl"));
    std::fs::write(&t, traces_text).unwrap();
    std::fs::write(&l, labels_text).unwrap();
    (t, l, lines)
}

const UPSTREAM: [&str; 3] = [
    "time constraint",
    "I\u{2019}m sorry, but I can\u{2019}t",
    "I'm sorry, I cannot solve",
];

fn list<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["lists"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no list {name} in {report}"))
}

fn text_of(l: &Line) -> &str {
    l.json["content"].as_str().unwrap()
}

#[test]
fn upstream_precision_and_recall_match_a_direct_count() {
    let dir = temp_dir("upstream");
    let (traces, labels, lines) = write_corpus(&dir, 7, 200);
    let o = run(&[
        "keywords",
        traces.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let r = ok_json(&o);
    // Count independently: an attempt without tool call whose text holds an
    // upstream keyword, exactly.
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    for (_, l) in &lines {
        let eligible = l.json.get("tool_results").is_none();
        let flagged = eligible && UPSTREAM.iter().any(|k| text_of(l).contains(k));
        match (l.refusal, flagged) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fn_ += 1,
            _ => {}
        }
    }
    assert!(
        tp > 0 && fp > 0 && fn_ > 0,
        "the corpus exercises every cell"
    );
    let cur = list(&r, "current");
    assert_eq!(
        (cur["tp"].as_u64(), cur["fp"].as_u64(), cur["fn"].as_u64()),
        (Some(tp), Some(fp), Some(fn_))
    );
    let p = tp as f64 / (tp + fp) as f64;
    let rc = tp as f64 / (tp + fn_) as f64;
    assert!((cur["precision"].as_f64().unwrap() - p).abs() < 1e-9);
    assert!((cur["recall"].as_f64().unwrap() - rc).abs() < 1e-9);
    assert!((cur["f1"].as_f64().unwrap() - 2.0 * p * rc / (p + rc)).abs() < 1e-9);
    assert_eq!(cur["flagged"].as_u64(), Some(tp + fp));
    assert_eq!(r["labels"]["not_found"].as_u64(), Some(0));
    // Every false negative names its line and shows the answer.
    let fns = cur["false_negatives"].as_array().unwrap();
    assert_eq!(fns.len() as u64, fn_);
    assert!(fns.iter().all(|n| n["trace_id"].is_string()
        && n["index"].is_u64()
        && !n["excerpt"].as_str().unwrap().is_empty()));
}

#[test]
fn suggestions_find_the_missed_phrasings_and_beat_upstream() {
    let dir = temp_dir("suggest");
    let (traces, labels, _) = write_corpus(&dir, 11, 300);
    let t = traces.to_str().unwrap();
    let o = run(&["keywords", t, "--suggest", "--format", "json"]);
    let r = ok_json(&o);
    let suggestions = r["suggestions"].as_array().unwrap();
    let top: Vec<String> = suggestions
        .iter()
        .take(10)
        .map(|s| s["phrase"].as_str().unwrap().to_string())
        .collect();
    let fold = |s: &str| s.replace('\u{2019}', "'").to_lowercase();
    let false_friends: Vec<String> = FALSE_FRIENDS.iter().map(|s| fold(s)).collect();
    // Each missed family is identified by some top-10 phrase: one found in
    // the family's sentences and in no false friend.
    for (family, sentences) in MISSED {
        let hit = top.iter().any(|p| {
            let p = fold(p);
            sentences.iter().any(|s| fold(s).contains(&p))
                && !false_friends.iter().any(|f| f.contains(&p))
        });
        assert!(hit, "family {family} not among the top suggestions {top:?}");
    }
    for s in suggestions {
        assert!(s["count"].as_u64().unwrap() >= 3);
        assert!(s["score"].as_f64().unwrap() > 0.0);
        let example = fold(s["example"].as_str().unwrap());
        assert!(
            example.contains(&fold(s["phrase"].as_str().unwrap())),
            "{s}"
        );
    }

    // `--format text` is a list file as is; the top 10 beat upstream's list.
    let o = run(&[
        "keywords",
        t,
        "--suggest",
        "--format",
        "text",
        "--top",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    // The same ranking, without phrases that carry no refusal marker.
    let listed: Vec<String> = suggestions
        .iter()
        .take(10)
        .filter(|s| s["marker"] != "none")
        .map(|s| s["phrase"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), listed);
    let built = dir.join("mined.txt");
    std::fs::write(&built, &text).unwrap();
    let o = run(&[
        "keywords",
        t,
        "--list",
        built.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let r = ok_json(&o);
    let (cur, mined) = (list(&r, "current"), list(&r, "mined"));
    let f1 = |l: &Value| l["f1"].as_f64().unwrap();
    assert!(
        f1(mined) > f1(cur) + 0.2,
        "mined {} vs upstream {}",
        f1(mined),
        f1(cur)
    );
    // False friends stay unflagged: no apology-before-retry among the false positives.
    let fps = mined["false_positives"].as_array().unwrap();
    assert!(
        !fps.iter()
            .any(|n| n["excerpt"].as_str().unwrap().contains("confusion")),
        "{fps:?}"
    );
    // Flagging more refusals changes the replay: more refusal rollbacks.
    assert!(mined["refusal_rollbacks"].as_u64() > cur["refusal_rollbacks"].as_u64());
    assert!(mined["newly_flagged"].as_array().unwrap().len() > 10);
}

#[test]
fn suggestions_are_deterministic_and_respect_min_support() {
    let dir = temp_dir("determinism");
    let (traces, _, _) = write_corpus(&dir, 5, 80);
    let t = traces.to_str().unwrap();
    let a = run(&["keywords", t, "--suggest", "--format", "json", "-j", "1"]);
    let b = run(&["keywords", t, "--suggest", "--format", "json", "-j", "4"]);
    assert_eq!(a.stdout, b.stdout);
    let r = ok_json(&run(&[
        "keywords",
        t,
        "--suggest",
        "--format",
        "json",
        "--min-support",
        "1000",
    ]));
    assert_eq!(r["suggestions"].as_array().unwrap().len(), 0);
}

#[test]
fn flips_near_misses_and_the_replay_effect() {
    let dir = temp_dir("flips");
    let traces = dir.join("t.jsonl");
    let lines = [
        json!({"trace_id": "a", "content": "I'm sorry, but I can't help with that."}),
        json!({"trace_id": "a", "content": "The answer is 4."}),
        json!({"trace_id": "b", "content": "Given the TIME CONSTRAINT, I stop."}),
        json!({"trace_id": "c", "content": "I\u{2019}m sorry, but I can\u{2019}t do it."}),
        json!({"trace_id": "c", "content": "Done: \\boxed{1}"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&traces, text).unwrap();
    let cand = dir.join("straight.txt");
    std::fs::write(&cand, "# match: exact\nI'm sorry, but I can't\n").unwrap();
    let t = traces.to_str().unwrap();
    let r = ok_json(&run(&[
        "keywords",
        t,
        "--list",
        cand.to_str().unwrap(),
        "--suggest",
        "--format",
        "json",
    ]));
    let cur = list(&r, "current");
    let s = list(&r, "straight");
    assert_eq!(s["match"], "exact");
    assert_eq!(cur["flagged"], 1);
    assert_eq!(s["flagged"], 1);
    let newly = s["newly_flagged"].as_array().unwrap();
    assert_eq!(newly.len(), 1);
    assert_eq!(
        (
            newly[0]["trace_id"].as_str(),
            newly[0]["session"].as_str(),
            newly[0]["index"].as_u64()
        ),
        (Some("a"), Some("main"), Some(0))
    );
    assert!(newly[0]["excerpt"]
        .as_str()
        .unwrap()
        .contains("I'm sorry, but I can't help"));
    let gone = s["no_longer_flagged"].as_array().unwrap();
    assert_eq!(gone[0]["trace_id"], "c");
    // Upstream: "a" ends at its first line (final); with the candidate it
    // rolls back and the loop reaches line 2. "c" the other way round.
    assert_eq!(cur["refusal_rollbacks"], 1);
    assert_eq!(s["refusal_rollbacks"], 1);
    assert_eq!(cur["reached"], 4);
    assert_eq!(s["reached"], 4);
    let near = r["near_misses"].as_array().unwrap();
    let variants: Vec<(&str, &str)> = near
        .iter()
        .map(|m| {
            (
                m["keyword"].as_str().unwrap(),
                m["variant"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        variants.contains(&(
            "I\u{2019}m sorry, but I can\u{2019}t",
            "I'm sorry, but I can't"
        )),
        "{variants:?}"
    );
    assert!(
        variants.contains(&("time constraint", "TIME CONSTRAINT")),
        "{variants:?}"
    );
    let apostrophe = near
        .iter()
        .find(|m| m["variant"] == "I'm sorry, but I can't")
        .unwrap();
    assert_eq!(apostrophe["variations"], json!(["apostrophe"]));
    assert_eq!(apostrophe["caught"], false);
}

#[test]
fn table_and_usage_errors() {
    let dir = temp_dir("usage");
    let (traces, labels, _) = write_corpus(&dir, 3, 30);
    let t = traces.to_str().unwrap();
    let o = run(&[
        "keywords",
        t,
        "--labels",
        labels.to_str().unwrap(),
        "--suggest",
        "--no-color",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let table = String::from_utf8_lossy(&o.stdout);
    for want in [
        "current",
        "precision",
        "suggested phrases",
        "refusal-eligible",
    ] {
        assert!(table.contains(want), "{want} missing from\n{table}");
    }
    // --format text needs --suggest; a bad labels line names the file and line.
    assert_eq!(
        run(&["keywords", t, "--format", "text"]).status.code(),
        Some(2)
    );
    let bad = dir.join("bad-labels.jsonl");
    std::fs::write(
        &bad,
        "{\"trace_id\": \"x\", \"index\": 0, \"refusal\": true}\n{\"trace_id\": 1}\n",
    )
    .unwrap();
    let o = run(&["keywords", t, "--labels", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad-labels.jsonl") && err.contains("line 2"),
        "{err}"
    );
    let missing = dir.join("nope.txt");
    assert_eq!(
        run(&["keywords", t, "--list", missing.to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn flags_follow_each_lists_replay() {
    // Upstream misses the first refusal, so the loop ends there and never
    // reaches the second one, though it holds upstream's exact keyword.
    let dir = temp_dir("reach");
    let traces = dir.join("t.jsonl");
    let labels = dir.join("l.jsonl");
    let lines = [
        json!({"trace_id": "d", "content": "I'm sorry, but I can't help."}),
        json!({"trace_id": "d", "content": "I\u{2019}m sorry, but I can\u{2019}t help."}),
        json!({"trace_id": "d", "content": "\\boxed{1}"}),
    ];
    std::fs::write(
        &traces,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let label = |i: usize, r: bool| json!({"trace_id": "d", "index": i, "refusal": r}).to_string();
    std::fs::write(
        &labels,
        format!(
            "{}\n{}\n{}\n",
            label(0, true),
            label(1, true),
            label(2, false)
        ),
    )
    .unwrap();
    let cand = dir.join("folded.txt");
    std::fs::write(&cand, "I'm sorry, but I can't\n").unwrap();
    let r = ok_json(&run(&[
        "keywords",
        traces.to_str().unwrap(),
        "--list",
        cand.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(r["eligible"], 3);
    let cur = list(&r, "current");
    assert_eq!(
        (
            cur["flagged"].as_u64(),
            cur["tp"].as_u64(),
            cur["fn"].as_u64()
        ),
        (Some(0), Some(0), Some(2))
    );
    assert_eq!(cur["reached"], 1);
    let folded = list(&r, "folded");
    assert_eq!(
        (
            folded["flagged"].as_u64(),
            folded["tp"].as_u64(),
            folded["tn"].as_u64()
        ),
        (Some(2), Some(2), Some(1))
    );
    assert_eq!(folded["f1"], 1.0);
    let newly: Vec<u64> = folded["newly_flagged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["index"].as_u64().unwrap())
        .collect();
    assert_eq!(newly, vec![0, 1]);
}

/// The miner's memory caps (docs/limits.md) change nothing on the bundled
/// fixtures: the suggestions equal the snapshots taken before they were
/// bounded (`tests/snapshots/keywords__suggest*.snap`), phrases, counts,
/// scores, examples and order. `INSTA_UPDATE=always` rewrites them after a
/// deliberate change (tests/README.md, "Snapshots").
#[test]
fn suggestions_on_the_fixtures_are_unchanged() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/keywords");
    let traces = fixtures.join("traces.jsonl");
    let labels = fixtures.join("labels.jsonl");
    let (t, l) = (traces.to_str().unwrap(), labels.to_str().unwrap());
    let cases: [(&str, Vec<&str>); 3] = [
        ("suggest", vec![]),
        ("suggest-labels", vec!["--labels", l]),
        ("suggest-all", vec!["--min-support", "1", "--top", "200"]),
    ];
    for (name, extra) in cases {
        let mut args = vec!["keywords", t, "--suggest", "--format", "json", "-q"];
        args.extend(extra);
        let r = ok_json(&run(&args));
        assert!(
            !r["suggestions"].as_array().unwrap().is_empty(),
            "{name}: no suggestions"
        );
        let got = json!({"mined": r["mined"], "suggestions": r["suggestions"]});
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        crate::common::snapshot::assert_text("keywords", name, &text);
    }
}
