//! Attribution figures (issue 38): what the rules could not judge on an
//! input ([`BlindSpots`]) and whose failure each tool error and failed LLM
//! call is ([`OwnerTally`]). Both are additive per-trace counts of a
//! [`Tally`](super::Tally), so they survive partial reports and `merge`
//! and `diff` compares them through the figure registry
//! (docs/metrics.md, "Blind spots" and "Model or environment").

use serde::{Deserialize, Serialize};

use crate::detect::cause::Owner;
use crate::detect::Reason;
use crate::replay::{Outcome, Verdict};

/// What the rules could not judge on this input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindSpots {
    /// Tool results that read like errors (`Error`, `ERROR` or `error`
    /// then `:` or white space) yet are neither marked as failed nor match
    /// a `tool_error_prefixes` entry: tool errors the rules could not see
    /// ([`crate::detect::bad_tool_result::unmatched_error`]).
    pub tool_errors_unmatched: u64,
    /// Attempts holding at least one such result.
    pub attempts_with_unmatched: u64,
    /// Attempts whose text the input does not hold (verdict source
    /// `recorded`: a task log's rolled-back turns, failed calls): their
    /// verdicts are the log's, and no policy can judge them again.
    pub text_unknown: u64,
    /// Of those, format-error rollbacks and ends: their kind is unknown
    /// (`unclassified` in the mistakes).
    pub text_unknown_format_errors: u64,
    /// Of those, refusal rollbacks and ends: the refusal's text is unknown
    /// (only the keyword the log names).
    pub text_unknown_refusals: u64,
    /// Attempts written by a native tool-calling harness: their calls are
    /// structured, so the MCP-XML format-error rule does not apply to them.
    pub native_tool_attempts: u64,
    /// Attempts whose text is known but whose tool results the input does
    /// not hold (a recording's rolled-back turn: no later request shows
    /// them): the rules that judge a result could not judge them.
    #[serde(default)]
    pub results_unseen: u64,
    /// Calls started: the base of the two below.
    #[serde(default)]
    pub calls_started: u64,
    /// Calls started of tools with a duplicate-query fingerprint
    /// (`google_search`, `scrape_website`, …): none, and the
    /// duplicate-query rule cannot fire.
    #[serde(default)]
    pub query_tool_calls: u64,
    /// Calls started of the policy's `empty_search_tools`: none, and the
    /// empty-search rule cannot fire.
    #[serde(default)]
    pub search_tool_calls: u64,
}

impl BlindSpots {
    pub fn add(&mut self, o: &BlindSpots) {
        self.tool_errors_unmatched += o.tool_errors_unmatched;
        self.attempts_with_unmatched += o.attempts_with_unmatched;
        self.text_unknown += o.text_unknown;
        self.text_unknown_format_errors += o.text_unknown_format_errors;
        self.text_unknown_refusals += o.text_unknown_refusals;
        self.native_tool_attempts += o.native_tool_attempts;
        self.results_unseen += o.results_unseen;
        self.calls_started += o.calls_started;
        self.query_tool_calls += o.query_tool_calls;
        self.search_tool_calls += o.search_tool_calls;
    }

    pub(super) fn count(&mut self, v: &Verdict) {
        self.tool_errors_unmatched += u64::from(v.unmatched_errors);
        self.attempts_with_unmatched += u64::from(v.unmatched_errors > 0);
        self.native_tool_attempts += u64::from(v.native_tools);
        self.calls_started += v.executed as u64;
        self.query_tool_calls += u64::from(v.query_calls);
        self.search_tool_calls += u64::from(v.search_calls);
        if v.recorded.as_ref().is_some_and(|r| r.unjudged.is_some()) {
            self.results_unseen += 1;
        } else if v.recorded.is_some() {
            self.text_unknown += 1;
            if matches!(v.outcome, Outcome::Rollback | Outcome::End) {
                self.text_unknown_format_errors += u64::from(v.reason == Some(Reason::FormatError));
                self.text_unknown_refusals += u64::from(v.reason == Some(Reason::Refusal));
            }
        }
    }

    /// Whether anything is worth saying: some result or text the rules
    /// could not judge, or a rule that cannot fire on every attempt.
    pub fn any(&self, attempts: u64) -> bool {
        self.tool_errors_unmatched > 0
            || self.text_unknown > 0
            || self.results_unseen > 0
            || self.idle_rules(attempts).next().is_some()
    }

    /// The rules that cannot fire on any attempt of the input, with why:
    /// `format_error` when every attempt calls tools natively (structured
    /// tool calls: no MCP-XML to leak); `duplicate_query` and
    /// `empty_search` when calls ran but none of a tool they judge.
    pub fn idle_rules(&self, attempts: u64) -> impl Iterator<Item = (Reason, &'static str)> {
        let all_native = attempts > 0 && self.native_tool_attempts == attempts;
        let ran = self.calls_started > 0;
        [
            all_native.then_some((
                Reason::FormatError,
                "every attempt calls tools natively (structured calls, no MCP-XML tags to leak)",
            )),
            (ran && self.query_tool_calls == 0).then_some((
                Reason::DuplicateQuery,
                "no call ran of a tool with a query fingerprint (google_search, sogou_search, scrape_website, scrape_and_extract_info, search_and_browse)",
            )),
            (ran && self.search_tool_calls == 0).then_some((
                Reason::EmptySearch,
                "no call ran of a tool in the policy's empty_search_tools",
            )),
        ]
        .into_iter()
        .flatten()
    }
}

