//! `mirotrace export --format atif`: every input trace, replayed, written as
//! an ATIF trajectory (one JSON line each, or one file each into a directory).

use std::collections::HashSet;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::{report_problem, Common, Status};
use crate::engine::{self, Item};
use crate::output::{is_broken_pipe, Output};
use crate::read::atif;
use crate::replay::Replayer;

/// Options of `mirotrace export`.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub common: Common,
    /// A file (JSONL, written atomically) or a directory (`<trace_id>.json`
    /// each); stdout when absent.
    pub output: Option<PathBuf>,
}

/// Where trajectories go.
enum Target {
    Stream(Output),
    Dir { dir: PathBuf, used: HashSet<String> },
}

impl Target {
    fn open(path: Option<&Path>) -> Result<Target, String> {
        match path {
            Some(p) if p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/') => {
                std::fs::create_dir_all(p)
                    .map_err(|e| format!("cannot create {}: {e}", p.display()))?;
                Ok(Target::Dir {
                    dir: p.to_path_buf(),
                    used: HashSet::new(),
                })
            }
            other => Output::open(other)
                .map(Target::Stream)
                .map_err(|e| e.to_string()),
        }
    }

    fn write(&mut self, trace_id: &str, doc: &atif::Trajectory) -> Result<(), String> {
        match self {
            Target::Stream(out) => {
                let mut line = serde_json::to_string(doc).map_err(|e| e.to_string())?;
                line.push('\n');
                out.write_all(line.as_bytes())
                    .map_err(|e| describe_write(&e))
            }
            Target::Dir { dir, used } => {
                let name = unique_name(trace_id, used);
                let path = dir.join(format!("{name}.json"));
                let mut out = Output::open(Some(&path)).map_err(|e| e.to_string())?;
                let text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
                out.write_all(text.as_bytes())
                    .map_err(|e| describe_write(&e))?;
                out.write_all(b"\n").map_err(|e| describe_write(&e))?;
                out.finish().map_err(|e| e.to_string())
            }
        }
    }

    fn finish(self) -> Result<(), String> {
        match self {
            Target::Stream(out) => match out.finish() {
                Err(crate::output::OutputError::Write(e)) if is_broken_pipe(&e) => Ok(()),
                other => other.map_err(|e| e.to_string()),
            },
            Target::Dir { .. } => Ok(()),
        }
    }
}

fn describe_write(e: &std::io::Error) -> String {
    if is_broken_pipe(e) {
        String::new()
    } else {
        format!("writing output failed: {e}")
    }
}

/// A file name for a trace id: path separators and odd characters become
/// `_`; a repeated id gets `-2`, `-3`, ….
fn unique_name(trace_id: &str, used: &mut HashSet<String>) -> String {
    let mut base: String = trace_id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() || base.starts_with('.') {
        base.insert(0, '_');
    }
    let mut name = base.clone();
    let mut n = 1;
    while !used.insert(name.clone()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

pub fn run(opts: &ExportOptions) -> Result<Status, String> {
    let pool = opts.common.pool()?;
    let replayer = Replayer::new(opts.common.policy.clone());
    let mut target = Target::open(opts.output.as_deref())?;
    let mut failure: Option<String> = None;
    let mut stopped_strict = false;
    let stats = engine::run(
        &opts.common.inputs,
        &opts.common.read,
        &replayer,
        &pool,
        |item| {
            match item {
                Item::Trace { trace, verdicts } => {
                    let doc = atif::to_document(&trace, &verdicts);
                    if let Err(e) = target.write(&trace.trace_id, &doc) {
                        failure = Some(e);
                        return ControlFlow::Break(());
                    }
                }
                other => {
                    if report_problem(&other, opts.common.strict) {
                        stopped_strict = true;
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        },
    );
    match failure {
        // An empty message is a closed pipe: stop quietly.
        Some(e) if e.is_empty() => return Ok(Status::Ok),
        Some(e) => return Err(e),
        None => {}
    }
    target.finish()?;
    if stopped_strict {
        return Ok(Status::InputSkipped);
    }
    Ok(Status::from_stats(&stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_and_unique() {
        let mut used = HashSet::new();
        assert_eq!(unique_name("a/b:c", &mut used), "a_b_c");
        assert_eq!(unique_name("a/b:c", &mut used), "a_b_c-2");
        assert_eq!(unique_name("..", &mut used), "_..");
        assert_eq!(unique_name("", &mut used), "_");
    }
}
