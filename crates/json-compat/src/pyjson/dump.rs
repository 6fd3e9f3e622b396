//! Writes values like Python's `json.dumps(v, ensure_ascii=False)`.
//!
//! Separators are `", "` and `": "`, floats use Python's `repr`, non-finite
//! floats are the bare words `NaN`, `Infinity`, `-Infinity`. One difference:
//! a surrogate code point cannot be written as UTF-8, so it is escaped as
//! `\uXXXX` (which Python's `json.loads` reads back to the same value).

use super::{Int, PyStr, Value};

/// `json.dumps(value, ensure_ascii=False)`.
pub fn dump(value: &Value) -> String {
    let mut out = String::new();
    dump_to(value, &mut out);
    out
}

/// Appends the JSON text of `value` to `out`.
pub fn dump_to(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(Int::Small(i)) => out.push_str(&i.to_string()),
        Value::Int(Int::Big(s)) => out.push_str(s),
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => dump_str(s, out),
        Value::List(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                dump_to(item, out);
            }
            out.push(']');
        }
        Value::Dict(d) => {
            out.push('{');
            for (n, (k, v)) in d.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                dump_str(k, out);
                out.push_str(": ");
                dump_to(v, out);
            }
            out.push('}');
        }
    }
}

fn dump_str(s: &PyStr, out: &mut String) {
    out.push('"');
    match s.as_str() {
        Some(text) => escape_into(text, out),
        None => {
            for cp in s.code_points() {
                match char::from_u32(cp) {
                    Some(c) => {
                        let mut buf = [0u8; 4];
                        escape_into(c.encode_utf8(&mut buf), out);
                    }
                    None => out.push_str(&format!("\\u{cp:04x}")),
                }
            }
        }
    }
    out.push('"');
}

fn escape_into(text: &str, out: &mut String) {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let esc: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0x00..=0x1f => None,
            _ => continue,
        };
        out.push_str(&text[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => out.push_str(&format!("\\u{b:04x}")),
        }
        start = i + 1;
    }
    out.push_str(&text[start..]);
}

/// Python's `repr(float)`: the shortest text that reads back to the same
/// float, in positional notation for exponents from -4 to 15 and in
/// scientific notation (`1e+16`, `1e-05`) outside that range.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // `{:e}` gives the shortest round-trip digits: "d.ddde<exp>".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{}{}.0", digits, "0".repeat((int_len - n) as usize))
            } else {
                format!(
                    "{}.{}",
                    &digits[..int_len as usize],
                    &digits[int_len as usize..]
                )
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{body}")
    } else {
        let mant = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits.clone()
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::loads;

    #[test]
    fn floats_match_python_repr() {
        let cases = [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (123.456, "123.456"),
            (1.5e300, "1.5e+300"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn dumps_like_python() {
        let v =
            loads(r#"{"a": [1, 2.0, null, true], "b": "x\"\n\u0001é", "c": NaN, "d": "\ud83d"}"#)
                .unwrap();
        assert_eq!(dump(&v), "{\"a\": [1, 2.0, null, true], \"b\": \"x\\\"\\n\\u0001é\", \"c\": NaN, \"d\": \"\\ud83d\"}");
    }

    #[test]
    fn dump_then_load_is_identity() {
        for text in [
            r#"{"k": [1, -0.0, 1e-07, 12345678901234567890123]}"#,
            r#""\udc00\ud800""#,
        ] {
            let v = loads(text).unwrap();
            let again = loads(&dump(&v)).unwrap();
            assert!(v.py_eq(&again), "{text}");
        }
    }
}
