//! One `step_logs` entry read: which agent loop it belongs to and what it
//! says about that loop's current LLM call.
//!
//! Upstream's step names are `[icon ]<agent> | [Turn: N | ]<label>` (the
//! orchestrator, with `Main Agent` or the sub-agent's name) or `<purpose> |
//! <label>` (the LLM call wrapper, whose purpose is `Main agent | Turn: N`
//! or `<sub-agent> | Turn: N`); the client logs `FATAL ERROR | <agent type> |
//! LLM Call ERROR`. Everything else (`LLM | …`, `ToolManager | …`, the
//! pipeline's `Main | …` and `task_…`) says nothing about a loop.

use crate::model::{LoggedQuery, Reason};

/// Which agent loop a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent<'a> {
    Main,
    /// A sub-agent, by name (`agent-browsing`); the session is the one open.
    Sub(&'a str),
}

/// A rollback, read from its message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RollbackInfo {
    /// `None` when the message is not one upstream writes.
    pub reason: Option<Reason>,
    pub tool: Option<String>,
    pub query: Option<LoggedQuery>,
    pub result: Option<String>,
    pub keywords: Vec<String>,
    /// `Consecutive rollbacks: N/…`: the streak after the rollback.
    pub streak: Option<u32>,
}

/// What a step says.
#[derive(Debug, Clone, PartialEq)]
pub enum StepKind<'a> {
    /// A loop turn's LLM call returned a response.
    LlmResponded,
    /// A loop turn's LLM call gave no response (`LLM Call Failed`, `LLM Call ERROR`).
    LlmFailed {
        error: &'a str,
    },
    /// The client's exception, logged just before `LLM Call Failed`.
    ClientError {
        error: &'a str,
    },
    /// The orchestrator found no usable text and retries the turn.
    RetryAfterEmpty,
    /// The client asked the loop to stop (context length exceeded).
    ShouldBreak,
    /// An answer without tool calls ended the loop normally.
    NoToolCalls,
    ToolStarted {
        tool: &'a str,
        server: &'a str,
    },
    ToolCompleted {
        tool: &'a str,
        result: Option<&'a str>,
    },
    ToolFailed {
        tool: &'a str,
        error: &'a str,
    },
    Rollback(RollbackInfo),
    AllowDuplicate {
        query: LoggedQuery,
        streak: Option<u32>,
    },
    EndAfterMaxRollbacks {
        info: RollbackInfo,
    },
    Recovery {
        streak: Option<u32>,
    },
    /// The context check after a successful turn ended the loop.
    ContextLimit,
    TooManyRollbacks,
    SessionStart {
        session: Option<&'a str>,
    },
    SessionEnd {
        session: Option<&'a str>,
    },
    /// `Main Loop Completed`, `Max Turns Reached / Context Limit Reached`.
    LoopOver,
    /// The summary prompt is about to be sent.
    FinalSummary,
    /// A step upstream writes that changes nothing in the loop.
    Other,
    /// The pipeline caught an exception (`task_error_details` carries the traceback).
    TaskError {
        details: Option<&'a str>,
    },
    /// A step of another part of upstream (client, tool manager, pipeline).
    NotAgent,
    /// A loop step whose message is not one upstream writes.
    UnknownMessage,
    /// A step name upstream does not write.
    UnknownName,
}

/// One step, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<'a> {
    pub agent: Option<Agent<'a>>,
    /// The `Turn: N` of the step name.
    pub turn: Option<i64>,
    pub kind: StepKind<'a>,
}

/// Labels of agent steps that change nothing in the loop.
const QUIET_LABELS: [&str; 9] = [
    "",
    "Task Description",
    "No Tools",
    "Tool Definitions",
    "Final boxed answer",
    "Usage Calculation",
    "Task Completed",
    "Failure Summary",
    "Final Answer",
];

/// First segments of steps that belong to no agent loop.
const NOT_AGENT: [&str; 3] = ["LLM", "Main", "ToolManager"];

