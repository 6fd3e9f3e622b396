//! Partial reports: the whole state of an `analyze` run over some traces,
//! written to a file (`analyze --format partial`), merged with the
//! partials of the other traces (`mirotrace merge`) into exactly the report
//! one run over all of them gives (docs/partial.md).
//!
//! Exactness rests on three things: every figure is a sum, a bounded
//! ranking with a total order, or a histogram, so merging in any order
//! gives the same state; rankings break ties by the trace's position
//! ([`TracePos`], its first line), which every process computes alike;
//! and the bootstrap resamples the merged per-trace histogram with the
//! seed and iteration count every partial carries, so its interval is the
//! one of a single run.
//!
//! A partial says which format, mirotrace, policy and report options made
//! it; merging partials that differ in any of them is refused.

use serde::{Deserialize, Serialize};

use super::{Analysis, Collector, GroupBy, ReportOptions};
use crate::crosscheck;
use crate::policy::Policy;

/// The format name and version written into every partial.
pub const FORMAT: &str = "mirotrace.partial/2";

/// What made a partial (of a report, or of a diff with its own options
/// `O`); partials merge only when all of it is equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header<O> {
    /// [`FORMAT`].
    pub format: String,
    /// The version of mirotrace that wrote it: figures may change between
    /// versions, so partials of two versions are not added up.
    pub mirotrace_version: String,
    /// FNV-1a hash of the policy as `mirotrace policy` prints it.
    pub policy_fingerprint: String,
    pub options: O,
}

impl<O: PartialEq> Header<O> {
    /// Refuses to add up partials made differently: another version,
    /// policy or options (`options_named` lists them, `describe` shows them).
    pub fn check_alike(
        &self,
        other: &Header<O>,
        (self_file, other_file): (&str, &str),
        options_named: &'static str,
        describe: impl Fn(&O) -> String,
    ) -> Result<(), PartialError> {
        let (a, b) = (self, other);
        let mismatch = |what: &'static str, first: String, other: String| {
            Err(PartialError::Mismatch {
                what,
                first,
                first_file: self_file.to_string(),
                other,
                other_file: other_file.to_string(),
            })
        };
        if a.mirotrace_version != b.mirotrace_version {
            return mismatch(
                "mirotrace versions",
                format!("mirotrace {}", a.mirotrace_version),
                format!("mirotrace {}", b.mirotrace_version),
            );
        }
        if a.policy_fingerprint != b.policy_fingerprint {
            return mismatch(
                "policies",
                format!("policy {}", a.policy_fingerprint),
                format!("policy {}", b.policy_fingerprint),
            );
        }
        if a.options != b.options {
            return mismatch(options_named, describe(&a.options), describe(&b.options));
        }
        Ok(())
    }
}

/// The report options a partial was made with: every option that changes
/// a figure of the report, so that partials made differently are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Options {
    pub top: usize,
    pub group_by: Option<GroupBy>,
    pub seed: u64,
    pub iterations: usize,
    pub rollback_limit: u32,
    /// `--plain-reply` (`final` or `continue`): it changes the verdicts.
    #[serde(default = "final_rule")]
    pub plain_reply: String,
    /// `--prices`, when given: `merge` writes the money from them, as the
    /// one `analyze` over all the input would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<crate::metrics::prices::Prices>,
}

/// `--plain-reply`'s default, for partials that do not say.
pub fn final_rule() -> String {
    crate::replay::PlainReply::Final.name().to_string()
}

/// A partial report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Partial {
    #[serde(flatten)]
    pub header: Header<Options>,
    pub collector: Collector,
    pub crosscheck: crosscheck::Summary,
}

/// Reading or merging partials failed.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    #[error("{file}: not a mirotrace partial report ({reason})")]
    NotPartial { file: String, reason: String },
    #[error("{file}: partial report format {found:?}; this mirotrace reads {FORMAT:?}")]
    Format { file: String, found: String },
    #[error(
        "cannot merge partial reports made with different {what}: {first} ({first_file}) and {other} ({other_file}); make them again with the same {what}"
    )]
    Mismatch {
        what: &'static str,
        first: String,
        first_file: String,
        other: String,
        other_file: String,
    },
    #[error("{file}: {field}: {reason}: refused (not as mirotrace writes it, or edited)")]
    Invalid {
        file: String,
        field: String,
        reason: String,
    },
    #[error("no partial reports to merge")]
    Nothing,
}

/// A stable fingerprint of a policy ([`Policy::fingerprint`]).
pub fn policy_fingerprint(policy: &Policy) -> String {
    policy.fingerprint()
}

/// The `format` a partial file says it is in (analyze's [`FORMAT`] or
/// the partial diff's, `mirotrace.diff-partial/1`); `file` names it in errors.
pub fn format_of(text: &[u8], file: &str) -> Result<String, PartialError> {
    // The header alone, so a newer format is named as such rather than
    // reported as a parse error somewhere in its body.
    #[derive(Deserialize)]
    struct FormatOnly {
        format: Option<String>,
    }
    let head: FormatOnly = serde_json::from_slice(text).map_err(|e| PartialError::NotPartial {
        file: file.to_string(),
        reason: e.to_string(),
    })?;
    head.format.ok_or_else(|| PartialError::NotPartial {
        file: file.to_string(),
        reason: "no \"format\" field".into(),
    })
}

