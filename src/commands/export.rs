//! `mirotrace export --format atif`: every input trace, replayed, written as
//! an ATIF trajectory (one JSON line each, or one file each into a directory).
//! `--format examples --kind <family>.<kind>`: the attempts of one mistake
//! kind, one JSON line each ([`crate::export::examples`]).
//! Trajectories are built and serialised on the workers. Into a directory,
//! a file already there is never overwritten (the run is refused, exit 2,
//! nothing committed): only files this run wrote are put in place.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Error, Inputs, Reading, Status};
use crate::engine::{Event, Job};
use crate::export::atif;
use crate::export::examples::{self, Selector};
use crate::output::{cut_at, fingerprint, Output, OutputError, Pending};
use crate::read::{InputSpec, Trace};
use crate::replay::Verdict;

/// `--format`: what `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Harbor's Agent Trajectory Interchange Format (ATIF-v1.4).
    #[default]
    Atif,
    /// The attempts of one mistake kind (`--kind`), one JSON line each.
    Examples,
}

/// Options of `mirotrace export`.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    pub reading: Reading,
    pub inputs: Vec<InputSpec>,
    /// A file (JSONL, written atomically) or a directory (`<trace_id>.json`
    /// each); stdout when absent.
    pub output: Option<PathBuf>,
    pub format: Format,
    /// `--kind <family>.<kind>`, for [`Format::Examples`] (and only it).
    pub kind: Option<String>,
}

/// One trajectory, serialised.
struct Doc {
    trace_id: String,
    text: serde_json::Result<String>,
}

/// Builds and serialises each trajectory: one line each, or pretty-printed
/// for a file of its own.
struct ToAtif {
    pretty: bool,
}

impl Job for ToAtif {
    type Part = Vec<Doc>;

    fn part(&self) -> Vec<Doc> {
        Vec::new()
    }

    fn fold(&self, part: &mut Vec<Doc>, trace: &Trace, verdicts: Vec<Verdict>, _: u64) {
        let doc = atif::to_document(trace, &verdicts);
        let text = if self.pretty {
            serde_json::to_string_pretty(&doc)
        } else {
            serde_json::to_string(&doc)
        };
        part.push(Doc {
            trace_id: trace.trace_id.to_string(),
            text,
        });
    }
}

/// Where trajectories go.
enum Target {
    Stream(Output),
    /// Files are committed only when the whole run ends well (never a
    /// partial directory under a `--strict` stop).
    Dir {
        dir: PathBuf,
        used: HashSet<String>,
        written: Vec<Pending>,
    },
}

impl Target {
    fn open(path: Option<&Path>) -> Result<Target, Error> {
        match path {
            Some(p) if p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/') => {
                std::fs::create_dir_all(p).map_err(|source| Error::CreateDir {
                    path: p.display().to_string(),
                    source,
                })?;
                Ok(Target::Dir {
                    dir: p.to_path_buf(),
                    used: HashSet::new(),
                    written: Vec::new(),
                })
            }
            other => Ok(Target::Stream(Output::open(other)?)),
        }
    }

    fn write(&mut self, doc: Doc) -> Result<(), Error> {
        let text = doc.text?;
        match self {
            Target::Stream(out) => {
                out.write_all(text.as_bytes())?;
                out.write_all(b"\n")?;
                Ok(())
            }
            Target::Dir { dir, used, written } => {
                let name = unique_name(&doc.trace_id, used);
                let path = dir.join(format!("{name}.json"));
                // Names are unique within the run, so a file already there
                // is someone else's (an input, when -o is the input folder).
                if std::fs::symlink_metadata(&path).is_ok() {
                    return Err(OutputError::Exists {
                        path: crate::read::source::path_label(&path).to_string(),
                    }
                    .into());
                }
                let mut out = Output::open(Some(&path))?;
                out.write_all(text.as_bytes())?;
                out.write_all(b"\n")?;
                written.extend(out.finish_later()?);
                Ok(())
            }
        }
    }

    fn finish(self, status: Status) -> Result<(), Error> {
        match self {
            Target::Stream(out) => out.finish().map_err(|e| Error::from_output(e, status)),
            Target::Dir { written, .. } => {
                // A name taken meanwhile (another run exporting into the
                // same folder) is never written over; this run's files
                // already put in place are taken back: all or nothing.
                let mut placed: Vec<PathBuf> = Vec::with_capacity(written.len());
                for file in written {
                    let dest = file.dest().to_path_buf();
                    if let Err(e) = file.commit_new() {
                        for path in &placed {
                            let _ = std::fs::remove_file(path);
                        }
                        return Err(Error::from_output(e, status));
                    }
                    placed.push(dest);
                }
                Ok(())
            }
        }
    }

    /// A `--strict` stop: nothing is committed; what went to stdout is
    /// flushed, and a failed write is still reported.
    fn abandon(self, status: Status) -> Result<(), Error> {
        match self {
            Target::Stream(out) => out.abandon().map_err(|e| Error::from_output(e, status)),
            Target::Dir { .. } => Ok(()),
        }
    }
}

/// The longest base name (bytes) of a per-trace file: with `.json`, a
/// `-N` repeat suffix and the temporary name's dot, pid and suffix, the
/// names stay within `NAME_MAX` (255 bytes).
const MAX_BASE_BYTES: usize = 200;

