//! The native line format (`docs/trace-format.md`): one JSON object per attempt.
//!
//! Lines are decoded field by field straight into an [`Attempt`], without
//! an intermediate JSON tree: this is the hot path of every command. The
//! strings most lines repeat (trace id, session, agent, system prompt,
//! model) are compared against the previous line's and shared, not copied.

use std::sync::Arc;

mod fields;
mod prompt_cache;
mod raw_scan;
mod recent;

use serde_json::Value as Json;

use crate::model::{agent_of_session, Attempt, Finish, Origin, TaskResult, ToolResult};
use crate::pyjson;
use crate::read::sniff::EXACT_ID_KEYS;
use fields::{Fields, Loose, MetaFields, ResultsField};
use prompt_cache::{LinePrompt, PromptCache};
use recent::Recent;

pub use prompt_cache::MAX_REMEMBERED_PROMPT_BYTES;

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a JSON object")]
    NotObject,
    #[error("missing string \"trace_id\"")]
    NoTraceId,
    /// A `trace_id` and none of an attempt's fields: not an attempt (an
    /// explicit `"content": null` is one, a failed LLM call).
    #[error("a \"trace_id\" but none of an attempt's fields (content, tool_calls, output, finish_reason, llm_error, tool_results): not an attempt")]
    NoAttemptFields,
    /// Attempt fields (`tool_results`) but none of the model's output:
    /// its text may be under a key mirotrace does not read (named).
    #[error("{}", no_model_output(.0))]
    NoModelOutput(Vec<String>),
    #[error("\"session\" is not a string")]
    BadSession,
    #[error("\"content\" is neither a string nor null")]
    BadContent,
    #[error("\"tool_results\" is not a list")]
    BadToolResults,
    #[error("{0}")]
    Other(String),
}

/// The message of [`LineError::NoModelOutput`]: the keys not read lead
/// it, so the run's summary counts such lines per key.
fn no_model_output(unread: &[String]) -> String {
    let what = format!(
        "none of the model's output ({}): not an attempt",
        fields::MODEL_OUTPUT_KEYS.join(", ")
    );
    if unread.is_empty() {
        return what;
    }
    let keys: Vec<String> = unread.iter().map(|k| format!("\"{k}\"")).collect();
    format!("keys not read {}: {what}", keys.join(", "))
}

/// Keys, and bytes, looked at for a raw system prompt: upstream-style
/// lines put it second, after a short trace id.
const PROMPT_KEY_WINDOW: usize = 4;
const PROMPT_BYTE_WINDOW: usize = 512;
/// Largest splice buffer kept between lines.
const SPLICED_KEPT_BYTES: usize = 4 << 20;

/// Sessions and agents remembered for sharing; a trace rarely interleaves more.
const SESSIONS_REMEMBERED: usize = 8;

/// Decodes the lines of one input, sharing repeated strings between them.
#[derive(Debug, Default)]
pub struct LineDecoder {
    /// Keep `meta` whole (for export); otherwise only its `model` and
    /// `max_turns` are read.
    keep_meta: bool,
    trace_ids: Recent<(), 1>,
    prompts: PromptCache,
    /// What the line being decoded says of its system prompt.
    line_prompt: LinePrompt,
    /// The line being decoded with a known prompt left out (reused buffer).
    spliced: String,
    models: Recent<(), 1>,
    /// Session ids, each with its default agent name.
    sessions: Recent<Arc<str>, SESSIONS_REMEMBERED>,
    /// Explicit agent names.
    agents: Recent<(), SESSIONS_REMEMBERED>,
    /// The last line decoded had a message list (`messages`, …) and none
    /// of an attempt's own fields: it is a chat record, not an attempt.
    message_list_only: bool,
}

/// Parses one line into an attempt, keeping `meta` whole.
pub fn parse_line(text: &str, origin: Origin) -> Result<Attempt, LineError> {
    LineDecoder::new(true).decode(text, origin)
}

impl LineDecoder {
    pub fn new(keep_meta: bool) -> LineDecoder {
        LineDecoder {
            keep_meta,
            ..LineDecoder::default()
        }
    }

