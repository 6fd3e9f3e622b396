//! The cross-check of a task log's two views of one run: what upstream
//! logged about each attempt (its `step_logs`) against what the replay does
//! with it. A surviving turn is replayed from its text, so the replay and
//! the log can disagree about it; a turn the log alone knows keeps the log's
//! verdict, and the check asks whether the replay could have reached it
//! (the message quoted, the loop state it ran in).
//!
//! This sits above the replay: the input layer only reads what the log
//! says ([`crate::model::Recorded`]); judging it is done here.

use serde::{Deserialize, Serialize};

use crate::detect::{bad_result, refusal, Reason};
use crate::model::{Outcome, Recorded, Source, ToolResult, Trace, TracePos};
use crate::policy::Policy;
use crate::replay::{Flag, Verdict};

/// How the two views disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisagreementKind {
    /// A surviving turn the replay judges otherwise than upstream did.
    ReplayDiffers,
    /// The turn count or rollback streak after an attempt is not the one the
    /// log states: the replay's loop state has drifted from upstream's.
    StateDiffers,
    /// A logged rollback the replay could not reproduce from what was logged
    /// (its message, keywords or quoted tool result).
    UnexplainedRollback,
    /// An attempt upstream ran that the replay never reaches.
    NeverReached,
}

impl DisagreementKind {
    pub const ALL: [DisagreementKind; 4] = [
        DisagreementKind::ReplayDiffers,
        DisagreementKind::StateDiffers,
        DisagreementKind::UnexplainedRollback,
        DisagreementKind::NeverReached,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DisagreementKind::ReplayDiffers => "replay_differs",
            DisagreementKind::StateDiffers => "state_differs",
            DisagreementKind::UnexplainedRollback => "unexplained_rollback",
            DisagreementKind::NeverReached => "never_reached",
        }
    }
}

/// One disagreement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    pub kind: DisagreementKind,
    pub trace_id: String,
    pub session: String,
    /// The attempt's index within its session.
    pub index: usize,
    /// The turn as the log states it.
    pub turn: Option<i64>,
    /// The verdict's source.
    pub source: Source,
    /// The reason in question (upstream's, else the replay's), if any.
    pub reason: Option<&'static str>,
    /// `FILE:LINE` of the attempt.
    pub origin: String,
    pub detail: String,
}

/// A [`Disagreement`] as a partial report stores it (the reason as text).
#[derive(Deserialize)]
struct StoredDisagreement {
    kind: DisagreementKind,
    trace_id: String,
    session: String,
    index: usize,
    turn: Option<i64>,
    source: Source,
    reason: Option<String>,
    origin: String,
    detail: String,
}

impl<'de> Deserialize<'de> for Disagreement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Disagreement, D::Error> {
        Disagreement::try_from(StoredDisagreement::deserialize(d)?)
            .map_err(serde::de::Error::custom)
    }
}

impl TryFrom<StoredDisagreement> for Disagreement {
    type Error = String;

    fn try_from(d: StoredDisagreement) -> Result<Disagreement, String> {
        let reason = match d.reason {
            None => None,
            Some(n) => Some(
                Reason::ALL
                    .iter()
                    .map(|r| r.name())
                    .find(|known| *known == n)
                    .ok_or_else(|| format!("unknown reason {n:?}"))?,
            ),
        };
        Ok(Disagreement {
            kind: d.kind,
            trace_id: d.trace_id,
            session: d.session,
            index: d.index,
            turn: d.turn,
            source: d.source,
            reason,
            origin: d.origin,
            detail: d.detail,
        })
    }
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} #{}", self.trace_id, self.session, self.index)?;
        if let Some(t) = self.turn {
            write!(f, " turn {t}")?;
        }
        write!(f, ": {}: {}", self.kind.name(), self.detail)
    }
}

