//! The model's mistakes, counted: each format error by its kind
//! ([`FormatKind`]) and each repaired call's arguments by the fixes
//! json_repair made ([`JsonFix`]), overall, per agent and per model, with
//! the first example of each (docs/metrics.md, "Mistakes").
//!
//! The other reasons are counted one level deeper too, by the kind of
//! their verdict's [`Cause`] (`llm_failed` attempts, and `unknown_tool`,
//! `tool_error` and `duplicate_query` rollbacks and ends).
//!
//! `tool_error` and `llm_failed` verdicts are also counted by whose
//! failure they are, the model's or the environment's
//! ([`Owner`](crate::detect::cause::Owner), decided with the cause): the
//! `owner` family, kinds `<family>.<owner>` (`tool_error.environment`,
//! `llm_failed.model`, …; `<family>.unclassified` without a cause), so
//! a model is not blamed for its infrastructure.
//!
//! A verdict without a kind (one a task log gave, with no text to
//! classify) is counted as `unclassified`, so each family's kinds always
//! add up to its verdicts. Kinds read from trace text (tool names, error
//! lines, finish reasons) are open-ended: each family keeps at most
//! [`MAX_KINDS`] of them, the rest counted as `other` (docs/limits.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::detect::cause::Cause;
use crate::detect::format_error::FormatKind;
use crate::detect::Reason;
use crate::model::Outcome;
use crate::parse::json_repair::JsonFix;
use crate::parse::JsonPath;
use crate::replay::Verdict;

/// The kind of a format error the replay could not classify.
pub const UNCLASSIFIED: &str = "unclassified";

/// The kind the kinds past [`MAX_KINDS`] of a family are counted under.
pub const OTHER: &str = "other";

/// Distinct kinds kept per family (besides `other`). Which ones are kept
/// when more occur is decided by a hash of the kind, so that the counts do
/// not depend on the order of the traces or on how a corpus was split.
pub const MAX_KINDS: usize = 100;

/// The families with a [`Cause`], in [`Mistakes::families`] order.
pub const CAUSE_FAMILIES: [&str; 4] = [
    "llm_failed",
    "unknown_tool",
    "tool_error",
    "duplicate_query",
];

/// Where a mistake was first seen: its line and what it is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Example {
    pub file: String,
    pub line: u64,
    pub trace_id: String,
    /// The tag a format error is about, or the tool whose arguments were fixed.
    pub excerpt: String,
}

/// Mistake counts; keys are `format_error.<kind>` and `json_fixes.<fix>`
/// in the per-agent, per-model and example maps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mistakes {
    /// Kind → format-error verdicts (rollbacks and ends).
    pub format_error: BTreeMap<String, u64>,
    /// Fix → repaired calls it was made in.
    pub json_fixes: BTreeMap<String, u64>,
    /// Cause → `llm_failed` attempts.
    #[serde(default)]
    pub llm_failed: BTreeMap<String, u64>,
    /// Called name (`~` nearest listed tool) → `unknown_tool` verdicts.
    #[serde(default)]
    pub unknown_tool: BTreeMap<String, u64>,
    /// Error class → `tool_error` verdicts.
    #[serde(default)]
    pub tool_error: BTreeMap<String, u64>,
    /// How the first run went → `duplicate_query` verdicts.
    #[serde(default)]
    pub duplicate_query: BTreeMap<String, u64>,
    /// `<family>.<owner>` → `tool_error` and `llm_failed` verdicts.
    #[serde(default)]
    pub owner: BTreeMap<String, u64>,
    /// Agent → key → count.
    pub by_agent: BTreeMap<String, BTreeMap<String, u64>>,
    /// Model (`meta.model`, `(unknown)` without one) → key → count.
    pub by_model: BTreeMap<String, BTreeMap<String, u64>>,
    /// Key → its first example (smallest file, then line).
    pub examples: BTreeMap<String, Example>,
}

