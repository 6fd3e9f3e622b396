//! `export --format examples --kind <family>.<kind>`: the attempts counted
//! under one mistake key (docs/metrics.md, "Mistakes"), one JSON line each,
//! for fine-tuning or evaluation sets: where the attempt is, the system
//! prompt it saw, its text, and its verdict line (the parsed or repaired
//! calls, with `fixes`, and the `why`). docs/usage.md, "Export".

use crate::metrics::mistakes::{self, FAMILIES};
use crate::model::{Outcome, Reason};
use crate::pyjson;
use crate::read::Trace;
use crate::replay::Verdict;

/// Why a `--kind` cannot select anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    #[error("--kind {0:?} is not <family>.<kind> nor a rollback reason; families: {families}; reasons: {reasons}", families = FAMILIES.join(", "), reasons = reason_names())]
    NoFamily(String),
    #[error("unknown family {family:?} in --kind; families: {families}, and refusal.<keyword>; reasons alone: {reasons}", families = FAMILIES.join(", "), reasons = reason_names())]
    UnknownFamily { family: String },
    #[error("unknown kind {kind:?} of {family}; its kinds: {known}")]
    UnknownKind {
        family: String,
        kind: String,
        known: String,
    },
}

/// The rollback reasons, as `analyze` lists them.
fn reason_names() -> String {
    Reason::ALL.map(Reason::name).join(", ")
}

/// The family of refusal rollbacks by their matched keyword
/// (`refusal.<keyword>`, analyze's `refusal_keywords`).
pub const REFUSAL_FAMILY: &str = "refusal";

/// A checked `--kind`: a family and one of its kinds, a rollback reason
/// alone (`refusal`: every attempt `analyze` counts under it), or
/// `refusal.<keyword>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    key: String,
    family: &'static str,
    /// `FAMILY.other`: the kinds a report counts under `other` (past the
    /// 100 kept of a bounded family), known only once every input is read.
    other: bool,
    /// Selects the rollbacks of this reason (alone, or by keyword).
    reason: Option<Reason>,
}

impl Selector {
    /// Checks `key` against the families and, where their kinds are a
    /// fixed vocabulary, the kinds.
    pub fn parse(key: &str) -> Result<Selector, KindError> {
        if let Some(reason) = Reason::from_name(key) {
            return Ok(Selector {
                key: key.to_string(),
                family: reason.name(),
                other: false,
                reason: Some(reason),
            });
        }
        let (family, kind) = key
            .split_once('.')
            .ok_or_else(|| KindError::NoFamily(key.to_string()))?;
        if family == REFUSAL_FAMILY && !kind.is_empty() {
            return Ok(Selector {
                key: key.to_string(),
                family: REFUSAL_FAMILY,
                other: false,
                reason: Some(Reason::Refusal),
            });
        }
        let family = FAMILIES.into_iter().find(|f| *f == family).ok_or_else(|| {
            KindError::UnknownFamily {
                family: family.to_string(),
            }
        })?;
        let other = kind == mistakes::OTHER && mistakes::CAUSE_FAMILIES.contains(&family);
        if !other && !mistakes::is_known_kind(family, kind) {
            let known = mistakes::known_kinds(family).unwrap_or_default().join(", ");
            return Err(KindError::UnknownKind {
                family: family.to_string(),
                kind: kind.to_string(),
                known,
            });
        }
        Ok(Selector {
            key: key.to_string(),
            family,
            other,
            reason: None,
        })
    }

    /// `FAMILY.other`: [`lines`] gives every kind's examples, each with its
    /// kind, and [`OtherKinds`] keeps those a report counts as `other`.
    pub fn is_other(&self) -> bool {
        self.other
    }

    /// The mistake keys and refusal keywords `v` counts under: what this
    /// selector matches against, and the kinds of its family it shows.
    fn keys(&self, v: &Verdict) -> Vec<String> {
        let Some(r) = self.reason else {
            return mistakes::keys(v);
        };
        let mut keys = Vec::new();
        if v.outcome == Outcome::Rollback && v.reason == Some(r) {
            keys.push(r.name().to_string());
        }
        // A keyword is counted where it matched: a refusal rollback, or
        // the refusal that ended a loop (analyze's `refusal_keywords`).
        if let (Reason::Refusal, Some(k)) = (r, &v.refusal_keyword) {
            keys.push(format!("{REFUSAL_FAMILY}.{k}"));
        }
        keys
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the family's kinds come from trace text (so an unmatched
    /// kind can only be told from the kinds the inputs hold).
    pub fn open_ended(&self) -> bool {
        match self.reason {
            // A reason alone is a fixed name; refusal keywords come from
            // the policy.
            Some(_) => self.key.contains('.'),
            None => mistakes::known_kinds(self.family).is_none(),
        }
    }

    pub fn family(&self) -> &'static str {
        self.family
    }
}

