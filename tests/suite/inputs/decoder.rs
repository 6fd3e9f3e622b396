//! The streaming line decoder against a reference that reads each line into
//! a JSON tree first (the obvious way, and what the decoder replaced):
//! every field must come out the same, whatever the key order, duplicate
//! keys, escapes, or the prompts of the lines before.

use mirotrace::read::native::LineDecoder;
use mirotrace::read::{Attempt, Finish, Origin, ToolResult};
use proptest::prelude::*;
use serde_json::Value as Json;

/// What a line must decode to, read from a `serde_json::Value` (duplicate
/// keys: the last wins, as in Python; serde_json's map does the same).
#[derive(Debug, PartialEq)]
struct Expected {
    trace_id: String,
    session: String,
    agent: String,
    system_prompt: Option<String>,
    content: String,
    finish: Finish,
    llm_error: Option<String>,
    tool_results: Vec<ToolResult>,
    model: Option<String>,
    max_turns: Option<i64>,
    tool_calls: Option<Json>,
}

fn text_of(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => mirotrace::pyjson::dump(&mirotrace::pyjson::Value::from_serde(other)),
    }
}

fn reference(text: &str) -> Option<Expected> {
    let Json::Object(map) = serde_json::from_str::<Json>(text).ok()? else {
        return None;
    };
    let field = |k: &str| map.get(k).filter(|v| !v.is_null());
    let trace_id = field("trace_id")?.as_str()?.to_string();
    // A trace id with none of an attempt's fields (nor a message list) is
    // no attempt (issue 22).
    let attempt_keys = mirotrace::read::sniff::ATTEMPT_KEYS;
    let list_keys = mirotrace::read::chat::MESSAGE_KEYS;
    if !attempt_keys
        .iter()
        .chain(list_keys.iter())
        .any(|k| map.contains_key(*k))
    {
        return None;
    }
    // Nor is one without the model's output, unless it is a chat record
    // (issue 40: the text may be under a key not read).
    let output_keys = [
        "content",
        "tool_calls",
        "output",
        "finish_reason",
        "llm_error",
    ];
    if !output_keys
        .iter()
        .chain(list_keys.iter())
        .any(|k| map.contains_key(*k))
    {
        return None;
    }
    let session = match field("session") {
        None => "main".to_string(),
        Some(v) => v.as_str()?.to_string(),
    };
    let agent = match field("agent").and_then(Json::as_str) {
        Some(a) => a.to_string(),
        None => mirotrace::model::agent_of_session(&session),
    };
    let content = match field("content") {
        None => String::new(),
        Some(v) => v.as_str()?.to_string(),
    };
    let finish = match field("finish_reason") {
        None => Finish::Stop,
        Some(Json::String(s)) if s == "stop" => Finish::Stop,
        Some(Json::String(s)) if s == "length" => Finish::Length,
        Some(Json::String(s)) => Finish::Unsupported(s.clone()),
        Some(other) => Finish::Unsupported(other.to_string()),
    };
    let tool_results = match field("tool_results") {
        None => Vec::new(),
        Some(Json::Array(items)) => items
            .iter()
            .map(|item| match item {
                Json::Object(entry) => ToolResult {
                    result: entry.get("result").map(text_of).unwrap_or_default(),
                    error: entry.get("error").map(|e| match e {
                        Json::Null => "None".to_string(),
                        other => text_of(other),
                    }),
                    failed: false,
                },
                other => ToolResult {
                    result: mirotrace::pyjson::dump(&mirotrace::pyjson::Value::from_serde(other)),
                    error: None,
                    failed: false,
                },
            })
            .collect(),
        Some(_) => return None,
    };
    let meta = field("meta");
    Some(Expected {
        trace_id,
        session,
        agent,
        system_prompt: field("system_prompt")
            .and_then(Json::as_str)
            .map(str::to_string),
        content,
        finish,
        llm_error: field("llm_error").map(|e| match e {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        }),
        tool_results,
        model: meta
            .and_then(|m| m.get("model"))
            .and_then(Json::as_str)
            .map(str::to_string),
        max_turns: meta.and_then(|m| m.get("max_turns")).and_then(Json::as_i64),
        tool_calls: field("tool_calls").cloned(),
    })
}