/// `tool_error` rollbacks and ends and `llm_failed` attempts, by owner
/// (the verdicts the `owner` family of the mistakes counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerTally {
    /// The model's.
    pub model: u64,
    /// The environment's.
    pub environment: u64,
    /// Without a cause to judge (a log's verdict whose text is gone).
    pub unclassified: u64,
}

impl OwnerTally {
    pub fn add(&mut self, o: &OwnerTally) {
        self.model += o.model;
        self.environment += o.environment;
        self.unclassified += o.unclassified;
    }

    pub(super) fn count(&mut self, v: &Verdict) {
        let family = if v.outcome == Outcome::LlmFailed {
            "llm_failed"
        } else if matches!(v.outcome, Outcome::Rollback | Outcome::End)
            && v.reason == Some(Reason::ToolError)
        {
            Reason::ToolError.name()
        } else {
            return;
        };
        let owner = v
            .cause
            .as_ref()
            .filter(|c| c.family() == family)
            .and_then(|c| c.owner());
        match owner {
            Some(Owner::Model) => self.model += 1,
            Some(Owner::Environment) => self.environment += 1,
            None => self.unclassified += 1,
        }
    }

    /// The verdicts of one owner.
    pub fn of(&self, owner: Owner) -> u64 {
        match owner {
            Owner::Model => self.model,
            Owner::Environment => self.environment,
        }
    }

    pub fn total(&self) -> u64 {
        self.model + self.environment + self.unclassified
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::cause::{self, Cause, FailCause};
    use crate::metrics::testing::verdict;

    #[test]
    fn owners_are_counted_once_per_verdict() {
        let mut t = OwnerTally::default();
        let mut env = verdict(
            "main",
            0,
            Outcome::Rollback,
            Some(Reason::ToolError),
            Some(1),
            &[],
        );
        env.cause = Some(cause::tool_error(
            "Error executing tool x: Connection refused",
        ));
        let mut model = verdict(
            "main",
            1,
            Outcome::End,
            Some(Reason::ToolError),
            Some(5),
            &[],
        );
        model.cause = Some(cause::tool_error(
            "Error executing tool x: no such file /a/b",
        ));
        let mut failed = verdict("main", 2, Outcome::LlmFailed, None, Some(0), &[]);
        failed.cause = Some(Cause::LlmFailed(FailCause::error(
            "Error code: 429 slow down",
        )));
        let empty = {
            let mut v = verdict("main", 3, Outcome::LlmFailed, None, Some(0), &[]);
            v.cause = Some(Cause::LlmFailed(FailCause::EmptyText));
            v
        };
        let logged = verdict(
            "main",
            4,
            Outcome::Rollback,
            Some(Reason::ToolError),
            Some(1),
            &[],
        );
        // Not counted: another reason, a pass at the limit.
        let other = verdict(
            "main",
            5,
            Outcome::Rollback,
            Some(Reason::Refusal),
            Some(1),
            &[],
        );
        let passed = verdict("main", 6, Outcome::Ok, None, Some(0), &[]);
        for v in [&env, &model, &failed, &empty, &logged, &other, &passed] {
            t.count(v);
        }
        assert_eq!((t.model, t.environment, t.unclassified), (2, 2, 1));
        let mut sum = OwnerTally::default();
        sum.add(&t);
        sum.add(&t);
        assert_eq!(sum.total(), 2 * t.total());
    }

    #[test]
    fn blind_spots_count_and_name_idle_rules() {
        let mut b = BlindSpots::default();
        let mut v = verdict("main", 0, Outcome::Ok, None, Some(0), &[]);
        v.unmatched_errors = 2;
        v.native_tools = true;
        b.count(&v);
        let mut w = verdict(
            "main",
            1,
            Outcome::Rollback,
            Some(Reason::FormatError),
            Some(1),
            &[],
        );
        w.recorded = Some(Default::default());
        b.count(&w);
        assert_eq!(b.tool_errors_unmatched, 2);
        assert_eq!(b.attempts_with_unmatched, 1);
        assert_eq!((b.text_unknown, b.text_unknown_format_errors), (1, 1));
        assert_eq!(b.native_tool_attempts, 1);
        // One of two attempts is native: the format-error rule can fire.
        assert_eq!(b.idle_rules(2).count(), 0);
        assert_eq!(
            b.idle_rules(1).next().map(|r| r.0),
            Some(Reason::FormatError)
        );
        assert!(b.any(2));
        assert!(!BlindSpots::default().any(3));
    }
}
