//! `--format html` without a browser: the page embeds exactly the figures
//! `--format json` writes, the figures it shows match them, trace content
//! cannot inject markup, and the page stays small on a large input.
//! (tests/suite/output/html_browser.rs opens the pages in headless Chromium.)

use crate::common::html as html_common;

use html_common::*;
use mirotrace::diff::synth::{corpus, CorpusSpec};
use serde_json::Value;

#[test]
fn analyze_page_embeds_exactly_the_json_report() {
    let dir = TempDir::new("embeds");
    let sample = fixture("analyze/sample.jsonl");
    let models = [fixture("model-a.jsonl"), fixture("model-b.jsonl")];
    let cases: Vec<Vec<&str>> = vec![
        vec![&sample],
        vec![&sample, "--group-by", "agent", "--top", "3"],
        vec![&models[0], &models[1], "--group-by", "model"],
        // The README's example: every fixture, bad files and all.
        vec![FIXTURES],
    ];
    for args in cases {
        let json = run_json(&dir, "analyze", &args);
        let page = run_page(&dir, "analyze", &args);
        assert_eq!(data_island(&page), json, "figures of analyze {args:?}");
        assert_figures_shown(&page, &json);
    }
}

#[test]
fn diff_page_embeds_exactly_the_json_report() {
    let dir = TempDir::new("diff-embeds");
    let (base, new) = synth_pair(&dir);
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "--base",
            &base,
            "--new",
            &new,
            "--fail-on",
            "any-significant-worse",
            "--fail-on",
            "refusal>+1pp",
        ],
        vec!["--base", &base, "--new", &base, &new, "--group-by", "model"],
    ];
    for args in cases {
        let json = run_json(&dir, "diff", &args);
        let page = run_page(&dir, "diff", &args);
        assert_eq!(data_island(&page), json, "figures of diff {args:?}");
        let comparisons = json["comparisons"].as_array().expect("comparisons");
        for (i, c) in comparisons.iter().enumerate() {
            // A forest plot per unit, with one row per metric of that unit.
            // A panel per unit with a figure either side recorded; one row
            // per metric of that unit.
            let metrics = c["metrics"].as_array().expect("metrics");
            let drawn = |unit: &str| {
                metrics
                    .iter()
                    .any(|m| m["unit"] == unit && !m["change"].is_null())
            };
            let units: std::collections::BTreeSet<&str> = metrics
                .iter()
                .map(|m| m["unit"].as_str().expect("unit"))
                .filter(|u| drawn(u))
                .collect();
            assert!(units.contains("rate"), "the rates are drawn: {units:?}");
            let plotted: usize = units
                .iter()
                .map(|unit| chart_rows(&page, &format!("forest-{i}-{unit}")))
                .sum();
            let expected = metrics
                .iter()
                .filter(|m| units.contains(m["unit"].as_str().expect("unit")))
                .count();
            assert_eq!(plotted, expected);
            for m in metrics
                .iter()
                .filter(|m| !units.contains(m["unit"].as_str().expect("unit")))
            {
                assert!(m["change"].is_null(), "an undrawn panel has no change: {m}");
            }
            let significant = c["metrics"]
                .as_array()
                .expect("metrics")
                .iter()
                .filter(|m| m["significant"] == Value::Bool(true))
                .count();
            let marked = units
                .iter()
                .filter_map(|unit| chart(&page, &format!("forest-{i}-{unit}")))
                .map(|svg| {
                    svg.matches("class=\"mark worse\"").count()
                        + svg.matches("class=\"mark better\"").count()
                })
                .sum::<usize>();
            assert_eq!(marked, significant, "significant metrics are marked");
        }
        for g in json["gates"].as_array().expect("gates") {
            let rule = g["rule"].as_str().expect("rule");
            assert!(page.contains(&escape(rule)), "gate {rule} on the page");
        }
    }
}

/// Every `data-key` figure on the page reads as the JSON value it names.
fn assert_figures_shown(page: &str, json: &Value) {
    let mut checked = 0;
    for (key, shown) in keyed_figures(page) {
        let value = key.split('.').fold(json, |v, k| &v[k]);
        let number = value
            .as_f64()
            .unwrap_or_else(|| panic!("{key} is a number in the JSON"));
        match shown.strip_suffix('%') {
            Some(p) => {
                let p: f64 = p.parse().expect("a percentage");
                assert!(
                    (p - number * 100.0).abs() <= 0.05 + 1e-9,
                    "{key}: page {shown}, JSON {number}"
                );
            }
            None => assert_eq!(
                shown.parse::<f64>().ok(),
                Some(number),
                "{key}: page {shown}, JSON {number}"
            ),
        }
        checked += 1;
    }
    assert!(checked >= 5, "the headline figures are keyed ({checked})");
}