/// Every disagreement of one replayed trace (`verdicts[i]` is the replay of
/// `trace.attempts[i]`), in attempt order.
pub fn check(trace: &Trace, verdicts: &[Verdict], policy: &Policy) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for (a, v) in trace.attempts.iter().zip(verdicts) {
        let Some(rec) = a.recorded.as_deref() else {
            continue;
        };
        let mut push = |kind, reason: Option<Reason>, detail: String| {
            out.push(Disagreement {
                kind,
                trace_id: trace.trace_id.to_string(),
                session: v.session.to_string(),
                index: v.index,
                turn: rec.turn,
                source: v.source(),
                reason: reason.map(Reason::name),
                origin: v.origin.to_string(),
                detail,
            });
        };
        if v.outcome == Outcome::Unreachable {
            push(
                DisagreementKind::NeverReached,
                rec.reason,
                format!(
                    "upstream ran this attempt ({}); the replay's loop stops before it",
                    describe(rec.outcome, rec.reason)
                ),
            );
            continue;
        }
        if !rec.decided {
            if let Some(detail) = verdict_differs(rec, v) {
                // The state after a turn judged otherwise differs of course.
                push(
                    DisagreementKind::ReplayDiffers,
                    rec.reason.or(v.reason),
                    detail,
                );
                continue;
            }
        } else if rec.outcome == Some(Outcome::Rollback) {
            if let Some(detail) = unexplained(rec, policy) {
                push(DisagreementKind::UnexplainedRollback, rec.reason, detail);
            }
        }
        if let Some(detail) = state_differs(rec, v) {
            push(DisagreementKind::StateDiffers, rec.reason, detail);
        }
    }
    out
}

fn describe(outcome: Option<Outcome>, reason: Option<Reason>) -> String {
    match (outcome, reason) {
        (Some(o), Some(r)) => format!("{} ({})", o.name(), r.name()),
        (Some(o), None) => o.name().to_string(),
        (None, _) => "outcome not logged".to_string(),
    }
}

/// How a surviving turn's replay differs from what upstream logged.
fn verdict_differs(rec: &Recorded, v: &Verdict) -> Option<String> {
    let logged = rec.outcome?;
    let same_reason =
        !matches!(logged, Outcome::End) || rec.reason.is_none() || rec.reason == v.reason;
    if logged != v.outcome || !same_reason {
        return Some(format!(
            "upstream: {}; the replay: {}",
            describe(Some(logged), rec.reason),
            describe(Some(v.outcome), v.reason)
        ));
    }
    let allowed = v.flags.contains(&Flag::AllowedDuplicate);
    let logged_allowed = !rec.allowed.is_empty();
    if allowed != logged_allowed {
        return Some(if allowed {
            "the replay lets a duplicate through at the limit; upstream logged none".to_string()
        } else {
            "upstream let a duplicate through at the limit; the replay does not".to_string()
        });
    }
    let recovered = v.flags.contains(&Flag::Recovered);
    if logged == Outcome::Ok && recovered != rec.recovered.is_some() {
        return Some(if recovered {
            "the replay ends a rollback streak here; upstream logged no recovery".to_string()
        } else {
            "upstream logged a recovery here; the replay had no streak to end".to_string()
        });
    }
    None
}

