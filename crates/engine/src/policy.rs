//! Everything the error-correction layer decides with: limits, keyword
//! lists, repair tables. [`Policy::default`] is upstream's behaviour exactly
//! (MiroThinker at 1c4253f6774b); other policies answer "what if" questions.
//!
//! A policy file is TOML; every key is optional and falls back to upstream's
//! value. [`DEFAULT_POLICY_TOML`] is the documented default file that
//! `mirotrace policy` prints.

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

impl MatchMode {
    pub fn name(self) -> &'static str {
        match self {
            MatchMode::Exact => "exact",
            MatchMode::Normalized => "normalized",
        }
    }

    pub fn from_name(name: &str) -> Option<MatchMode> {
        match name {
            "exact" => Some(MatchMode::Exact),
            "normalized" => Some(MatchMode::Normalized),
            _ => None,
        }
    }
}

/// When a query that ran is recorded in the duplicate-query cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueryCommit {
    /// At once, when its call succeeds (upstream at 1c4253f6774b): a turn
    /// rolled back by a later call keeps its queries recorded, and asking
    /// them again is a duplicate.
    #[default]
    PerCall,
    /// When the turn ends without a rollback (upstream pull request #121):
    /// the queries that succeeded, the sub-agent launch included, wait in
    /// a buffer during the turn and are dropped with a rolled-back turn.
    PerTurn,
}

impl QueryCommit {
    pub fn name(self) -> &'static str {
        match self {
            QueryCommit::PerCall => "per_call",
            QueryCommit::PerTurn => "per_turn",
        }
    }

    fn is_default(&self) -> bool {
        *self == QueryCommit::default()
    }
}

/// An argument-name repair (upstream's `fix_tool_call_arguments`): when
/// `tool`'s arguments lack `target`, the first of `aliases` present is
/// renamed to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgAlias {
    pub tool: String,
    pub target: String,
    pub aliases: Vec<String>,
}

/// An argument default: when `tool`'s arguments lack `key`, it is added
/// with `value` (upstream: `sandbox_id = "default"` for `run_python_code`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgDefault {
    pub tool: String,
    pub key: String,
    pub value: String,
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
    /// When a query that ran is recorded for the duplicate check. Left out
    /// of [`Policy::to_toml`] at its default, so the default policy's
    /// fingerprint is the one partials made before the key carry.
    #[serde(skip_serializing_if = "QueryCommit::is_default")]
    pub query_commit: QueryCommit,
    /// Tools whose `organic`-less result counts as an empty search.
    pub empty_search_tools: Vec<String>,
    /// Prefixes (case-sensitive) that make a tool result a tool error.
    pub tool_error_prefixes: Vec<String>,
    /// Sub-agent servers that can be launched from the main agent.
    pub sub_agents: Vec<String>,
    /// Argument-name repairs, applied in order before a call runs.
    pub arg_aliases: Vec<ArgAlias>,
    /// Argument defaults, applied after the renames.
    pub arg_defaults: Vec<ArgDefault>,
}

impl Default for Policy {
    fn default() -> Policy {
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
            server_fix_tools: strings(&[
                "run_python_code",
                "google_search",
                "scrape_and_extract_info",
            ]),
            python_aliases: strings(&["python", "python_code"]),
            duplicate_match: MatchMode::Exact,
            query_commit: QueryCommit::PerCall,
            empty_search_tools: strings(&["google_search"]),
            tool_error_prefixes: strings(&["Error executing tool"]),
            sub_agents: strings(&["agent-browsing"]),
            arg_aliases: vec![
                ArgAlias {
                    tool: "scrape_and_extract_info".into(),
                    target: "info_to_extract".into(),
                    aliases: strings(&["description", "introduction"]),
                },
                ArgAlias {
                    tool: "run_python_code".into(),
                    target: "code_block".into(),
                    aliases: strings(&["code"]),
                },
            ],
            arg_defaults: vec![ArgDefault {
                tool: "run_python_code".into(),
                key: "sandbox_id".into(),
                value: "default".into(),
            }],
        }
    }
}

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

