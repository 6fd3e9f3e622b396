//! Keyword lists: the policy's current list and candidate list files.
//!
//! A list file holds one phrase per line; blank lines and lines starting
//! with `#` are ignored, and surrounding whitespace is trimmed. A comment
//! `# match: exact` or `# match: normalized` sets how the list matches;
//! without one a candidate list matches `normalized` (case, apostrophe/quote
//! variants and whitespace folded), so mined phrases such as
//! `i'm sorry, but i can't` work as written. A list is named after its
//! file stem.

use std::path::{Path, PathBuf};

use crate::policy::{MatchMode, Policy};

/// Where a list came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListSource {
    /// The policy's `refusal_keywords` (upstream's by default).
    Policy,
    File(PathBuf),
}

/// A refusal keyword list and how it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeywordList {
    pub name: String,
    pub source: ListSource,
    pub phrases: Vec<String>,
    pub mode: MatchMode,
}

/// The name reports use for the policy's own list.
pub const CURRENT: &str = "current";

/// A list file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("cannot read list file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("list file {path}, line {line}: {reason}")]
    Invalid {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("list file {path} holds no phrases")]
    Empty { path: String },
}

impl KeywordList {
    /// The policy's list, matched as the policy says.
    pub fn current(policy: &Policy) -> KeywordList {
        KeywordList {
            name: CURRENT.into(),
            source: ListSource::Policy,
            phrases: policy.refusal_keywords.clone(),
            mode: policy.refusal_match,
        }
    }

    /// Reads a list file.
    pub fn load(path: &Path) -> Result<KeywordList, ListError> {
        let text = crate::policy::read_side_file(path, crate::policy::MAX_SIDE_FILE_BYTES)
            .map_err(|e| ListError::Read {
                path: path.display().to_string(),
                reason: crate::read::source::describe_io(&e),
            })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "list".into());
        let (phrases, mode) = parse_list(&text).map_err(|(line, reason)| ListError::Invalid {
            path: path.display().to_string(),
            line,
            reason,
        })?;
        if phrases.is_empty() {
            return Err(ListError::Empty {
                path: path.display().to_string(),
            });
        }
        Ok(KeywordList {
            name,
            source: ListSource::File(path.to_path_buf()),
            phrases,
            mode,
        })
    }

    /// The policy a replay with this list uses: `base` with this list's
    /// phrases and match mode.
    pub fn policy_for(&self, base: &Policy) -> Policy {
        Policy {
            refusal_keywords: self.phrases.clone(),
            refusal_match: self.mode,
            ..base.clone()
        }
    }

    /// A short description of the source, for reports.
    pub fn source_label(&self) -> String {
        match &self.source {
            ListSource::Policy => "policy".into(),
            ListSource::File(p) => p.display().to_string(),
        }
    }
}

/// Parses a list file's text: its phrases (in order, duplicates dropped)
/// and match mode. An error gives the 1-based line and the reason.
pub fn parse_list(text: &str) -> Result<(Vec<String>, MatchMode), (usize, String)> {
    let mut phrases: Vec<String> = Vec::new();
    // Duplicates are found by hashing: a list may hold millions of phrases.
    let mut seen: foldhash::HashSet<&str> = Default::default();
    let mut mode = MatchMode::Normalized;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(value) = comment.trim().strip_prefix("match:") {
                let value = value.trim();
                mode = MatchMode::from_name(value).ok_or_else(|| {
                    (
                        i + 1,
                        format!("unknown match mode {value:?} (exact or normalized)"),
                    )
                })?;
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if seen.insert(line) {
            phrases.push(line.to_string());
        }
    }
    if mode == MatchMode::Normalized {
        if let Some(p) = phrases
            .iter()
            .find(|p| crate::detect::refusal::fold_text(p).trim().is_empty())
        {
            return Err((0, format!("the phrase {p:?} folds to nothing")));
        }
    }
    Ok((phrases, mode))
}

/// Makes list names unique (`name`, `name-2`, …) so reports can key on them.
pub fn dedupe_names(lists: &mut [KeywordList]) {
    let mut seen: Vec<String> = Vec::new();
    for list in lists.iter_mut() {
        let mut name = list.name.clone();
        let mut n = 2;
        while seen.contains(&name) {
            name = format!("{}-{n}", list.name);
            n += 1;
        }
        list.name = name.clone();
        seen.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blanks_and_mode() {
        let (p, m) =
            parse_list("# candidates\n\n  I cannot assist  \n抱歉，我无法\nI cannot assist\n")
                .unwrap();
        assert_eq!(p, vec!["I cannot assist", "抱歉，我无法"]);
        assert_eq!(m, MatchMode::Normalized);
        let (_, m) = parse_list("# match: exact\nx\n").unwrap();
        assert_eq!(m, MatchMode::Exact);
        assert_eq!(parse_list("#match: fuzzy\nx").unwrap_err().0, 1);
    }

    #[test]
    fn names_are_made_unique() {
        let l = |n: &str| KeywordList {
            name: n.into(),
            source: ListSource::Policy,
            phrases: vec!["x".into()],
            mode: MatchMode::Exact,
        };
        let mut lists = vec![l("current"), l("current"), l("a"), l("current")];
        dedupe_names(&mut lists);
        let names: Vec<_> = lists.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, vec!["current", "current-2", "a", "current-3"]);
    }
}
