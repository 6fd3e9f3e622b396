//! `mirotrace keywords`: score refusal keyword lists and mine new phrases.

use std::io::Write;
use std::path::PathBuf;

use super::{report_problem, Common, Status};
use crate::keywords::labels::Labels;
use crate::keywords::lists::KeywordList;
use crate::keywords::{self, render, Config, SuggestConfig};
use crate::output::{is_broken_pipe, Output, OutputError};

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordsFormat {
    Table,
    Json,
    /// With `--suggest`: the phrases only, one per line (a list file).
    Text,
}

/// Options of `mirotrace keywords`.
#[derive(Debug, Clone)]
pub struct KeywordsOptions {
    pub common: Common,
    pub lists: Vec<PathBuf>,
    pub labels: Option<PathBuf>,
    pub suggest: bool,
    pub format: KeywordsFormat,
    pub top: usize,
    pub min_support: usize,
    pub output: Option<PathBuf>,
    pub color: bool,
}

pub fn run(opts: &KeywordsOptions) -> Result<Status, String> {
    if opts.format == KeywordsFormat::Text && !opts.suggest {
        return Err("--format text prints suggested phrases: use it with --suggest".into());
    }
    let candidates = opts
        .lists
        .iter()
        .map(|p| KeywordList::load(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let labels = match &opts.labels {
        None => None,
        Some(p) => Some((
            p.display().to_string(),
            Labels::load(p).map_err(|e| e.to_string())?,
        )),
    };
    let config = Config {
        policy: opts.common.policy.clone(),
        candidates,
        labels,
        suggest: opts.suggest.then_some(SuggestConfig {
            top: opts.top,
            min_support: opts.min_support,
        }),
    };
    let pool = opts.common.pool()?;
    // Open the output first: an unwritable path fails before the long run.
    let mut out = Output::open(opts.output.as_deref()).map_err(|e| e.to_string())?;
    let strict = opts.common.strict;
    let (report, stats, stopped) = keywords::run(
        &opts.common.inputs,
        &opts.common.read,
        &pool,
        config,
        |item| report_problem(item, strict),
    );
    if let Some(l) = &report.labels {
        if l.not_found > 0 && !opts.common.quiet {
            eprintln!(
                "mirotrace: {} of {} labels name attempts not in the inputs (not scored)",
                l.not_found, l.labels
            );
        }
    }
    let text = match opts.format {
        KeywordsFormat::Json => render::json(&report) + "\n",
        KeywordsFormat::Text => render::phrases(&report),
        KeywordsFormat::Table => render::tables(&report, opts.top, opts.color),
    };
    if let Err(e) = out.write_all(text.as_bytes()) {
        if is_broken_pipe(&e) {
            return Ok(Status::Ok);
        }
        return Err(format!("writing output failed: {e}"));
    }
    match out.finish() {
        Ok(()) => {}
        Err(OutputError::Write(e)) if is_broken_pipe(&e) => {}
        Err(e) => return Err(e.to_string()),
    }
    if stopped {
        return Ok(Status::InputSkipped);
    }
    Ok(Status::from_stats(&stats))
}
