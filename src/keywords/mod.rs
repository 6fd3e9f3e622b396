//! Refusal-keyword tuning: how the current list and candidate lists flag
//! refusals, what each changes in a replay, how they score against labels,
//! and which phrases the data suggests (`mirotrace keywords`).
//!
//! [`lists`] reads keyword lists, [`labels`] reads ground truth,
//! [`evaluate`] scores lists per trace, [`suggest`] mines phrases, [`view`]
//! lays the [`KeywordsReport`] out for the table back end and [`render`]
//! picks the format.

pub mod evaluate;
pub mod labels;
pub mod lists;
pub mod render;
pub mod suggest;
pub mod view;

use std::ops::Range;

use serde::Serialize;

use crate::policy::Policy;
use crate::replay::PlainReply;
use evaluate::{Evaluator, LineNote, ReplayCounts, Totals, TraceFindings};
use labels::Labels;
use lists::KeywordList;
use suggest::{Miner, NearMiss, NearMisses, Suggestion};

/// Characters of context on each side of a match in excerpts.
const EXCERPT_CONTEXT: usize = 40;

/// What to compute.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The policy; its `refusal_keywords` are the current list.
    pub policy: Policy,
    /// What a reply without a tool call does to its session.
    pub plain_reply: PlainReply,
    /// Candidate lists, in command-line order.
    pub candidates: Vec<KeywordList>,
    /// Labels and the file they came from.
    pub labels: Option<(String, Labels)>,
    /// Mine suggestions (and near-misses).
    pub suggest: Option<SuggestOptions>,
}

#[derive(Debug, Clone, Copy)]
pub struct SuggestOptions {
    /// How many suggestions to keep.
    pub top: usize,
    /// Minimum foreground documents per suggestion.
    pub min_support: usize,
}

/// The labels file and how much of it the inputs cover.
#[derive(Debug, Clone, Serialize)]
pub struct LabelSummary {
    pub file: String,
    pub labels: usize,
    pub positives: usize,
    /// Labelled attempts found in the inputs (the scored ones).
    pub found: u64,
    /// Labels naming an attempt the inputs do not have.
    pub not_found: u64,
}

/// Precision/recall of one list against the labels.
#[derive(Debug, Clone, Serialize)]
pub struct Scores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub tp: u64,
    pub fp: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
    pub tn: u64,
    pub false_positives: Vec<LineNote>,
    pub false_negatives: Vec<LineNote>,
}

/// One list's results.
#[derive(Debug, Clone, Serialize)]
pub struct ListReport {
    pub name: String,
    pub source: String,
    #[serde(rename = "match")]
    pub mode: &'static str,
    pub phrases: Vec<String>,
    /// Attempts the list's replay rolls back or ends as refusals.
    pub flagged: u64,
    /// The replay with this list.
    #[serde(flatten)]
    pub replay: ReplayCounts,
    /// Rollbacks / attempts reached, as analyze's `rollback_rate` (0 when
    /// nothing was reached).
    pub rollback_rate: f64,
    /// Against the current list (empty for the current list itself).
    pub newly_flagged: Vec<LineNote>,
    pub no_longer_flagged: Vec<LineNote>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub scores: Option<Scores>,
}

/// Everything `mirotrace keywords` reports.
#[derive(Debug, Clone, Serialize)]
pub struct KeywordsReport {
    /// Every attempt read, reached or not (as analyze's `attempts`).
    pub attempts: u64,
    /// Attempts where refusals are checked (no tool call, no MCP tag).
    pub eligible: u64,
    pub tool_calling: u64,
    /// Attempts whose text the input does not hold (a task log's turns known
    /// only from its step log): no list can judge them again.
    pub text_unknown: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<LabelSummary>,
    /// The current list first, then the candidates.
    pub lists: Vec<ListReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<Vec<Suggestion>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_misses: Option<Vec<NearMiss>>,
    /// Foreground/background document counts behind the suggestions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mined: Option<MinedSummary>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct MinedSummary {
    pub foreground: usize,
    pub background: u64,
    pub min_support: usize,
    /// Phrase occurrences the miner's memory caps left out (docs/limits.md).
    pub left_out: suggest::LeftOut,
}

