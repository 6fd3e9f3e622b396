//! Issue 28's causes, rule by rule, on small hand-written traces: each
//! `llm_failed`, `unknown_tool`, `tool_error` and `duplicate_query`
//! verdict gets the kind its rule names (the verdict's `why`), `Mistakes`
//! counts them so that each family adds up to its verdicts, the cap on
//! kinds read from trace text folds the rest into `other` whatever the
//! order, and `analyze`'s JSON carries them under `mistakes.<family>`.

use crate::common;

use mirotrace::detect::Reason;
use mirotrace::metrics::mistakes::{Mistakes, MAX_KINDS, OTHER};
use mirotrace::model::{Origin, Outcome, Trace};
use mirotrace::policy::Policy;
use mirotrace::read::native::parse_line;
use mirotrace::replay::{Replayer, Verdict};
use serde_json::{json, Value};

const PROMPT: &str = "## Server name: tool-google-search\n### Tool name: google_search\n## Server name: tool-reader\n### Tool name: scrape_website\n";

fn call(tool: &str, args: &str) -> String {
    format!("<use_mcp_tool>\n<server_name>tool-google-search</server_name>\n<tool_name>{tool}</tool_name>\n<arguments>\n{args}\n</arguments>\n</use_mcp_tool>")
}

/// The verdicts of one trace of native lines (objects without `trace_id`).
fn replay(lines: &[Value]) -> Vec<Verdict> {
    replay_with(Policy::default(), lines)
}

/// [`replay`] under `policy`.
fn replay_with(policy: Policy, lines: &[Value]) -> Vec<Verdict> {
    let attempts = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut l = l.clone();
            l["trace_id"] = json!("t");
            let origin = Origin {
                file: "hand.jsonl".into(),
                line: i as u64 + 1,
            };
            parse_line(&l.to_string(), origin).expect("a native line")
        })
        .collect();
    Replayer::new(policy).replay(&Trace::new("t", attempts))
}

/// The `why` of each verdict's JSON line (`null` without one).
fn whys(vs: &[Verdict]) -> Vec<Value> {
    vs.iter()
        .map(|v| serde_json::from_str::<Value>(&v.to_json_line()).expect("json")["why"].clone())
        .collect()
}

fn kinds(vs: &[Verdict]) -> Vec<String> {
    whys(vs)
        .iter()
        .map(|w| w["kind"].as_str().unwrap_or("-").to_string())
        .collect()
}

#[test]
fn failed_calls_name_their_cause() {
    let vs = replay(&[
        json!({"content": ""}),
        json!({"content": "x", "finish_reason": "content_filter"}),
        json!({"content": "x", "finish_reason": ""}),
        json!({"llm_error": "Error code: 429 - rate limit exceeded"}),
        json!({"llm_error": "Request timed out."}),
        json!({"llm_error": "Error code: 400 - This model's maximum context length is 131072 tokens"}),
        json!({"content": "x", "tool_calls": 5}),
        json!({"content": "done"}),
    ]);
    assert!(vs[..7].iter().all(|v| v.outcome == Outcome::LlmFailed));
    let k = kinds(&vs);
    assert_eq!(
        k[..7],
        [
            "empty_text",
            "unsupported_finish:content_filter",
            "unsupported_finish:(empty)",
            "error:rate_limit",
            "error:timeout",
            "error:context_length",
            "parser_raised:TypeError",
        ]
    );
    assert_eq!(k[7], "-", "a final answer has no why");
    let w = whys(&vs);
    assert_eq!(w[1]["finish_reason"], "content_filter");
    assert_eq!(w[3]["error"], "Error code: 429 - rate limit exceeded");
    assert_eq!(w[6]["exception"], "TypeError");
}

