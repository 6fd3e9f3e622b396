//! The format-error taxonomy on a labelled corpus: well-formed MCP calls,
//! each broken in one labelled way, kept only when the replay judges the
//! attempt a format error; `why.kind` must equal the label for ≥ 95% of
//! them and ≥ 90% within each kind. The breakers are written from the
//! kinds' descriptions, not from the classifier.

use std::collections::BTreeMap;

use mirotrace::detect::format_error::FormatKind;
use mirotrace::detect::Reason;
use mirotrace::model::{Origin, Trace};
use mirotrace::policy::Policy;
use mirotrace::read::native::parse_line;
use mirotrace::replay::Replayer;

/// A small deterministic generator (xorshift), so the corpus is fixed.
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
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const CALLS: &[(&str, &str, &str)] = &[
    (
        "tool-google-search",
        "google_search",
        r#"{"q": "rust borrow checker", "gl": "us"}"#,
    ),
    (
        "tool-python",
        "run_python_code",
        r#"{"code": "print(1 < 2)", "sandbox_id": "abc"}"#,
    ),
    (
        "tool-reader",
        "scrape",
        r#"{"url": "https://example.com/a?b=1"}"#,
    ),
    (
        "search_and_scrape_webpage",
        "google_search",
        r#"{"q": "population of Lyon 2020"}"#,
    ),
    (
        "agent-browsing",
        "search_and_browse",
        "{\"subtask\": \"Find the <b>author</b> of the paper\"}",
    ),
];

const PROSE: &[&str] = &[
    "",
    "I will search for this.\n\n",
    "Let me run some code to check.\n",
    "Next step: read the page.\n\n",
];

/// The pieces of one well-formed block, laid out in one style.
struct Parts {
    pre: String,
    open: String,
    elements: [String; 3],
    close: String,
    sep: &'static str,
}

impl Parts {
    fn new(rng: &mut Rng) -> Parts {
        let (server, tool, args) = CALLS[rng.below(CALLS.len())];
        let sep = *["\n", "", " ", "\n  "].get(rng.below(4)).unwrap_or(&"\n");
        Parts {
            pre: rng.pick(PROSE).to_string(),
            open: "<use_mcp_tool>".into(),
            elements: [
                format!("<server_name>{server}</server_name>"),
                format!("<tool_name>{tool}</tool_name>"),
                format!("<arguments>{sep}{args}{sep}</arguments>"),
            ],
            close: "</use_mcp_tool>".into(),
            sep,
        }
    }

    fn join(&self) -> String {
        let s = self.sep;
        format!(
            "{}{}{s}{}{s}{}{s}{}{s}{}",
            self.pre, self.open, self.elements[0], self.elements[1], self.elements[2], self.close
        )
    }
}

