//! The rollback detectors, one per file (one upstream check each):
//!
//! | file | detects | reason(s) |
//! |---|---|---|
//! | [`format_error`] | an MCP tag leaked into a reply without a parsed call | `format_error` |
//! | [`refusal`] | a refusal keyword in a reply without a parsed call | `refusal` |
//! | [`duplicate_query`] | a call repeating a query this session already ran | `duplicate_query` |
//! | [`bad_tool_result`] | an unknown tool, a tool error, an empty search | `unknown_tool`, `tool_error`, `empty_search` |
//!
//! [`cause`] is no detector: it names, one level deeper, which failed call,
//! invented tool, tool error or repeated query a verdict is (its `why`).
//!
//! A detector only answers "does this trigger?"; the session loop
//! ([`crate::replay`]) asks them in upstream's order and decides, from the
//! rollback streak, whether a hit rolls back, ends the loop or is let through.

pub mod bad_tool_result;
pub mod cause;
pub mod duplicate_query;
pub mod format_error;
pub mod refusal;

pub use bad_tool_result::bad_result;
pub use duplicate_query::{cache_key, near_duplicate_key, query_fingerprint};

pub use crate::model::Reason;

/// An exception upstream raises inside its per-call `try`: the call fails,
/// nothing rolls back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallRaised(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reason belongs to exactly one detector, so a new reason
    /// cannot be added without a file that detects it.
    #[test]
    fn every_reason_has_exactly_one_detector() {
        let owners: [(&str, &[Reason]); 4] = [
            ("format_error", &format_error::REASONS),
            ("refusal", &refusal::REASONS),
            ("duplicate_query", &duplicate_query::REASONS),
            ("bad_tool_result", &bad_tool_result::REASONS),
        ];
        for reason in Reason::ALL {
            let claimed: Vec<&str> = owners
                .iter()
                .filter(|(_, reasons)| reasons.contains(&reason))
                .map(|(file, _)| *file)
                .collect();
            assert_eq!(claimed.len(), 1, "{reason:?} is claimed by {claimed:?}");
        }
        let total: usize = owners.iter().map(|(_, r)| r.len()).sum();
        assert_eq!(total, Reason::ALL.len(), "a detector claims a reason twice");
    }

    #[test]
    fn reason_names_round_trip_and_match_serde() {
        for reason in Reason::ALL {
            assert_eq!(Reason::from_name(reason.name()), Some(reason));
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.name()));
        }
        assert_eq!(Reason::from_name("Refusal"), None);
        assert_eq!(Reason::from_name(""), None);
    }
}
