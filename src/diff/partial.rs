//! Partial diffs: each side's per-trace rows, made by `diff --format
//! partial` over any share of either side (or both), added up by
//! `mirotrace merge` into exactly the report one `diff` over all of both
//! sides gives (docs/partial.md).
//!
//! A side of a diff is its rows, one per trace (per group of the new side
//! with `--group-by`), and [`Sample::new`](super::Sample::new) resamples
//! them in a canonical order, so the rows' multiset is all that counts:
//! merging is concatenation. The side's label is made from its inputs, in
//! the order the partials are given.

use serde::{Deserialize, Serialize};

use super::counts::COUNT;
use super::{CompareOptions, Counts, GroupBy, SideRows};
use crate::analyze::partial::PartialError;
use crate::policy::Policy;

/// The format name and version written into every partial diff.
pub const FORMAT: &str = "mirotrace.diff-partial/1";

/// What made a partial diff; partials merge only when all of it is equal.
pub type Header = crate::analyze::partial::Header<Options>;

/// The options of the comparison, fixed when the rows are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    pub group_by: Option<GroupBy>,
    pub compare: CompareOptions,
    /// `--fail-on` rules, as written.
    pub fail_on: Vec<String>,
    /// `--plain-reply` (`final` or `continue`): it changes the verdicts.
    #[serde(default = "crate::analyze::partial::final_rule")]
    pub plain_reply: String,
}

/// One side's share.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Side {
    /// Its inputs' labels, as given.
    pub inputs: Vec<String>,
    pub rows: Vec<Row>,
    /// Lines or inputs were skipped.
    pub skipped: bool,
}

/// One row of a side (see [`super::RowSet`]) as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub trace_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub counts: Vec<u64>,
}

impl Side {
    /// `grouped`: the rows were split by `--group-by` (each row then
    /// names its group).
    pub fn new(inputs: Vec<String>, rows: &SideRows, grouped: bool, skipped: bool) -> Side {
        let mut out = Vec::new();
        for (key, set) in rows {
            out.extend((0..set.len()).map(|i| Row {
                trace_id: set.id(i),
                group: grouped.then(|| key.clone()),
                counts: set.counts(i).0.to_vec(),
            }));
        }
        Side {
            inputs,
            rows: out,
            skipped,
        }
    }

    /// The rows back, or why they cannot be (a count vector of another length).
    pub fn trace_rows(&self, file: &str) -> Result<SideRows, PartialError> {
        let mut side = SideRows::new();
        for r in &self.rows {
            let counts = r
                .counts
                .as_slice()
                .try_into()
                .map_err(|_| PartialError::NotPartial {
                    file: file.to_string(),
                    reason: format!(
                        "a row of trace {:?} has {} counts, not {}",
                        r.trace_id,
                        r.counts.len(),
                        COUNT
                    ),
                })?;
            let group = r.group.as_deref().unwrap_or("");
            match side.get_mut(group) {
                Some(set) => set.push(&r.trace_id, &Counts(counts)),
                None => side
                    .entry(group.to_string())
                    .or_default()
                    .push(&r.trace_id, &Counts(counts)),
            }
        }
        Ok(side)
    }

    fn merge(&mut self, other: Side) {
        self.inputs.extend(other.inputs);
        self.rows.extend(other.rows);
        self.skipped |= other.skipped;
    }
}

/// A partial diff.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartialDiff {
    #[serde(flatten)]
    pub header: Header,
    pub base: Side,
    pub new: Side,
}

impl PartialDiff {
    pub fn new(options: Options, policy: &Policy, base: Side, new: Side) -> PartialDiff {
        PartialDiff {
            header: Header {
                format: FORMAT.to_string(),
                mirotrace_version: env!("CARGO_PKG_VERSION").to_string(),
                policy_fingerprint: policy.fingerprint(),
                options,
            },
            base,
            new,
        }
    }

    /// As JSON text (one line, with a final newline).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string(self)?;
        text.push('\n');
        Ok(text)
    }

    /// Reads a partial diff whose `format` was checked; `file` names it in errors.
    pub fn from_json(text: &[u8], file: &str) -> Result<PartialDiff, PartialError> {
        let part: PartialDiff =
            serde_json::from_slice(text).map_err(|e| PartialError::NotPartial {
                file: file.to_string(),
                reason: e.to_string(),
            })?;
        // A partial's options obey the CLI's limits (the same check).
        part.header
            .options
            .compare
            .check()
            .map_err(|(field, why)| PartialError::Invalid {
                file: file.to_string(),
                field: format!("options.compare.{field}"),
                reason: why,
            })?;
        Ok(part)
    }

    /// Adds `other` (from `other_file`) after `self` (from `self_file`),
    /// after checking both were made alike.
    pub fn merge(
        &mut self,
        other: PartialDiff,
        self_file: &str,
        other_file: &str,
    ) -> Result<(), PartialError> {
        self.header.check_alike(
            &other.header,
            (self_file, other_file),
            "diff options (--group-by, --fail-on, --seed, --iterations, --alpha, --noise, --noise-relative, --top, --plain-reply)",
            describe,
        )?;
        self.base.merge(other.base);
        self.new.merge(other.new);
        Ok(())
    }
}

fn describe(o: &Options) -> String {
    let c = &o.compare;
    let mut text = format!(
        "--group-by {} --seed {} --iterations {} --alpha {} --noise {} --noise-relative {} --top {} --plain-reply {}",
        o.group_by.map_or("none", |g| g.name()),
        c.seed,
        c.iterations,
        c.alpha,
        c.noise_pp,
        c.noise_relative_pct,
        c.top,
        o.plain_reply
    );
    for rule in &o.fail_on {
        text.push_str(&format!(" --fail-on '{rule}'"));
    }
    text
}

/// Merges partial diffs read from `(file, bytes)` pairs, in the order given.
pub fn merge_all(
    parts: impl IntoIterator<Item = (String, Vec<u8>)>,
) -> Result<PartialDiff, PartialError> {
    let mut merged: Option<(PartialDiff, String)> = None;
    let (mut base, mut new) = (CountSums::default(), CountSums::default());
    for (file, bytes) in parts {
        let part = PartialDiff::from_json(&bytes, &file)?;
        base.add(&part.base, &file, "base")?;
        new.add(&part.new, &file, "new")?;
        match &mut merged {
            None => merged = Some((part, file)),
            Some((acc, first)) => acc.merge(part, first, &file)?,
        }
    }
    merged.map(|(p, _)| p).ok_or(PartialError::Nothing)
}

/// Each count's sum over a side's rows so far: a side's figures add its
/// rows' counts, so a part that would carry one past 2^64 − 1 is refused.
struct CountSums([u64; COUNT]);

impl Default for CountSums {
    fn default() -> Self {
        CountSums([0; COUNT])
    }
}

impl CountSums {
    fn add(&mut self, side: &Side, file: &str, name: &str) -> Result<(), PartialError> {
        for row in &side.rows {
            for (i, (total, &n)) in self.0.iter_mut().zip(&row.counts).enumerate() {
                *total = total.checked_add(n).ok_or_else(|| PartialError::Invalid {
                    file: file.to_string(),
                    field: format!("{name}.rows[].counts[{i}]"),
                    reason: "with the rows before it, the counts add up past 2^64 − 1".into(),
                })?;
            }
        }
        Ok(())
    }
}