/// One broken reply of the given kind, and whether its finish is `length`.
fn broken(kind: FormatKind, rng: &mut Rng) -> (String, bool) {
    let mut p = Parts::new(rng);
    match kind {
        FormatKind::CutOff => {
            let full = p.join();
            let from = full.find("<use_mcp_tool>").unwrap_or(0) + "<use_mcp_tool>".len();
            let to = full.find("</arguments>").unwrap_or(full.len());
            let length = rng.below(3) == 0;
            let end = if length { full.len() - 1 } else { to };
            let mut cut = from + rng.below(end - from + 1);
            while !full.is_char_boundary(cut) {
                cut -= 1;
            }
            (full[..cut].to_string(), length)
        }
        FormatKind::MisspelledTag => {
            let names = ["use_mcp_tool", "server_name", "tool_name", "arguments"];
            let k = rng.below(4);
            let name = names[k];
            let wrong = match rng.below(6) {
                0 => format!("{name}s"),
                1 => name.replace('_', ""),
                2 => name.replace('_', "-"),
                3 => name.to_uppercase(),
                4 => {
                    let mut b: Vec<char> = name.chars().collect();
                    let i = 1 + rng.below(b.len() - 3);
                    b.swap(i, i + 1);
                    b.into_iter().collect()
                }
                _ => {
                    let mut b: Vec<char> = name.chars().collect();
                    b.remove(1 + rng.below(b.len() - 2));
                    b.into_iter().collect()
                }
            };
            let closing = rng.below(2) == 0;
            let (from, to) = if closing {
                (format!("</{name}>"), format!("</{wrong}>"))
            } else {
                (format!("<{name}>"), format!("<{wrong}>"))
            };
            let full = p.join();
            (full.replacen(&from, &to, 1), false)
        }
        FormatKind::UnclosedBlock => {
            p.close = rng
                .pick(&["", "\nI'll wait for the result.", "\n</tool>"])
                .to_string();
            (p.join(), false)
        }
        FormatKind::MisorderedElements => {
            let perms = [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
            let perm = perms[rng.below(perms.len())];
            let e = p.elements.clone();
            p.elements = [e[perm[0]].clone(), e[perm[1]].clone(), e[perm[2]].clone()];
            (p.join(), false)
        }
        FormatKind::MissingElement => {
            let k = rng.below(4);
            let s = p.sep;
            let kept: Vec<String> = match k {
                3 => vec![
                    p.elements[0].clone(),
                    p.elements[1].clone(),
                    "<query>rust borrow checker</query>".into(),
                ],
                _ => p
                    .elements
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != k)
                    .map(|(_, e)| e.clone())
                    .collect(),
            };
            let body = kept.join(s);
            (format!("{}{}{s}{body}{s}{}", p.pre, p.open, p.close), false)
        }
        FormatKind::TextBetweenElements => {
            let words = rng.pick(&[
                "Now the tool:",
                "(using the search server)",
                "```",
                "Note: this may take a while.",
            ]);
            match rng.below(4) {
                3 => p.open = format!("<use_mcp_tool>\n{words}"),
                4.. => {}
                k => p.elements[k] = format!("{}\n{words}", p.elements[k]),
            }
            (p.join(), false)
        }
        FormatKind::StrayTag => {
            let text = match rng.below(4) {
                0 => "To call a tool I would wrap it in <use_mcp_tool> tags, but no tool is needed here. The answer is 42.".to_string(),
                1 => {
                    let s = p.sep;
                    format!("{}{}{s}{}{s}{}", p.pre, p.elements[0], p.elements[1], p.elements[2])
                }
                2 => format!("The result is final.</use_mcp_tool>\n\nAnswer: {}", rng.below(100)),
                _ => "I put the JSON in <arguments> as asked; the final answer is Paris.".to_string(),
            };
            (text, false)
        }
    }
}

fn attempt_line(text: &str, length: bool) -> String {
    let finish = if length { "length" } else { "stop" };
    serde_json::json!({"trace_id": "t", "content": text, "finish_reason": finish}).to_string()
}

#[test]
fn format_error_kinds_match_their_labels() {
    let replayer = Replayer::new(Policy::default());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Per kind: (judged a format error, classified as the label).
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for kind in FormatKind::ALL {
        for _ in 0..200 {
            let (text, length) = broken(kind, &mut rng);
            let origin = Origin {
                file: "corpus".into(),
                line: 1,
            };
            let Ok(attempt) = parse_line(&attempt_line(&text, length), origin) else {
                panic!("corpus line does not parse: {text:?}");
            };
            let verdicts = replayer.replay(&Trace::new("t", vec![attempt]));
            let v = &verdicts[0];
            if v.reason != Some(Reason::FormatError) {
                continue;
            }
            let got = v.format_why.as_ref().map(|w| w.kind);
            let entry = tally.entry(kind.name()).or_default();
            entry.0 += 1;
            if got == Some(kind) {
                entry.1 += 1;
            } else if misses.len() < 20 {
                misses.push(format!("{} → {:?}: {text:?}", kind.name(), got));
            }
        }
    }
    let (n, ok) = tally
        .values()
        .fold((0, 0), |(n, ok), (a, b)| (n + a, ok + b));
    eprintln!("format kinds (judged, right): {tally:?}");
    assert_eq!(tally.len(), FormatKind::ALL.len(), "{tally:?}");
    assert!(
        ok * 100 >= n * 95,
        "overall {ok}/{n}; {tally:?}\n{}",
        misses.join("\n")
    );
    for (kind, (n, ok)) in &tally {
        assert!(*n >= 50, "{kind}: only {n} format errors in the corpus");
        assert!(
            ok * 100 >= n * 90,
            "{kind}: {ok}/{n}\n{}",
            misses.join("\n")
        );
    }
}

#[test]
fn why_is_beside_the_compared_fields() {
    let replayer = Replayer::new(Policy::default());
    let text = "<use_mcp_tool><server_name>s</server_name><toolname>t</toolname><arguments>{}</arguments></use_mcp_tool>";
    let origin = Origin {
        file: "x".into(),
        line: 1,
    };
    let attempt = parse_line(&attempt_line(text, false), origin).unwrap();
    let line = replayer.replay(&Trace::new("t", vec![attempt]))[0].to_json_line();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["reason"], "format_error");
    assert_eq!(v["why"]["kind"], "misspelled_tag");
    assert_eq!(v["why"]["tag"], "<toolname>");
    assert_eq!(v["why"]["offset"], text.find("<toolname>").unwrap());
}
