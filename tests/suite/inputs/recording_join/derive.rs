//! A recording of the run that wrote `tests/data/tasklogs/`, derived from
//! that run's complete native traces: what a proxy in front of the
//! scripted client would have recorded. Each LLM call the step logs show
//! (loop turns and summary calls, in step order) becomes one recorded call
//! whose request opens its session's conversation and whose answer is the
//! native trace's next attempt of that session (the failure for a failed
//! call); a turn the traces do not have (the scripted client's filler
//! after a session's last line) answers with the filler it wrote. Every
//! seventh call is first refused with a 429 and tried again by the SDK
//! (`x-stainless-retry-count: 1`).

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use serde_json::{json, Value as Json};

/// The recording, and what it holds besides attempts.
pub struct Derived {
    pub lines: Vec<String>,
    pub summary_calls: u64,
    pub sdk_retries: u64,
}

struct Native {
    content: Option<String>,
    error: Option<String>,
    finish: Option<String>,
    usage: (u64, u64),
}

fn text_of(content: Option<&Json>) -> Option<String> {
    match content? {
        Json::String(s) => Some(s.clone()),
        Json::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Json::as_str))
                .collect(),
        ),
        _ => None,
    }
}

/// (system prompt, first user text, assistant texts) of a saved history.
fn opening(h: &Json) -> (Option<String>, Option<String>, VecDeque<String>) {
    let messages = h
        .get("message_history")
        .and_then(Json::as_array)
        .or_else(|| h.as_array())
        .cloned()
        .unwrap_or_default();
    let role = |m: &Json, r: &str| m.get("role").and_then(Json::as_str) == Some(r);
    (
        h.get("system_prompt")
            .and_then(Json::as_str)
            .map(str::to_string),
        messages
            .iter()
            .find(|m| role(m, "user"))
            .and_then(|m| text_of(m.get("content"))),
        messages
            .iter()
            .filter(|m| role(m, "assistant"))
            .filter_map(|m| text_of(m.get("content")))
            .collect(),
    )
}

