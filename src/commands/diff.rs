//! `mirotrace diff`: replay a base and a new side, compare their rates, and
//! gate on the result. Each trace's counts are taken on the worker that
//! replayed it; the statistics live in [`crate::diff`].

use std::path::PathBuf;

use super::{write_report, Drawing, Error, Inputs, Reading, Status};
use crate::diff::partial::{self, PartialDiff};
use crate::diff::policies::{self, PolicyChanges};
use crate::diff::render;
use crate::diff::{
    add_trace, append, gate, CompareOptions, DiffReport, GroupBy, RowSet, Sample, SideRows, METRICS,
};
use crate::engine::{Event, Job, Workers};
use crate::metrics::stats;
use crate::output::{ColorChoice, Output};
use crate::policy::Policy;
use crate::read::{InputSpec, Trace};
use crate::render::skipped::Skipped;
use crate::replay::{Replayer, Verdict};

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
    /// One self-contained page (docs/html.md); use with -o.
    Html,
    /// A partial diff, either side or both, to merge with others (`mirotrace merge`, docs/partial.md).
    Partial,
}

impl Format {
    /// The drawing this format asks for; `None` for a partial diff, which
    /// is written as data (docs/partial.md).
    pub fn drawing(self) -> Option<Drawing> {
        match self {
            Format::Table => Some(Drawing::Table),
            Format::Markdown => Some(Drawing::Markdown),
            Format::Json => Some(Drawing::Json),
            Format::Html => Some(Drawing::Html),
            Format::Partial => None,
        }
    }
}

/// Options of `mirotrace diff`.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub reading: Reading,
    pub base: Vec<InputSpec>,
    pub new: Vec<InputSpec>,
    pub group_by: Option<GroupBy>,
    /// `--fail-on` rules, as written.
    pub fail_on: Vec<String>,
    pub format: Format,
    pub config: CompareOptions,
    pub output: Option<PathBuf>,
    pub color: ColorChoice,
    /// A policy diff: the traces replayed under both policies (instead
    /// of `base` and `new`).
    pub files: Vec<InputSpec>,
    /// The policy files of a policy diff's sides; a side without one
    /// keeps `reading`'s policy (`--policy`, else upstream's).
    pub base_policy: Option<PathBuf>,
    pub new_policy: Option<PathBuf>,
}

/// Each trace's counts: one row, or one per group its lines are in.
struct Rows(Option<GroupBy>);

impl Job for Rows {
    type Part = SideRows;

    fn part(&self) -> SideRows {
        SideRows::new()
    }

    fn fold(&self, part: &mut SideRows, trace: &Trace, verdicts: Vec<Verdict>, _: u64) {
        add_trace(part, &trace.trace_id, &verdicts, self.0);
    }
}

/// What one side's replay produced.
struct Side {
    /// By group key (`""` only, when not split).
    rows: SideRows,
    skipped: bool,
    stopped: bool,
    /// What its run skipped, for the page.
    problems: Skipped,
}

/// Replays one side, keeping only each trace's rows (split by `by`). A
/// side with no inputs (allowed in a partial diff) reads nothing.
fn read_side(
    reading: &Reading,
    inputs: Inputs,
    workers: &Workers,
    by: Option<GroupBy>,
    side: &'static str,
) -> Result<Side, Error> {
    let mut rows = SideRows::new();
    if inputs.is_empty() {
        return Ok(Side {
            rows,
            skipped: false,
            stopped: false,
            problems: Skipped::default(),
        });
    }
    let ran = reading
        .run(inputs, workers, &Rows(by), |event| {
            if let Event::Part(part) = event {
                append(&mut rows, part);
            }
            Ok(())
        })
        .map_err(|e| match e {
            Error::NoTraces { .. } => Error::NothingToCompare { side },
            other => other,
        })?;
    Ok(Side {
        rows,
        skipped: ran.stats.skipped_any(),
        stopped: ran.stopped,
        problems: ran.skipped,
    })
}