/// Reads one step from its name and message.
pub fn read<'a>(name: &'a str, message: &'a str) -> Step<'a> {
    let name = name.trim_start_matches(|c: char| !c.is_alphanumeric());
    let mut segments = name.split(" | ").map(str::trim);
    let first = segments.next().unwrap_or_default();
    let rest: Vec<&str> = segments.collect();
    let plain = |kind| Step {
        agent: None,
        turn: None,
        kind,
    };
    match name {
        "task_execution_finished" => return plain(StepKind::NotAgent),
        "task_error_notification" => return plain(StepKind::TaskError { details: None }),
        "task_error_details" => {
            return plain(StepKind::TaskError {
                details: Some(message),
            })
        }
        _ => {}
    }
    if first == "FATAL ERROR" {
        return match rest.as_slice() {
            [agent_type, "LLM Call ERROR"] => Step {
                agent: Some(agent_of(agent_type)),
                turn: None,
                kind: StepKind::ClientError {
                    error: after(message, "failed: ").unwrap_or(message),
                },
            },
            _ => plain(StepKind::UnknownName),
        };
    }
    let agent = if first.eq_ignore_ascii_case("main agent") {
        Agent::Main
    } else if first.starts_with("agent-") {
        Agent::Sub(first)
    } else if NOT_AGENT.contains(&first) {
        return plain(StepKind::NotAgent);
    } else {
        return plain(StepKind::UnknownName);
    };
    let mut turn = None;
    // An LLM call for another purpose than a loop turn (the final summary,
    // the failure-experience summary).
    let mut other_call = false;
    for seg in &rest[..rest.len().saturating_sub(1)] {
        match seg.strip_prefix("Turn:") {
            Some(n) => turn = n.trim().parse().ok(),
            None => other_call = true,
        }
    }
    let label = rest.last().copied().unwrap_or_default();
    let kind = if other_call {
        match label {
            "LLM Call" | "LLM Call Failed" | "LLM Call ERROR" => StepKind::Other,
            _ => StepKind::UnknownName,
        }
    } else if turn.is_some() {
        turn_step(label, message)
    } else {
        loop_step(label, message)
    };
    Step {
        agent: Some(agent),
        turn,
        kind,
    }
}

fn agent_of(agent_type: &str) -> Agent<'_> {
    if agent_type == "main" || agent_type.eq_ignore_ascii_case("main agent") {
        Agent::Main
    } else {
        Agent::Sub(agent_type)
    }
}

/// A step of one turn (`… | Turn: N | <label>`).
fn turn_step<'a>(label: &str, message: &'a str) -> StepKind<'a> {
    match label {
        "LLM Call" => match message {
            "completed successfully" => StepKind::LlmResponded,
            "No valid response from LLM, retrying" | "LLM call failed" => StepKind::RetryAfterEmpty,
            "should break is True, breaking the loop" => StepKind::ShouldBreak,
            m if m == "LLM did not request tool usage, ending process."
                || m.starts_with("No tool calls found in ") =>
            {
                StepKind::NoToolCalls
            }
            _ => StepKind::UnknownMessage,
        },
        "LLM Call Failed" => StepKind::LlmFailed { error: message },
        "LLM Call ERROR" => StepKind::LlmFailed {
            error: after(message, " error: ").unwrap_or(message),
        },
        "Tool Call" => tool_step(message),
        "Rollback" => StepKind::Rollback(rollback(message)),
        "Allow Duplicate" => match duplicate(message) {
            Some(query) => StepKind::AllowDuplicate {
                query,
                streak: number_after(message, "after "),
            },
            None => StepKind::UnknownMessage,
        },
        "End After Max Rollbacks" => {
            let mut info = RollbackInfo {
                streak: number_after(message, "after "),
                ..RollbackInfo::default()
            };
            if message.contains("consecutive MCP format errors") {
                info.reason = Some(Reason::FormatError);
            } else if let Some(rest) = after(message, "consecutive refusals") {
                info.reason = Some(Reason::Refusal);
                info.keywords = keyword_list(rest);
            }
            StepKind::EndAfterMaxRollbacks { info }
        }
        "Recovery" => StepKind::Recovery {
            streak: number_after(message, "after "),
        },
        "Context Limit Reached" => StepKind::ContextLimit,
        _ => StepKind::UnknownName,
    }
}

/// A step of a loop outside any one turn.
fn loop_step<'a>(label: &str, message: &'a str) -> StepKind<'a> {
    match label {
        "Session Start" => StepKind::SessionStart {
            session: message
                .strip_prefix("Starting ")
                .and_then(|m| m.split_once(" for subtask"))
                .map(|(sid, _)| sid),
        },
        "Session End" => StepKind::SessionEnd {
            session: message.strip_prefix("Ending "),
        },
        "Too Many Rollbacks" => StepKind::TooManyRollbacks,
        "Main Loop Completed" | "Max Turns Reached / Context Limit Reached" => StepKind::LoopOver,
        "Final Summary" => StepKind::FinalSummary,
        l if QUIET_LABELS.contains(&l) || l.starts_with("Final Answer") => StepKind::Other,
        _ => StepKind::UnknownName,
    }
}