    /// Parses one line into an attempt.
    ///
    /// serde_json does the work for ordinary lines; a line it rejects
    /// (`NaN`, lone surrogate escapes, nesting deeper than it allows) is
    /// read again with Python's rules, so that nothing Python would accept
    /// is lost.
    pub fn decode(&mut self, text: &str, origin: Origin) -> Result<Attempt, LineError> {
        // Only objects are lines.
        if !text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with('{')
        {
            // Worded as serde_json words it, as for every other line (one
            // message per problem, whatever the line's place in a file).
            return Err(match serde_json::from_str::<Json>(text) {
                Ok(_) => LineError::NotObject,
                Err(e) => match pyjson::loads(text) {
                    Ok(_) => LineError::NotObject,
                    Err(_) => LineError::NotJson(e.to_string()),
                },
            });
        }
        let located = match raw_scan::top_level_value_start(
            text,
            "system_prompt",
            PROMPT_KEY_WINDOW,
            PROMPT_BYTE_WINDOW,
        ) {
            Some(start) => self.prompts.locate(text.as_bytes(), start),
            None => LinePrompt::Unknown,
        };
        let known = match located {
            LinePrompt::Known { start, end, .. } => Some(start..end),
            _ => None,
        };
        self.line_prompt = located;
        if let Some(token) = known {
            if let Some(decoded) = self.decode_without(text, token, &origin) {
                return decoded;
            }
            // Not JSON after all: read it as written, for the error.
        }
        self.decode_as_written(text, origin)
    }

    /// Decodes `text` with the string token at `token` (a known prompt)
    /// replaced by `null`: valid exactly when the line is (no byte after it
    /// can extend `null` into another token, as `e5` would `0`), and nothing
    /// to unescape. `None` when serde rejects it.
    fn decode_without(
        &mut self,
        text: &str,
        token: std::ops::Range<usize>,
        origin: &Origin,
    ) -> Option<Result<Attempt, LineError>> {
        let mut spliced = std::mem::take(&mut self.spliced);
        spliced.clear();
        spliced.push_str(&text[..token.start]);
        spliced.push_str("null");
        spliced.push_str(&text[token.end..]);
        let fields = Fields::from_line(&spliced, self);
        self.line_prompt = LinePrompt::Unknown;
        let decoded = fields.ok().map(|f| self.build(f, origin.clone()));
        // A huge line's buffer is not kept for the rest of the file.
        if spliced.capacity() <= SPLICED_KEPT_BYTES {
            self.spliced = spliced;
        }
        decoded
    }

    /// Decodes `text` with serde, or else with Python's rules.
    fn decode_as_written(&mut self, text: &str, origin: Origin) -> Result<Attempt, LineError> {
        let fields = Fields::from_line(text, self);
        self.line_prompt = LinePrompt::Unknown;
        match fields {
            Ok(fields) => self.build(fields, origin),
            Err(first) => {
                let value = pyjson::loads(text).map_err(|_| not_json(text, first))?;
                if !matches!(value, pyjson::Value::Dict(_)) {
                    return Err(LineError::NotObject);
                }
                // What serde can hold of it (NaN → null, lone surrogates →
                // U+FFFD, but escaped in ids: they must stay apart).
                let fields = Fields::from_value(value.to_serde_keeping_ids(&EXACT_ID_KEYS), self)
                    .map_err(|e| LineError::Other(e.to_string()))?;
                self.build(fields, origin)
            }
        }
    }

    /// The shared copy of `prompt`, written as `raw` in its line when known.
    fn prompt(&mut self, prompt: &str, raw: Option<Box<[u8]>>) -> Arc<str> {
        self.prompts.intern(prompt, raw)
    }

    /// What is known of the line's first top-level prompt (once per line).
    fn take_line_prompt(&mut self) -> LinePrompt {
        std::mem::take(&mut self.line_prompt)
    }

    /// The shared copy of a `meta.model` value.
    fn model(&mut self, model: &str) -> Arc<str> {
        self.models.share(model)
    }