/// The default policy as a commented TOML file: every key, upstream's value,
/// and what it does. `Policy::from_toml(DEFAULT_POLICY_TOML)` is
/// `Policy::default()` (tested).
pub const DEFAULT_POLICY_TOML: &str = r#"# mirotrace policy: the knobs of MiroThinker's error-correction layer.
#
# These values are upstream's behaviour exactly (MiroThinker 1c4253f6774b);
# with them every replay verdict is upstream's. Use with --policy FILE on
# replay, analyze, diff and keywords. Every key is optional: a key left out
# keeps the value shown here. Unknown keys are an error (typos are caught).

# MAX_CONSECUTIVE_ROLLBACKS. A rollback is allowed while the streak of
# consecutive rollbacks is below limit - 1; at the limit a format error or
# refusal ends the loop, a duplicate query or bad tool result is let through.
# At least 1.
rollback_limit = 5

# A reply without a parsed tool call that contains any of these substrings
# (case-sensitive) leaked an MCP tool call: a format error. `<tool_name>` is
# not one of upstream's tags.
mcp_tags = [
    "<use_mcp_tool>",
    "</use_mcp_tool>",
    "<server_name>",
    "</server_name>",
    "<arguments>",
    "</arguments>",
]

# A reply without a parsed tool call (and no MCP tag) that contains any of
# these is a refusal: it rolls back. Upstream's second phrase uses curly
# apostrophes (U+2019), so the same words typed with straight ones are missed.
# `mirotrace keywords` measures and suggests alternatives.
refusal_keywords = [
    "time constraint",
    "I\u2019m sorry, but I can\u2019t",
    "I'm sorry, I cannot solve",
]

# How refusal keywords match: "exact" (case-sensitive substring, upstream) or
# "normalized" (case, apostrophe/quote variants and runs of whitespace folded
# on both sides before the substring test).
refusal_match = "exact"

# Tools whose server name is repaired from the system prompt's
# `## Server name:` / `### Tool name:` mapping before parsing.
server_fix_tools = ["run_python_code", "google_search", "scrape_and_extract_info"]

# Tool names rewritten to `run_python_code` by that repair (only when the
# mapping knows run_python_code).
python_aliases = ["python", "python_code"]

# Duplicate-query fingerprints: "exact" (upstream: the raw query string) or
# "normalized" (case, quotes, whitespace and punctuation folded, so
# "Capital of  France?" repeats "capital of france").
duplicate_match = "exact"

# When a query that ran is recorded for the duplicate check: "per_call"
# (upstream: as soon as its call succeeds, so the queries of a turn that a
# later call rolls back stay recorded, and asking them again is rolled back
# as a duplicate) or "per_turn" (upstream pull request #121: the turn's
# successful queries, a sub-agent launch included, are recorded only when
# the turn is not rolled back).
query_commit = "per_call"

# Tools whose result counts as an empty search when it is a JSON object with
# a missing or empty `organic`.
empty_search_tools = ["google_search"]

# A tool result that begins with any of these (case-sensitive) is a tool
# error: it rolls back (let through at the limit). Upstream's executor
# writes "Error executing tool"; name the prefixes your harness writes
# (tau-bench: "Error:"). A result the harness marks as failed (Claude Code
# `is_error`, Inspect's `error`, …) is a tool error whatever its text.
tool_error_prefixes = ["Error executing tool"]

# Sub-agent servers a main-agent call can launch (calls to other `agent-*`
# servers fail at launch).
sub_agents = ["agent-browsing"]

# Argument-name repairs (fix_tool_call_arguments), in order: when a call of
# `tool` has no `target` argument, the first of `aliases` present is renamed
# to `target`. Give `arg_aliases = []` before any table to switch them off.
[[arg_aliases]]
tool = "scrape_and_extract_info"
target = "info_to_extract"
aliases = ["description", "introduction"]

[[arg_aliases]]
tool = "run_python_code"
target = "code_block"
aliases = ["code"]

# Argument defaults, applied after the renames: when a call of `tool` has no
# `key` argument, it is added with the string `value`.
[[arg_defaults]]
tool = "run_python_code"
key = "sandbox_id"
value = "default"
"#;

/// A policy file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("policy file {path} is not valid: {reason} (`mirotrace policy` prints every key)")]
    Parse { path: String, reason: String },
}

/// `rollback_limit` must be at least 1 (0 would stop every loop before its
/// first line); shared by policies and by the partials that carry one.
pub fn check_rollback_limit(limit: u32) -> Result<(), String> {
    if limit == 0 {
        return Err("rollback_limit must be at least 1".into());
    }
    Ok(())
}

