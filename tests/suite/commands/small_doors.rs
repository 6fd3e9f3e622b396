//! The small doors of issue 41: what a new user meets first when a
//! command finds nothing, guesses wrong or cannot tell what it was given.

use std::process::Output;

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    crate::common::mirotrace()
        .args(args)
        .output()
        .expect("run mirotrace")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixtures() -> Vec<String> {
    ["model-a.jsonl", "model-b.jsonl"]
        .iter()
        .map(|n| crate::common::fixture(n))
        .collect()
}

/// `export --kind` takes every reason analyze counts rollbacks under (a
/// refusal included) and refusals by keyword, writes what analyze counts,
/// and says how many it wrote — none included.
#[test]
fn export_takes_what_analyze_lists_and_says_how_many() {
    let inputs = fixtures();
    let files: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let report: Value = serde_json::from_slice(
        &run(&[&["analyze", "--format", "json"][..], &files].concat()).stdout,
    )
    .expect("JSON");
    let reasons = report["rollback_reasons"].as_object().expect("reasons");
    assert!(reasons.values().any(|n| n.as_u64() > Some(0)));
    for (reason, n) in reasons {
        let n = n.as_u64().unwrap_or(0);
        let o = run(&[
            &["export", "--format", "examples", "--kind", reason][..],
            &files,
        ]
        .concat());
        assert_eq!(o.status.code(), Some(0), "{reason}: {}", stderr(&o));
        let lines = String::from_utf8_lossy(&o.stdout).lines().count() as u64;
        assert_eq!(lines, n, "{reason}: what analyze counts");
        let err = stderr(&o);
        if n == 0 {
            assert!(err.contains("wrote no example"), "{reason}: {err}");
        } else {
            assert!(
                err.contains(&format!("wrote {n} example")),
                "{reason}: {err}"
            );
        }
    }
    let keywords = report["refusal_keywords"].as_object().expect("keywords");
    for (keyword, n) in keywords {
        let kind = format!("refusal.{keyword}");
        let o = run(&[
            &["export", "--format", "examples", "--kind", &kind][..],
            &files,
        ]
        .concat());
        assert_eq!(o.status.code(), Some(0), "{kind}: {}", stderr(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).lines().count() as u64,
            n.as_u64().unwrap_or(0),
            "{kind}"
        );
    }
    // A kind of a fixed vocabulary that no input holds: an empty answer,
    // said in words with the kinds the inputs hold; -q keeps it quiet.
    let format_errors = report["mistakes"]["format_error"]
        .as_object()
        .expect("format_error kinds");
    if let Some((absent, _)) = format_errors.iter().find(|(_, n)| n.as_u64() == Some(0)) {
        let kind = format!("format_error.{absent}");
        let o = run(&[
            &["export", "--format", "examples", "--kind", &kind][..],
            &files,
        ]
        .concat());
        assert_eq!(o.status.code(), Some(0));
        assert!(o.stdout.is_empty());
        let err = stderr(&o);
        assert!(
            err.contains("wrote no example") && err.contains("they hold"),
            "{err}"
        );
        let o = run(&[
            &["export", "-q", "--format", "examples", "--kind", &kind][..],
            &files,
        ]
        .concat());
        assert!(o.stderr.is_empty(), "{}", stderr(&o));
    }
}

/// A JSON record of no format mirotrace knows, as a line or a document,
/// is said to be that, with the formats tried and how to name one; not
/// the native reader's complaint about a missing `trace_id`.
#[test]
fn an_unknown_document_names_the_formats_tried() {
    let dir = crate::common::scratch("small-doors-unknown");
    let record = serde_json::json!({"data": [{"id": "abc", "type": "GENERATION"}], "meta": {}});
    let line = dir.join("export.json");
    std::fs::write(&line, format!("{record}\n")).expect("write");
    let pretty = dir.join("pretty.json");
    std::fs::write(
        &pretty,
        serde_json::to_string_pretty(&record).expect("json"),
    )
    .expect("write");
    let registry = mirotrace::read::formats::FORMATS.iter().map(|f| f.name);
    for file in [&line, &pretty] {
        let o = run(&["analyze", &file.display().to_string()]);
        assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("no known format matched"), "{err}");
        assert!(!err.contains("trace_id"), "{err}");
        assert!(
            err.contains("--input-format") && err.contains("docs/input-formats.md"),
            "{err}"
        );
        for name in registry.clone() {
            assert!(err.contains(name), "{name} in {err}");
        }
    }
    // A native line that lost its id is still told so.
    let native = dir.join("native.jsonl");
    std::fs::write(&native, "{\"content\": \"hello\"}\n").expect("write");
    let err = stderr(&run(&["analyze", &native.display().to_string()]));
    assert!(err.contains("trace_id"), "{err}");
}