/// How a side is named in reports: its inputs in sorted order (so
/// merged partial diffs name it alike whatever order they came in),
/// shortened when many.
pub fn label(names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort_unstable();
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{}, {} and {} more", names[0], names[1], n - 2),
    }
}

fn labels(inputs: &[InputSpec]) -> Vec<String> {
    inputs.iter().map(|s| s.label().to_string()).collect()
}

pub fn run(opts: &DiffOptions) -> Result<Status, Error> {
    // Bad rules and knobs are usage errors, found before any replay.
    let gates = parse_gates(&opts.fail_on)?;
    opts.config.validate().map_err(Error::Usage)?;
    if opts.base_policy.is_some() || opts.new_policy.is_some() || !opts.files.is_empty() {
        return run_policies(opts, &gates);
    }
    let partial = opts.format == Format::Partial;
    // A partial diff may hold either side alone; a report needs both.
    for (side, inputs) in [("--base", &opts.base), ("--new", &opts.new)] {
        if inputs.is_empty() && !partial {
            return Err(Error::Usage(format!(
                "{side} is required (only `--format partial` makes a diff of one side)"
            )));
        }
    }
    if partial && opts.base.is_empty() && opts.new.is_empty() {
        return Err(Error::Usage("give --base, --new or both".into()));
    }
    let quiet = opts.reading.quiet;
    let floor = (stats::min_bootstrap_p(opts.config.iterations) * METRICS.len() as f64).min(1.0);
    if floor >= opts.config.alpha && !quiet {
        super::stderr::say(format_args!(
            "note: with {} iterations and all {} metrics tested, the smallest Holm-adjusted p-value is {floor:.3}, \
             not below alpha {}: raise --iterations",
            opts.config.iterations,
            METRICS.len(),
            opts.config.alpha
        ));
    }
    let expand = |side: &str, inputs: &[InputSpec]| {
        Inputs::expand(inputs, opts.output.as_deref()).map_err(|e| match e {
            Error::Unreadable(why) => Error::Unreadable(format!("{side}: {why}")),
            other => other,
        })
    };
    let base_inputs = expand("--base", &opts.base)?;
    let new_inputs = expand("--new", &opts.new)?;
    let workers = opts.reading.workers()?;
    // Open the output first: an unwritable path fails before the long run.
    let out = super::open_report_output(opts.output.as_deref(), opts.format == Format::Html)?;
    let base = read_side(&opts.reading, base_inputs, &workers, None, "--base")?;
    if base.stopped {
        return Ok(Status::InputSkipped);
    }
    let new = read_side(&opts.reading, new_inputs, &workers, opts.group_by, "--new")?;
    if new.stopped {
        return Ok(Status::InputSkipped);
    }
    let skipped = base.skipped || new.skipped;
    let Some(drawing) = opts.format.drawing() else {
        let part = PartialDiff::new(
            partial::Options {
                group_by: opts.group_by,
                compare: opts.config.clone(),
                fail_on: opts.fail_on.clone(),
                plain_reply: opts.reading.plain_reply.name().to_string(),
            },
            &opts.reading.policy,
            partial::Side::new(labels(&opts.base), &base.rows, false, base.skipped),
            partial::Side::new(
                labels(&opts.new),
                &new.rows,
                opts.group_by.is_some(),
                new.skipped,
            ),
        );
        let status = if skipped {
            Status::InputSkipped
        } else {
            Status::Ok
        };
        return write_report(out, &part.to_json()?, status);
    };
    let mut problems = base.problems;
    problems.merge(&new.problems);
    let sides = Sides {
        base_label: label(&labels(&opts.base)),
        base: base.rows,
        new_label: label(&labels(&opts.new)),
        new: new.rows,
        skipped,
        problems,
        policy_changes: None,
    };
    let how = How {
        group_by: opts.group_by,
        config: &opts.config,
        gates: &gates,
        drawing,
        color: opts.color,
    };
    report(sides, &how, out, &workers)
}