    fn keeps_meta(&self) -> bool {
        self.keep_meta
    }

    /// The shared session id and its default agent name.
    fn session(&mut self, session: &str) -> (Arc<str>, Arc<str>) {
        let (session, agent) = self
            .sessions
            .intern(session, || agent_of_session(session).into());
        (session.clone(), agent.clone())
    }

    /// Whether the last line decoded was shaped as a chat record (a
    /// message list, no attempt field): [`crate::read::sniff::classify`]'s
    /// rule, so that a line is read the same wherever it stands in a file.
    pub fn last_was_message_list_only(&self) -> bool {
        self.message_list_only
    }

    fn build(&mut self, fields: Fields<'_>, origin: Origin) -> Result<Attempt, LineError> {
        self.message_list_only = fields.message_list_key && !fields.attempt_key;
        let trace_id = match fields.trace_id {
            Some(Loose::Str(s)) => self.trace_ids.share(&s),
            _ => return Err(LineError::NoTraceId),
        };
        let (session, default_agent) = match fields.session {
            None => self.session("main"),
            Some(Loose::Str(s)) => self.session(&s),
            Some(Loose::Other(_)) => return Err(LineError::BadSession),
        };
        let agent = match fields.agent {
            Some(Loose::Str(s)) => self.agents.share(&s),
            _ => default_agent,
        };
        let content = match fields.content {
            None => String::new(),
            Some(Loose::Str(s)) => s.into_owned(),
            Some(Loose::Other(_)) => return Err(LineError::BadContent),
        };
        let finish = match fields.finish_reason {
            None => Finish::Stop,
            Some(Loose::Str(s)) if s == "stop" => Finish::Stop,
            Some(Loose::Str(s)) if s == "length" => Finish::Length,
            Some(Loose::Str(s)) => Finish::Unsupported(s.into_owned()),
            Some(Loose::Other(other)) => Finish::Unsupported(other.to_string()),
        };
        let llm_error = fields.llm_error.map(|e| match e {
            Loose::Str(s) => s.into_owned(),
            Loose::Other(other) => other.to_string(),
        });
        let tool_results = match fields.tool_results {
            None => Vec::new(),
            Some(ResultsField::List(results)) => results,
            Some(ResultsField::NotAList) => return Err(LineError::BadToolResults),
        };
        if !fields.attempt_key && !fields.message_list_key {
            return Err(LineError::NoAttemptFields);
        }
        if !fields.model_output_key && !fields.message_list_key {
            return Err(LineError::NoModelOutput(fields.unread_keys));
        }
        let MetaFields {
            model,
            max_turns,
            success,
            score,
            whole,
        } = fields.meta.unwrap_or_default();
        let task_result = (success.is_some() || score.is_some()).then(|| TaskResult {
            success,
            score,
            basis: Arc::from(if success.is_some() {
                "meta.success"
            } else {
                "meta.score"
            }),
        });
        Ok(Attempt {
            origin,
            trace_id,
            session,
            agent,
            system_prompt: fields.system_prompt,
            content,
            tool_calls: fields.tool_calls,
            output: fields.output,
            finish,
            llm_error,
            tool_results,
            meta: whole,
            model,
            max_turns,
            recorded: None,
            native_tools: false,
            usage: fields.usage,
            duration_s: fields.duration_s.as_ref().and_then(fields::seconds_of),
            task_result,
            unseen_results: None,
        })
    }
}

/// The error for a line that is not JSON, located as a plain decode locates
/// it: serde reports a slightly different column for a value it skips than
/// for one it reads, and which fields are read depends on the command.
fn not_json(text: &str, first: serde_json::Error) -> LineError {
    let plain = serde_json::from_str::<Json>(text).err();
    LineError::NotJson(plain.unwrap_or(first).to_string())
}

/// A tool-result entry. Upstream's tool manager returns text, so any
/// non-string `result` stands for its JSON text.
pub(super) fn tool_result(result: Option<Json>, error: Option<Json>) -> ToolResult {
    ToolResult {
        result: result.map(json_text_or_str).unwrap_or_default(),
        error: error.map(|e| match e {
            Json::Null => "None".to_string(),
            other => json_text_or_str(other),
        }),
        failed: false,
    }
}

