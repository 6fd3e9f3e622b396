//! `mirotrace replay`: one verdict per input line, or one trace's timeline.

use std::io::Write;
use std::path::PathBuf;

use super::{write_report, Error, Inputs, Reading, Status};
use crate::engine::{Event, Job};
use crate::output::{ColorChoice, Output};
use crate::read::{InputSpec, Trace};
use crate::render::{replay_trace::timeline, table};
use crate::replay::Verdict;

/// `--format`: what `replay` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// One verdict per input line (the verdict format of the spec).
    #[default]
    Jsonl,
    /// The same rows as typed columns, Apache Parquet (docs/columnar.md; the `parquet` feature).
    Parquet,
    /// The same rows as typed columns, an Arrow IPC file (docs/columnar.md; the `arrow` feature).
    Arrow,
    /// With --trace: the trace's verdicts as one JSON array.
    Json,
    /// With --trace (its default): the timeline as a table.
    Table,
}

/// Options of `mirotrace replay`.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub reading: Reading,
    pub inputs: Vec<InputSpec>,
    pub format: Format,
    /// Show this trace's timeline instead of writing JSONL.
    pub trace: Option<String>,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
}

/// Serialises each trace's verdicts on the worker that replayed it.
struct Jsonl;

impl Job for Jsonl {
    type Part = String;

    fn part(&self) -> String {
        String::new()
    }

    fn fold(&self, part: &mut String, _: &Trace, verdicts: Vec<Verdict>, _: u64) {
        for v in &verdicts {
            v.write_json_line(part);
            part.push('\n');
        }
    }
}

/// Keeps the verdicts of the traces with one id, each with its detail
/// (why it went the way it did, quoted from the trace's lines).
struct Find<'a>(&'a str);

/// What [`Find`] keeps of a share of the input: the wanted trace's verdicts
/// and the ids closest to it, for "did you mean" when there is none.
#[derive(Default)]
struct Found {
    shown: Vec<(Verdict, Option<String>)>,
    near: Nearest,
}

/// The few trace ids closest to the wanted one (edit distance), closest
/// first; ids too far to be a typo are not kept. Beside them, how many
/// ids the inputs hold and the first few in order, to name when none is
/// close.
#[derive(Default)]
struct Nearest(Vec<(usize, std::sync::Arc<str>)>, Existing);

/// How many distinct trace ids were met (at most [`Existing::CAP`] tracked),
/// and the smallest few.
#[derive(Default)]
struct Existing {
    seen: std::collections::BTreeSet<std::sync::Arc<str>>,
}

impl Existing {
    /// Ids kept to be named.
    const NAMED: usize = 5;
    /// Past this many, the count says "more than".
    const CAP: usize = 10_000;

    fn add(&mut self, id: &std::sync::Arc<str>) {
        if self.seen.len() < Self::CAP && id.len() <= Nearest::MAX_ID_CHARS {
            self.seen.insert(id.clone());
        }
    }
}

impl Nearest {
    const KEEP: usize = 3;
    /// Longer ids are not compared: a typo is in an id a person typed.
    const MAX_ID_CHARS: usize = 256;

    fn offer(&mut self, wanted: &str, id: &std::sync::Arc<str>) {
        self.1.add(id);
        if id.len() > Self::MAX_ID_CHARS || self.0.iter().any(|(_, known)| known == id) {
            return;
        }
        let distance = strsim::levenshtein(wanted, id);
        let within = (wanted.chars().count() / 3).max(2);
        if distance > within {
            return;
        }
        self.0.push((distance, id.clone()));
        self.0
            .sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        self.0.truncate(Self::KEEP);
    }

    fn merge(&mut self, wanted: &str, other: Nearest) {
        for (_, id) in other.0 {
            self.offer(wanted, &id);
        }
        for id in &other.1.seen {
            self.1.add(id);
        }
    }

    /// `; the inputs hold 12 trace ids, e.g. "a", "b"` when no id is
    /// close enough to suggest.
    fn existing(&self) -> String {
        let seen = &self.1.seen;
        if seen.is_empty() {
            return String::new();
        }
        let n = seen.len();
        let count = if n >= Existing::CAP {
            format!("more than {}", crate::render::format::thousands(n as u64))
        } else {
            crate::render::format::thousands(n as u64)
        };
        let named: Vec<String> = seen
            .iter()
            .take(Existing::NAMED)
            .map(|id| format!("{id:?}"))
            .collect();
        let more = if n > Existing::NAMED { ", …" } else { "" };
        format!(
            "; the inputs hold {count} trace id{}: {}{more} (`mirotrace analyze` ranks the worst)",
            if n == 1 { "" } else { "s" },
            named.join(", ")
        )
    }
}

impl Job for Find<'_> {
    type Part = Found;

    fn part(&self) -> Self::Part {
        Found::default()
    }

    fn fold(&self, part: &mut Self::Part, trace: &Trace, verdicts: Vec<Verdict>, _: u64) {
        if verdicts.first().is_some_and(|v| *v.trace_id == *self.0) {
            for (i, v) in verdicts.into_iter().enumerate() {
                // One line per verdict, in order; the origin check guards it.
                let line = trace.attempts.get(i).filter(|a| a.origin == v.origin);
                let detail = crate::analyze::worst_timeline::detail(&v, line);
                part.shown.push((v, detail));
            }
        } else {
            part.near.offer(self.0, &trace.trace_id);
        }
    }
}