/// `--fail-on` rules, parsed (a bad rule is a usage error).
pub fn parse_gates(rules: &[String]) -> Result<Vec<gate::Gate>, Error> {
    Ok(rules
        .iter()
        .map(|g| gate::parse(g))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Both sides' rows, however they were made (one replay or merged partials).
pub struct Sides {
    pub base_label: String,
    /// By group key (`""` only, when not split).
    pub base: SideRows,
    pub new_label: String,
    pub new: SideRows,
    /// Input was skipped on either side.
    pub skipped: bool,
    /// What was skipped, both sides (listed on the page).
    pub problems: Skipped,
    /// A policy diff's verdict-by-verdict changes.
    pub policy_changes: Option<PolicyChanges>,
}

/// How the comparison is made and written.
pub struct How<'a> {
    pub group_by: Option<GroupBy>,
    pub config: &'a CompareOptions,
    pub gates: &'a [gate::Gate],
    pub drawing: Drawing,
    pub color: ColorChoice,
}

/// Compares the sides, writes the report to `out` and the fired gates to
/// stderr; the status says whether a gate fired or input was skipped.
pub fn report(sides: Sides, how: &How, out: Output, workers: &Workers) -> Result<Status, Error> {
    for (side, rows) in [("--base", &sides.base), ("--new", &sides.new)] {
        if rows.values().all(RowSet::is_empty) {
            return Err(Error::NothingToCompare { side });
        }
    }
    let new_label = sides.new_label;
    let problems = sides.problems;
    let (mut base_rows, mut new_rows) = (sides.base, sides.new);
    let groups: Vec<(Option<String>, String, RowSet)> = match how.group_by {
        None => vec![(None, new_label, new_rows.remove("").unwrap_or_default())],
        Some(by) => new_rows
            .into_iter()
            .map(|(key, rows)| {
                (
                    Some(key.clone()),
                    format!("{new_label} [{}={key}]", by.name()),
                    rows,
                )
            })
            .collect(),
    };
    let base_rows = base_rows.remove("").unwrap_or_default();
    let base = Sample::new(sides.base_label, base_rows, how.config, "base", workers);
    let mut report = DiffReport::build(base, groups, how.config, how.group_by, workers);
    report.policy_changes = sides.policy_changes;
    report.gates = gate::evaluate_all(how.gates, &report);

    let status = if report.gate_fired() {
        // A fired gate outranks skipped input: the comparison still failed.
        Status::GateFired
    } else if sides.skipped {
        Status::InputSkipped
    } else {
        Status::Ok
    };
    let style = out.table_style(how.color);
    let text = match how.drawing {
        Drawing::Html => crate::html::diff_page(&report, &problems),
        Drawing::Table => render::table(&report, style),
        Drawing::Markdown => render::markdown(&report),
        Drawing::Json => render::json(&report),
    };
    let written = write_report(out, &text, status);
    say_gates(&report.gates);
    written
}

/// The gate verdicts on stderr too, so a CI log shows why a job failed
/// whatever the output format or destination; each rule's verdict, one
/// line each, says why it fired or passed.
pub fn say_gates(gates: &[gate::GateOutcome]) {
    for g in gates {
        let group = g
            .group
            .as_ref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default();
        let result = g.result.replace('_', " ");
        super::stderr::say(format_args!(
            "gate {result}: {}{group}: {}",
            g.rule, g.message
        ));
    }
}

/// A policy diff's job: each trace replayed under the new policy too, on
/// the worker that replayed it under the base one; both sides' rows and
/// the verdicts that changed.
struct Policies {
    new: Replayer,
    by: Option<GroupBy>,
}

/// What a worker makes of its traces in a policy diff.
struct PolicyPart {
    base: SideRows,
    new: SideRows,
    changes: policies::Part,
}

impl Job for Policies {
    type Part = PolicyPart;

    fn part(&self) -> PolicyPart {
        PolicyPart {
            base: SideRows::new(),
            new: SideRows::new(),
            changes: policies::Part::default(),
        }
    }

    fn fold(&self, part: &mut PolicyPart, trace: &Trace, verdicts: Vec<Verdict>, _: u64) {
        let new = self.new.replay(trace);
        add_trace(&mut part.base, &trace.trace_id, &verdicts, None);
        add_trace(&mut part.new, &trace.trace_id, &new, self.by);
        part.changes.add(&trace.trace_id, &verdicts, &new);
    }
}

/// A side's policy: its file, or the run's (`--policy`, else upstream's),
/// and how reports name it.
fn side_policy(file: Option<&PathBuf>, reading: &Reading) -> Result<(Policy, String), Error> {
    Ok(match file {
        Some(path) => (Policy::load(path)?, path.display().to_string()),
        None if reading.policy == Policy::default() => {
            (reading.policy.clone(), "upstream's default".to_string())
        }
        None => (
            reading.policy.clone(),
            format!("--policy (fingerprint {})", reading.policy.fingerprint()),
        ),
    })
}

/// `diff --base-policy A --new-policy B FILE…`: the same traces replayed
/// under two policies, each trace paired with itself (read once; each
/// worker replays its traces under both).
fn run_policies(opts: &DiffOptions, gates: &[gate::Gate]) -> Result<Status, Error> {
    if !opts.base.is_empty() || !opts.new.is_empty() {
        return Err(Error::Usage(
            "--base and --new compare two sets of traces; a policy diff (--base-policy, \
             --new-policy) compares two policies on the same FILEs: give one or the other"
                .into(),
        ));
    }
    if opts.files.is_empty() {
        return Err(Error::Usage(
            "a policy diff needs the trace FILEs to replay under both policies".into(),
        ));
    }
    if opts.base_policy.is_none() && opts.new_policy.is_none() {
        return Err(Error::Usage(
            "trace FILEs make a policy diff: give --new-policy (and --base-policy, else \
             --policy or upstream's default is the base), or compare two sets of traces \
             with --base and --new"
                .into(),
        ));
    }
    if opts.format == Format::Partial {
        return Err(Error::Usage(
            "--format partial holds one policy; a policy diff is made in one run".into(),
        ));
    }
    let (base_policy, base_name) = side_policy(opts.base_policy.as_ref(), &opts.reading)?;
    let (new_policy, new_name) = side_policy(opts.new_policy.as_ref(), &opts.reading)?;
    let inputs = Inputs::expand(&opts.files, opts.output.as_deref())?;
    let workers = opts.reading.workers()?;
    let out = super::open_report_output(opts.output.as_deref(), opts.format == Format::Html)?;
    let reading = Reading {
        policy: base_policy,
        ..opts.reading.clone()
    };
    let job = Policies {
        new: Replayer::new(new_policy).with_plain_reply(opts.reading.plain_reply),
        by: opts.group_by,
    };
    let (mut base, mut new) = (SideRows::new(), SideRows::new());
    let mut changes = policies::Part::default();
    let ran = reading
        .run(inputs, &workers, &job, |event| {
            if let Event::Part(part) = event {
                append(&mut base, part.base);
                append(&mut new, part.new);
                changes.append(part.changes);
            }
            Ok(())
        })
        .map_err(|e| match e {
            Error::NoTraces { .. } => Error::NothingToCompare { side: "FILE" },
            other => other,
        })?;
    if ran.stopped {
        return Ok(Status::InputSkipped);
    }
    let Some(drawing) = opts.format.drawing() else {
        return Err(Error::Usage("no drawing for this format".into()));
    };
    let files = label(&labels(&opts.files));
    let sides = Sides {
        base_label: format!("{files} [policy {base_name}]"),
        base,
        new_label: format!("{files} [policy {new_name}]"),
        new,
        skipped: ran.stats.skipped_any(),
        problems: ran.skipped,
        policy_changes: Some(changes.finish(base_name, new_name)),
    };
    let how = How {
        group_by: opts.group_by,
        config: &opts.config,
        gates,
        drawing,
        color: opts.color,
    };
    report(sides, &how, out, &workers)
}