pub(super) fn json_text_or_str(v: Json) -> String {
    match v {
        Json::String(s) => s,
        other => json_text(other),
    }
}

/// Python-style JSON text (`json.dumps` separators) of a recorded value.
pub(super) fn json_text(v: Json) -> String {
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
    fn a_trace_id_alone_is_not_an_attempt_but_null_content_is() {
        assert_eq!(
            parse_line(r#"{"trace_id": "t", "session": "s", "meta": {}}"#, origin()).unwrap_err(),
            LineError::NoAttemptFields
        );
        for field in ATTEMPT_FIELDS_AS_NULL {
            let line = format!(r#"{{"trace_id": "t", "{field}": null}}"#);
            assert!(parse_line(&line, origin()).is_ok(), "{line}");
        }
        let empty = parse_line(r#"{"trace_id": "t", "content": ""}"#, origin()).unwrap();
        assert_eq!(empty.content, "");
    }

    #[test]
    fn tool_results_without_the_model_output_are_not_an_attempt() {
        let line = r#"{"trace_id": "t", "completion": "hi", "tool_results": [], "extra": 1}"#;
        let e = parse_line(line, origin()).unwrap_err();
        assert_eq!(
            e,
            LineError::NoModelOutput(vec!["completion".into(), "extra".into()])
        );
        assert!(e
            .to_string()
            .starts_with(r#"keys not read "completion", "extra": "#));
        let bare = parse_line(r#"{"trace_id": "t", "tool_results": []}"#, origin()).unwrap_err();
        assert_eq!(bare, LineError::NoModelOutput(Vec::new()));
        for output in MODEL_OUTPUT_FIELDS {
            let line = format!(r#"{{"trace_id": "t", "{output}": null, "tool_results": []}}"#);
            assert!(parse_line(&line, origin()).is_ok(), "{line}");
        }
    }

    const MODEL_OUTPUT_FIELDS: [&str; 5] = fields::MODEL_OUTPUT_KEYS;

    const ATTEMPT_FIELDS_AS_NULL: [&str; 4] = ["content", "tool_calls", "output", "llm_error"];

    #[test]
    fn minimal_line_gets_defaults() {
        let a = parse_line(r#"{"trace_id": "t", "content": null}"#, origin()).unwrap();
        assert_eq!(&*a.session, "main");
        assert_eq!(&*a.agent, "main");
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
        assert_eq!(
            parse_line(r#"{"trace_id": "t", "content": [1]}"#, origin()),
            Err(LineError::BadContent)
        );
        assert_eq!(
            parse_line(r#"{"trace_id": "t", "tool_results": {"a": 1}}"#, origin()),
            Err(LineError::BadToolResults)
        );
    }

    #[test]
    fn python_only_json_still_reads() {
        let a = parse_line(
            r#"{"trace_id": "a", "trace_id": "b", "content": null, "meta": {"x": NaN, "model": "m"}}"#,
            origin(),
        )
        .unwrap();
        assert_eq!(&*a.trace_id, "b");
        assert_eq!(a.model.as_deref(), Some("m"));
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        let a = parse_line(
            r#"{"trace_id": "t", "content": "", "session": 1, "session": "s_2", "meta": {"model": "a", "model": 3}}"#,
            origin(),
        )
        .unwrap();
        assert_eq!(&*a.session, "s_2");
        assert_eq!(&*a.agent, "s");
        assert_eq!(a.model, None);
    }

    #[test]
    fn tool_results_become_text() {
        let a = parse_line(
            r#"{"trace_id": "t", "content": "", "tool_results": [{"result": {"organic": []}}, {"error": "boom"}, {}, {"result": null}, "plain", {"error": null, "result": ""}]}"#,
            origin(),
        )
        .unwrap();
        assert_eq!(a.tool_results[0].result, r#"{"organic": []}"#);
        assert_eq!(a.tool_results[1].error.as_deref(), Some("boom"));
        assert_eq!(a.tool_results[2], ToolResult::default());
        assert_eq!(a.tool_results[3].result, "null");
        assert_eq!(a.tool_results[4].result, r#""plain""#);
        assert_eq!(a.tool_results[5].error.as_deref(), Some("None"));
    }

    #[test]
    fn meta_fields_are_read_and_whole_meta_kept_on_request() {
        let line = r#"{"trace_id": "t", "content": "", "meta": {"model": "m", "max_turns": 7, "x": [1, {"y": 2}]}}"#;
        let kept = LineDecoder::new(true).decode(line, origin()).unwrap();
        assert_eq!(kept.model.as_deref(), Some("m"));
        assert_eq!(kept.max_turns, Some(7));
        assert_eq!(
            kept.meta
                .as_ref()
                .and_then(|m| m.get("x"))
                .map(|x| x[1]["y"].as_i64()),
            Some(Some(2))
        );
        let light = LineDecoder::new(false).decode(line, origin()).unwrap();
        assert_eq!(light.model.as_deref(), Some("m"));
        assert_eq!(light.max_turns, Some(7));
        assert_eq!(light.meta, None);
        for (meta, turns) in [
            ("7.0", None),
            ("-3", Some(-3)),
            ("1e2", None),
            ("\"7\"", None),
        ] {
            let line =
                format!(r#"{{"trace_id": "t", "content": "", "meta": {{"max_turns": {meta}}}}}"#);
            for keep in [false, true] {
                let a = LineDecoder::new(keep).decode(&line, origin()).unwrap();
                assert_eq!(a.max_turns, turns, "{line} keep={keep}");
            }
        }
    }

    #[test]
    fn repeated_strings_are_shared() {
        let mut d = LineDecoder::new(false);
        let line = r#"{"trace_id": "t", "content": "", "session": "agent-x_1", "system_prompt": "P\n", "meta": {"model": "m"}}"#;
        let a = d.decode(line, origin()).unwrap();
        let b = d.decode(line, origin()).unwrap();
        assert!(Arc::ptr_eq(&a.trace_id, &b.trace_id));
        assert!(Arc::ptr_eq(&a.session, &b.session));
        assert!(Arc::ptr_eq(
            a.system_prompt.as_ref().unwrap(),
            b.system_prompt.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(
            a.model.as_ref().unwrap(),
            b.model.as_ref().unwrap()
        ));
        assert_eq!(&*a.agent, "agent-x");
        assert_eq!(a.system_prompt.as_deref(), Some("P\n"));
        let c = d
            .decode(
                r#"{"trace_id": "t", "content": "", "system_prompt": "Q"}"#,
                origin(),
            )
            .unwrap();
        assert_eq!(c.system_prompt.as_deref(), Some("Q"));
    }

    #[test]
    fn leaving_a_known_prompt_out_never_makes_a_bad_line_good() {
        for tail in ["e5", ".5", "E1", "0", " 1", "x"] {
            let mut d = LineDecoder::new(false);
            let good = r#"{"trace_id": "t", "content": "", "system_prompt": "P\n"}"#;
            assert!(d.decode(good, origin()).is_ok());
            let bad =
                format!(r#"{{"trace_id": "t", "content": "", "system_prompt": "P\n"{tail}}}"#);
            assert!(
                matches!(d.decode(&bad, origin()), Err(LineError::NotJson(_))),
                "{bad} was accepted"
            );
        }
    }

    #[test]
    fn a_bad_line_gets_the_same_error_whatever_is_read_of_it() {
        // serde places the error one column apart when it skips the value.
        let line = "{\"trace_id\": \"t\", \"content\": \"\", \"meta\": {\"other\": \"a\u{0}b\"}}";
        let kept = LineDecoder::new(true).decode(line, origin());
        let light = LineDecoder::new(false).decode(line, origin());
        assert!(matches!(&kept, Err(LineError::NotJson(m)) if m.contains("control character")));
        assert_eq!(kept, light);
    }
}