pub fn run(opts: &ReplayOptions) -> Result<Status, Error> {
    match (&opts.trace, opts.format) {
        (None, Format::Parquet | Format::Arrow) => return columns::run(opts),
        (None, Format::Json | Format::Table) => {
            return Err(Error::Usage(format!(
                "--format {} shows one trace: give --trace ID (all verdicts: --format jsonl)",
                if opts.format == Format::Json { "json" } else { "table" }
            )))
        }
        (Some(_), Format::Parquet | Format::Arrow) => {
            return Err(Error::Usage(
                "with --trace, --format is table, jsonl or json (the columnar formats hold every verdict)".into(),
            ))
        }
        _ => {}
    }
    let workers = opts.reading.workers()?;
    let mut out = Output::open(opts.output.as_deref())?;
    let Some(wanted) = &opts.trace else {
        let ran = opts.reading.run(
            Inputs::expand(&opts.inputs, opts.output.as_deref())?,
            &workers,
            &Jsonl,
            |event| {
                if let Event::Part(lines) = event {
                    out.write_all(lines.as_bytes())?;
                }
                Ok(())
            },
        )?;
        if ran.stopped {
            return super::stopped(out, ran.status());
        }
        out.finish()
            .map_err(|e| Error::from_output(e, ran.status()))?;
        return Ok(ran.status());
    };
    let mut shown = Vec::new();
    let mut near = Nearest::default();
    let ran = opts.reading.run(
        Inputs::expand(&opts.inputs, opts.output.as_deref())?,
        &workers,
        &Find(wanted),
        |event| {
            if let Event::Part(found) = event {
                shown.extend(found.shown);
                near.merge(wanted, found.near);
            }
            Ok(())
        },
    )?;
    if ran.stopped {
        return super::stopped(out, ran.status());
    }
    if shown.is_empty() {
        // Only the closest: `task-03` suggests `task-003`, not `task-000`.
        let best = near.0.first().map(|(d, _)| *d);
        let existing = near.existing();
        let closest: Vec<String> = near
            .0
            .into_iter()
            .filter(|(d, _)| Some(*d) == best)
            .map(|(_, id)| id.to_string())
            .collect();
        let hint = if closest.is_empty() {
            existing
        } else {
            String::new()
        };
        return Err(Error::NoSuchTrace(wanted.clone(), closest, hint));
    }
    let (verdicts, details): (Vec<Verdict>, Vec<Option<String>>) = shown.into_iter().unzip();
    let text = match opts.format {
        Format::Jsonl => verdicts.iter().map(|v| v.to_json_line() + "\n").collect(),
        Format::Json => {
            let lines: Vec<String> = verdicts.iter().map(Verdict::to_json_line).collect();
            format!("[\n{}\n]\n", lines.join(",\n"))
        }
        _ => table::draw(&timeline(&verdicts, &details), out.table_style(opts.color)),
    };
    write_report(out, &text, ran.status())
}

/// `--format parquet|arrow`: the verdicts as a columnar file. Columns are
/// built on the calling thread, in input order, from each batch's verdicts.
#[cfg(feature = "arrow")]
mod columns {
    use super::{Error, Format, Inputs, ReplayOptions, Status};
    use crate::columnar::{ColumnarFormat, VerdictSink};
    use crate::engine::{Event, Job};
    use crate::output::Output;
    use crate::read::Trace;
    use crate::replay::Verdict;

    /// Hands each batch's verdicts over as they are.
    struct Verdicts;

    impl Job for Verdicts {
        type Part = Vec<Verdict>;

        fn part(&self) -> Vec<Verdict> {
            Vec::new()
        }

        fn fold(&self, part: &mut Vec<Verdict>, _: &Trace, verdicts: Vec<Verdict>, _: u64) {
            part.extend(verdicts);
        }
    }

    pub fn run(opts: &ReplayOptions) -> Result<Status, Error> {
        let format = match opts.format {
            Format::Arrow => ColumnarFormat::ArrowIpc,
            _ => ColumnarFormat::Parquet,
        };
        let out = Output::open(opts.output.as_deref())?;
        if out.is_terminal() {
            return Err(Error::Usage(
                "a columnar format is binary: write it to a file with -o FILE".into(),
            ));
        }
        let columnar = |e: crate::columnar::ColumnarError| Error::Usage(e.to_string());
        let mut sink = VerdictSink::new(out, format).map_err(columnar)?;
        let workers = opts.reading.workers()?;
        let ran = opts.reading.run(
            Inputs::expand(&opts.inputs, opts.output.as_deref())?,
            &workers,
            &Verdicts,
            |event| {
                if let Event::Part(verdicts) = event {
                    for v in &verdicts {
                        sink.push(v)
                            .map_err(|e| Error::Usage(format!("writing output failed: {e}")))?;
                    }
                }
                Ok(())
            },
        )?;
        if ran.stopped {
            return Ok(ran.status());
        }
        let out = sink
            .finish()
            .map_err(|e| Error::Usage(format!("writing output failed: {e}")))?;
        out.finish()
            .map_err(|e| Error::from_output(e, ran.status()))?;
        Ok(ran.status())
    }
}

/// Without the `arrow` feature the columnar formats are named but refused.
#[cfg(not(feature = "arrow"))]
mod columns {
    use super::{Error, Format, ReplayOptions, Status};

    pub fn run(opts: &ReplayOptions) -> Result<Status, Error> {
        let feature = match opts.format {
            Format::Arrow => "arrow",
            _ => "parquet",
        };
        Err(Error::Usage(format!(
            "this mirotrace was built without the `{feature}` feature (cargo build --release --features {feature})"
        )))
    }
}