impl Mistakes {
    /// Counts the mistakes of one verdict. Runs for every verdict of a
    /// run, so a key is built once in a reused buffer and an example's
    /// strings are copied only when it is the earliest so far.
    pub fn add(&mut self, v: &Verdict) {
        let mut key = String::new();
        let format_error = v.reason == Some(Reason::FormatError)
            && matches!(v.outcome, Outcome::Rollback | Outcome::End);
        if format_error {
            let kind = match &v.format_why {
                Some(w) => w.kind.name(),
                None => UNCLASSIFIED,
            };
            bump(&mut self.format_error, kind);
            set_key(&mut key, "format_error", kind);
            self.count(v, &key, || match &v.format_why {
                Some(w) => w.tag.clone(),
                None => v.leaked_tag.clone().unwrap_or_default(),
            });
        }
        if let Some(family) = cause_family(v) {
            let kind = match &v.cause {
                Some(c) if c.family() == family => c.kind(),
                _ => UNCLASSIFIED.to_string(),
            };
            let map = self.family_mut(family);
            let new = !map.contains_key(&kind);
            bump(map, &kind);
            set_key(&mut key, family, &kind);
            self.count(v, &key, || {
                v.cause.as_ref().map(Cause::excerpt).unwrap_or_default()
            });
            if new {
                self.bound(family);
            }
            if let Some(kind) = owner_kind(v, family) {
                bump(&mut self.owner, &kind);
                set_key(&mut key, OWNER_FAMILY, &kind);
                self.count(v, &key, || {
                    v.cause.as_ref().map(Cause::excerpt).unwrap_or_default()
                });
            }
        }
        for call in v.calls.iter().filter(|c| c.json == JsonPath::Repaired) {
            for fix in call.fixes.iter() {
                bump(&mut self.json_fixes, fix.name());
                set_key(&mut key, "json_fixes", fix.name());
                self.count(v, &key, || call.tool_name.clone());
            }
        }
    }

    /// Counts `key` for the verdict's agent and model, and offers it as
    /// the key's example (`excerpt` is only called when it is kept).
    fn count(&mut self, v: &Verdict, key: &str, excerpt: impl FnOnce() -> String) {
        let model = v.model.as_deref().unwrap_or(super::group::NO_MODEL);
        for (map, name) in [(&mut self.by_agent, &*v.agent), (&mut self.by_model, model)] {
            let inner = match map.get_mut(name) {
                Some(inner) => inner,
                None => map.entry(name.to_string()).or_default(),
            };
            bump(inner, key);
        }
        offer_with(
            &mut self.examples,
            key,
            (&v.origin.file, v.origin.line),
            || Example {
                file: v.origin.file.to_string(),
                line: v.origin.line,
                trace_id: v.trace_id.to_string(),
                excerpt: excerpt(),
            },
        );
    }

    /// Adds another part's counts (the result does not depend on the order).
    pub fn merge(&mut self, o: &Mistakes) {
        add_counts(&mut self.format_error, &o.format_error);
        add_counts(&mut self.json_fixes, &o.json_fixes);
        for family in CAUSE_FAMILIES {
            add_counts(self.family_mut(family), o.family(family));
        }
        add_counts(&mut self.owner, &o.owner);
        for (mine, theirs) in [
            (&mut self.by_agent, &o.by_agent),
            (&mut self.by_model, &o.by_model),
        ] {
            for (name, counts) in theirs {
                add_counts(mine.entry(name.clone()).or_default(), counts);
            }
        }
        for (key, e) in &o.examples {
            offer(&mut self.examples, key, e.clone());
        }
        for family in CAUSE_FAMILIES {
            self.bound(family);
        }
    }

    /// Every family with its counts, in a fixed order: `format_error`,
    /// `json_fixes`, the causes of [`CAUSE_FAMILIES`], then `owner`.
    pub fn families(&self) -> Vec<(&'static str, &BTreeMap<String, u64>)> {
        let mut all = vec![
            ("format_error", &self.format_error),
            ("json_fixes", &self.json_fixes),
        ];
        all.extend(CAUSE_FAMILIES.map(|f| (f, self.family(f))));
        all.push((OWNER_FAMILY, &self.owner));
        all
    }

    /// The `tool_error` and `llm_failed` verdicts of one owner (`model`,
    /// `environment` or `unclassified`), both families together.
    pub fn owned_by(&self, owner: &str) -> u64 {
        OWNED_FAMILIES
            .iter()
            .filter_map(|f| self.owner.get(&format!("{f}.{owner}")))
            .sum()
    }

    /// A cause family's counts (`format_error` and `json_fixes` are fields).
    fn family(&self, name: &str) -> &BTreeMap<String, u64> {
        match name {
            "llm_failed" => &self.llm_failed,
            "unknown_tool" => &self.unknown_tool,
            "tool_error" => &self.tool_error,
            _ => &self.duplicate_query,
        }
    }

    fn family_mut(&mut self, name: &str) -> &mut BTreeMap<String, u64> {
        match name {
            "llm_failed" => &mut self.llm_failed,
            "unknown_tool" => &mut self.unknown_tool,
            "tool_error" => &mut self.tool_error,
            _ => &mut self.duplicate_query,
        }
    }

    /// Folds the kinds of every cause family past [`MAX_KINDS`] into
    /// `other`, as counting and merging do: for counts read from elsewhere
    /// (a partial holding 48 000 kinds is bounded as it is read, even
    /// merged with nothing).
    pub fn bound_all(&mut self) {
        for family in CAUSE_FAMILIES {
            self.bound(family);
        }
    }

