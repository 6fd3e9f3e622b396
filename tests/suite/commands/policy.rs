//! Policy files through the binary: the printed default is upstream's
//! behaviour exactly; other policies change verdicts where they should;
//! broken files are usage errors that name the file.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

fn run(args: &[&str]) -> Output {
    crate::common::mirotrace()
        .args(args)
        .output()
        .expect("run mirotrace")
}

use crate::common::fixture_path as fixture;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("policy-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn verdicts(o: &Output) -> Vec<Value> {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("verdict JSON"))
        .collect()
}

fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn printed_default_policy_changes_no_verdict() {
    let dir = temp_dir("default");
    let policy = dir.join("default.toml");
    let o = run(&["policy", "-o", policy.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("# ")
            && text.contains("refusal_keywords")
            && text.contains("[[arg_aliases]]")
    );
    // Stdout gets the same file.
    assert_eq!(run(&["policy"]).stdout, text.as_bytes());
    for name in ["model-a.jsonl", "model-b.jsonl"] {
        let f = fixture(name);
        let plain = run(&["replay", f.to_str().unwrap()]);
        let with = run(&[
            "replay",
            f.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
        ]);
        assert!(!plain.stdout.is_empty());
        assert_eq!(
            plain.stdout, with.stdout,
            "{name}: the default policy file changed verdicts"
        );
    }
}

#[test]
fn normalized_refusals_and_a_lower_limit_change_verdicts() {
    let dir = temp_dir("refusal");
    let traces = dir.join("t.jsonl");
    write_lines(
        &traces,
        &[
            json!({"trace_id": "t", "content": "I'm sorry, but I can't help with that."}),
            json!({"trace_id": "t", "content": "I\u{2019}m sorry, but I can\u{2019}t do it."}),
            json!({"trace_id": "t", "content": "\\boxed{1}"}),
        ],
    );
    let t = traces.to_str().unwrap();
    let outcomes = |v: &[Value]| -> Vec<(String, Value)> {
        v.iter()
            .map(|v| {
                (
                    v["outcome"].as_str().unwrap().to_string(),
                    v["reason"].clone(),
                )
            })
            .collect()
    };
    // Upstream: the straight apostrophes are missed, the loop ends.
    let up = verdicts(&run(&["replay", t]));
    assert_eq!(outcomes(&up)[0], ("final".to_string(), Value::Null));
    assert_eq!(up[1]["outcome"], "unreachable");

    let normalized = dir.join("normalized.toml");
    std::fs::write(&normalized, "refusal_match = \"normalized\"\n").unwrap();
    let v = verdicts(&run(&[
        "replay",
        t,
        "--policy",
        normalized.to_str().unwrap(),
    ]));
    assert_eq!(
        outcomes(&v),
        vec![
            ("rollback".to_string(), json!("refusal")),
            ("rollback".to_string(), json!("refusal")),
            ("final".to_string(), Value::Null),
        ]
    );

    // With a limit of 2 the second consecutive refusal ends the loop.
    let strict = dir.join("strict.toml");
    std::fs::write(
        &strict,
        "rollback_limit = 2\nrefusal_match = \"normalized\"\n",
    )
    .unwrap();
    let v = verdicts(&run(&["replay", t, "--policy", strict.to_str().unwrap()]));
    assert_eq!(outcomes(&v)[1], ("end".to_string(), json!("refusal")));
    assert_eq!(v[2]["outcome"], "unreachable");
}

#[test]
fn argument_tables_come_from_the_policy() {
    let dir = temp_dir("args");
    let traces = dir.join("t.jsonl");
    let call = |args: &str| {
        json!({"trace_id": "t", "content": "run", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "run_python_code", "arguments": args}}], "tool_results": [{"result": "ok"}]})
    };
    write_lines(&traces, &[call("{\"code\": \"1+1\"}")]);
    let t = traces.to_str().unwrap();
    let up = verdicts(&run(&["replay", t]));
    assert_eq!(
        up[0]["calls"][0]["repairs"],
        json!(["arg_alias", "sandbox_id"])
    );
    assert_eq!(
        up[0]["calls"][0]["arguments"],
        json!({"code_block": "1+1", "sandbox_id": "default"})
    );

    let off = dir.join("off.toml");
    std::fs::write(
        &off,
        "arg_aliases = []\n\n[[arg_defaults]]\ntool = \"run_python_code\"\nkey = \"sandbox_id\"\nvalue = \"sbx\"\n",
    )
    .unwrap();
    let v = verdicts(&run(&["replay", t, "--policy", off.to_str().unwrap()]));
    assert_eq!(v[0]["calls"][0]["repairs"], json!(["sandbox_id"]));
    assert_eq!(
        v[0]["calls"][0]["arguments"],
        json!({"code": "1+1", "sandbox_id": "sbx"})
    );
}

#[test]
fn broken_policy_files_are_usage_errors_naming_the_file() {
    let dir = temp_dir("broken");
    let f = fixture("model-a.jsonl");
    let typo = dir.join("typo.toml");
    std::fs::write(&typo, "refusal_keyword = [\"x\"]\n").unwrap();
    for cmd in ["replay", "keywords"] {
        let o = run(&[cmd, f.to_str().unwrap(), "--policy", typo.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("typo.toml") && err.contains("refusal_keyword"),
            "{cmd}: {err}"
        );
    }
    let zero = dir.join("zero.toml");
    std::fs::write(&zero, "rollback_limit = 0\n").unwrap();
    let o = run(&[
        "replay",
        f.to_str().unwrap(),
        "--policy",
        zero.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let missing = dir.join("missing.toml");
    let o = run(&[
        "replay",
        f.to_str().unwrap(),
        "--policy",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.toml"));
}

#[test]
fn a_blank_refusal_keyword_is_a_policy_error_in_either_match_mode() {
    let dir = temp_dir("blank");
    let f = fixture("model-a.jsonl");
    for mode in ["exact", "normalized"] {
        let p = dir.join(format!("blank-{mode}.toml"));
        std::fs::write(
            &p,
            format!("refusal_keywords = [\" \"]\nrefusal_match = \"{mode}\"\n"),
        )
        .unwrap();
        let o = run(&[
            "analyze",
            f.to_str().unwrap(),
            "--policy",
            p.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{mode}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("blank-{mode}.toml")) && err.contains("blank phrase"),
            "{mode}: {err}"
        );
    }
}
