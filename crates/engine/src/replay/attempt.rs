//! One attempt through the error-correction layer's pure steps: response
//! handling → server-name repair → parsing (with JSON repair) → argument
//! fixes. Detection of rollbacks that need session state lives in the
//! session loop ([`super::session`]); the detectors are in [`crate::detect`].

use std::borrow::Cow;

use crate::detect::cause::FailCause;
use crate::model::{Attempt, Finish};
use crate::parse::{contains, toolcalls};
use crate::repair::{fix_args, Call, Repair, Repairs, ToolServerMapping};

/// What the LLM client and parser make of one attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Response<'a> {
    /// No usable response: the call failed, `finish_reason` was unsupported,
    /// or the parser raised. Upstream retries.
    Failed { error: String, cause: FailCause },
    /// A response. `text` is after the server-name repair.
    Answer {
        /// Borrowed from the attempt when no repair changed it.
        text: Cow<'a, str>,
        calls: Vec<Call>,
        /// `finish_reason` "length" with "Context length exceeded": the loop ends.
        context_exceeded: bool,
    },
}

/// Runs one attempt through the client, the repairs and the parser: the
/// response the loop goes on with.
pub fn response_of<'a>(
    attempt: &'a Attempt,
    mapping: &ToolServerMapping,
    tables: &Repairs,
) -> Response<'a> {
    response_given(attempt, mapping, tables, None)
}

/// What [`response_of`] gives when the server-name repair leaves the text
/// as written, which needs no loop state: it can be worked out ahead, on
/// another thread ([`response_as_written`]). The text is the attempt's own.
#[derive(Debug)]
pub struct AsWritten(Result<(Vec<Call>, bool), (String, FailCause)>);

/// [`AsWritten`] for `attempt`.
pub fn response_as_written(attempt: &Attempt, tables: &Repairs) -> AsWritten {
    let response = match failed_call(attempt) {
        Some(failed) => failed,
        None => respond(attempt, Cow::Borrowed(attempt.content.as_str()), tables),
    };
    AsWritten(match response {
        Response::Failed { error, cause } => Err((error, cause)),
        Response::Answer {
            calls,
            context_exceeded,
            ..
        } => Ok((calls, context_exceeded)),
    })
}

/// [`response_of`], taking `as_written` ([`response_as_written`] of the
/// same attempt) when the server-name repair changes nothing.
pub fn response_given<'a>(
    attempt: &'a Attempt,
    mapping: &ToolServerMapping,
    tables: &Repairs,
    as_written: Option<AsWritten>,
) -> Response<'a> {
    if let Some(failed) = failed_call(attempt) {
        return failed;
    }
    let fixed = tables.server.fix(attempt.content.as_str(), mapping);
    match (fixed, as_written) {
        (Cow::Borrowed(_), Some(AsWritten(Err((error, cause))))) => {
            Response::Failed { error, cause }
        }
        (Cow::Borrowed(_), Some(AsWritten(Ok((calls, context_exceeded))))) => Response::Answer {
            text: answer_text(attempt, Cow::Borrowed(attempt.content.as_str())),
            calls,
            context_exceeded,
        },
        (fixed, _) => respond(attempt, fixed, tables),
    }
}

/// The LLM call failed: no text to work on.
fn failed_call(attempt: &Attempt) -> Option<Response<'_>> {
    attempt.llm_error.as_ref().map(|err| Response::Failed {
        error: err.clone(),
        cause: FailCause::error(err),
    })
}

/// The text the loop goes on with, for an answer: an empty text cut off
/// by the length limit is upstream's placeholder.
fn answer_text<'a>(attempt: &Attempt, fixed: Cow<'a, str>) -> Cow<'a, str> {
    if attempt.finish == Finish::Length && fixed.is_empty() {
        Cow::Borrowed("LLM response is empty.")
    } else {
        fixed
    }
}

