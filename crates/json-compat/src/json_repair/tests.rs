//! The behaviours the conformance README lists, with json_repair 0.50.0's
//! output for each (taken from the Python library).

use super::*;
use crate::pyjson::{Int, PyStr};

fn repaired(s: &str) -> String {
    repair_json(s).unwrap_or_else(|e| panic!("{s:?} raised {e}"))
}

fn check(cases: &[(&str, &str)]) {
    for (input, want) in cases {
        assert_eq!(repaired(input), *want, "input {input:?}");
    }
}

#[test]
fn top_level_without_container_is_empty() {
    for s in [
        "garbage", "None", "True", "123abc", "\"abc", "   ", "", "'single'",
    ] {
        assert_eq!(repaired(s), "", "{s:?}");
        assert_eq!(
            repair_and_load(s),
            Err(RepairError::JsonDecodeError),
            "{s:?}"
        );
    }
}

#[test]
fn top_level_comments_and_prose() {
    check(&[
        (r#"See #3 {"q": "x"}"#, ""),
        (r#"See /docs or #3 first {"q": "x"}"#, ""),
        (r#"Here is [the] call: {"a": 1}"#, r#"[["the"], {"a": 1}]"#),
        (
            r#"I think {the answer} is: {"a": 1}"#,
            r#"{"is": {"a": 1}}"#,
        ),
    ]);
}

#[test]
fn several_values_become_a_list_unless_same_shape() {
    check(&[
        (r#"{"a":1}{"a":2}"#, r#"{"a": 2}"#),
        (r#"{"a":1}{"b":2}"#, r#"[{"a": 1}, {"b": 2}]"#),
        ("[]{}", "[[], {}]"),
        (
            r#"[{"key":"value"}][{"key":"value_after"}]"#,
            r#"[{"key": "value_after"}]"#,
        ),
    ]);
}

#[test]
fn literals() {
    check(&[
        (
            r#"{"a": True, "b": TRUE, "c": False, "d": NULL}"#,
            r#"{"a": true, "b": true, "c": false, "d": null}"#,
        ),
        (
            r#"{"a": None, "b": nil, "c": undefined}"#,
            r#"{"a": "None", "b": "nil", "c": "undefined"}"#,
        ),
        (r#"{"a": tr"#, r#"{"a": "tr"}"#),
    ]);
}

#[test]
fn numbers() {
    check(&[
        (r#"{"a": 1,000}"#, r#"{"a": "1,000"}"#),
        (r#"{"a": 2024/01/02}"#, r#"{"a": "2024/01/02"}"#),
        (r#"{"a": 0x1F}"#, r#"{"a": "0x1F"}"#),
        (r#"{"a": -}"#, r#"{"a": ""}"#),
        (r#"{"a": 1_000}"#, r#"{"a": 1}"#),
        (r#"{"a": 5.}"#, r#"{"a": 5.0}"#),
        (r#"{"a": .5}"#, r#"{"a": 0.5}"#),
        (r#"{"a": 1e}"#, r#"{"a": 1}"#),
        (r#"{"a": +1}"#, r#"{"a": 1}"#),
        (r#"{"a": 1e999}"#, r#"{"a": Infinity}"#),
        (
            r#"{"a": 123456789012345678901234567890"#,
            r#"{"a": 123456789012345678901234567890}"#,
        ),
    ]);
    let v = repair_and_load(r#"{"a": 5."#).unwrap();
    assert_eq!(v.as_dict().unwrap()[&PyStr::from("a")], Value::Float(5.0));
    let v = repair_and_load(r#"{"a": 7"#).unwrap();
    assert_eq!(
        v.as_dict().unwrap()[&PyStr::from("a")],
        Value::Int(Int::Small(7))
    );
}

#[test]
fn over_long_integers_stay_text_or_raise() {
    // int() refuses more than 4300 digits: parse_number keeps the text...
    let digits = "1".repeat(4301);
    let v = repair_and_load(&format!("{{a: {digits}}}")).unwrap();
    let a = &v.as_dict().unwrap()[&PyStr::from("a")];
    assert_eq!(*a, Value::Str(PyStr::from(digits.as_str())));
    let v = repair_and_load(&format!("{{a: {}}}", &digits[1..])).unwrap();
    let a = &v.as_dict().unwrap()[&PyStr::from("a")];
    assert!(matches!(a, Value::Int(Int::Big(_))));
    // ...while the first json.loads raises ValueError on a well-formed number.
    assert_eq!(
        repair_and_load(&format!("[{digits}")),
        Err(RepairError::ValueError)
    );
}

#[test]
fn arrays() {
    check(&[
        ("[1, 2, ...]", "[1, 2]"),
        (
            r#"[{"a": 1, "b": 2, "a": 3}"#,
            r#"[{"a": 1, "b": 2}, {"a": 3}]"#,
        ),
        (r#"{"a": [1, 2]  [3]}"#, r#"{"a": [1, 2, 3]}"#),
        (r#"["a "b" c"]"#, r#"["a \"b\" c"]"#),
        ("[[1]]]", "[[1]]"),
    ]);
}

#[test]
fn escapes() {
    check(&[
        (r#"{"a": "\x41\u00e9""#, r#"{"a": "Aé"}"#),
        (r#"{"a": "\d\U""#, r#"{"a": "\\d\\U"}"#),
        (r#"{"a": "abc\"#, r#"{"a": "abc\\"}"#),
        (r#"{"p": C:\temp\x86}"#, "{\"p\": \"C:\\temp\u{86}\"}"),
        (r#"{"key": "val\"ue"}"#, r#"{"key": "val\"ue"}"#),
    ]);
}

#[test]
fn unicode_escapes_are_not_joined() {
    let v = repair_and_load(r#"{"a": "\ud83d\ude00""#).unwrap();
    let s = v.as_dict().unwrap()[&PyStr::from("a")]
        .as_pystr()
        .unwrap()
        .clone();
    assert_eq!(s.code_points().collect::<Vec<_>>(), vec![0xD83D, 0xDE00]);
    assert_eq!(
        repaired(r#"{"a": "\ud83d\ude00""#),
        r#"{"a": "\ud83d\ude00"}"#
    );
}

#[test]
fn python_character_classes() {
    // CJK is alphabetic for str.isalpha: unquoted keys and values are read.
    check(&[
        ("{中文: 值}", r#"{"中文": "值"}"#),
        (r#"{"a": 值}"#, r#"{"a": "值"}"#),
        // A fullwidth digit is isdigit() but not a NUMBER_CHAR: empty value.
        (r#"{"a":１}"#, r#"{"a": ""}"#),
        // U+3000 is whitespace for Python.
        ("{\"a\":\u{3000}1}", r#"{"a": 1}"#),
    ]);
    assert!(unicode::is_alpha('中') && !unicode::is_alpha('１') && unicode::is_digit('１'));
    assert!(unicode::is_alnum('²') && !unicode::is_alpha('\u{300}'));
    assert!(unicode::is_space('\u{1c}') && !unicode::is_space('\u{200b}'));
}

#[test]
fn strings_and_quotes() {
    check(&[
        (r#"{"a": "b" "c": 1}"#, r#"{"a": "b", "c": 1}"#),
        ("{a: b, c: d}", r#"{"a": "b", "c": "d"}"#),
        (
            r#"{"a": "lorem "ipsum" dolor"}"#,
            r#"{"a": "lorem \"ipsum\" dolor"}"#,
        ),
        (r#"{"a": "1", "a": "2"}"#, r#"{"a": "2"}"#),
        (r#"{"a"  1}"#, r#"{"a": ""}"#),
        (r#"{"a": “x”}"#, r#"{"a": "x"}"#),
        (r#"{"a": 1}}"#, r#"{"a": 1}"#),
        (r#"{"a": "x""}"#, r#"{"a": "x"}"#),
        (r#"{"a": ""x""}"#, r#"{"a": "x"}"#),
        ("{'a': 'b'}", r#"{"a": "b"}"#),
    ]);
}

#[test]
fn comments_inside_values() {
    check(&[
        ("{\"a\": \"x\" // c\n}", r#"{"a": "x"}"#),
        (r#"{"a": /* c */ 1}"#, r#"{"a": ""}"#),
    ]);
}

#[test]
fn index_error_cases() {
    assert_eq!(repair_json("['], 1"), Err(RepairError::IndexError));
    assert_eq!(
        repair_and_load(r#"{"a": ["], "b": 1}"#),
        Err(RepairError::IndexError)
    );
}

#[test]
fn long_runs_of_escaped_quotes_raise_recursion_error() {
    let few = format!(r#"{{"a": "x, {}""#, r#"\""#.repeat(500));
    assert!(repair_and_load(&few).is_ok());
    let many = format!(r#"{{"a": "x, {}""#, r#"\""#.repeat(1200));
    assert_eq!(repair_and_load(&many), Err(RepairError::RecursionError));
}

#[test]
fn deep_nesting_fails_fast_without_overflowing() {
    for unit in ["[", "{\"a\":", "{\"a\": [", "# c\n", "/a", "[\"a\", "] {
        let deep = unit.repeat(100_000);
        // The repairing parser itself (the strict step is skipped).
        let direct = parser::Parser::new(&deep).parse();
        assert_eq!(direct, Err(RepairError::RecursionError), "{unit:?}");
        // Through json.loads, which gives up at once on the leading "x".
        let prefixed = format!("x{deep}");
        assert_eq!(
            repair_and_load(&prefixed),
            Err(RepairError::RecursionError),
            "{unit:?}"
        );
    }
    // Python copes with a couple of hundred levels.
    let v = repair_and_load(&"[".repeat(200)).unwrap();
    assert!(matches!(v, Value::List(_)));
    let v = repair_and_load(&"{\"a\": ".repeat(200)).unwrap();
    assert!(matches!(v, Value::Dict(_)));
}

#[test]
fn deep_nesting_through_the_strict_step() {
    // The strict parser goes about 960 levels deep before it gives up, which
    // needs more than a test thread's 2 MB of stack in debug builds.
    let worker = std::thread::Builder::new().stack_size(32 << 20);
    let handle = worker
        .spawn(|| {
            ["[", "{\"a\":"]
                .iter()
                .map(|unit| repair_and_load(&unit.repeat(100_000)))
                .collect::<Vec<_>>()
        })
        .unwrap();
    for result in handle.join().unwrap() {
        assert_eq!(result, Err(RepairError::RecursionError));
    }
}

#[test]
fn long_runs_finish() {
    const N: usize = 300_000;
    let runs = [
        "\"".repeat(N),
        "\\".repeat(N),
        "{".repeat(N),
        format!("{{\"a\": {}", "\"".repeat(N)),
        format!("[{}", "\"".repeat(N)),
        format!("{{\"a\": \"{}", "\\".repeat(N)),
        format!("{{\"a\": \"{}", "{".repeat(N)),
        format!("{{\"a\": \"x{}\"{}z", ",".repeat(N / 2), " ".repeat(N / 2)),
        format!("[\"a{}", " \"b\"".repeat(N / 4)),
        format!("[{{{}}}]", "\"a\": 1, ".repeat(N / 8)),
        format!("[{{{}", "ab:/".repeat(N / 4)),
    ];
    for run in &runs {
        let _ = repair_json(run);
    }
}

/// The fixes recorded for one input, by name.
fn fixes_of(input: &str) -> Vec<&'static str> {
    let (_, fixes) = super::repair_and_load_fixed(input).expect("repairs");
    fixes.iter().map(super::JsonFix::name).collect()
}

#[test]
fn each_fix_is_recorded_where_it_is_made() {
    let cases: &[(&str, &[&str])] = &[
        (r#"{"a": 1}"#, &[]),
        (r#"{"a": "b"#, &["truncated"]),
        (r#"{"a": "b""#, &["missing_closing"]),
        (r#"{"a": 1}}"#, &["extra_closing"]),
        ("Here it is: {\"a\": 1} done", &["surrounding_text"]),
        ("```json\n{\"a\": 1}\n```", &["code_fence"]),
        (r#"{"a": 1,}"#, &["trailing_comma"]),
        (r#"[1, 2,]"#, &["trailing_comma"]),
        (r#"{"a": 1 "b": 2}"#, &["missing_comma"]),
        (r#"[1 2]"#, &["missing_comma"]),
        (r#"{"a" 1}"#, &["missing_colon"]),
        ("{'a': 'b'}", &["single_quotes"]),
        ("{\"a\": “b”}", &["smart_quotes"]),
        (r#"{a: 1}"#, &["unquoted_keys"]),
        (r#"{"a": True, "b": None}"#, &["python_literals"]),
        ("{\"a\": 1 // note\n}", &["comment"]),
        (r#"{"a": 1}{"b": 2}"#, &["concatenated"]),
        (r#"{{"a": 1}}"#, &["double_braces"]),
        (r#"{{}}"#, &["double_braces"]),
        ("{\"a\": \"x\ny\"}", &["control_characters"]),
        (r#"{"a": "\s"}"#, &["invalid_escape"]),
        (r#"{"a": 3.1e, "b": 1}"#, &["invalid_number"]),
    ];
    for (input, want) in cases {
        if want.is_empty() {
            assert!(crate::pyjson::loads(input).is_ok());
            continue;
        }
        assert_eq!(fixes_of(input), *want, "{input:?}");
    }
}