/// The turn count or streak after the attempt, where the log states them.
fn state_differs(rec: &Recorded, v: &Verdict) -> Option<String> {
    let mut parts = Vec::new();
    if let (Some(logged), Some(replayed)) = (rec.turn, v.turn) {
        if logged != replayed {
            parts.push(format!("turn {logged} logged, {replayed} replayed"));
        }
    }
    if let (Some(logged), Some(replayed)) = (rec.streak, v.consecutive_rollbacks) {
        if logged != replayed {
            parts.push(format!("streak {logged} logged, {replayed} replayed"));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Why the replay could not reproduce a logged rollback from what was
/// logged; `None` when it could.
fn unexplained(rec: &Recorded, policy: &Policy) -> Option<String> {
    let Some(reason) = rec.reason else {
        return Some(format!(
            "upstream's rollback message is not one the replay knows: {:?}",
            rec.message.as_deref().unwrap_or_default()
        ));
    };
    match reason {
        Reason::FormatError => policy
            .mcp_tags
            .is_empty()
            .then(|| "the policy has no MCP tags, so no format error can occur".to_string()),
        Reason::Refusal => (!rec.keywords.is_empty()
            && !rec
                .keywords
                .iter()
                .any(|kw| refusal::refusal_keyword(kw, policy).is_some()))
        .then(|| {
            format!(
                "none of the logged refusal keywords {:?} is in the policy",
                rec.keywords
            )
        }),
        // The queries of turns the log alone knows are not logged: a
        // duplicate cannot be judged again.
        Reason::DuplicateQuery => None,
        Reason::UnknownTool | Reason::ToolError | Reason::EmptySearch => {
            let tool = rec.tool.as_deref().unwrap_or_default();
            let quoted = rec.result.as_deref().unwrap_or_default();
            let as_result = ToolResult {
                result: quoted.to_string(),
                error: None,
                failed: false,
            };
            let replayed = bad_result(tool, &as_result, policy).ok().flatten();
            // Upstream quotes 200 characters: a longer search result was cut.
            let cut = quoted.chars().count() >= 200;
            let fits = replayed == Some(reason)
                || (reason == Reason::EmptySearch
                    && cut
                    && policy.empty_search_tools.iter().any(|t| t == tool));
            (!fits).then(|| match replayed {
                Some(other) => format!(
                    "the replay classifies the logged result of {tool} as {}",
                    other.name()
                ),
                None => format!(
                    "the replay would not roll back on the logged result of {tool}: {quoted:?}"
                ),
            })
        }
    }
}

/// Attempts and outcomes of one verdict source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCounts {
    pub attempts: u64,
    pub outcomes: [u64; Outcome::ALL.len()],
    pub rollback_reasons: [u64; Reason::ALL.len()],
}

impl SourceCounts {
    fn add(&mut self, v: &Verdict) {
        self.attempts += 1;
        self.outcomes[v.outcome as usize] += 1;
        if let (Outcome::Rollback, Some(r)) = (v.outcome, v.reason) {
            self.rollback_reasons[r as usize] += 1;
        }
    }

    fn merge(&mut self, o: &SourceCounts) {
        self.attempts += o.attempts;
        for (a, b) in self.outcomes.iter_mut().zip(&o.outcomes) {
            *a += b;
        }
        for (a, b) in self.rollback_reasons.iter_mut().zip(&o.rollback_reasons) {
            *a += b;
        }
    }

    fn to_json(&self) -> serde_json::Value {
        let outcomes: serde_json::Map<String, serde_json::Value> = Outcome::ALL
            .iter()
            .map(|o| (o.name().to_string(), self.outcomes[*o as usize].into()))
            .collect();
        let reasons: serde_json::Map<String, serde_json::Value> = Reason::ALL
            .iter()
            .map(|r| {
                (
                    r.name().to_string(),
                    self.rollback_reasons[*r as usize].into(),
                )
            })
            .collect();
        serde_json::json!({
            "attempts": self.attempts,
            "outcomes": outcomes,
            "rollback_reasons": reasons,
        })
    }
}

/// The run's verdicts by source, and every disagreement of its task logs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Traces that carried a log (task logs).
    pub traces: u64,
    /// Indexed by [`Source`].
    pub sources: [SourceCounts; 2],
    /// With the position of their trace, for a stable order.
    disagreements: Vec<(TracePos, Disagreement)>,
}

impl Summary {
    /// Adds one replayed trace (`at`: its position).
    pub fn add(&mut self, at: &TracePos, trace: &Trace, verdicts: &[Verdict], policy: &Policy) {
        for v in verdicts {
            self.sources[v.source() as usize].add(v);
        }
        if !trace.has_log() {
            return;
        }
        self.traces += 1;
        self.disagreements.extend(
            check(trace, verdicts, policy)
                .into_iter()
                .map(|d| (at.clone(), d)),
        );
    }

    pub fn merge(&mut self, other: Summary) {
        self.traces += other.traces;
        for (a, b) in self.sources.iter_mut().zip(&other.sources) {
            a.merge(b);
        }
        self.disagreements.extend(other.disagreements);
    }

    pub fn source(&self, s: Source) -> &SourceCounts {
        &self.sources[s as usize]
    }

    /// Every disagreement, by the position of its trace (a stable sort:
    /// one trace's in the order the check found them).
    pub fn disagreements(&self) -> Vec<&Disagreement> {
        let mut all: Vec<&(TracePos, Disagreement)> = self.disagreements.iter().collect();
        all.sort_by(|(a, _), (b, _)| a.cmp(b));
        all.into_iter().map(|(_, d)| d).collect()
    }

    /// Disagreements of each kind.
    pub fn count(&self, kind: DisagreementKind) -> usize {
        self.disagreements
            .iter()
            .filter(|(_, d)| d.kind == kind)
            .count()
    }

    /// `sources` of `analyze --format json`: attempts, outcomes and rollback
    /// reasons by where the verdict came from.
    pub fn sources_json(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        for s in Source::ALL {
            obj.insert(s.name().into(), self.source(s).to_json());
        }
        serde_json::Value::Object(obj)
    }

    /// `recorded` of `analyze --format json`; null without task logs.
    pub fn to_json(&self) -> serde_json::Value {
        if self.traces == 0 {
            return serde_json::Value::Null;
        }
        let by_kind: serde_json::Map<String, serde_json::Value> = DisagreementKind::ALL
            .iter()
            .map(|k| (k.name().to_string(), self.count(*k).into()))
            .collect();
        serde_json::json!({
            "traces": self.traces,
            "by_kind": by_kind,
            "disagreements": self.disagreements(),
        })
    }
}
