//! Everything the error-correction layer decides with: limits, keyword
//! lists, repair tables. [`Policy::default`] is upstream's behaviour exactly
//! (MiroThinker at 1c4253f6774b); other policies answer "what if" questions.

use serde::{Deserialize, Serialize};

/// How text is matched against a keyword list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MatchMode {
    /// Case-sensitive substring, as upstream.
    #[default]
    Exact,
    /// Case, apostrophe/quote variants and whitespace folded before matching.
    Normalized,
}

/// The knobs of the error-correction layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// MAX_CONSECUTIVE_ROLLBACKS: the streak value at which the guards stop rolling back.
    pub rollback_limit: u32,
    /// Substrings that mark a leaked, unparsed MCP tool call (a format error).
    pub mcp_tags: Vec<String>,
    /// Substrings that mark a refusal.
    pub refusal_keywords: Vec<String>,
    pub refusal_match: MatchMode,
    /// Tools whose server name is repaired from the system prompt's mapping.
    pub server_fix_tools: Vec<String>,
    /// Tool names rewritten to `run_python_code` (only when the mapping knows it).
    pub python_aliases: Vec<String>,
    /// Duplicate-query fingerprint matching.
    pub duplicate_match: MatchMode,
    /// Tools whose `organic`-less result counts as an empty search.
    pub empty_search_tools: Vec<String>,
    /// Sub-agent servers that can be launched from the main agent.
    pub sub_agents: Vec<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Policy {
            rollback_limit: 5,
            mcp_tags: strings(&[
                "<use_mcp_tool>",
                "</use_mcp_tool>",
                "<server_name>",
                "</server_name>",
                "<arguments>",
                "</arguments>",
            ]),
            refusal_keywords: strings(&[
                "time constraint",
                "I\u{2019}m sorry, but I can\u{2019}t",
                "I'm sorry, I cannot solve",
            ]),
            refusal_match: MatchMode::Exact,
            server_fix_tools: strings(&["run_python_code", "google_search", "scrape_and_extract_info"]),
            python_aliases: strings(&["python", "python_code"]),
            duplicate_match: MatchMode::Exact,
            empty_search_tools: strings(&["google_search"]),
            sub_agents: strings(&["agent-browsing"]),
        }
    }
}

/// A policy file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("policy file {path} is not valid: {reason}")]
    Parse { path: String, reason: String },
}

impl Policy {
    /// Reads a TOML policy file; keys it leaves out keep upstream's values.
    pub fn load(path: &std::path::Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|e| PolicyError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Policy::from_toml(&text).map_err(|reason| PolicyError::Parse {
            path: path.display().to_string(),
            reason,
        })
    }

    pub fn from_toml(text: &str) -> Result<Policy, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// The policy as TOML (what `mirotrace policy` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The first refusal keyword found in `text`, if any.
    pub fn refusal_in<'a>(&'a self, text: &str) -> Option<&'a str> {
        match self.refusal_match {
            MatchMode::Exact => self
                .refusal_keywords
                .iter()
                .find(|k| text.contains(k.as_str()))
                .map(String::as_str),
            MatchMode::Normalized => {
                let folded = fold_text(text);
                self.refusal_keywords
                    .iter()
                    .find(|k| folded.contains(&fold_text(k)))
                    .map(String::as_str)
            }
        }
    }

    /// Whether `text` leaks an MCP tag (checked only when no call was parsed).
    pub fn leaks_mcp_tag(&self, text: &str) -> bool {
        self.mcp_tags.iter().any(|t| text.contains(t.as_str()))
    }
}

/// Folds case, curly quotes/apostrophes and runs of whitespace, for the
/// `normalized` match modes.
pub fn fold_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' | '`' | '\u{00B4}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
            c => c,
        };
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_refusals_are_exact_and_curly() {
        let p = Policy::default();
        assert!(p.refusal_in("I\u{2019}m sorry, but I can\u{2019}t do that").is_some());
        assert!(p.refusal_in("I'm sorry, but I can't do that").is_none());
        assert!(p.refusal_in("Time constraint").is_none());
    }

    #[test]
    fn normalized_mode_folds_variants() {
        let p = Policy {
            refusal_match: MatchMode::Normalized,
            ..Policy::default()
        };
        assert!(p.refusal_in("I'M SORRY,  but I can't").is_some());
        assert!(p.refusal_in("Under a Time\nConstraint").is_some());
    }

    #[test]
    fn toml_round_trip_and_partial_files() {
        let p = Policy::default();
        assert_eq!(Policy::from_toml(&p.to_toml()).unwrap(), p);
        let q = Policy::from_toml("rollback_limit = 3\nrefusal_match = \"normalized\"").unwrap();
        assert_eq!(q.rollback_limit, 3);
        assert_eq!(q.refusal_match, MatchMode::Normalized);
        assert_eq!(q.mcp_tags, p.mcp_tags);
        assert!(Policy::from_toml("no_such_key = 1").is_err());
    }

    #[test]
    fn tag_leak_ignores_tool_name_tag() {
        let p = Policy::default();
        assert!(!p.leaks_mcp_tag("<tool_name>x</tool_name>"));
        assert!(p.leaks_mcp_tag("text <arguments>"));
    }
}
