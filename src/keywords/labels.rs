//! Refusal labels: JSONL lines `{"trace_id", "session", "index", "refusal"}`
//! saying whether an attempt is truly a refusal.
//!
//! `session` defaults to `"main"`; `index` is the 0-based position within
//! the session, as in verdicts. Only labelled attempts are scored; lines the
//! labels do not mention count for `flagged` but not for precision/recall.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value as Json;

/// Which attempt: trace, session, 0-based index within the session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LineKey {
    pub trace_id: String,
    pub session: String,
    pub index: usize,
}

impl std::fmt::Display for LineKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}#{}", self.trace_id, self.session, self.index)
    }
}

/// The labels of one file.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    pub by_line: HashMap<LineKey, bool>,
}

/// A labels file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LabelsError {
    #[error("cannot read labels file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("labels file {path}, line {line}: {reason}")]
    Invalid {
        path: String,
        line: usize,
        reason: String,
    },
}

impl Labels {
    pub fn load(path: &Path) -> Result<Labels, LabelsError> {
        let text =
            crate::policy::read_side_file(path, crate::policy::MAX_LABELS_BYTES).map_err(|e| {
                LabelsError::Read {
                    path: path.display().to_string(),
                    reason: crate::read::source::describe_io(&e),
                }
            })?;
        Labels::parse(&text).map_err(|(line, reason)| LabelsError::Invalid {
            path: path.display().to_string(),
            line,
            reason,
        })
    }

    /// Parses JSONL labels; an error gives the 1-based line and the reason.
    /// A bad line is an error rather than skipped: a silently lost label
    /// would change precision and recall.
    pub fn parse(text: &str) -> Result<Labels, (usize, String)> {
        let mut by_line = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let (key, refusal) = parse_label(line).map_err(|reason| (n, reason))?;
            if let Some(previous) = by_line.insert(key.clone(), refusal) {
                if previous != refusal {
                    return Err((n, format!("{key} is labelled both ways")));
                }
            }
        }
        Ok(Labels { by_line })
    }

    pub fn get(&self, key: &LineKey) -> Option<bool> {
        self.by_line.get(key).copied()
    }

    pub fn len(&self) -> usize {
        self.by_line.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_line.is_empty()
    }

    /// How many labels say "refusal".
    pub fn positives(&self) -> usize {
        self.by_line.values().filter(|v| **v).count()
    }
}

fn parse_label(line: &str) -> Result<(LineKey, bool), String> {
    let v: Json = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Json::Object(o) = v else {
        return Err("not a JSON object".into());
    };
    let trace_id = match o.get("trace_id") {
        Some(Json::String(s)) => s.clone(),
        _ => return Err("`trace_id` must be a string".into()),
    };
    let session = match o.get("session") {
        None | Some(Json::Null) => "main".to_string(),
        Some(Json::String(s)) => s.clone(),
        Some(_) => return Err("`session` must be a string".into()),
    };
    let index = match o.get("index").and_then(Json::as_u64) {
        Some(i) => usize::try_from(i).map_err(|_| "`index` is too large".to_string())?,
        None => return Err("`index` must be a non-negative integer".into()),
    };
    let refusal = match o.get("refusal") {
        Some(Json::Bool(b)) => *b,
        _ => return Err("`refusal` must be true or false".into()),
    };
    Ok((
        LineKey {
            trace_id,
            session,
            index,
        },
        refusal,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_defaults_session() {
        let l = Labels::parse(
            "{\"trace_id\": \"t\", \"index\": 2, \"refusal\": true}\n\n{\"trace_id\": \"t\", \"session\": \"agent-browsing_1\", \"index\": 0, \"refusal\": false}\n",
        )
        .unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l.positives(), 1);
        let k = LineKey {
            trace_id: "t".into(),
            session: "main".into(),
            index: 2,
        };
        assert_eq!(l.get(&k), Some(true));
    }

    #[test]
    fn bad_lines_name_their_line() {
        assert_eq!(
            Labels::parse("{\"trace_id\": \"t\", \"index\": 0, \"refusal\": 1}")
                .unwrap_err()
                .0,
            1
        );
        assert_eq!(
            Labels::parse("\n{\"trace_id\": \"t\", \"index\": -1, \"refusal\": true}")
                .unwrap_err()
                .0,
            2
        );
        let both = "{\"trace_id\": \"t\", \"index\": 0, \"refusal\": true}\n{\"trace_id\": \"t\", \"index\": 0, \"refusal\": false}";
        assert!(Labels::parse(both).unwrap_err().1.contains("both ways"));
    }
}