/// Largest policy file or keyword list read (`--policy`, `--list`): far
/// more than any real list, small enough that `/dev/zero` or a wrong file
/// is refused before it fills memory.
pub const MAX_SIDE_FILE_BYTES: u64 = 4 << 20;

/// Largest labels file read (`keywords --labels`: one line per labelled
/// attempt, so a million labels fit).
pub const MAX_LABELS_BYTES: u64 = 64 << 20;

/// Reads a side file (policy, keyword list, labels, prices, a `merge`
/// part) of at most `max` bytes as UTF-8 text; a longer one is an error
/// that says the limit. The one bounded reader of every side file: a
/// regular file's size is checked before it is read; a stream (`<(yes)`,
/// `/dev/zero`, a FIFO) is read in blocks, never held past `max` bytes,
/// and refused at its first NUL byte (no text file holds one), so
/// `/dev/zero` is refused at once.
pub fn read_side_file(path: &std::path::Path, max: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let too_large = || {
        Error::new(
            ErrorKind::InvalidData,
            if max >= 1 << 20 {
                format!(
                    "larger than {} MiB, the limit for this kind of file (docs/limits.md)",
                    max >> 20
                )
            } else {
                format!("larger than {max} bytes, the limit for this kind of file (docs/limits.md)")
            },
        )
    };
    let mut file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > max {
        return Err(too_large());
    }
    let cap = usize::try_from(max.saturating_add(1)).unwrap_or(usize::MAX);
    let mut bytes: Vec<u8> = Vec::new();
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(at) = memchr::memchr(0, &block[..n]) {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "binary data (a NUL byte at offset {}), not a text file",
                    bytes.len() + at
                ),
            ));
        }
        if bytes.len() + n > max as usize {
            return Err(too_large());
        }
        if bytes.capacity() - bytes.len() < n {
            // Doubling, but never past the cap.
            let want = (bytes.capacity() * 2).max(bytes.len() + n).min(cap);
            bytes.reserve_exact(want - bytes.len());
        }
        bytes.extend_from_slice(&block[..n]);
    }
    String::from_utf8(bytes)
        .map_err(|e| Error::new(ErrorKind::InvalidData, format!("not UTF-8 text: {e}")))
}

impl Policy {
    /// Reads a TOML policy file; keys it leaves out keep upstream's values.
    pub fn load(path: &std::path::Path) -> Result<Policy, PolicyError> {
        let text = read_side_file(path, MAX_SIDE_FILE_BYTES).map_err(|e| PolicyError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Policy::from_toml(&text).map_err(|reason| PolicyError::Parse {
            path: path.display().to_string(),
            reason,
        })
    }

    /// Parses and checks a policy; the error is a one-paragraph description.
    pub fn from_toml(text: &str) -> Result<Policy, String> {
        let policy: Policy =
            toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        policy.validate()?;
        Ok(policy)
    }

    /// Rejects values that would silently make every reply a match or stop
    /// every loop before its first line.
    pub fn validate(&self) -> Result<(), String> {
        check_rollback_limit(self.rollback_limit)?;
        for (key, list) in [
            ("mcp_tags", &self.mcp_tags),
            ("refusal_keywords", &self.refusal_keywords),
        ] {
            if list.iter().any(|s| s.is_empty()) {
                return Err(format!(
                    "{key} holds an empty string, which would match every reply"
                ));
            }
            // In either match mode a phrase of white space alone matches
            // (nearly) every reply: `" "` is in any reply with a space, and
            // folding (`detect::refusal::fold_text`) maps only white space
            // to blank.
            if let Some(blank) = list.iter().find(|s| s.trim().is_empty()) {
                return Err(format!(
                    "{key} holds a blank phrase ({blank:?}, white space only), \
                     which would match every reply"
                ));
            }
        }
        if self.tool_error_prefixes.iter().any(|s| s.is_empty()) {
            return Err(
                "tool_error_prefixes holds an empty string, which would match every tool result"
                    .into(),
            );
        }
        if let Some(a) = self
            .arg_aliases
            .iter()
            .find(|a| a.aliases.contains(&a.target))
        {
            return Err(format!(
                "arg_aliases for {}: {:?} is its own alias",
                a.tool, a.target
            ));
        }
        Ok(())
    }

    /// A stable fingerprint: FNV-1a (64 bits, hex) of [`Policy::to_toml`].
    /// Partial reports carry it, so partials of two policies are not added up.
    pub fn fingerprint(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.to_toml().bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{hash:016x}")
    }

    /// The policy as TOML, without comments (see [`DEFAULT_POLICY_TOML`]
    /// for the documented default).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_default_file_is_the_default() {
        assert_eq!(
            Policy::from_toml(DEFAULT_POLICY_TOML).unwrap(),
            Policy::default()
        );
        // Every key of the struct is documented in the file.
        let keys = Policy::default().to_toml();
        for line in keys
            .lines()
            .filter(|l| l.contains(" = ") && !l.starts_with(' '))
        {
            let key = line.split(" = ").next().unwrap_or_default();
            assert!(
                DEFAULT_POLICY_TOML.contains(&format!("\n{key} = ")),
                "{key} undocumented"
            );
        }
    }