/// A file name for a trace id: path separators and odd characters become
/// `_`; a name longer than [`MAX_BASE_BYTES`] is cut and ends in `~` and
/// 16 hex digits, a fingerprint of the whole id (docs/usage.md, "Export"); a
/// repeated name gets `-2`, `-3`, … (so names never collide).
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
    if base.len() > MAX_BASE_BYTES {
        let mark = format!("~{:016x}", fingerprint(trace_id.as_bytes()));
        base = format!("{}{mark}", cut_at(&base, MAX_BASE_BYTES - mark.len()));
    }
    let mut name = base.clone();
    let mut n = 1;
    while !used.insert(name.clone()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

/// Finds the examples of one kind, and the kinds of its family met.
struct ToExamples {
    selector: Selector,
}

impl Job for ToExamples {
    type Part = (Vec<(String, String)>, Vec<String>);

    fn part(&self) -> Self::Part {
        (Vec::new(), Vec::new())
    }

    fn fold(&self, part: &mut Self::Part, trace: &Trace, verdicts: Vec<Verdict>, _: u64) {
        let (lines, seen) = examples::lines(trace, &verdicts, &self.selector);
        part.0.extend(lines);
        for k in seen {
            if !part.1.contains(&k) {
                part.1.push(k);
            }
        }
    }
}

/// `--format examples`: one JSONL stream. A kind of a family whose kinds
/// come from trace text that no input holds is refused (exit 2) with the
/// kinds the inputs hold.
fn run_examples(opts: &ExportOptions, selector: Selector) -> Result<Status, Error> {
    if let Some(p) = opts.output.as_deref() {
        if p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/') {
            return Err(Error::Usage(format!(
                "--format examples writes one JSONL file; -o {} is a directory",
                p.display()
            )));
        }
    }
    let workers = opts.reading.workers()?;
    let mut out = Output::open(opts.output.as_deref())?;
    let open_ended = selector.open_ended() || selector.is_other();
    let mut other = selector.is_other().then(examples::OtherKinds::default);
    let key = selector.key().to_string();
    let family = selector.family();
    let job = ToExamples { selector };
    let (mut written, mut seen) = (0u64, std::collections::BTreeSet::new());
    let ran = opts.reading.run(
        Inputs::expand(&opts.inputs, opts.output.as_deref())?,
        &workers,
        &job,
        |event| {
            if let Event::Part((lines, kinds)) = event {
                for (kind, line) in lines {
                    let lines = match &mut other {
                        Some(other) => other.take(kind, line),
                        None => vec![line],
                    };
                    for line in lines {
                        out.write_all(line.as_bytes())?;
                        out.write_all(b"\n")?;
                        written += 1;
                    }
                }
                seen.extend(kinds);
            }
            Ok(())
        },
    )?;
    if ran.stopped {
        out.abandon()
            .map_err(|e| Error::from_output(e, ran.status()))?;
        return Ok(ran.status());
    }
    let kinds: Vec<String> = seen.into_iter().collect();
    let found = if kinds.is_empty() {
        "none".to_string()
    } else {
        kinds.join(", ")
    };
    if written == 0 && open_ended {
        return Err(Error::Usage(format!(
            "no attempt of kind {key:?} in the inputs; the kinds of {family} they hold: {found}"
        )));
    }
    out.finish()
        .map_err(|e| Error::from_output(e, ran.status()))?;
    // How many, always (an empty file is an answer, not a silence).
    if !opts.reading.quiet {
        let to = opts
            .output
            .as_deref()
            .map(|p| format!(" to {}", p.display()))
            .unwrap_or_default();
        if written == 0 {
            super::stderr::say(format_args!(
                "wrote no example{to}: no attempt of kind {key:?} in the inputs; the kinds of {family} they hold: {found}"
            ));
        } else {
            super::stderr::say(format_args!(
                "wrote {} of kind {key:?}{to}",
                crate::render::format::counted(written, "example")
            ));
        }
    }
    Ok(ran.status())
}

pub fn run(opts: &ExportOptions) -> Result<Status, Error> {
    match (opts.format, opts.kind.as_deref()) {
        (Format::Examples, Some(kind)) => {
            let selector = Selector::parse(kind).map_err(|e| Error::Usage(e.to_string()))?;
            return run_examples(opts, selector);
        }
        (Format::Examples, None) => {
            return Err(Error::Usage(
                "--format examples needs --kind <family>.<kind> (e.g. format_error.cut_off)".into(),
            ))
        }
        (Format::Atif, Some(_)) => {
            return Err(Error::Usage(
                "--kind selects examples: it needs --format examples".into(),
            ))
        }
        (Format::Atif, None) => {}
    }
    let workers = opts.reading.workers()?;
    let mut target = Target::open(opts.output.as_deref())?;
    let job = ToAtif {
        pretty: matches!(target, Target::Dir { .. }),
    };
    let ran = opts.reading.run(
        Inputs::expand(&opts.inputs, opts.output.as_deref())?,
        &workers,
        &job,
        |event| {
            if let Event::Part(docs) = event {
                for doc in docs {
                    target.write(doc)?;
                }
            }
            Ok(())
        },
    )?;
    if ran.stopped {
        target.abandon(ran.status())?;
        return Ok(ran.status());
    }
    target.finish(ran.status())?;
    Ok(ran.status())
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

    #[test]
    fn long_ids_are_cut_with_a_fingerprint_and_stay_apart() {
        let mut used = HashSet::new();
        let (a, b) = ("é".repeat(240) + "a", "é".repeat(240) + "b");
        let (na, nb) = (unique_name(&a, &mut used), unique_name(&b, &mut used));
        assert!(na.len() <= MAX_BASE_BYTES && nb.len() <= MAX_BASE_BYTES);
        assert_ne!(na, nb);
        assert!(na.starts_with("éé"));
        assert_eq!(unique_name(&a, &mut used), format!("{na}-2"));
    }
}