#[test]
fn trace_content_cannot_inject_markup() {
    let dir = TempDir::new("hostile");
    let input = write_hostile_corpus(&dir);
    let input = input.to_str().expect("UTF-8 path");
    let pages = [
        run_page(&dir, "analyze", &[input, "--group-by", "model"]),
        run_page(&dir, "analyze", &[input, "--group-by", "file"]),
        run_page(
            &dir,
            "diff",
            &["--base", input, "--new", input, "--group-by", "model"],
        ),
    ];
    for page in &pages {
        // Only the page's own three scripts, one style sheet, no image.
        assert_eq!(page.matches("<script").count(), 3, "script elements");
        assert_eq!(page.matches("</script").count(), 3);
        assert_eq!(page.matches("<style").count(), 1);
        assert_eq!(page.matches("</style").count(), 1);
        assert!(
            !page.contains("<img") && !page.contains("<textarea") && !page.contains("</textarea")
        );
        assert!(!page.contains("<!--"), "no comment opened by content");
        // The content is there, as text: the test is not vacuous.
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;")
                || page.contains("alert(1)\\u003c")
        );
    }
    let analyze = &pages[0];
    for (what, shown) in [
        ("the trace id", "trace-&lt;script&gt;"),
        ("the model", "model-&lt;script&gt;"),
        ("a tool name", "tool&lt;script&gt;"),
        (
            "the file name",
            "&lt;script&gt;alert(1)&lt;script&gt;.jsonl",
        ),
        ("a query", "&lt;/style&gt;&lt;/script&gt;"),
        (
            "model output",
            "I&#39;m sorry, I cannot solve &lt;script&gt;",
        ),
        ("a tool result", "Unknown tool: &lt;script&gt;"),
    ] {
        assert!(analyze.contains(shown), "{what} is shown escaped");
    }
    let json = data_island(analyze);
    assert_eq!(json["traces"], 1, "the hostile trace was read");
    assert_eq!(json["rollbacks"].as_u64(), Some(4));
}

#[test]
fn page_size_stays_bounded_on_a_large_input() {
    let dir = TempDir::new("size");
    let small = dir.write(
        "small.jsonl",
        &corpus(&CorpusSpec {
            tasks: 200,
            seed: 3,
            ..CorpusSpec::default()
        }),
    );
    let large = dir.write(
        "large.jsonl",
        &corpus(&CorpusSpec {
            tasks: 4000,
            seed: 3,
            ..CorpusSpec::default()
        }),
    );
    let small_page = run_page(&dir, "analyze", &[&small]);
    let large_page = run_page(&dir, "analyze", &[&large]);
    let input_bytes = std::fs::metadata(&large).expect("input").len() as usize;
    assert!(
        input_bytes > 10 * 1024 * 1024,
        "a large input ({input_bytes} bytes)"
    );
    assert!(
        large_page.len() < 2 * 1024 * 1024,
        "page of {} bytes",
        large_page.len()
    );
    // Twenty times the traces, about the same page: top-N lists, not every trace.
    assert!(
        large_page.len() < small_page.len() * 3 / 2,
        "{} bytes from 200 tasks, {} from 4000",
        small_page.len(),
        large_page.len()
    );
    assert!(large_page.matches("<details class=\"trace\"").count() <= 10);
}

fn synth_pair(dir: &TempDir) -> (String, String) {
    let base = CorpusSpec {
        tasks: 150,
        model: "base-model".into(),
        seed: 5,
        ..CorpusSpec::default()
    };
    let new = CorpusSpec {
        model: "new-model".into(),
        seed: 6,
        refusal: 0.1,
        ..base.clone()
    };
    (
        dir.write("base.jsonl", &corpus(&base)),
        dir.write("new.jsonl", &corpus(&new)),
    )
}

#[test]
fn the_page_does_not_depend_on_the_thread_count() {
    let dir = TempDir::new("threads");
    let input = dir.write(
        "in.jsonl",
        &corpus(&CorpusSpec {
            tasks: 400,
            seed: 9,
            ..CorpusSpec::default()
        }),
    );
    let one = run_page(&dir, "analyze", &[&input, "-j", "1", "--group-by", "model"]);
    let many = run_page(&dir, "analyze", &[&input, "-j", "3", "--group-by", "model"]);
    assert!(
        one.contains("<details class=\"trace\""),
        "timelines are drawn"
    );
    assert_eq!(one, many, "worst-trace timelines and every figure alike");
    // Workers fold small parts; every trace of the final ranking still has one.
    assert!(!many.contains("timeline not kept"));
    assert_eq!(
        many.matches("<details class=\"trace\"").count(),
        many.matches("<table class=\"data timeline\">").count()
    );
}