/// `replay --trace` with an id no input holds: the close ones when there
/// are, else some that exist.
#[test]
fn replay_trace_names_ids_that_exist() {
    let files = fixtures();
    let verdicts = run(&["replay", &files[0], "--format", "jsonl"]).stdout;
    let first = verdicts.split(|b| *b == b'\n').next().unwrap_or_default();
    let report: Value = serde_json::from_slice(first).expect("a verdict");
    let id = report["trace_id"].as_str().expect("trace_id").to_string();
    let o = run(&[
        "replay",
        &files[0],
        "--trace",
        "zzzzzzzzzzzz-nothing-like-it",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("the inputs hold") && err.contains(&format!("{id:?}")),
        "{err}"
    );
    // One character off: the close one, not the list.
    let typo = format!("{id}x");
    let err = stderr(&run(&["replay", &files[0], "--trace", &typo]));
    assert!(err.contains(&format!("did you mean {id:?}")), "{err}");
    assert!(!err.contains("the inputs hold"), "{err}");
}

/// `keywords --suggest` offers the model's words only: never a placeholder
/// a harness wrote in its place, never a reply that ends the task with an
/// answer (as a suggestion or a near-miss); and its table is in the order
/// of its score.
#[test]
fn suggestions_are_the_models_words_in_score_order() {
    let dir = crate::common::scratch("small-doors-suggest");
    let file = dir.join("t.jsonl");
    let mut text = String::new();
    for i in 0..12 {
        let id = format!("t{i}");
        let replies = [
            "LLM response is empty.",
            "No further recorded attempts.",
            "Time constraints aside, the evidence points to \\boxed{7}.",
            "I am unable to reach that page, so I cannot say.",
        ];
        for reply in replies {
            text.push_str(&format!(
                "{}\n",
                serde_json::json!({"trace_id": id, "content": reply})
            ));
        }
    }
    std::fs::write(&file, text).expect("write");
    let o = run(&[
        "keywords",
        "--suggest",
        "--min-support",
        "2",
        "--format",
        "json",
        &file.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let suggestions = r["suggestions"].as_array().cloned().unwrap_or_default();
    assert!(!suggestions.is_empty(), "{r}");
    for s in &suggestions {
        let phrase = s["phrase"].as_str().unwrap_or_default().to_lowercase();
        let example = s["example"].as_str().unwrap_or_default();
        for placeholder in mirotrace::keywords::suggest::PLACEHOLDERS {
            assert!(
                !placeholder.to_lowercase().contains(&phrase) && example != *placeholder,
                "{phrase:?} from {example:?}"
            );
        }
        assert!(!example.contains("\\boxed"), "{example}");
    }
    let scores: Vec<f64> = suggestions
        .iter()
        .filter_map(|s| s["score"].as_f64())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    for m in r["near_misses"].as_array().cloned().unwrap_or_default() {
        assert!(!m.to_string().contains("boxed"), "{m}");
    }
}

/// A count prints one way in a report: `3,346` in the headline and in the
/// tables beneath it, never `3346` in one and `3,346` in the other.
#[test]
fn numbers_print_one_way() {
    let corpus = crate::common::path("replay/dev.jsonl")
        .display()
        .to_string();
    let report: Value =
        serde_json::from_slice(&run(&["analyze", &corpus, "--format", "json"]).stdout)
            .expect("JSON");
    let text = String::from_utf8_lossy(&run(&["analyze", &corpus]).stdout).into_owned();
    let grouped = |n: u64| mirotrace::render::format::thousands(n);
    let mut checked = 0;
    for key in ["attempts", "calls", "rollbacks"] {
        let n = report[key].as_u64().unwrap_or_else(|| panic!("{key}"));
        if n < 1000 {
            continue;
        }
        checked += 1;
        assert!(text.contains(&grouped(n)), "{key} {n} as {}", grouped(n));
        let plain = n.to_string();
        let bare = text
            .split(|c: char| !c.is_ascii_digit() && c != ',')
            .any(|w| w == plain);
        assert!(!bare, "{key} printed as {plain} too:\n{text}");
    }
    assert!(checked > 0, "the corpus has counts past a thousand");
}