    /// Folds the kinds of `family` past [`MAX_KINDS`] into `other`: those
    /// with the largest hash go, wherever they are counted, so the kinds
    /// kept are the same whatever order the verdicts came in. All at once,
    /// in one sort and one pass over each map (one kind at a time took
    /// time quadratic in the kinds: 29 s for 48 000).
    fn bound(&mut self, family: &'static str) {
        let map = self.family_mut(family);
        let kinds = map.len() - usize::from(map.contains_key(OTHER));
        if kinds <= MAX_KINDS {
            return;
        }
        let mut ranked: Vec<(u64, &String)> = map
            .keys()
            .filter(|k| k.as_str() != OTHER)
            .map(|k| (stable_hash(k), k))
            .collect();
        ranked.sort_unstable_by(|a, b| b.cmp(a));
        let gone: Vec<String> = ranked[..kinds - MAX_KINDS]
            .iter()
            .map(|(_, k)| (*k).clone())
            .collect();
        let moved: u64 = gone.iter().filter_map(|k| map.remove(k)).sum();
        *map.entry(OTHER.to_string()).or_insert(0) += moved;
        // In the order one-at-a-time folding took them (largest first), so
        // an example tied on (file, line) is the one it kept.
        let gone: Vec<String> = gone.iter().map(|k| format!("{family}.{k}")).collect();
        let to = format!("{family}.{OTHER}");
        for key in &gone {
            if let Some(e) = self.examples.remove(key) {
                offer(&mut self.examples, &to, e);
            }
        }
        let gone: std::collections::HashSet<String> = gone.into_iter().collect();
        for inner in self.by_agent.values_mut().chain(self.by_model.values_mut()) {
            let (mut found, mut n) = (false, 0);
            inner.retain(|k, count| {
                let drop = gone.contains(k);
                if drop {
                    found = true;
                    n += *count;
                }
                !drop
            });
            if found {
                *inner.entry(to.clone()).or_insert(0) += n;
            }
        }
    }

    /// Format errors counted (all kinds).
    pub fn format_errors(&self) -> u64 {
        self.format_error.values().sum()
    }

    /// The format-error kinds in rule order, `unclassified` last, with counts.
    pub fn format_kinds(&self) -> Vec<(&'static str, u64)> {
        FormatKind::ALL
            .iter()
            .map(|k| k.name())
            .chain([UNCLASSIFIED])
            .map(|k| (k, self.format_error.get(k).copied().unwrap_or(0)))
            .collect()
    }

    /// The fixes in name order, with counts.
    pub fn fixes(&self) -> Vec<(&'static str, u64)> {
        JsonFix::ALL
            .iter()
            .map(|f| {
                (
                    f.name(),
                    self.json_fixes.get(f.name()).copied().unwrap_or(0),
                )
            })
            .collect()
    }
}

/// The `<family>.<kind>` keys a verdict is counted under (what
/// `export --format examples --kind` selects by), in family order.
pub fn keys(v: &Verdict) -> Vec<String> {
    let mut m = Mistakes::default();
    m.add(v);
    let mut out: Vec<String> = Vec::new();
    for (family, counts) in m.families() {
        out.extend(counts.keys().map(|k| format!("{family}.{k}")));
    }
    out
}

/// Whether `kind` can be a kind of `family` (`None` for a family whose kinds
/// come from trace text: any can), and the known kinds of the family.
pub fn known_kinds(family: &str) -> Option<Vec<String>> {
    use crate::detect::cause::{After, ErrorClass, Owner, FAIL_GROUPS};
    let fixed: Vec<&str> = match family {
        "format_error" => FormatKind::ALL.iter().map(|k| k.name()).collect(),
        "json_fixes" => JsonFix::ALL.iter().map(|f| f.name()).collect(),
        "duplicate_query" => After::ALL.iter().map(|a| a.name()).collect(),
        OWNER_FAMILY => {
            return Some(
                OWNED_FAMILIES
                    .iter()
                    .flat_map(|f| {
                        Owner::ALL
                            .iter()
                            .map(|o| o.name())
                            .chain([UNCLASSIFIED])
                            .map(move |o| format!("{f}.{o}"))
                    })
                    .collect(),
            )
        }
        "llm_failed" => {
            let mut all = vec![FAIL_GROUPS[0].to_string()];
            all.extend(
                ErrorClass::ALL
                    .iter()
                    .map(|c| format!("{}:{}", FAIL_GROUPS[2], c.name())),
            );
            all.push(format!("{}:<finish_reason>", FAIL_GROUPS[1]));
            all.push(format!("{}:<exception>", FAIL_GROUPS[3]));
            all.push(UNCLASSIFIED.to_string());
            return Some(all);
        }
        _ => return None,
    };
    let mut all: Vec<String> = fixed.into_iter().map(str::to_string).collect();
    if family != "json_fixes" {
        all.push(UNCLASSIFIED.to_string());
    }
    Some(all)
}

