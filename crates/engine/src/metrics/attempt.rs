//! What one verdict counts as. Every figure is built from these few
//! definitions (docs/metrics.md).
//!
//! An *attempt* is one recorded LLM call: one input line, one verdict,
//! whatever its outcome. An attempt is *reached* when upstream's loop gets
//! to it (every outcome but `unreachable`): rates of what the layer did are
//! over reached attempts, since upstream never makes the others.

use crate::detect::Reason;
use crate::parse::JsonPath;
use crate::repair::Call;
use crate::replay::{Flag, Outcome, Verdict};

/// Whether upstream's loop got to this attempt.
pub fn is_reached(v: &Verdict) -> bool {
    v.outcome != Outcome::Unreachable
}

/// The reason of a rollback. An `end` is not a rollback: at the limit the
/// layer stopped the loop instead (a limit event).
pub fn rollback_reason(v: &Verdict) -> Option<Reason> {
    match v.outcome {
        Outcome::Rollback => v.reason,
        _ => None,
    }
}

/// The reason of an `end`: a format error or refusal met the limit.
pub fn end_reason(v: &Verdict) -> Option<Reason> {
    match v.outcome {
        Outcome::End => v.reason,
        _ => None,
    }
}

/// Whether a call needed an in-place fix: a repair kind fired, or its
/// arguments only parsed after JSON repair or the lenient fallback.
/// Without the layer it would have reached the tool broken, or not at all.
pub fn call_repaired(call: &Call) -> bool {
    !call.repairs.is_empty() || matches!(call.json, JsonPath::Repaired | JsonPath::Lenient)
}

/// The rollback limit's three behaviours, as often as they fired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LimitEvents {
    /// Outcome `end`: a format error or refusal at the limit ended the loop.
    pub loop_ended: u64,
    /// Flag `allowed_duplicate`: a duplicate query let through at the limit.
    pub duplicate_allowed: u64,
    /// Flag `tool_error_passed`: a bad tool result passed on at the limit.
    pub result_passed: u64,
}

impl LimitEvents {
    /// The limit events of one attempt.
    pub fn of(v: &Verdict) -> LimitEvents {
        LimitEvents {
            loop_ended: u64::from(v.outcome == Outcome::End),
            duplicate_allowed: u64::from(v.flags.contains(&Flag::AllowedDuplicate)),
            result_passed: u64::from(v.flags.contains(&Flag::ToolErrorPassed)),
        }
    }

    pub fn total(&self) -> u64 {
        self.loop_ended + self.duplicate_allowed + self.result_passed
    }

    pub fn add(&mut self, o: &LimitEvents) {
        self.loop_ended += o.loop_ended;
        self.duplicate_allowed += o.duplicate_allowed;
        self.result_passed += o.result_passed;
    }
}
