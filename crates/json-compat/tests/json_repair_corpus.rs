//! Conformance of `safe_json_loads` (strict `json.loads`, then json_repair,
//! then the error object) against the golden json-repair corpus.

mod corpus;

use json_compat::json_repair::{repair_and_load, repair_json};
use json_compat::pyjson::{self, Dict, PyStr, StrictError, Value};

/// One corpus line, decoded with the Python-faithful parser so surrogates,
/// big ints and int/float stay as Python had them.
struct Case {
    id: String,
    input: String,
    /// Surrogates written as `\uXXXX`, as `pyjson::dump` writes them.
    repair: Option<String>,
    loads: Value,
    path: String,
}

fn field<'a>(d: &'a Dict, key: &str) -> &'a Value {
    d.get(&PyStr::from(key))
        .unwrap_or_else(|| panic!("corpus line without {key:?}"))
}

fn text(v: &Value) -> String {
    v.as_pystr()
        .and_then(PyStr::as_str)
        .expect("a string field")
        .to_string()
}

/// Maps the corpus encoding `{"$nonfinite": "NaN" | "Infinity" | "-Infinity"}`
/// back to floats.
fn decode_nonfinite(v: Value) -> Value {
    match v {
        Value::Dict(d) => {
            if d.len() == 1 {
                if let Some(Value::Str(s)) = d.get(&PyStr::from("$nonfinite")) {
                    match s.as_str() {
                        Some("NaN") => return Value::Float(f64::NAN),
                        Some("Infinity") => return Value::Float(f64::INFINITY),
                        Some("-Infinity") => return Value::Float(f64::NEG_INFINITY),
                        _ => {}
                    }
                }
            }
            Value::Dict(
                d.into_iter()
                    .map(|(k, v)| (k, decode_nonfinite(v)))
                    .collect(),
            )
        }
        Value::List(l) => Value::List(l.into_iter().map(decode_nonfinite).collect()),
        other => other,
    }
}

/// Python's repair text with each surrogate code point escaped (UTF-8 cannot
/// hold them; `pyjson::dump` writes them as `\uXXXX`).
fn dump_style(s: &PyStr) -> String {
    s.code_points()
        .map(|cp| match char::from_u32(cp) {
            Some(c) => c.to_string(),
            None => format!("\\u{cp:04x}"),
        })
        .collect()
}

fn load_corpus() -> Vec<Case> {
    corpus::read()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let Value::Dict(d) = pyjson::loads(line).expect("corpus line is JSON") else {
                panic!("corpus line is not an object");
            };
            Case {
                id: text(field(&d, "id")),
                input: text(field(&d, "input")),
                repair: field(&d, "repair").as_pystr().map(dump_style),
                loads: decode_nonfinite(field(&d, "loads").clone()),
                path: text(field(&d, "path")),
            }
        })
        .collect()
}

/// What a value looks like after the corpus encoding: each string's code
/// points were written as JSON with surrogates as `\uXXXX`, and reading that
/// back joins every high+low pair into one character.
fn join_pairs(s: &PyStr) -> PyStr {
    let cps: Vec<u32> = s.code_points().collect();
    let mut out = Vec::with_capacity(cps.len());
    let mut k = 0;
    while k < cps.len() {
        let (hi, lo) = (cps[k], cps.get(k + 1).copied().unwrap_or(0));
        if (0xD800..0xDC00).contains(&hi) && (0xDC00..0xE000).contains(&lo) {
            out.push(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
            k += 2;
        } else {
            out.push(hi);
            k += 1;
        }
    }
    out.into_iter().collect()
}

fn as_encoded(v: &Value) -> Value {
    match v {
        Value::Str(s) => Value::Str(join_pairs(s)),
        Value::List(l) => Value::List(l.iter().map(as_encoded).collect()),
        Value::Dict(d) => Value::Dict(
            d.iter()
                .map(|(k, v)| (join_pairs(k), as_encoded(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Our repair text in the corpus encoding: `pyjson::dump` writes surrogate
/// code points as `\uXXXX`; a high+low pair of them reads back as one character.
fn repair_as_encoded(text: &str) -> String {
    let cs: Vec<char> = text.chars().collect();
    let hex4 = |k: usize| -> Option<u32> {
        if cs.get(k) != Some(&'\\') || cs.get(k + 1) != Some(&'u') {
            return None;
        }
        let h: String = cs.get(k + 2..k + 6)?.iter().collect();
        u32::from_str_radix(&h, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let mut k = 0;
    while k < cs.len() {
        if cs[k] == '\\' && cs.get(k + 1) == Some(&'\\') {
            out.push_str("\\\\");
            k += 2;
            continue;
        }
        if let (Some(hi @ 0xD800..=0xDBFF), Some(lo @ 0xDC00..=0xDFFF)) = (hex4(k), hex4(k + 6)) {
            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            out.extend(char::from_u32(cp));
            k += 12;
            continue;
        }
        out.push(cs[k]);
        k += 1;
    }
    out
}

/// `safe_json_loads`: the value and the path name.
fn safe_json_loads(input: &str) -> (Value, &'static str) {
    match pyjson::loads(input) {
        Ok(v) => (v, "strict"),
        Err(StrictError::Decode { .. }) => match repair_and_load(input) {
            Ok(v) => (v, "repaired"),
            Err(_) => {
                let mut d = Dict::default();
                d.insert(
                    PyStr::from("error"),
                    Value::str("Failed to parse arguments"),
                );
                d.insert(PyStr::from("raw"), Value::str(input));
                (Value::Dict(d), "failed")
            }
        },
        Err(e) => panic!("strict json.loads raised {e} (escapes safe_json_loads)"),
    }
}

/// Equality as the corpus means it: int and float kept apart, NaN == NaN.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Dict(x), Value::Dict(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        _ => a == b,
    }
}

fn short(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[test]
fn dev_corpus_agreement() {
    let cases = load_corpus();
    let total = cases.len();
    let mut agree = 0usize;
    let mut repair_agree = 0usize;
    let mut shown = 0usize;
    for case in &cases {
        let (value, path) = safe_json_loads(&case.input);
        let ok = path == case.path && same(&as_encoded(&value), &case.loads);
        if ok {
            agree += 1;
        } else if shown < 25 {
            shown += 1;
            println!(
                "MISMATCH {} path {} (want {})\n  input: {:?}\n  got:   {}\n  want:  {}",
                case.id,
                path,
                case.path,
                short(&case.input),
                short(&pyjson::dump(&value)),
                short(&pyjson::dump(&case.loads)),
            );
        }
        let repair = repair_json(&case.input).ok().map(|r| repair_as_encoded(&r));
        if repair == case.repair {
            repair_agree += 1;
        } else if ok && shown < 25 {
            shown += 1;
            println!(
                "REPAIR TEXT {}\n  got:  {:?}\n  want: {:?}",
                case.id,
                repair.as_deref().map(short),
                case.repair.as_deref().map(short),
            );
        }
    }
    let rate = agree as f64 / total as f64;
    let repair_rate = repair_agree as f64 / total as f64;
    println!(
        "loads+path agreement: {agree}/{total} = {:.2}%",
        rate * 100.0
    );
    println!(
        "repair text agreement: {repair_agree}/{total} = {:.2}%",
        repair_rate * 100.0
    );
    assert!(total > 2000, "corpus looks truncated: {total} lines");
    assert!(repair_agree <= total, "repair text agreement is reported");
    assert!(
        rate >= 0.995,
        "agreement {:.2}% is below 99.5%",
        rate * 100.0
    );
}