/// The response to the text after the server-name repair.
fn respond<'a>(attempt: &'a Attempt, fixed: Cow<'a, str>, tables: &Repairs) -> Response<'a> {
    let original = attempt.content.as_str();
    let mut context_exceeded = false;
    let text: Cow<'_, str> = match &attempt.finish {
        Finish::Stop => fixed,
        Finish::Length if fixed.is_empty() => answer_text(attempt, fixed),
        Finish::Length => {
            context_exceeded = contains(&fixed, "Context length exceeded");
            fixed
        }
        // Another harness sent tool definitions: ending on tool calls is normal.
        Finish::Unsupported(reason) if attempt.native_tools && reason == "tool_calls" => fixed,
        Finish::Unsupported(reason) => {
            return Response::Failed {
                error: format!("ValueError: Unsupported finish reason: {reason}"),
                cause: FailCause::UnsupportedFinish(reason.clone()),
            }
        }
    };
    let parsed = match toolcalls::parse_tool_calls(
        &text,
        attempt.tool_calls.as_ref(),
        attempt.output.as_ref(),
    ) {
        Ok(p) => p,
        Err(e) => {
            return Response::Failed {
                cause: FailCause::parser(&e.0),
                error: e.0,
            }
        }
    };
    let name_repairs = name_repairs(original, &text, &parsed, attempt);
    let calls = parsed
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let mut repairs = Vec::new();
            if let Some((server, tool)) = name_repairs.get(i) {
                if *server {
                    repairs.push(Repair::ServerName);
                }
                if *tool {
                    repairs.push(Repair::ToolName);
                }
            }
            if p.none_filtered {
                repairs.push(Repair::NoneFiltered);
            }
            let (arguments, fix_error) =
                match fix_args::fix_arguments(&p.tool_name, p.arguments, &tables.args) {
                    Ok((args, fixes)) => {
                        if fixes.alias {
                            repairs.push(Repair::ArgAlias);
                        }
                        if fixes.sandbox_id {
                            repairs.push(Repair::SandboxId);
                        }
                        (args, None)
                    }
                    Err((args, e)) => (args, Some(e.0)),
                };
            repairs.sort();
            Call {
                server_name: p.server_name,
                tool_name: p.tool_name,
                arguments,
                id: p.id,
                json: p.json,
                fixes: p.fixes,
                repairs,
                fix_error,
            }
        })
        .collect();
    Response::Answer {
        text,
        calls,
        context_exceeded,
    }
}

/// Which MCP-XML calls had their server or tool name rewritten by the
/// server-name repair: the text before and after are parsed side by side.
fn name_repairs(
    original: &str,
    fixed: &str,
    parsed: &[toolcalls::ParsedCall],
    attempt: &Attempt,
) -> Vec<(bool, bool)> {
    let mcp = toolcalls::format_of(attempt.tool_calls.as_ref(), attempt.output.as_ref())
        == toolcalls::CallFormat::McpXml;
    if !mcp || original == fixed {
        return Vec::new();
    }
    let before = toolcalls::mcp_blocks(original);
    if before.len() != parsed.len() {
        return Vec::new();
    }
    before
        .iter()
        .zip(parsed)
        .map(|((server, tool, _), call)| (*server != call.server_name, *tool != call.tool_name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Origin;
    use crate::policy::Policy;
    use crate::read::native::parse_line;

    fn attempt(json: &str) -> Attempt {
        parse_line(
            json,
            Origin {
                file: "t".into(),
                line: 1,
            },
        )
        .unwrap()
    }

    #[test]
    fn unsupported_finish_is_a_failed_call() {
        let a = attempt(r#"{"trace_id": "t", "content": "x", "finish_reason": "tool_calls"}"#);
        let p = Policy::default();
        let r = response_of(&a, &ToolServerMapping::new(), &Repairs::new(&p));
        assert!(matches!(r, Response::Failed { .. }));
    }

    #[test]
    fn tool_calls_finish_is_ordinary_for_native_tool_harnesses() {
        let mut a = attempt(
            r#"{"trace_id": "t", "content": null, "finish_reason": "tool_calls", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "s-t", "arguments": "{}"}}]}"#,
        );
        let p = Policy::default();
        let (mapping, fixer) = (ToolServerMapping::new(), Repairs::new(&p));
        assert!(matches!(
            response_of(&a, &mapping, &fixer),
            Response::Failed { .. }
        ));
        a.native_tools = true;
        let Response::Answer { text, calls, .. } = response_of(&a, &mapping, &fixer) else {
            panic!("expected an answer");
        };
        assert_eq!((text.as_ref(), calls.len()), ("", 1));
        a.finish = Finish::Unsupported("content_filter".into());
        assert!(matches!(
            response_of(&a, &mapping, &fixer),
            Response::Failed { .. }
        ));
    }

    #[test]
    fn length_with_empty_text_becomes_an_answer() {
        let a = attempt(r#"{"trace_id": "t", "content": "", "finish_reason": "length"}"#);
        let p = Policy::default();
        let r = response_of(&a, &ToolServerMapping::new(), &Repairs::new(&p));
        assert_eq!(
            r,
            Response::Answer {
                text: "LLM response is empty.".into(),
                calls: vec![],
                context_exceeded: false
            }
        );
    }

    #[test]
    fn repairs_are_attributed_per_call() {
        let prompt = "## Server name: tool-python\\n### Tool name: run_python_code\\n";
        let a = attempt(&format!(
            r#"{{"trace_id": "t", "system_prompt": "{prompt}", "content": "<use_mcp_tool><server_name>x</server_name><tool_name>python</tool_name><arguments>{{\"code\": \"1\"}}</arguments></use_mcp_tool>"}}"#
        ));
        let p = Policy::default();
        let mapping =
            crate::repair::server_fix::parse_mapping(a.system_prompt.as_deref().unwrap(), &p);
        let Response::Answer { calls, .. } = response_of(&a, &mapping, &Repairs::new(&p)) else {
            panic!("expected an answer");
        };
        assert_eq!(calls[0].server_name, "tool-python");
        assert_eq!(
            calls[0].repairs,
            vec![
                Repair::ArgAlias,
                Repair::SandboxId,
                Repair::ServerName,
                Repair::ToolName
            ]
        );
    }
}