/// Sets up scoring: the [`Evaluator`] each worker scores traces with
/// ([`Evaluator::trace`]), and the [`Findings`] their findings are added to
/// in input order.
pub fn prepare(config: Plan) -> (Evaluator, Findings) {
    let mut lists = vec![KeywordList::current(&config.policy)];
    lists.extend(config.candidates);
    lists::dedupe_names(&mut lists);
    let (labels_file, labels) = match config.labels {
        Some((file, labels)) => (Some(file), Some(labels)),
        None => (None, None),
    };
    let evaluator = Evaluator::new(config.policy, lists, labels, config.suggest.is_some())
        .with_plain_reply(config.plain_reply);
    let findings = Findings {
        totals: Totals::default(),
        miner: Miner::default(),
        near: NearMisses::default(),
        labels_file,
        suggest: config.suggest,
    };
    (evaluator, findings)
}

/// The findings of every trace so far.
pub struct Findings {
    totals: Totals,
    miner: Miner,
    near: NearMisses,
    labels_file: Option<String>,
    suggest: Option<SuggestOptions>,
}

impl Findings {
    /// Adds one trace's findings (in input order: mined phrases are
    /// numbered as they come).
    pub fn add(&mut self, mut f: TraceFindings) {
        self.totals.merge(&mut f);
        for doc in f.foreground {
            self.miner.add_foreground(doc);
        }
        for doc in &f.background {
            self.miner.add_background(doc);
        }
        for m in f.near_misses {
            self.near.add(m);
        }
    }

    /// The report, for the lists and labels `evaluator` scored.
    pub fn finish(self, evaluator: &Evaluator) -> KeywordsReport {
        let Findings {
            mut totals,
            miner,
            near,
            labels_file,
            suggest,
        } = self;
        let labels_summary = evaluator
            .labels()
            .zip(labels_file)
            .map(|(l, file)| LabelSummary {
                file,
                labels: l.len(),
                positives: l.positives(),
                found: totals.labelled_found,
                not_found: (l.len() as u64).saturating_sub(totals.labelled_found),
            });
        let has_labels = labels_summary.is_some();
        let lists = evaluator
            .lists()
            .iter()
            .zip(std::mem::take(&mut totals.lists))
            .map(|(list, t)| ListReport {
                name: list.name.clone(),
                source: list.source_label(),
                mode: list.mode.name(),
                phrases: list.phrases.clone(),
                flagged: t.flagged,
                rollback_rate: t.replay.rollback_rate().unwrap_or(0.0),
                replay: ReplayCounts::of(&t.replay),
                newly_flagged: t.newly_flagged,
                no_longer_flagged: t.no_longer_flagged,
                scores: has_labels.then(|| Scores {
                    precision: t.confusion.precision(),
                    recall: t.confusion.recall(),
                    f1: t.confusion.f1(),
                    tp: t.confusion.tp,
                    fp: t.confusion.fp,
                    fn_: t.confusion.fn_,
                    tn: t.confusion.tn,
                    false_positives: t.false_positives,
                    false_negatives: t.false_negatives,
                }),
            })
            .collect();
        KeywordsReport {
            attempts: totals.attempts,
            eligible: totals.eligible,
            tool_calling: totals.tool_calling,
            text_unknown: totals.text_unknown,
            labels: labels_summary,
            lists,
            suggestions: suggest.map(|s| miner.suggest(s.top, s.min_support)),
            near_misses: suggest.map(|_| near.finish()),
            mined: suggest.map(|s| MinedSummary {
                foreground: miner.foreground_docs(),
                background: miner.background_docs(),
                min_support: s.min_support,
                left_out: miner.left_out(),
            }),
        }
    }
}

/// Up to `EXCERPT_CONTEXT` characters either side of `range`, on one
/// line, with `…` where the text was cut.
pub fn excerpt(text: &str, range: Range<usize>) -> String {
    crate::render::format::excerpt(text, range, EXCERPT_CONTEXT)
}