fn observed(a: &Attempt) -> Expected {
    Expected {
        trace_id: a.trace_id.to_string(),
        session: a.session.to_string(),
        agent: a.agent.to_string(),
        system_prompt: a.system_prompt.as_deref().map(str::to_string),
        content: a.content.clone(),
        finish: a.finish.clone(),
        llm_error: a.llm_error.clone(),
        tool_results: a.tool_results.clone(),
        model: a.model.as_deref().map(str::to_string),
        max_turns: a.max_turns,
        tool_calls: a.tool_calls.clone(),
    }
}

/// A JSON string token for `s`, in one of the ways writers escape text.
fn token(s: &str, style: u8) -> String {
    match style % 3 {
        0 => serde_json::to_string(s).unwrap(),
        // Python's json.dumps: non-ASCII as \u escapes.
        1 => {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    c if (c as u32) < 0x20 || !c.is_ascii() => {
                        let mut buf = [0u16; 2];
                        for unit in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        // Every character escaped the long way.
        _ => {
            let mut out = String::from("\"");
            for c in s.chars() {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            out.push('"');
            out
        }
    }
}

/// Prompts from a small pool, so that lines repeat them.
fn prompt() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("## Server name: s\n### Tool name: google_search\n".to_string()),
        Just("Main \"agent\" prompt: ü, 中文, \\ end\n".to_string()),
        // Same length, same opening: only the whole token tells them apart.
        Just("sub-agent A".to_string()),
        Just("sub-agent B".to_string()),
        Just(String::new()),
        "\\PC{0,6}",
    ]
}

/// One `"key": value` member, the key sometimes escaped.
fn member() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        (prompt(), any::<u8>()).prop_map(|(p, style)| token(&p, style)),
        Just("null".to_string()),
        Just("3".to_string()),
        Just("[1, {\"a\": \"b\"}]".to_string()),
        Just("{\"model\": \"m\", \"max_turns\": 7}".to_string()),
        Just("{\"model\": 5, \"max_turns\": 7.0, \"model\": \"n\"}".to_string()),
        Just(
            "[{\"result\": \"r\"}, {\"error\": null}, \"x\", {\"result\": {\"k\": [1]}}]"
                .to_string()
        ),
        Just("\"t1\"".to_string()),
        Just("\"agent-browsing_2\"".to_string()),
    ];
    let key = prop_oneof![
        Just("\"trace_id\""),
        Just("\"system_prompt\""),
        Just("\"system\\u005fprompt\""),
        Just("\"session\""),
        Just("\"agent\""),
        Just("\"content\""),
        Just("\"finish_reason\""),
        Just("\"llm_error\""),
        Just("\"tool_results\""),
        Just("\"tool_calls\""),
        Just("\"meta\""),
        Just("\"other\""),
    ];
    // Now and then bytes that no value may be followed by (but a number
    // could absorb): the line must be refused as the reference refuses it.
    let junk = prop_oneof![8 => Just(""), 1 => Just("e5"), 1 => Just(".5")];
    (key, value, junk).prop_map(|(k, v, j)| format!("{k}: {v}{j}"))
}

/// A line: a trace id first (as writers put it), then members in any order.
fn line() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(member(), 0..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(members, id_first, truncate)| {
            let mut all = Vec::new();
            if id_first {
                all.push("\"trace_id\": \"t\"".to_string());
            }
            all.extend(members);
            let mut text = format!("{{{}}}", all.join(", "));
            if truncate {
                let mut cut = text.len() / 2;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// One decoder fed a whole file decodes each line as the reference does.
    #[test]
    fn decoder_agrees_with_a_tree_reference(lines in proptest::collection::vec(line(), 1..12)) {
        let mut decoder = LineDecoder::new(false);
        for (i, text) in lines.iter().enumerate() {
            let origin = Origin { file: "p".into(), line: i as u64 + 1 };
            let got = decoder.decode(text, origin.clone()).ok();
            match reference(text) {
                Some(expected) => {
                    let got = got.ok_or_else(|| TestCaseError::fail(format!("rejected {text}")))?;
                    prop_assert_eq!(observed(&got), expected, "line {}", text);
                }
                None => {
                    // serde_json rejects lines Python accepts (never here:
                    // the generator writes strict JSON), so any line the
                    // reference refuses must be refused.
                    prop_assert!(got.is_none(), "accepted {}", text);
                }
            }
        }
    }
}