/// Issue 26: a page says what stderr said. The skipped lines are listed
/// with file:line and message, then counted per kind, on both pages.
#[test]
fn pages_list_the_skipped_lines_with_their_line_and_kind() {
    let dir = TempDir::new("skipped");
    let good = std::fs::read_to_string(fixture("model-a.jsonl")).expect("fixture");
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(2, "{not json");
    lines.insert(4, "garbage <b>");
    let bad = dir.write("bad.jsonl", &(lines.join("\n") + "\n"));
    let page = run_page(&dir, "analyze", &[&bad]);
    let at = page
        .find("id=\"skipped\"")
        .expect("a skipped-input section");
    let section = &page[at..page[at..].find("</section>").expect("its end") + at];
    assert!(
        section.contains("bad.jsonl:3: not JSON") && section.contains("bad.jsonl:5: not JSON"),
        "{section}"
    );
    assert!(section.contains("2 × not JSON"), "{section}");
    assert!(!page.contains("see stderr of the run"));
    let model_b = fixture("model-b.jsonl");
    let diff = run_page(&dir, "diff", &["--base", &bad, "--new", &model_b]);
    assert!(
        diff.contains("id=\"skipped\""),
        "the diff page lists them too"
    );
    assert!(diff.contains("bad.jsonl:3: not JSON"));
    let clean = run_page(&dir, "analyze", &[&model_b]);
    assert!(
        !clean.contains("id=\"skipped\""),
        "nothing skipped, no section"
    );
}

/// Issue 28 on the page: a chart per family of mistakes with a bar per
/// kind that occurred, and the first example of each kind.
#[test]
fn the_analyze_page_draws_the_mistakes_of_every_family() {
    let dir = TempDir::new("mistakes");
    let sample = fixture("analyze/sample.jsonl");
    let json = run_json(&dir, "analyze", &[&sample]);
    let page = run_page(&dir, "analyze", &[&sample]);
    for family in ["format_error", "json_fixes"] {
        let kinds = json["mistakes"][family].as_object().expect("kinds");
        let occurred = kinds.values().filter(|n| n.as_u64() > Some(0)).count();
        assert!(occurred > 0, "the sample has {family} mistakes");
        let svg = chart(&page, &format!("mistakes-{family}")).expect("its chart");
        assert_eq!(
            svg.matches("<rect class=\"mark ").count(),
            occurred,
            "{family}: a bar per kind that occurred"
        );
        let (key, example) = json["mistakes"]["examples"]
            .as_object()
            .expect("examples")
            .iter()
            .find(|(k, _)| k.starts_with(family))
            .expect("an example");
        let at = format!(
            "{}:{}",
            example["file"].as_str().expect("file"),
            example["line"]
        );
        // Names in cells may break after `.`/`_` (`<wbr>`).
        assert!(
            page.replace("<wbr>", "").contains(&at),
            "{key}: its first example {at} is on the page"
        );
    }
}

/// The mistakes panel: a forest plot per family with a row per kind that
/// occurs (significant ones marked) and their table; no panel when no
/// kind occurs.
#[test]
fn diff_page_draws_the_mistakes_panel() {
    let dir = TempDir::new("diff-kinds");
    let args = [
        "--base",
        &fixture("diff-kinds/base.jsonl"),
        "--new",
        &fixture("diff-kinds/new.jsonl"),
        "--iterations",
        "1000",
    ]
    .map(|s| s.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = run_json(&dir, "diff", &args);
    let page = run_page(&dir, "diff", &args);
    assert!(page.contains("id=\"mistakes-0\""), "the panel");
    let shares = json["comparisons"][0]["kind_shares"]
        .as_array()
        .expect("kind_shares");
    let occurs = |m: &&Value| {
        [&m["base"], &m["new"]]
            .iter()
            .any(|v| v.as_f64().is_some_and(|x| x != 0.0))
    };
    for family in ["format_error", "json_fixes"] {
        let of: Vec<&Value> = shares
            .iter()
            .filter(|m| {
                m["metric"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(&format!("{family}_share.")))
            })
            .filter(occurs)
            .collect();
        let id = format!("kinds-0-{family}");
        assert_eq!(chart_rows(&page, &id), of.len(), "{family}'s rows");
        let svg = chart(&page, &id).expect("the plot");
        let significant = of.iter().filter(|m| m["significant"] == true).count();
        assert!(
            significant > 0,
            "{family}: the fixture's shifts are significant"
        );
        let marked = svg.matches("class=\"mark worse\"").count()
            + svg.matches("class=\"mark better\"").count();
        assert_eq!(
            marked, significant,
            "{family}: significant kinds are marked"
        );
    }
    for family in ["llm_failed", "duplicate_query"] {
        assert!(
            chart(&page, &format!("kinds-0-{family}")).is_none(),
            "{family} does not occur"
        );
    }
    // The table has every kind that occurs (no cap on the page).
    let table_rows = page
        .matches("<td class=\"text\">json_<wbr>fixes_<wbr>share.")
        .count();
    assert_eq!(table_rows, 10, "every json_fixes kind in the table");

    let plain = dir.write(
        "plain.jsonl",
        &(0..10)
            .map(|i| {
                format!(
                    "{}\n",
                    serde_json::json!({"trace_id": format!("t{i}"), "content": "done"})
                )
            })
            .collect::<String>(),
    );
    let page = run_page(
        &dir,
        "diff",
        &["--base", &plain, "--new", &plain, "--iterations", "50"],
    );
    assert!(!page.contains("id=\"mistakes-0\"") && !page.contains("kinds-0-"));
}
