//! SWE-agent and mini-swe-agent trajectories → attempts.
//!
//! SWE-agent's `.traj` keeps the conversation in `history` (`role`,
//! `content`, `message_type`, `agent`; demonstrations marked `is_demo`).
//! With function calling, assistant items carry Chat Completions
//! `tool_calls` and tool items answer them with a `tool_call_ids` list.
//! Without it, the harness parsed the command out of the text itself and
//! recorded it as the item's `action`: that command is the call, to the
//! tool named by its first word, with `{"command": ACTION}` as arguments.
//!
//! mini-swe-agent keeps `messages`; each reply must hold exactly one
//! fenced shell block (```` ```bash ```` or ```` ```mswea_bash_command ````),
//! which the harness runs: that block is the call (`bash`). A reply with
//! none or several is a format error for the harness, and a reply without
//! a call here. Version 2 records the commands it parsed under
//! `extra.actions`, which are taken when present; tool-calling models'
//! replies carry `tool_calls`. Its closing `exit` message is not a turn.

use serde_json::{json, Map, Value as Json};
use std::borrow::Cow;

use super::calls::chat_call;
use super::chat::{self, ChatError};
use crate::model::{Attempt, Origin};

/// A record is a trajectory of one of the two harnesses, read as a chat
/// transcript once each text-parsed action is written as a call.
pub fn from_record(
    obj: &Map<String, Json>,
    origin: &Origin,
) -> Result<(String, Vec<Attempt>), ChatError> {
    let messages = match (obj.get("history"), obj.get("messages")) {
        (Some(Json::Array(h)), _) => h,
        (_, Some(Json::Array(m))) => m,
        _ => return Err(ChatError::NotAList),
    };
    // mini-swe-agent v2 closes a run with an `exit` message: not a turn.
    let rewritten: Vec<Cow<'_, Json>> = messages
        .iter()
        .filter(|m| {
            !matches!(m.get("role").and_then(Json::as_str), Some(r) if !KNOWN_ROLES.contains(&r))
        })
        .map(with_action_call)
        .collect();
    let (mut id, mut attempts) =
        chat::from_record_messages(obj, rewritten.iter().map(|m| &**m), None, origin)?;
    // A trajectory keeps no id of its own: the task's instance id where its
    // configuration names one, else the file's stem (as SWE-agent names
    // the file after the instance).
    if chat::record_id(obj).is_none() {
        if let Some(instance) = instance_id(obj) {
            let shared: std::sync::Arc<str> = instance.as_str().into();
            for a in &mut attempts {
                a.trace_id = shared.clone();
            }
            id = instance;
        }
    }
    super::attribution::give_run_model(&mut attempts, model_of(obj).as_deref());
    Ok((id, attempts))
}

/// Roles of the conversation proper; others (mini-swe-agent's `exit`) are
/// the harness's bookkeeping.
const KNOWN_ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// The run configuration's sections, where a trajectory keeps them (an
/// object, or SWE-agent 1.x's `replay_config` as JSON text).
fn configs(obj: &Map<String, Json>) -> impl Iterator<Item = Cow<'_, Json>> {
    [
        obj.get("info").and_then(|i| i.get("config")),
        obj.get("replay_config"),
        obj.get("config"),
    ]
    .into_iter()
    .flatten()
    .filter_map(|c| match c {
        Json::String(text) => serde_json::from_str::<Json>(text).ok().map(Cow::Owned),
        other => Some(Cow::Borrowed(other)),
    })
}