/// `Executing {tool} on {server}`, `Tool {tool} completed in {n}ms[\nResult: …]`,
/// `Tool {tool} failed to execute: {error}`.
fn tool_step(message: &str) -> StepKind<'_> {
    if let Some((tool, server)) = message
        .strip_prefix("Executing ")
        .and_then(|m| m.rsplit_once(" on "))
    {
        return StepKind::ToolStarted { tool, server };
    }
    let Some(rest) = message.strip_prefix("Tool ") else {
        return StepKind::UnknownMessage;
    };
    if let Some((tool, after)) = rest.split_once(" failed to execute: ") {
        return StepKind::ToolFailed { tool, error: after };
    }
    // Tool names have no spaces; a result may hold " completed in ".
    if let Some((tool, after)) = rest.split_once(" completed in ") {
        return StepKind::ToolCompleted {
            tool,
            result: after.split_once("ms\nResult: ").map(|(_, r)| r),
        };
    }
    StepKind::UnknownMessage
}

/// Reads a `Rollback` message: the reason the replay would give it and
/// what upstream quoted.
pub fn rollback(message: &str) -> RollbackInfo {
    let mut info = RollbackInfo {
        streak: number_after(message, "Consecutive rollbacks: "),
        ..RollbackInfo::default()
    };
    if message.starts_with("Tool call format incorrect") {
        info.reason = Some(Reason::FormatError);
    } else if let Some(rest) = after(message, "LLM refused to answer") {
        info.reason = Some(Reason::Refusal);
        info.keywords = keyword_list(rest);
    } else if message.starts_with("Duplicate query detected") {
        if let Some(q) = duplicate(message) {
            info.reason = Some(Reason::DuplicateQuery);
            info.tool = Some(q.tool.clone());
            info.query = Some(q);
        }
    } else if let Some(rest) = message.strip_prefix("Tool result error - tool: ") {
        if let Some((tool, quoted)) = rest.split_once(", result: '") {
            let quoted = quoted.strip_suffix('\'').unwrap_or(quoted);
            info.reason = Some(result_reason(quoted));
            info.tool = Some(tool.to_string());
            info.result = Some(quoted.to_string());
        }
    }
    info
}

/// How the replay classifies a tool-result text upstream rolled back on
/// (`should_rollback_result`): the prefixes first, else an empty search.
pub fn result_reason(text: &str) -> Reason {
    if text.starts_with("Unknown tool:") {
        Reason::UnknownTool
    } else if text.starts_with("Error executing tool") {
        Reason::ToolError
    } else {
        Reason::EmptySearch
    }
}

/// `… tool: {tool}, query: '{query}', previous count: N…` (the query may
/// hold anything, so its end is the last `', previous count:`).
fn duplicate(message: &str) -> Option<LoggedQuery> {
    let rest = after(message, "tool: ")?;
    let (tool, rest) = rest.split_once(", query: '")?;
    let (query, previous) = match rest.rfind("', previous count: ") {
        Some(end) => (
            &rest[..end],
            number_after(&rest[end..], "', previous count: "),
        ),
        None => (rest.rsplit_once('\'').map_or(rest, |(q, _)| q), None),
    };
    Some(LoggedQuery {
        tool: tool.to_string(),
        query: query.to_string(),
        previous,
    })
}

/// The text after the first `marker`.
fn after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.find(marker).map(|i| &text[i + marker.len()..])
}

