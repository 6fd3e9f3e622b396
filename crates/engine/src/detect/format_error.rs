//! Format error: a reply in which no tool call was parsed but that still
//! holds an MCP tag, i.e. the model tried to call a tool and got the format
//! wrong. The layer rolls the attempt back (or ends the loop at the limit).
//!
//! Upstream: `core/orchestrator.py` `_handle_response_format_issues` (its
//! first check, `any(tag in text for tag in mcp_tags)`), called only when no
//! tool call was parsed; the tags are `utils/prompt_utils.py` `mcp_tags`
//! ([`Policy::mcp_tags`]). The match is a case-sensitive substring test.

pub mod kind;

use super::Reason;
use crate::policy::Policy;
pub use kind::{classify, FormatKind, FormatWhy};

/// The reason this detector reports.
pub const REASONS: [Reason; 1] = [Reason::FormatError];

/// Whether `text` (a reply without a parsed tool call) leaks an MCP tag.
pub fn leaks_mcp_tag(text: &str, policy: &Policy) -> bool {
    leaked_mcp_tag(text, policy).is_some()
}

/// The first of the policy's MCP tags that `text` leaks, if any.
pub fn leaked_mcp_tag<'p>(text: &str, policy: &'p Policy) -> Option<&'p str> {
    policy
        .mcp_tags
        .iter()
        .map(String::as_str)
        .find(|t| text.contains(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_tags_are_upstreams_six() {
        let p = Policy::default();
        let cases: &[(&str, bool)] = &[
            ("<use_mcp_tool>", true),
            ("</use_mcp_tool>", true),
            ("text <server_name>tool-python", true),
            ("</server_name>", true),
            ("text <arguments>", true),
            ("{...}</arguments>", true),
            // `<tool_name>` is not one of upstream's tags.
            ("<tool_name>x</tool_name>", false),
            // Case-sensitive and exact: near misses are not format errors.
            ("<USE_MCP_TOOL>", false),
            ("<use_mcp_tool >", false),
            ("use_mcp_tool", false),
            ("< arguments>", false),
            ("", false),
            ("The answer is 42.", false),
        ];
        for (text, expected) in cases {
            assert_eq!(leaks_mcp_tag(text, &p), *expected, "{text:?}");
        }
    }

    #[test]
    fn the_policy_decides_the_tags() {
        let custom = Policy {
            mcp_tags: vec!["<tool_name>".into()],
            ..Policy::default()
        };
        assert!(leaks_mcp_tag("<tool_name>x", &custom));
        assert!(!leaks_mcp_tag("<use_mcp_tool>", &custom));
        let none = Policy {
            mcp_tags: Vec::new(),
            ..Policy::default()
        };
        assert!(!leaks_mcp_tag("<use_mcp_tool><arguments>", &none));
    }
}