/// The example lines of one trace, each with its kind (of the selector's
/// family), and the kinds of the family it holds (for the refusal of a
/// kind no input has). For `FAMILY.other`, every kind's lines.
pub fn lines(
    trace: &Trace,
    verdicts: &[Verdict],
    sel: &Selector,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let prefix = format!("{}.", sel.family);
    // A line without a prompt has its session's last one.
    let mut prompts: std::collections::HashMap<&str, &str> = Default::default();
    for (pos, v) in verdicts.iter().enumerate() {
        let attempt = trace.attempts.get(pos);
        if let Some(a) = attempt {
            if let Some(p) = a.system_prompt.as_deref() {
                prompts.insert(&a.session, p);
            }
        }
        let prompt = attempt.and_then(|a| prompts.get(&*a.session).copied());
        let keys = sel.keys(v);
        for k in keys.iter().filter_map(|k| k.strip_prefix(&prefix)) {
            if !seen.iter().any(|s| s == k) {
                seen.push(k.to_string());
            }
        }
        if sel.other {
            for k in keys.iter().filter_map(|k| k.strip_prefix(&prefix)) {
                out.push((
                    k.to_string(),
                    line(attempt.map(|a| a.content.as_str()), prompt, v, &sel.key),
                ));
            }
        } else if keys.contains(&sel.key) {
            // A reason alone (`refusal`) is its own kind.
            let kind = sel
                .key
                .strip_prefix(&prefix)
                .unwrap_or(&sel.key)
                .to_string();
            out.push((
                kind,
                line(attempt.map(|a| a.content.as_str()), prompt, v, &sel.key),
            ));
        }
    }
    (out, seen)
}

/// One example: `{"kind", "trace_id", "session", "index", "file", "line",
/// "system_prompt", "text", "verdict"}`, Python-compatible like the verdict
/// lines (arguments keep `NaN` and big integers).
/// The system prompt is the line's, or its session's last one before it.
fn line(text: Option<&str>, prompt: Option<&str>, v: &Verdict, key: &str) -> String {
    let mut out = String::from("{\"kind\": ");
    push_str(&mut out, key);
    out.push_str(", \"trace_id\": ");
    push_str(&mut out, &v.trace_id);
    out.push_str(", \"session\": ");
    push_str(&mut out, &v.session);
    out.push_str(&format!(", \"index\": {}, \"file\": ", v.index));
    push_str(&mut out, &v.origin.file);
    out.push_str(&format!(
        ", \"line\": {}, \"system_prompt\": ",
        v.origin.line
    ));
    for (i, field) in [prompt, text].into_iter().enumerate() {
        if i == 1 {
            out.push_str(", \"text\": ");
        }
        match field {
            Some(t) => push_str(&mut out, t),
            None => out.push_str("null"),
        }
    }
    out.push_str(", \"verdict\": ");
    v.write_json_line(&mut out);
    out.push('}');
    out
}

/// Picks the examples of `FAMILY.other` as they come, in input order: the
/// kinds with the [`mistakes::MAX_KINDS`] smallest ranks seen so far are
/// held back (their lines buffered); a kind past them is `other` for good
/// (later kinds can only push more out), and a kind pushed out hands on
/// its buffered lines. At the end the kinds still held are the ones a
/// report keeps, and their lines are dropped.
#[derive(Default)]
pub struct OtherKinds {
    kept: std::collections::BTreeSet<(u64, String)>,
    held: std::collections::HashMap<String, Vec<String>>,
}

impl OtherKinds {
    /// Takes one example of `kind`; returns the lines now known to be `other`.
    pub fn take(&mut self, kind: String, line: String) -> Vec<String> {
        if let Some(lines) = self.held.get_mut(&kind) {
            lines.push(line);
            return Vec::new();
        }
        let rank = (mistakes::kind_rank(&kind), kind);
        if self.kept.len() < mistakes::MAX_KINDS {
            self.kept.insert(rank.clone());
            self.held.insert(rank.1, vec![line]);
            return Vec::new();
        }
        match self.kept.last() {
            Some(last) if rank < *last => {
                let out = self.kept.pop_last().expect("not empty");
                self.kept.insert(rank.clone());
                self.held.insert(rank.1, vec![line]);
                self.held.remove(&out.1).unwrap_or_default()
            }
            _ => vec![line],
        }
    }
}

fn push_str(out: &mut String, s: &str) {
    pyjson::dump_to(&pyjson::Value::str(s), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_checked_against_their_family() {
        assert!(Selector::parse("format_error.cut_off").is_ok());
        assert!(Selector::parse("json_fixes.truncated").is_ok());
        assert!(Selector::parse("llm_failed.error:timeout").is_ok());
        assert!(Selector::parse("llm_failed.unsupported_finish:abort").is_ok());
        assert!(Selector::parse("duplicate_query.after_empty").is_ok());
        let open = Selector::parse("tool_error.x: boom").expect("any text");
        assert!(open.open_ended());
        let Err(KindError::UnknownKind { known, .. }) = Selector::parse("format_error.cutoff")
        else {
            panic!("an unknown kind is refused");
        };
        assert!(
            known.contains("cut_off") && known.contains("stray_tag"),
            "{known}"
        );
        assert!(matches!(
            Selector::parse("format.cut_off"),
            Err(KindError::UnknownFamily { .. })
        ));
        assert!(matches!(
            Selector::parse("cut_off"),
            Err(KindError::NoFamily(_))
        ));
        assert!(Selector::parse("llm_failed.error:nothing").is_err());
        // Every rollback reason analyze lists, alone, and refusals by keyword.
        for r in Reason::ALL {
            let s = Selector::parse(r.name()).expect("a reason");
            assert!(!s.open_ended(), "{}", r.name());
        }
        let k = Selector::parse("refusal.i cannot").expect("a keyword");
        assert!(k.open_ended());
        assert!(Selector::parse("refusal.").is_err());
    }
}