    #[test]
    fn toml_round_trip_and_partial_files() {
        let p = Policy::default();
        assert_eq!(Policy::from_toml(&p.to_toml()).unwrap(), p);
        let q = Policy::from_toml("rollback_limit = 3\nrefusal_match = \"normalized\"").unwrap();
        assert_eq!(q.rollback_limit, 3);
        assert_eq!(q.refusal_match, MatchMode::Normalized);
        assert_eq!(q.mcp_tags, p.mcp_tags);
        assert_eq!(q.arg_aliases, p.arg_aliases);
        assert!(Policy::from_toml("no_such_key = 1").is_err());
        let off = Policy::from_toml("arg_aliases = []\narg_defaults = []").unwrap();
        assert!(off.arg_aliases.is_empty() && off.arg_defaults.is_empty());
    }

    #[test]
    fn query_commit_is_documented_and_kept_out_of_the_default_fingerprint() {
        assert!(DEFAULT_POLICY_TOML.contains("\nquery_commit = \"per_call\"\n"));
        let default = Policy::default();
        assert_eq!(default.query_commit, QueryCommit::PerCall);
        assert!(!default.to_toml().contains("query_commit"));
        let per_turn = Policy::from_toml("query_commit = \"per_turn\"").unwrap();
        assert_eq!(per_turn.query_commit, QueryCommit::PerTurn);
        assert!(per_turn.to_toml().contains("query_commit = \"per_turn\""));
        assert_eq!(Policy::from_toml(&per_turn.to_toml()).unwrap(), per_turn);
        assert_ne!(per_turn.fingerprint(), default.fingerprint());
        let err = Policy::from_toml("query_commit = \"per_attempt\"").unwrap_err();
        assert!(err.contains("per_turn"), "{err}");
    }

    #[test]
    fn nonsense_values_are_rejected() {
        assert!(Policy::from_toml("rollback_limit = 0")
            .unwrap_err()
            .contains("rollback_limit"));
        assert!(Policy::from_toml("refusal_keywords = [\"\"]").is_err());
        assert!(
            Policy::from_toml("tool_error_prefixes = [\"Error:\", \"\"]")
                .unwrap_err()
                .contains("tool_error_prefixes")
        );
        let tau = Policy::from_toml("tool_error_prefixes = [\"Error executing tool\", \"Error:\"]")
            .unwrap();
        assert_eq!(tau.tool_error_prefixes.len(), 2);
        // Blank phrases match every reply, whatever the match mode.
        for blank in [
            "refusal_keywords = [\"x\", \" \\t\\u3000\"]",
            "refusal_keywords = [\" \"]",
            "mcp_tags = [\"<x>\", \"\\n\"]",
        ] {
            for mode in ["exact", "normalized"] {
                let err =
                    Policy::from_toml(&format!("{blank}\nrefusal_match = \"{mode}\"")).unwrap_err();
                assert!(err.contains("blank phrase"), "{blank} {mode}: {err}");
            }
        }
        assert!(Policy::from_toml(
            "[[arg_aliases]]\ntool = \"t\"\ntarget = \"a\"\naliases = [\"a\"]"
        )
        .is_err());
        let typo =
            Policy::from_toml("[[arg_aliases]]\ntool = \"t\"\ntarget = \"a\"\nalias = [\"b\"]")
                .unwrap_err();
        assert!(typo.contains("alias"), "{typo}");
    }
}