/// The task's instance id, as SWE-agent 1.x's configuration names it
/// (`problem_statement.id`).
fn instance_id(obj: &Map<String, Json>) -> Option<String> {
    configs(obj).find_map(|c| match c.get("problem_statement")?.get("id")? {
        Json::String(s) if !s.is_empty() => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// The model named in the trajectory's configuration, if any: SWE-agent
/// 1.x keeps its run configuration as `replay_config` (an object, or that
/// object as JSON text) with the model at `agent.model.name`; older
/// trajectories and mini-swe-agent keep `info.config` or `config` with
/// `model.model_name` or `model.name`.
fn model_of(obj: &Map<String, Json>) -> Option<String> {
    let config = |c: &Json| -> Option<String> {
        let model = c
            .get("agent")
            .and_then(|a| a.get("model"))
            .or_else(|| c.get("model"))?;
        let name = model
            .get("name")
            .or_else(|| model.get("model_name"))
            .or(Some(model))?;
        name.as_str().filter(|n| !n.is_empty()).map(str::to_string)
    };
    configs(obj).find_map(|c| config(&c))
}

/// An assistant item with its text-parsed action written as a tool call
/// (other items as they are).
fn with_action_call(message: &Json) -> Cow<'_, Json> {
    let Some(m) = message.as_object() else {
        return Cow::Borrowed(message);
    };
    let is_assistant = m.get("role").and_then(Json::as_str) == Some("assistant");
    let has_calls = m
        .get("tool_calls")
        .and_then(Json::as_array)
        .is_some_and(|c| !c.is_empty());
    if !is_assistant || has_calls {
        return Cow::Borrowed(message);
    }
    // mini-swe-agent v2 records the commands it parsed under `extra.actions`.
    let parsed: Vec<Json> = m
        .get("extra")
        .and_then(|e| e.get("actions"))
        .and_then(Json::as_array)
        .map(|actions| {
            actions
                .iter()
                .filter_map(|a| {
                    let command = a.get("command")?.as_str()?;
                    Some(chat_call(
                        a.get("tool_call_id"),
                        "bash",
                        &json!({ "command": command }),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    if !parsed.is_empty() {
        let mut out = m.clone();
        out.insert("tool_calls".into(), Json::Array(parsed));
        return Cow::Owned(Json::Object(out));
    }
    let command = match m.get("action").and_then(Json::as_str) {
        Some(action) if !action.trim().is_empty() => Some(action.trim().to_string()),
        Some(_) => None,
        None => m
            .get("content")
            .and_then(Json::as_str)
            .and_then(single_shell_block),
    };
    let Some(command) = command else {
        return Cow::Borrowed(message);
    };
    let tool = command
        .split_whitespace()
        .next()
        .filter(|_| m.contains_key("action"))
        .unwrap_or("bash");
    let mut out = m.clone();
    out.insert(
        "tool_calls".into(),
        Json::Array(vec![chat_call(None, tool, &json!({ "command": command }))]),
    );
    Cow::Owned(Json::Object(out))
}

/// The command of a reply holding exactly one fenced shell block
/// (```` ```bash ```` or ```` ```mswea_bash_command ````, up to the next
/// fence that starts a line).
fn single_shell_block(text: &str) -> Option<String> {
    let mut blocks = shell_blocks(text);
    let first = blocks.next()?;
    blocks.next().is_none().then(|| first.trim().to_string())
}

fn shell_blocks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || loop {
        let open = rest.find("```")?;
        let after = &rest[open + 3..];
        let Some(body) = after
            .strip_prefix("mswea_bash_command")
            .or_else(|| after.strip_prefix("bash"))
        else {
            rest = after;
            continue;
        };
        let body = body.trim_start_matches([' ', '\t', '\r']);
        let Some(body) = body.strip_prefix('\n') else {
            rest = body;
            continue;
        };
        let end = body.find("\n```")?;
        rest = &body[end + 4..];
        return Some(&body[..end]);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            file: "x.traj".into(),
            line: 1,
        }
    }

    #[test]
    fn text_actions_become_calls_and_demos_are_skipped() {
        let traj = json!({"trajectory": [], "info": {}, "history": [
            {"role": "system", "content": "SETTING", "agent": "primary"},
            {"role": "user", "content": "demo", "is_demo": true, "agent": "primary"},
            {"role": "user", "content": "issue", "agent": "primary"},
            {"role": "assistant", "content": "Look.\n```\nls -a\n```", "action": "ls -a\n", "agent": "primary"},
            {"role": "user", "content": "a b", "agent": "primary"},
            {"role": "assistant", "content": "Done.", "action": "", "agent": "primary"},
        ]});
        let (_, attempts) = from_record(traj.as_object().unwrap(), &origin()).unwrap();
        assert_eq!(attempts.len(), 2);
        let call = &attempts[0].tool_calls.as_ref().unwrap()[0]["function"];
        assert_eq!(call["name"], "ls");
        assert_eq!(call["arguments"], "{\"command\":\"ls -a\"}");
        assert_eq!(attempts[0].tool_results[0].result, "a b");
        assert!(attempts[1].tool_calls.is_none());
    }

    #[test]
    fn the_configured_model_is_every_attempts() {
        let history = json!([
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "a", "action": "ls"},
            {"role": "user", "content": "out"},
            {"role": "assistant", "content": "b", "action": "submit"},
        ]);
        let config = json!({"agent": {"model": {"name": "gpt-4o", "temperature": 1.0}}});
        // SWE-agent 1.x writes its run configuration as JSON text.
        for replay_config in [config.clone(), Json::from(config.to_string())] {
            let traj = json!({"info": {}, "history": history, "replay_config": replay_config});
            let (_, attempts) = from_record(traj.as_object().unwrap(), &origin()).unwrap();
            let models: Vec<_> = attempts.iter().map(|a| a.model.as_deref()).collect();
            assert_eq!(models, [Some("gpt-4o"), Some("gpt-4o")]);
        }
        let mini = json!({"info": {"config": {"model": {"model_name": "m"}}}, "messages": history});
        let (_, attempts) = from_record(mini.as_object().unwrap(), &origin()).unwrap();
        assert!(attempts.iter().all(|a| a.model.as_deref() == Some("m")));
        let none = json!({"info": {}, "history": history});
        let (_, attempts) = from_record(none.as_object().unwrap(), &origin()).unwrap();
        assert!(attempts.iter().all(|a| a.model.is_none()));
    }

    #[test]
    fn a_trajectory_is_named_by_its_instance_else_its_file() {
        let history = json!([{"role": "assistant", "content": "a", "action": "ls"}]);
        let at = |file: &str| Origin {
            file: file.into(),
            line: 1,
        };
        let config = json!({"problem_statement": {"id": "org__repo-7"}}).to_string();
        let traj = json!({"info": {}, "history": history, "replay_config": config});
        for file in ["x.traj", "./runs/a/x.traj", "/abs/runs/b/x.traj"] {
            let (id, attempts) = from_record(traj.as_object().unwrap(), &at(file)).unwrap();
            assert_eq!(id, "org__repo-7");
            assert_eq!(&*attempts[0].trace_id, "org__repo-7");
        }
        let bare = json!({"info": {}, "history": history});
        for file in ["x.traj", "./runs/a/x.traj", "/abs/runs/b/x.traj"] {
            let (id, attempts) = from_record(bare.as_object().unwrap(), &at(file)).unwrap();
            assert_eq!(id, "x");
            assert_eq!(&*attempts[0].trace_id, "x");
        }
    }

    #[test]
    fn mini_swe_agent_runs_the_single_shell_block() {
        assert_eq!(
            single_shell_block("THOUGHT\n```mswea_bash_command\necho hi\n```").as_deref(),
            Some("echo hi")
        );
        assert_eq!(single_shell_block("```bash\na\n```\n```bash\nb\n```"), None);
        assert_eq!(single_shell_block("no block"), None);
    }
}