/// The decimal number right after the first `marker`.
fn number_after(text: &str, marker: &str) -> Option<u32> {
    let rest = after(text, marker)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// The Python list of string reprs after `keywords: ` (`['a', "b's"]`).
fn keyword_list(text: &str) -> Vec<String> {
    let Some(list) = after(text, "keywords: [") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut chars = list.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == ',') {
            chars.next();
        }
        let Some(quote) = chars.next() else { break };
        if quote != '\'' && quote != '"' {
            break;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(other) => s.push(other),
                    None => break,
                },
                c if c == quote => break,
                c => s.push(c),
            }
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_lose_icons_and_split() {
        let s = read(
            "👑 Main Agent | Turn: 3 | Rollback",
            "Tool call format incorrect - found MCP tags in response. Consecutive rollbacks: 2/5, Total attempts: 4/220",
        );
        assert_eq!((s.agent, s.turn), (Some(Agent::Main), Some(3)));
        match s.kind {
            StepKind::Rollback(info) => {
                assert_eq!(
                    (info.reason, info.streak),
                    (Some(Reason::FormatError), Some(2))
                )
            }
            other => panic!("{other:?}"),
        }
        let s = read("🤖 agent-browsing | Too Many Rollbacks", "Reached 5");
        assert_eq!(
            (s.agent, s.kind),
            (
                Some(Agent::Sub("agent-browsing")),
                StepKind::TooManyRollbacks
            )
        );
        let s = read(
            "🧠 Main agent | Turn: 2 | LLM Call",
            "completed successfully",
        );
        assert_eq!((s.turn, s.kind), (Some(2), StepKind::LlmResponded));
        let s = read(
            "🧠 Main agent | Final Summary (attempt 1/3) | LLM Call",
            "completed successfully",
        );
        assert_eq!(s.kind, StepKind::Other);
        let s = read(
            "👑 Main Agent | Failure Experience Summary | LLM Call Failed",
            "x",
        );
        assert_eq!(s.kind, StepKind::Other);
        assert_eq!(
            read("👑 Main Agent | Something | Rollback", "x").kind,
            StepKind::UnknownName
        );
        let s = read(
            "🧠 FATAL ERROR | main | LLM Call ERROR",
            "main failed: Connection error.",
        );
        assert_eq!(
            (s.agent, s.kind),
            (
                Some(Agent::Main),
                StepKind::ClientError {
                    error: "Connection error."
                }
            )
        );
        for other in [
            "🧠 LLM | Token Usage",
            "Main | Task Start",
            "▶️ ToolManager | Tool Call Start",
        ] {
            assert_eq!(read(other, "x").kind, StepKind::NotAgent, "{other}");
        }
        assert_eq!(read("🔮 Oracle | Vision", "x").kind, StepKind::UnknownName);
        assert_eq!(
            read("👑 Main Agent | Turn: 1 | Teleport", "x").kind,
            StepKind::UnknownName
        );
        assert_eq!(
            read("👑 Main Agent | Turn: 1 | LLM Call", "something new").kind,
            StepKind::UnknownMessage
        );
    }

    #[test]
    fn rollback_messages_map_to_reasons() {
        let r = |m: &str| rollback(m).reason;
        assert_eq!(r("LLM refused to answer - found refusal keywords: ['time constraint']. Consecutive rollbacks: 1/5"), Some(Reason::Refusal));
        assert_eq!(
            r("Tool result error - tool: google_search, result: 'Unknown tool: x'"),
            Some(Reason::UnknownTool)
        );
        assert_eq!(
            r("Tool result error - tool: scrape, result: 'Error executing tool scrape: 500'"),
            Some(Reason::ToolError)
        );
        assert_eq!(
            r("Tool result error - tool: google_search, result: '{\"organic\": []}'"),
            Some(Reason::EmptySearch)
        );
        assert_eq!(r("Something new"), None);
        let info = rollback("Duplicate query detected - tool: google_search, query: 'google_search_it's, previous count: 2', previous count: 1. Consecutive rollbacks: 3/5, Total attempts: 3/220");
        assert_eq!(info.reason, Some(Reason::DuplicateQuery));
        let q = info.query.unwrap();
        assert_eq!(
            (q.tool.as_str(), q.query.as_str(), q.previous),
            (
                "google_search",
                "google_search_it's, previous count: 2",
                Some(1)
            )
        );
        assert_eq!(info.streak, Some(3));
    }

    #[test]
    fn keywords_limits_and_tools_are_read() {
        match read(
            "👑 Main Agent | Turn: 4 | End After Max Rollbacks",
            "Ending agent loop after 4 consecutive refusals with keywords: ['time constraint', \"I'm sorry, I cannot solve\"]",
        )
        .kind
        {
            StepKind::EndAfterMaxRollbacks { info } => {
                assert_eq!(info.reason, Some(Reason::Refusal));
                assert_eq!(info.streak, Some(4));
                assert_eq!(info.keywords, ["time constraint", "I'm sorry, I cannot solve"]);
            }
            other => panic!("{other:?}"),
        }
        match read("👑 Main Agent | Turn: 2 | Allow Duplicate", "Allowing duplicate query after 4 rollbacks - tool: scrape_website, query: 'scrape_website_https://a.b', previous count: 1").kind {
            StepKind::AllowDuplicate { query, streak } => {
                assert_eq!((query.query.as_str(), query.previous, streak), ("scrape_website_https://a.b", Some(1), Some(4)));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            tool_step("Tool google_search completed in 217ms\nResult: {\"a\": 1}"),
            StepKind::ToolCompleted {
                tool: "google_search",
                result: Some("{\"a\": 1}")
            }
        );
        assert_eq!(
            tool_step(
                "Tool search_and_browse failed to execute: 'bool' object has no attribute 'copy'"
            ),
            StepKind::ToolFailed {
                tool: "search_and_browse",
                error: "'bool' object has no attribute 'copy'"
            }
        );
        assert_eq!(
            tool_step("Executing run_python_code on <server_name>tool-python"),
            StepKind::ToolStarted {
                tool: "run_python_code",
                server: "<server_name>tool-python"
            }
        );
    }
}