#[test]
fn an_unknown_tool_is_named_with_the_nearest_listed_one() {
    let vs = replay(&[
        json!({"system_prompt": PROMPT, "content": call("web_search", r#"{"q": "a"}"#),
               "tool_results": [{"result": "Unknown tool: web_search"}]}),
        json!({"content": call("google_search", r#"{"q": "b"}"#),
               "tool_results": [{"result": "Unknown tool: google_search"}]}),
        json!({"content": "done"}),
    ]);
    assert_eq!(vs[0].reason, Some(Reason::UnknownTool));
    let w = whys(&vs);
    assert_eq!(w[0]["kind"], "web_search~google_search");
    assert_eq!(
        (&w[0]["tool"], &w[0]["distance"]),
        (&json!("web_search"), &json!(6))
    );
    // Listed in the prompt (under another server): the kind says so;
    // the prompt is the session's, from an earlier line.
    assert_eq!(w[1]["kind"], "google_search@wrong_server");
    assert_eq!(w[1]["distance"], 0);
    let bare = replay(&[
        json!({"content": call("x", "{}"), "tool_results": [{"result": "Unknown tool: x"}]}),
    ]);
    assert_eq!(kinds(&bare)[0], "x", "no listed tools: the name alone");
}

#[test]
fn tool_errors_fall_into_masked_classes() {
    // Distinct queries: a repeat would be a duplicate first.
    let result = |t: &str| {
        let q = format!(r#"{{"q": "{}"}}"#, t.len());
        json!({"content": call("google_search", &q), "tool_results": [{"result": t}]})
    };
    let vs = replay(&[
        result("Error executing tool google_search: timeout after 60s\nTraceback (most recent call last):"),
        result("Error executing tool google_search: timeout after 5s"),
        result("Error executing tool google_search: HTTP 503 for https://api.example.com/v1?q=2"),
        json!({"content": "done"}),
    ]);
    assert!(vs[..3].iter().all(|v| v.reason == Some(Reason::ToolError)));
    let k = kinds(&vs);
    assert_eq!(k[0], "google_search: timeout after <n>s");
    assert_eq!(k[0], k[1], "numbers masked: one class");
    assert_eq!(k[2], "google_search: HTTP <n> for <url>");
    assert_eq!(
        whys(&vs)[0]["error"],
        "Error executing tool google_search: timeout after 60s",
        "the first line, as given"
    );
}

#[test]
fn a_repeat_says_how_its_first_run_went() {
    let search = |q: &str, result: &str| json!({"content": call("google_search", &format!(r#"{{"q": "{q}"}}"#)), "tool_results": [{"result": result}]});
    let found = r#"{"organic": [{"title": "t"}]}"#;
    let vs = replay(&[
        search("a", found),
        search("a", found),
        search("b", r#"{"organic": []}"#),
        search("b", found),
        search("d", found),
        search("c", "Error executing tool google_search: boom"),
        search("c", found),
        json!({"content": "done"}),
    ]);
    let reasons: Vec<Option<Reason>> = vs.iter().map(|v| v.reason).collect();
    use Reason::*;
    assert_eq!(
        reasons,
        [
            None,
            Some(DuplicateQuery),
            Some(EmptySearch),
            Some(DuplicateQuery),
            None,
            Some(ToolError),
            Some(DuplicateQuery),
            None
        ]
    );
    let k = kinds(&vs);
    // The empty and the failed first runs rolled their attempts back: the
    // model never saw them, and the layer rolls the retry back itself.
    assert_eq!(
        (k[1].as_str(), k[3].as_str(), k[6].as_str()),
        ("after_success", "after_rolled_back", "after_rolled_back")
    );
    assert_eq!(whys(&vs)[1]["first_line"], 1);
    assert_eq!(whys(&vs)[3]["first_line"], 3);

    // At the limit (2 here) an empty or failed result is let through: its
    // attempt is kept, and a repeat retries what the model saw.
    let policy = Policy {
        rollback_limit: 2,
        ..Policy::default()
    };
    let leaked = json!({"content": "<use_mcp_tool> cut"});
    let vs = replay_with(
        policy,
        &[
            leaked,
            search("b", r#"{"organic": []}"#),
            search("b", found),
            search("c", "Error executing tool google_search: boom"),
            search("c", found),
            json!({"content": "done"}),
        ],
    );
    let reasons: Vec<Option<Reason>> = vs.iter().map(|v| v.reason).collect();
    assert_eq!(
        reasons,
        [
            Some(FormatError),
            None,
            Some(DuplicateQuery),
            None,
            Some(DuplicateQuery),
            None
        ]
    );
    let k = kinds(&vs);
    assert_eq!(
        (k[2].as_str(), k[4].as_str()),
        ("after_empty", "after_error")
    );
}

/// Issue 39: a turn whose first call succeeds and whose second fails is
/// rolled back; with upstream's per-call commit the first query stays
/// recorded and its retry is rolled back as a duplicate the layer caused
/// (`after_rolled_back`), up to the limit, where it is let through with
/// the same `why`. With `query_commit = "per_turn"` the retry runs.
#[test]
fn a_repeat_of_a_rolled_back_turns_query_is_the_layers() {
    use mirotrace::policy::QueryCommit;
    let two = |first: &str, second: &str| {
        json!({
            "content": format!("{}\n{}", call("google_search", first), call("google_search", second)),
            "tool_results": [
                {"result": r#"{"organic": [{"title": "t"}]}"#},
                {"result": "Error executing tool google_search: boom"}
            ]
        })
    };
    let one = |q: &str| {
        json!({
            "content": call("google_search", &format!(r#"{{"q": "{q}"}}"#)),
            "tool_results": [{"result": r#"{"organic": [{"title": "t"}]}"#}]
        })
    };
    let lines = [
        two(r#"{"q": "a"}"#, r#"{"q": "x"}"#),
        one("a"),
        one("a"),
        one("a"),
        one("a"),
        json!({"content": "done"}),
    ];
    let vs = replay(&lines);
    let outcomes: Vec<(String, Option<Reason>)> = vs
        .iter()
        .map(|v| (v.outcome.name().to_string(), v.reason))
        .collect();
    use Reason::*;
    let rb = |r| ("rollback".to_string(), Some(r));
    assert_eq!(
        outcomes[..4],
        [
            rb(ToolError),
            rb(DuplicateQuery),
            rb(DuplicateQuery),
            rb(DuplicateQuery)
        ]
    );
    assert_eq!(outcomes[4], ("ok".to_string(), None), "let through");
    let k = kinds(&vs);
    assert!(k[1..=4].iter().all(|k| k == "after_rolled_back"), "{k:?}");
    assert_eq!(whys(&vs)[4]["first_line"], 1);
    // The let-through ran in a kept attempt: a further repeat is the model's.
    let mut more = lines.to_vec();
    more.insert(5, one("a"));
    assert_eq!(kinds(&replay(&more))[5], "after_success");

    // Upstream pull request #121: nothing of the rolled-back turn was
    // recorded, so the retry runs; a repeat after it is the model's.
    let per_turn = Policy {
        query_commit: QueryCommit::PerTurn,
        ..Policy::default()
    };
    let vs = replay_with(per_turn, &lines);
    let reasons: Vec<Option<Reason>> = vs.iter().map(|v| v.reason).collect();
    assert_eq!(reasons[..3], [Some(ToolError), None, Some(DuplicateQuery)]);
    assert_eq!(kinds(&vs)[2], "after_success");

    // A query asked twice in one attempt stays the model's duplicate,
    // though that attempt is rolled back.
    let vs = replay(&[
        two(r#"{"q": "a"}"#, r#"{"q": "a"}"#),
        json!({"content": "done"}),
    ]);
    assert_eq!(vs[0].reason, Some(DuplicateQuery));
    assert_eq!(kinds(&vs)[0], "after_success");
}

/// Each family's kinds add up to its verdicts (llm_failed attempts; the
/// reason's rollbacks and ends), on the conformance corpus.
#[test]
fn each_family_adds_up_to_its_verdicts() {
    let text = common::read_to_string("replay/dev.jsonl");
    let replayer = Replayer::new(Policy::default());
    let mut m = Mistakes::default();
    let mut want = [0u64; 4];
    let mut by_trace: std::collections::BTreeMap<String, Vec<_>> = Default::default();
    for (i, line) in text.lines().enumerate() {
        let origin = Origin {
            file: "dev.jsonl".into(),
            line: i as u64 + 1,
        };
        if let Ok(a) = parse_line(line, origin) {
            by_trace.entry(a.trace_id.to_string()).or_default().push(a);
        }
    }
    for (id, attempts) in by_trace {
        for v in replayer.replay(&Trace::new(id.as_str(), attempts)) {
            m.add(&v);
            let counted = matches!(v.outcome, Outcome::Rollback | Outcome::End);
            let slot = match v.reason {
                _ if v.outcome == Outcome::LlmFailed => Some(0),
                Some(UnknownTool) if counted => Some(1),
                Some(ToolError) if counted => Some(2),
                Some(DuplicateQuery) if counted => Some(3),
                _ => None,
            };
            if let Some(s) = slot {
                want[s] += 1;
            }
        }
    }
    use Reason::*;
    let families = m.families();
    let names: Vec<&str> = families.iter().map(|f| f.0).collect();
    assert_eq!(
        names,
        [
            "format_error",
            "json_fixes",
            "llm_failed",
            "unknown_tool",
            "tool_error",
            "duplicate_query",
            "owner"
        ]
    );
    for (i, (name, counts)) in families[2..6].iter().enumerate() {
        assert!(want[i] > 0, "{name}: the corpus has some");
        assert_eq!(counts.values().sum::<u64>(), want[i], "{name}");
        assert!(
            !counts.contains_key("unclassified"),
            "{name}: replayed verdicts all have a kind"
        );
    }
    // Every tool_error and llm_failed verdict has one owner, and replayed
    // ones are all classified.
    assert_eq!(m.owner.values().sum::<u64>(), want[0] + want[2]);
    assert!(m.owner.keys().all(|k| !k.ends_with(".unclassified")));
    assert_eq!(
        m.owned_by("model") + m.owned_by("environment"),
        want[0] + want[2]
    );
    for (agent, keys) in &m.by_agent {
        for key in keys.keys() {
            let (family, _) = key.split_once('.').expect("<family>.<kind>");
            assert!(names.contains(&family), "{agent}: {key}");
        }
    }
}

/// Past [`MAX_KINDS`] distinct classes the rest is `other`: the same
/// kinds are kept, and the counts add up, in any order and any split.
#[test]
fn open_ended_kinds_are_capped_the_same_way_in_any_order() {
    let n = MAX_KINDS + 40;
    let lines: Vec<Value> = (0..n)
        .map(|i| {
            let word: String = (0..3).map(|k| (b'a' + ((i / 26usize.pow(k)) % 26) as u8) as char).collect();
            json!({"content": call("google_search", r#"{"q": "a"}"#),
                   "tool_results": [{"result": format!("Error executing tool google_search: {word} failed")}]})
        })
        .collect();
    // One verdict per trace, so that every error is a rollback.
    let verdicts: Vec<Verdict> = lines
        .iter()
        .map(|l| replay(std::slice::from_ref(l)).remove(0))
        .collect();
    let mut whole = Mistakes::default();
    for v in &verdicts {
        whole.add(v);
    }
    assert_eq!(
        whole.tool_error.len(),
        MAX_KINDS + 1,
        "{:?}",
        whole.tool_error.keys()
    );
    assert_eq!(whole.tool_error.values().sum::<u64>(), n as u64);
    assert_eq!(whole.tool_error[OTHER], 40);
    let agent = &whole.by_agent["main"];
    assert_eq!(agent["tool_error.other"], 40);
    assert!(whole.examples.contains_key("tool_error.other"));
    // Reversed, in three interleaved parts merged.
    let mut parts = vec![
        Mistakes::default(),
        Mistakes::default(),
        Mistakes::default(),
    ];
    for (i, v) in verdicts.iter().rev().enumerate() {
        parts[i % 3].add(v);
    }
    let mut merged = parts.pop().expect("a part");
    for p in parts.iter().rev() {
        merged.merge(p);
    }
    assert_eq!(merged, whole);
}

#[test]
fn analyze_json_has_every_family() {
    let dir = std::env::temp_dir().join(format!("mirotrace-causes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("t.jsonl");
    let lines = [
        json!({"trace_id": "a", "llm_error": "Connection error."}),
        json!({"trace_id": "a", "system_prompt": PROMPT, "content": call("web_search", "{}"), "tool_results": [{"result": "Unknown tool: web_search"}]}),
        json!({"trace_id": "a", "content": call("google_search", r#"{"q": "z"}"#), "tool_results": [{"result": "Error executing tool google_search: 429 Too Many Requests"}]}),
        json!({"trace_id": "a", "content": "done"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).expect("write");
    let out = common::mirotrace()
        .args(["analyze", "-q", "--format", "json"])
        .arg(&file)
        .output()
        .expect("runs");
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let m = &v["mistakes"];
    assert_eq!(m["llm_failed"], json!({"error:connection": 1}));
    assert_eq!(m["unknown_tool"], json!({"web_search~google_search": 1}));
    assert_eq!(
        m["tool_error"],
        json!({"google_search: <n> Too Many Requests": 1})
    );
    assert_eq!(m["duplicate_query"], json!({}));
    assert_eq!(
        m["by_agent"]["main"]["unknown_tool.web_search~google_search"],
        1
    );
    assert_eq!(m["examples"]["llm_failed.error:connection"]["line"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_writes_the_examples_of_one_kind() {
    let dir = std::env::temp_dir().join(format!("mirotrace-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("t.jsonl");
    let lines = [
        json!({"trace_id": "a", "system_prompt": PROMPT, "llm_error": "Connection error."}),
        json!({"trace_id": "a", "content": call("google_search", r#"{"q": "z"}"#), "tool_results": [{"result": "Error executing tool google_search: 429 Too Many Requests"}]}),
        json!({"trace_id": "a", "llm_error": "Request timed out."}),
        json!({"trace_id": "a", "content": "done"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).expect("write");
    let export = |kind: Option<&str>, format: &str| {
        let mut c = common::mirotrace();
        c.args(["export", "-q", "--format", format]);
        if let Some(k) = kind {
            c.args(["--kind", k]);
        }
        c.arg(&file).output().expect("runs")
    };
    let out = export(
        Some("tool_error.google_search: <n> Too Many Requests"),
        "examples",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(got.len(), 1);
    let e = &got[0];
    assert_eq!((&e["trace_id"], &e["line"]), (&json!("a"), &json!(2)));
    assert_eq!(
        e["system_prompt"], PROMPT,
        "the session's prompt, from line 1"
    );
    assert!(e["text"]
        .as_str()
        .is_some_and(|t| t.contains("<tool_name>google_search")));
    assert_eq!(e["verdict"]["calls"][0]["tool_name"], "google_search");
    assert_eq!(
        e["verdict"]["why"]["kind"],
        "google_search: <n> Too Many Requests"
    );
    let out = export(Some("llm_failed.error:timeout"), "examples");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    // Refused, exit 2, with what is known.
    for (kind, format, says) in [
        (Some("format_error.cutoff"), "examples", "cut_off"),
        (
            Some("tool_error.nope"),
            "examples",
            "google_search: <n> Too Many Requests",
        ),
        (Some("nonsense.x"), "examples", "format_error, json_fixes"),
        (None, "examples", "--kind"),
        (Some("format_error.cut_off"), "atif", "--format examples"),
    ] {
        let out = export(kind, format);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{kind:?}: {err}");
        assert!(err.contains(says), "{kind:?}: {err}");
        assert!(out.stdout.is_empty(), "{kind:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kind's share is compared by `diff` and gated by `--fail-on`.
#[test]
fn diff_gates_on_a_kind_share() {
    let dir = std::env::temp_dir().join(format!("mirotrace-kind-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let side = |name: &str, cut_every: usize| {
        let mut text = String::new();
        for i in 0..40 {
            let reply = if i % cut_every == 0 {
                "<use_mcp_tool>\n<server_name>s</server_name>\n<tool_name>t"
            } else {
                "I would write <use_mcp_tool> here, in prose."
            };
            for line in [
                json!({"trace_id": format!("{name}{i}"), "content": reply}),
                json!({"trace_id": format!("{name}{i}"), "content": "done"}),
            ] {
                text.push_str(&format!("{line}\n"));
            }
        }
        let path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, text).expect("write");
        path
    };
    let (base, new) = (side("b", 10), side("n", 2));
    let diff = |extra: &[&str]| {
        common::mirotrace()
            .args(["diff", "-q", "--iterations", "300", "--base"])
            .arg(&base)
            .arg("--new")
            .arg(&new)
            .args(extra)
            .output()
            .expect("runs")
    };
    let out = diff(&["--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let shares = &v["comparisons"][0]["kind_shares"];
    let cut = shares
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|m| m["metric"] == "format_error_share.cut_off")
        })
        .expect("the cut_off share");
    assert_eq!((&cut["base"], &cut["new"]), (&json!(0.1), &json!(0.5)));
    assert_eq!(cut["base_counts"], json!([4, 40]));
    assert_eq!(
        diff(&["--fail-on", "format_error_share.cut_off>+20pp"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        diff(&["--fail-on", "format_error_share.stray_tag>+1pp"])
            .status
            .code(),
        Some(0)
    );
    let bad = diff(&["--fail-on", "format_error_share.cutoff>+1pp"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("format_error_share.<kind>"));
    let _ = std::fs::remove_dir_all(&dir);
}