impl Partial {
    /// A partial of what `collector` and `crosscheck` folded.
    pub fn new(
        collector: Collector,
        crosscheck: crosscheck::Summary,
        options: &ReportOptions,
        policy: &Policy,
    ) -> Partial {
        Partial {
            header: Header {
                format: FORMAT.to_string(),
                mirotrace_version: env!("CARGO_PKG_VERSION").to_string(),
                policy_fingerprint: policy_fingerprint(policy),
                options: Options {
                    top: options.top,
                    group_by: options.group_by,
                    seed: options.seed,
                    iterations: options.iterations,
                    rollback_limit: options.rollback_limit,
                    plain_reply: final_rule(),
                    prices: options.prices.as_deref().cloned(),
                },
            },
            collector,
            crosscheck,
        }
    }

    /// The report options it was made with.
    pub fn report_options(&self) -> ReportOptions {
        let o = &self.header.options;
        ReportOptions {
            top: o.top,
            group_by: o.group_by,
            seed: o.seed,
            iterations: o.iterations,
            rollback_limit: o.rollback_limit,
            timelines: None,
            policy: super::CustomPolicy::from_fingerprint(
                self.header.policy_fingerprint.clone(),
                None,
            ),
            prices: o.prices.clone().map(std::sync::Arc::new),
        }
    }

    /// Made with `--plain-reply RULE` (the default is `final`).
    pub fn with_plain_reply(mut self, rule: crate::replay::PlainReply) -> Partial {
        self.header.options.plain_reply = rule.name().to_string();
        self
    }

    /// The partial as JSON text (one line, with a final newline).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string(self)?;
        text.push('\n');
        Ok(text)
    }

    /// Reads a partial; `file` names it in errors.
    pub fn from_json(text: &[u8], file: &str) -> Result<Partial, PartialError> {
        let found = format_of(text, file)?;
        if found != FORMAT {
            return Err(PartialError::Format {
                file: file.to_string(),
                found,
            });
        }
        let not_partial = |e: serde_json::Error| PartialError::NotPartial {
            file: file.to_string(),
            reason: e.to_string(),
        };
        let mut part: Partial = serde_json::from_slice(text).map_err(not_partial)?;
        super::partial_check::check(&part, file)?;
        let invalid = |field: &str, reason: String| PartialError::Invalid {
            file: file.to_string(),
            field: field.to_string(),
            reason,
        };
        if let Some(prices) = &part.header.options.prices {
            prices
                .validate()
                .map_err(|reason| invalid("options.prices", reason))?;
        }
        if crate::replay::PlainReply::from_name(&part.header.options.plain_reply).is_none() {
            return Err(invalid(
                "options.plain_reply",
                format!(
                    "{:?} is neither final nor continue",
                    part.header.options.plain_reply
                ),
            ));
        }
        // At most MAX_KINDS kinds per family, whatever the part holds.
        part.collector.bound_kinds();
        Ok(part)
    }

    /// Adds `other` (read from `other_file`) into `self` (from
    /// `self_file`), after checking both were made alike.
    pub fn merge(
        &mut self,
        other: Partial,
        self_file: &str,
        other_file: &str,
    ) -> Result<(), PartialError> {
        self.header.check_alike(
            &other.header,
            (self_file, other_file),
            "report options (--top, --group-by, --seed, --iterations, --plain-reply, --prices)",
            describe,
        )?;
        self.collector.merge(other.collector);
        self.crosscheck.merge(other.crosscheck);
        Ok(())
    }

    /// The finished report. The bootstrap runs on the current rayon pool.
    pub fn finish(self) -> Analysis {
        let options = self.report_options();
        let mut analysis = Analysis::finish(self.collector, &options);
        analysis.crosscheck = self.crosscheck;
        analysis
    }
}

fn describe(o: &Options) -> String {
    format!(
        "--top {} --group-by {} --seed {} --iterations {} --plain-reply {}{}",
        o.top,
        o.group_by.map_or("none", |g| g.name()),
        o.seed,
        o.iterations,
        o.plain_reply,
        match &o.prices {
            None => " (no --prices)".to_string(),
            // The prices themselves would make a long line: their count
            // and an FNV-1a hash of them tell two files apart.
            Some(p) => format!(
                " --prices of {} models (hash {:016x})",
                p.models.len(),
                format!("{:?}", p.models)
                    .bytes()
                    .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
                    })
            ),
        }
    )
}

/// Merges partials read from `(file, bytes)` pairs, in the order given.
pub fn merge_all(
    parts: impl IntoIterator<Item = (String, Vec<u8>)>,
) -> Result<Partial, PartialError> {
    let mut merged: Option<(Partial, String)> = None;
    let mut sums = super::partial_check::Sums::default();
    for (file, bytes) in parts {
        let part = Partial::from_json(&bytes, &file)?;
        // Parsed again as plain JSON to walk every count it holds.
        let json: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| PartialError::NotPartial {
                file: file.clone(),
                reason: e.to_string(),
            })?;
        sums.add(&json, &file)?;
        match &mut merged {
            None => merged = Some((part, file)),
            Some((acc, first)) => acc.merge(part, first, &file)?,
        }
    }
    merged.map(|(p, _)| p).ok_or(PartialError::Nothing)
}
