//! Per-call tool results for a surviving turn: upstream joins the results
//! of one turn's calls with `\n` into one user message; where the step log
//! quotes each call's result (MiroFlow's `completed in …ms\nResult: …`) and
//! those rebuild the message exactly, the turn gets one result per call.

use crate::model::{Attempt, LoggedCall, ToolResult};

/// Upstream's cap on a tool result fed back to the model (`TOOL_RESULT_MAX_LENGTH`).
const TOOL_RESULT_MAX_CHARS: usize = 100_000;

/// Replaces an attempt's single merged result by per-call results, when the
/// logged results rebuild the merged text exactly.
pub fn refine(attempt: &mut Attempt, calls: &[LoggedCall]) {
    if calls.is_empty() {
        return;
    }
    let [merged] = attempt.tool_results.as_slice() else {
        return;
    };
    if merged.error.is_some() {
        return;
    }
    if let Some(split) = split(&merged.result, calls) {
        attempt.tool_results = split;
        return;
    }
    // One call that returned without a logged result: a message in the form
    // upstream gives an error result is that error (what upstream checked
    // for a rollback), not a result text.
    if let [call] = calls {
        if call.completed && call.result.is_none() && call.error.is_none() {
            if let Some(error) = error_message(&merged.result, &call.tool) {
                attempt.tool_results = vec![failed(error)];
            }
        }
    }
}

/// `{error}` of a whole `Tool call to {tool} on {server} failed. Error: {error}`.
fn error_message<'a>(text: &'a str, tool: &str) -> Option<&'a str> {
    let rest = text
        .strip_prefix("Tool call to ")?
        .strip_prefix(tool)?
        .strip_prefix(" on ")?;
    rest.split_once(" failed. Error: ").map(|(_, e)| e)
}

/// The merged text cut into the calls' results, or `None` when they do not
/// rebuild it.
pub fn split(merged: &str, calls: &[LoggedCall]) -> Option<Vec<ToolResult>> {
    let mut rest = merged;
    let mut out = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix('\n')?;
        }
        let tool = call.tool.as_str();
        let (result, after) = match (&call.error, &call.result) {
            (Some(error), _) => {
                let wrapped = format!("Tool call failed: {error}");
                match strip_error(rest, tool, error) {
                    Some(after) => (failed(error), after),
                    None => (failed(&wrapped), strip_error(rest, tool, &wrapped)?),
                }
            }
            (None, Some(result)) if call.completed => match strip_result(rest, result) {
                Some(after) => (
                    ToolResult {
                        result: result.clone(),
                        error: None,
                        failed: false,
                    },
                    after,
                ),
                None => (failed(result), strip_error(rest, tool, result)?),
            },
            _ => return None,
        };
        out.push(result);
        rest = after;
    }
    rest.is_empty().then_some(out)
}

fn failed(error: &str) -> ToolResult {
    ToolResult {
        result: String::new(),
        error: Some(error.to_string()),
        failed: false,
    }
}

/// `text` after the result as fed to the model (cut at upstream's cap).
fn strip_result<'a>(text: &'a str, result: &str) -> Option<&'a str> {
    match result.char_indices().nth(TOOL_RESULT_MAX_CHARS) {
        None => text.strip_prefix(result),
        Some((cut, _)) => text
            .strip_prefix(&result[..cut])?
            .strip_prefix("\n... [Result truncated]"),
    }
}

/// `text` after `Tool call to {tool} on {server} failed. Error: {error}`.
fn strip_error<'a>(text: &'a str, tool: &str, error: &str) -> Option<&'a str> {
    let rest = text
        .strip_prefix("Tool call to ")?
        .strip_prefix(tool)?
        .strip_prefix(" on ")?;
    let (_, rest) = rest.split_once(" failed. Error: ")?;
    rest.strip_prefix(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(tool: &str, result: &str) -> LoggedCall {
        LoggedCall {
            tool: tool.into(),
            completed: true,
            result: Some(result.into()),
            ..LoggedCall::default()
        }
    }

    #[test]
    fn merged_results_split_when_the_log_rebuilds_them() {
        let calls = vec![
            completed("google_search", "{\"organic\": [1]}"),
            completed("scrape", "Error executing tool scrape: boom"),
            LoggedCall {
                tool: "python".into(),
                error: Some("timeout".into()),
                ..LoggedCall::default()
            },
        ];
        let merged = "{\"organic\": [1]}\nTool call to scrape on tool-s failed. Error: Error executing tool scrape: boom\nTool call to python on tool-p failed. Error: timeout";
        let split = split(merged, &calls).unwrap();
        assert_eq!(split[0].result, "{\"organic\": [1]}");
        assert_eq!(
            split[1].error.as_deref(),
            Some("Error executing tool scrape: boom")
        );
        assert_eq!(split[2].effective_text(), "timeout");
        assert!(super::split("something else", &calls).is_none());
        // Without logged results nothing can be split.
        let bare = vec![LoggedCall {
            tool: "google_search".into(),
            completed: true,
            ..LoggedCall::default()
        }];
        assert!(super::split("{}", &bare).is_none());
        // …but one call's error message is still read as its error.
        let mut a = crate::model::Attempt::recorded_only(
            crate::model::Origin {
                file: "t".into(),
                line: 1,
            },
            "t".into(),
            "main".into(),
            "main".into(),
            crate::model::Recorded::default(),
        );
        a.tool_results = vec![ToolResult {
            result: "Tool call to google_search on tool-g failed. Error: Error executing tool google_search: 500".into(),
            error: None,
            failed: false,
        }];
        refine(&mut a, &bare);
        assert_eq!(
            a.tool_results[0].error.as_deref(),
            Some("Error executing tool google_search: 500")
        );
    }
}
