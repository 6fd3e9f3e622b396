//! What mirotrace itself writes, recognised when it is given back as
//! input: replay verdicts, analyze/diff/keywords JSON reports, partials and
//! keywords labels files are not traces. Read as traces they would be
//! counted as failed attempts (a verdict line has a `trace_id` and no
//! attempt field), so they are said to be what they are instead.

use serde_json::{Map, Value as Json};

/// A kind of mirotrace output (equal by name).
pub struct Output {
    /// Its short name, the key it is counted under (`input.skipped`).
    pub name: &'static str,
    /// What it is, in a message.
    pub what: &'static str,
    recognise: fn(&Map<String, Json>) -> bool,
}

impl PartialEq for Output {
    fn eq(&self, other: &Output) -> bool {
        self.name == other.name
    }
}

impl Eq for Output {}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Output {
    /// The message for `lines` records of it (`FILE:LINE…: ` goes before).
    pub fn message(&self, lines: u64) -> String {
        let these = if lines == 1 {
            "this is".to_string()
        } else {
            format!("these {lines} records are")
        };
        format!(
            "{these} {}, not traces: give the traces it was made from",
            self.what
        )
    }
}

/// Every kind of output recognised, tried in order.
pub static OUTPUTS: &[Output] = &[
    Output {
        name: "replay-verdicts",
        what: "`mirotrace replay` output (verdicts)",
        recognise: is_verdict,
    },
    Output {
        name: "keywords-labels",
        what: "a `mirotrace keywords --labels` file (refusal labels)",
        recognise: is_label,
    },
    Output {
        name: "partial",
        what: "a mirotrace partial (`--format partial`; read it with `mirotrace merge`)",
        recognise: is_partial,
    },
    Output {
        name: "report",
        what: "a mirotrace JSON report (`analyze`, `diff` or `keywords --format json`)",
        recognise: is_report,
    },
];

/// The kind of mirotrace output a JSON object is, if it is one.
pub fn recognise(obj: &Map<String, Json>) -> Option<&'static Output> {
    OUTPUTS.iter().find(|o| (o.recognise)(obj))
}

fn str_of<'a>(obj: &'a Map<String, Json>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Json::as_str)
}

/// A verdict line (`mirotrace replay --format jsonl`, the spec's verdict
/// shape): a trace id, the attempt's index and its outcome.
fn is_verdict(obj: &Map<String, Json>) -> bool {
    str_of(obj, "trace_id").is_some()
        && obj.get("index").is_some_and(Json::is_u64)
        && str_of(obj, "outcome").is_some()
        && ["consecutive_rollbacks", "calls", "flags", "reason"]
            .iter()
            .any(|k| obj.contains_key(*k))
}

/// A refusal label: `{"trace_id", "session"?, "index", "refusal": bool}`.
fn is_label(obj: &Map<String, Json>) -> bool {
    str_of(obj, "trace_id").is_some()
        && obj.get("index").is_some()
        && obj.get("refusal").is_some_and(Json::is_boolean)
}

fn is_partial(obj: &Map<String, Json>) -> bool {
    str_of(obj, "format").is_some_and(|f| f.starts_with("mirotrace."))
        && obj.contains_key("mirotrace_version")
}

fn is_report(obj: &Map<String, Json>) -> bool {
    let schema = str_of(obj, "schema").is_some_and(|s| s.starts_with("mirotrace."));
    let diff = obj.get("comparisons").is_some_and(Json::is_array) && obj.contains_key("method");
    let keywords = obj.get("lists").is_some_and(Json::is_array)
        && obj.contains_key("eligible")
        && obj.contains_key("tool_calling");
    schema || diff || keywords
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(v: Json) -> Option<&'static str> {
        recognise(v.as_object().unwrap()).map(|o| o.name)
    }

    #[test]
    fn our_outputs_are_recognised_and_traces_are_not() {
        let verdict = json!({"trace_id": "t", "session": "main", "index": 0,
            "outcome": "ok", "reason": null, "consecutive_rollbacks": 0, "calls": []});
        assert_eq!(kind(verdict), Some("replay-verdicts"));
        let label = json!({"trace_id": "t", "session": "main", "index": 1, "refusal": true});
        assert_eq!(kind(label), Some("keywords-labels"));
        let report = json!({"schema": "mirotrace.analyze/1", "files": 1});
        assert_eq!(kind(report), Some("report"));
        let partial = json!({"format": "mirotrace.partial/2", "mirotrace_version": "0"});
        assert_eq!(kind(partial), Some("partial"));
        assert_eq!(kind(json!({"trace_id": "t", "content": "x"})), None);
        assert_eq!(kind(json!({"trace_id": "t", "index": 0})), None);
        assert!(OUTPUTS[0]
            .message(1)
            .starts_with("this is `mirotrace replay` output"));
        assert!(OUTPUTS[0].message(3).starts_with("these 3 records are"));
    }
}
