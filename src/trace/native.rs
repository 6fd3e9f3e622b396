//! The native line format (`../shared/spec/trace-format.md`): one JSON object per attempt.

use serde::Deserialize;
use serde_json::Value as Json;

use super::model::{agent_of_session, Attempt, Finish, Origin, ToolResult};
use crate::pyjson;

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a JSON object")]
    NotObject,
    #[error("missing string \"trace_id\"")]
    NoTraceId,
    #[error("\"session\" is not a string")]
    BadSession,
    #[error("\"content\" is neither a string nor null")]
    BadContent,
    #[error("\"tool_results\" is not a list")]
    BadToolResults,
    #[error("{0}")]
    Other(String),
}

/// The fields of a line, each as recorded. Unknown fields are ignored.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawLine {
    trace_id: Option<Json>,
    session: Option<Json>,
    agent: Option<Json>,
    system_prompt: Option<Json>,
    content: Option<Json>,
    tool_calls: Option<Json>,
    output: Option<Json>,
    finish_reason: Option<Json>,
    llm_error: Option<Json>,
    tool_results: Option<Json>,
    meta: Option<Json>,
}

/// Parses one line into an attempt.
///
/// serde_json does the work for ordinary lines; a line it rejects (duplicate
/// keys, `NaN`, lone surrogate escapes) is read again with Python's rules,
/// so that nothing Python would accept is lost.
pub fn parse_line(text: &str, origin: Origin) -> Result<Attempt, LineError> {
    // serde would also fill a struct from a JSON array: only objects are lines.
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        return Err(match pyjson::loads(text) {
            Ok(_) => LineError::NotObject,
            Err(e) => LineError::NotJson(e.to_string()),
        });
    }
    let raw = match serde_json::from_str::<RawLine>(text) {
        Ok(raw) => raw,
        Err(first) => {
            let value = pyjson::loads(text).map_err(|_| LineError::NotJson(first.to_string()))?;
            if !matches!(value, pyjson::Value::Dict(_)) {
                return Err(LineError::NotObject);
            }
            serde_json::from_value::<RawLine>(value.to_serde_lossy())
                .map_err(|e| LineError::Other(e.to_string()))?
        }
    };
    build(raw, origin)
}

fn build(raw: RawLine, origin: Origin) -> Result<Attempt, LineError> {
    let trace_id = match raw.trace_id {
        Some(Json::String(s)) => s,
        _ => return Err(LineError::NoTraceId),
    };
    let session = match raw.session {
        None => "main".to_string(),
        Some(Json::String(s)) => s,
        Some(_) => return Err(LineError::BadSession),
    };
    let agent = match raw.agent {
        Some(Json::String(s)) => s,
        _ => agent_of_session(&session),
    };
    let content = match raw.content {
        None => String::new(),
        Some(Json::String(s)) => s,
        Some(_) => return Err(LineError::BadContent),
    };
    let finish = match raw.finish_reason {
        None => Finish::Stop,
        Some(Json::String(s)) if s == "stop" => Finish::Stop,
        Some(Json::String(s)) if s == "length" => Finish::Length,
        Some(Json::String(s)) => Finish::Unsupported(s),
        Some(other) => Finish::Unsupported(other.to_string()),
    };
    let llm_error = raw.llm_error.map(|e| match e {
        Json::String(s) => s,
        other => other.to_string(),
    });
    let tool_results = match raw.tool_results {
        None => Vec::new(),
        Some(Json::Array(items)) => items.into_iter().map(tool_result).collect(),
        Some(_) => return Err(LineError::BadToolResults),
    };
    let system_prompt = match raw.system_prompt {
        Some(Json::String(s)) => Some(s),
        _ => None,
    };
    Ok(Attempt {
        origin,
        trace_id,
        session,
        agent,
        system_prompt,
        content,
        tool_calls: raw.tool_calls,
        output: raw.output,
        finish,
        llm_error,
        tool_results,
        meta: raw.meta,
    })
}

/// A tool-result entry. Upstream's tool manager returns text, so any
/// non-string `result` stands for its JSON text.
fn tool_result(entry: Json) -> ToolResult {
    let Json::Object(mut map) = entry else {
        return ToolResult {
            result: json_text(entry),
            error: None,
        };
    };
    let result = map
        .remove("result")
        .map(json_text_or_str)
        .unwrap_or_default();
    let error = map.remove("error").map(|e| match e {
        Json::Null => "None".to_string(),
        other => json_text_or_str(other),
    });
    ToolResult { result, error }
}

fn json_text_or_str(v: Json) -> String {
    match v {
        Json::String(s) => s,
        other => json_text(other),
    }
}

/// Python-style JSON text (`json.dumps` separators) of a recorded value.
fn json_text(v: Json) -> String {
    pyjson::dump(&pyjson::Value::from_serde(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            file: "t.jsonl".into(),
            line: 1,
        }
    }

    #[test]
    fn minimal_line_gets_defaults() {
        let a = parse_line(r#"{"trace_id": "t", "content": null}"#, origin()).unwrap();
        assert_eq!(a.session, "main");
        assert_eq!(a.agent, "main");
        assert_eq!(a.content, "");
        assert_eq!(a.finish, Finish::Stop);
    }

    #[test]
    fn bad_lines_are_classified() {
        assert!(matches!(
            parse_line("{", origin()),
            Err(LineError::NotJson(_))
        ));
        assert_eq!(parse_line("[1]", origin()), Err(LineError::NotObject));
        assert_eq!(
            parse_line(r#"{"trace_id": 3}"#, origin()),
            Err(LineError::NoTraceId)
        );
        assert_eq!(
            parse_line(r#"{"trace_id": "t", "session": 1}"#, origin()),
            Err(LineError::BadSession)
        );
    }

    #[test]
    fn python_only_json_still_reads() {
        let a = parse_line(
            r#"{"trace_id": "a", "trace_id": "b", "meta": {"x": NaN}}"#,
            origin(),
        )
        .unwrap();
        assert_eq!(a.trace_id, "b");
    }

    #[test]
    fn tool_results_become_text() {
        let a = parse_line(
            r#"{"trace_id": "t", "tool_results": [{"result": {"organic": []}}, {"error": "boom"}, {}, {"result": null}]}"#,
            origin(),
        )
        .unwrap();
        assert_eq!(a.tool_results[0].result, r#"{"organic": []}"#);
        assert_eq!(a.tool_results[1].error.as_deref(), Some("boom"));
        assert_eq!(a.tool_results[2], ToolResult::default());
        assert_eq!(a.tool_results[3].result, "null");
    }
}