/// Derives the recording from the task logs in `logs` (plain JSON) and the
/// run's native traces and verdicts (JSONL text).
pub fn derive(logs: &Path, traces: &str, verdicts: &str) -> Derived {
    // The attempts upstream made (not the `unreachable` lines), per task and session.
    let mut natives: HashMap<(String, String), VecDeque<Native>> = HashMap::new();
    let mut prompts: HashMap<(String, String), String> = HashMap::new();
    for (t, v) in traces.lines().zip(verdicts.lines()) {
        let t: Json = serde_json::from_str(t).expect("a trace line");
        let v: Json = serde_json::from_str(v).expect("a verdict line");
        let key = (
            v["trace_id"].as_str().unwrap().to_string(),
            v["session"].as_str().unwrap().to_string(),
        );
        if let Some(p) = t["system_prompt"].as_str() {
            prompts.entry(key.clone()).or_insert_with(|| p.to_string());
        }
        if v["outcome"] == "unreachable" {
            continue;
        }
        natives.entry(key).or_default().push_back(Native {
            content: t["content"].as_str().map(str::to_string),
            error: t["llm_error"].as_str().map(str::to_string),
            finish: t["finish_reason"].as_str().map(str::to_string),
            usage: (
                t["meta"]["prompt_tokens"].as_u64().unwrap_or(10),
                t["meta"]["completion_tokens"].as_u64().unwrap_or(5),
            ),
        });
    }
    let mut files: Vec<_> = std::fs::read_dir(logs)
        .expect("the task logs")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    let mut out = Derived {
        lines: Vec::new(),
        summary_calls: 0,
        sdk_retries: 0,
    };
    let mut call = 0u64;
    for (n, file) in files.iter().enumerate() {
        let doc: Json =
            serde_json::from_str(&std::fs::read_to_string(file).expect("a task log")).unwrap();
        let task = doc["task_id"].as_str().unwrap().to_string();
        let header = format!("{task}-{:08x}-0000-4000-8000-{:012x}", n + 1, n + 1);
        let start = doc["start_time"].as_str().unwrap().replace(' ', "T");
        let mut openings = HashMap::new();
        openings.insert(
            "main".to_string(),
            opening(&doc["main_agent_message_history"]),
        );
        if let Some(subs) = doc["sub_agent_message_history_sessions"].as_object() {
            for (sid, h) in subs {
                openings.insert(sid.clone(), opening(h));
            }
        }
        let mut subtasks: HashMap<String, String> = HashMap::new();
        let mut open_sub: Option<String> = None;
        for step in doc["step_logs"].as_array().unwrap() {
            let name = step["step_name"]
                .as_str()
                .unwrap()
                .trim_start_matches(|c: char| !c.is_alphanumeric());
            let message = step["message"].as_str().unwrap_or_default();
            let segs: Vec<&str> = name.split(" | ").map(str::trim).collect();
            match segs.get(1) {
                Some(&"Session Start") => {
                    let sid = step["metadata"]["session_id"].as_str().unwrap().to_string();
                    if let Some(s) = step["metadata"]["subtask"].as_str() {
                        subtasks.insert(sid.clone(), s.to_string());
                    }
                    open_sub = Some(sid);
                    continue;
                }
                Some(&"Session End") => {
                    open_sub = None;
                    continue;
                }
                _ => {}
            }
            if ["LLM", "Main", "ToolManager", "FATAL ERROR"].contains(&segs[0]) || segs.len() != 3 {
                continue;
            }
            let label = segs[2];
            let is_turn = segs[1].starts_with("Turn:");
            let called = match label {
                "LLM Call" => message == "completed successfully",
                "LLM Call Failed" | "LLM Call ERROR" => true,
                _ => false,
            };
            if !called {
                continue;
            }
            let session = if segs[0].eq_ignore_ascii_case("main agent") {
                "main".to_string()
            } else {
                open_sub
                    .clone()
                    .expect("a sub-agent step inside its session")
            };
            let key = (task.clone(), session.clone());
            let (prompt, first_user, _) = openings
                .entry(session.clone())
                .or_insert_with(|| (None, None, VecDeque::new()));
            let answer = if !is_turn {
                out.summary_calls += 1;
                Native {
                    content: Some("A summary of the session.".into()),
                    error: None,
                    finish: None,
                    usage: (10, 5),
                }
            } else {
                match natives.get_mut(&key).and_then(VecDeque::pop_front) {
                    Some(a) => a,
                    // The scripted client's answer once its lines ran out.
                    None => Native {
                        content: Some("No further recorded attempts.".into()),
                        error: None,
                        finish: None,
                        usage: (10, 5),
                    },
                }
            };
            let system = prompt
                .clone()
                .or_else(|| prompts.get(&key).cloned())
                .unwrap_or_else(|| "a prompt".into());
            let user = first_user
                .clone()
                .or_else(|| subtasks.get(&session).cloned())
                .unwrap_or_else(|| "a task".into());
            let mut messages = vec![
                json!({"role": "system", "content": system}),
                json!({"role": "user", "content": user}),
            ];
            // A summary call ends with upstream's summary prompt.
            if !is_turn {
                let prompt = if session == "main" {
                    "Summarize the above conversation, and output the FINAL ANSWER to the original question."
                } else {
                    "This is a direct instruction to you (the assistant), not the result of a tool call.\n\nWe are now ending this session."
                };
                messages.push(json!({"role": "user", "content": prompt}));
            }
            let mut write = |retry: u32, answer: &Native| {
                call += 1;
                let response = match (&answer.error, retry, call.is_multiple_of(7)) {
                    (_, 0, true) => json!({"status": 429, "headers": {}, "bytes": 30,
                        "body": {"error": {"message": "rate limited"}}}),
                    (Some(e), _, _) => json!({"status": 500, "headers": {}, "bytes": 30,
                        "body": {"error": {"message": e}}}),
                    (None, _, _) => {
                        json!({"status": 200, "headers": {"content-type": "application/json"}, "bytes": 100,
                        "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer.content},
                                              "finish_reason": answer.finish.as_deref().unwrap_or("stop")}],
                                 "usage": {"prompt_tokens": answer.usage.0, "completion_tokens": answer.usage.1}}})
                    }
                };
                let line = json!({
                    "mirotrace_recording": 1,
                    "call": call,
                    "started": format!("{start}.{call:06}+08:00"),
                    "seconds": 0.25,
                    "upstream": "http://127.0.0.1:9/v1",
                    "request": {"method": "POST", "path": "/v1/chat/completions",
                        "headers": {"content-type": "application/json", "x-upstream-session-id": header,
                                    "x-stainless-retry-count": retry.to_string()},
                        "redacted": ["authorization"], "bytes": 100,
                        "body": {"model": "m", "messages": messages}},
                    "response": response,
                    "error": null,
                });
                line.to_string()
            };
            let first = write(0, &answer);
            let refused = first.contains("\"status\":429");
            out.lines.push(first);
            if refused {
                out.sdk_retries += 1;
                let again = write(1, &answer);
                out.lines.push(again);
            }
        }
    }
    out
}
