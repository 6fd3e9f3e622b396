//! The fixes json_repair records, on the json-repair corpus's labelled
//! cases: for an input broken in one labelled way and repaired, `fixes`
//! must name that way (≥ 90% on average over the classes; `truncated` and
//! `missing_closing` count as one); strict parses carry no fixes.

mod corpus;

use std::collections::BTreeMap;

use json_compat::json_repair::{repair_and_load_fixed, Fixes, JsonFix};
use json_compat::pyjson::{self, PyStr, StrictError, Value};

/// Which way MiroThinker's `safe_json_loads` (strict `json.loads`, then
/// json_repair) takes for an input.
#[derive(Debug, PartialEq)]
enum Path {
    Strict,
    Repaired(Fixes),
    Failed,
}

/// `None` when strict parsing raises something other than a decode error
/// (too deep, an integer too long), which escapes `safe_json_loads`.
fn safe_json_loads(input: &str) -> Option<Path> {
    match pyjson::loads(input) {
        Ok(_) => Some(Path::Strict),
        Err(StrictError::Decode { .. }) => Some(match repair_and_load_fixed(input) {
            Ok((_, fixes)) => Path::Repaired(fixes),
            Err(_) => Path::Failed,
        }),
        Err(_) => None,
    }
}

/// The fixes that name a corpus breakage label. Labels that describe the
/// content rather than a breakage (pretty-printing, emoji…) map to nothing.
fn expected(label: &str) -> Option<&'static [JsonFix]> {
    use JsonFix::*;
    Some(match label {
        "truncate" | "missing_close" => &[Truncated, MissingClosing],
        "inner_quotes" => &[UnescapedQuote],
        "prose" => &[SurroundingText],
        "single_quotes" | "python_repr" => &[SingleQuotes],
        "bad_backslash" | "invalid_escape" | "bad_unicode_escape" => &[InvalidEscape],
        "raw_ctrl" => &[ControlCharacters],
        "code_fence" => &[CodeFence],
        "python_literals" => &[PythonLiterals],
        "double_braces" => &[DoubleBraces],
        "unquoted_keys" => &[UnquotedKeys],
        "trailing_comma" => &[TrailingComma],
        "concatenated" => &[Concatenated],
        "extra_close" => &[ExtraClosing],
        "numbers" => &[InvalidNumber],
        "line_comment" | "block_comment" => &[Comment],
        "missing_colon" => &[MissingColon],
        "missing_comma" => &[MissingComma],
        _ => return None,
    })
}

/// Content labels: they go with a breakage but are not one.
const CONTENT: &[&str] = &["pretty", "emoji", "long_string", "ensure_ascii_escapes"];

#[test]
fn fixes_name_the_labelled_breakage() {
    // Per class: (cases, cases whose fixes name the label).
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut strict = 0;
    for line in corpus::read().lines().filter(|l| !l.trim().is_empty()) {
        // Python-faithful decoding: some inputs hold lone surrogates (those
        // cannot be a Rust &str and are left out).
        let Value::Dict(case) = pyjson::loads(line).expect("corpus line is JSON") else {
            panic!("corpus line is not an object");
        };
        let get = |k: &str| case.get(&PyStr::from(k));
        let Some(input) = get("input")
            .and_then(Value::as_pystr)
            .and_then(PyStr::as_str)
        else {
            continue;
        };
        let fixes = match safe_json_loads(input) {
            Some(Path::Repaired(fixes)) => fixes,
            Some(Path::Strict) => {
                // What json.loads takes never reaches the repairing parser.
                let repaired = repair_and_load_fixed(input).map(|(_, fixes)| fixes);
                assert_eq!(
                    repaired,
                    Ok(Fixes::default()),
                    "strict with fixes: {input:?}"
                );
                strict += 1;
                continue;
            }
            Some(Path::Failed) | None => continue,
        };
        let labels: Vec<&str> = match get("kinds") {
            Some(Value::List(kinds)) => kinds.as_slice(),
            _ => &[],
        }
        .iter()
        .filter_map(|k| k.as_pystr().and_then(PyStr::as_str))
        .filter(|k| !CONTENT.contains(k))
        .collect();
        let [label] = labels[..] else { continue };
        let Some(want) = expected(label) else {
            continue;
        };
        let class = if want.contains(&JsonFix::Truncated) {
            "truncated|missing_closing"
        } else {
            want[0].name()
        };
        let entry = tally.entry(class.to_string()).or_default();
        entry.0 += 1;
        if want.iter().any(|f| fixes.contains(*f)) {
            entry.1 += 1;
        } else {
            let got: Vec<&str> = fixes.iter().map(JsonFix::name).collect();
            misses
                .entry(class.to_string())
                .or_default()
                .push(format!("{got:?} {input:?}"));
        }
    }
    assert!(strict > 100, "the corpus's strict cases were not seen");
    assert!(tally.len() >= 15, "{tally:?}");
    let rates: Vec<f64> = tally
        .values()
        .map(|(n, ok)| *ok as f64 / *n as f64)
        .collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let report: Vec<String> = tally
        .iter()
        .map(|(c, (n, ok))| format!("{c}: {ok}/{n}"))
        .collect();
    eprintln!("fixes per class: {}; mean {mean:.3}", report.join(", "));
    let examples: Vec<String> = misses
        .iter()
        .flat_map(|(c, m)| m.iter().take(3).map(move |x| format!("{c}: {x}")))
        .collect();
    if std::env::var_os("SHOW_MISSES").is_some() {
        eprintln!("{}", examples.join("\n"));
    }
    assert!(mean >= 0.90, "mean {mean:.3}\n{}", examples.join("\n"));
}