/// Whether `kind` is one of `family`'s kinds as [`known_kinds`] lists
/// them (a `<…>` entry stands for any text after its prefix).
pub fn is_known_kind(family: &str, kind: &str) -> bool {
    match known_kinds(family) {
        None => !kind.is_empty(),
        Some(known) => known.iter().any(|k| match k.split_once('<') {
            Some((prefix, _)) => kind.len() > prefix.len() && kind.starts_with(prefix),
            None => k == kind,
        }),
    }
}

/// The families, in [`Mistakes::families`] order.
pub const FAMILIES: [&str; 7] = [
    "format_error",
    "json_fixes",
    CAUSE_FAMILIES[0],
    CAUSE_FAMILIES[1],
    CAUSE_FAMILIES[2],
    CAUSE_FAMILIES[3],
    OWNER_FAMILY,
];

/// The family that counts `tool_error` and `llm_failed` verdicts by owner.
pub const OWNER_FAMILY: &str = "owner";

/// The cause families whose verdicts have an owner.
pub const OWNED_FAMILIES: [&str; 2] = [CAUSE_FAMILIES[2], CAUSE_FAMILIES[0]];

/// `<family>.<owner>` of a verdict counted in cause family `family`, when
/// that family's causes have an owner (`<family>.unclassified` when the
/// verdict has no cause of its family).
fn owner_kind(v: &Verdict, family: &str) -> Option<String> {
    if !OWNED_FAMILIES.contains(&family) {
        return None;
    }
    let owner = match &v.cause {
        Some(c) if c.family() == family => c.owner().map_or(UNCLASSIFIED, |o| o.name()),
        _ => UNCLASSIFIED,
    };
    Some(format!("{family}.{owner}"))
}

/// The cause family a verdict counts in, if any: an `llm_failed` attempt,
/// or an `unknown_tool`, `tool_error` or `duplicate_query` rollback or end.
fn cause_family(v: &Verdict) -> Option<&'static str> {
    if v.outcome == Outcome::LlmFailed {
        return Some(CAUSE_FAMILIES[0]);
    }
    if !matches!(v.outcome, Outcome::Rollback | Outcome::End) {
        return None;
    }
    match v.reason? {
        Reason::UnknownTool => Some(CAUSE_FAMILIES[1]),
        Reason::ToolError => Some(CAUSE_FAMILIES[2]),
        Reason::DuplicateQuery => Some(CAUSE_FAMILIES[3]),
        _ => None,
    }
}

/// FNV-1a: a hash that is the same on every run and platform.
/// Where a kind ranks for being kept ([`MAX_KINDS`]): the kinds of a
/// family with the smallest `(rank, kind)` are kept, the rest counted as
/// `other` (`export --kind FAMILY.other` selects the same ones).
pub fn kind_rank(kind: &str) -> u64 {
    stable_hash(kind)
}

fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Adds one to `key`'s count, copying the key only when it is new.
fn bump(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

/// `<family>.<kind>` into a reused buffer.
fn set_key(key: &mut String, family: &str, kind: &str) {
    key.clear();
    key.reserve(family.len() + 1 + kind.len());
    key.push_str(family);
    key.push('.');
    key.push_str(kind);
}

fn add_counts(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_insert(0) += n;
    }
}

/// Keeps the earliest example of `key`.
fn offer(examples: &mut BTreeMap<String, Example>, key: &str, e: Example) {
    let at = (e.file.clone(), e.line);
    offer_with(examples, key, (&at.0, at.1), || e);
}

/// Keeps the example `make` builds if `at` (file, line) is earlier than the
/// one kept for `key`; `make` is only called then.
fn offer_with(
    examples: &mut BTreeMap<String, Example>,
    key: &str,
    (file, line): (&str, u64),
    make: impl FnOnce() -> Example,
) {
    match examples.get_mut(key) {
        Some(kept) if (file, line) < (kept.file.as_str(), kept.line) => *kept = make(),
        // Verdicts of one line (replayed apart, or in a merged report):
        // the smaller excerpt, so the choice does not depend on order.
        Some(kept) if (file, line) == (kept.file.as_str(), kept.line) => {
            let e = make();
            if (&e.trace_id, &e.excerpt) < (&kept.trace_id, &kept.excerpt) {
                *kept = e;
            }
        }
        Some(_) => {}
        None => {
            examples.insert(key.to_string(), make());
        }
    }
}
