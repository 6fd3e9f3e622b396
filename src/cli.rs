//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use mirotrace::commands::{analyze, diff, export, keywords, merge, replay, Error, Reading};
use mirotrace::output::ColorChoice;
use mirotrace::policy::Policy;
use mirotrace::read::source::{InputSpec, ReadOptions};
use mirotrace::read::InputFormat;
use mirotrace::replay::PlainReply;

/// Replay recorded LLM agent traces through MiroThinker's error-correction
/// layer: which turns would roll back, and why.
#[derive(Parser, Debug)]
#[command(name = "mirotrace", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok · 1 a --fail-on gate fired · 2 usage or output error · 3 some input was skipped · 4 nothing to report (missing, unreadable or empty input) · 130/143 interrupted (record: 0 on the first SIGINT/SIGTERM, 130/143 on a second)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay everything and report rollback rates and reasons, repairs, duplicate-query hotspots, streaks.
    Analyze(AnalyzeArgs),
    /// Write one verdict per input line (JSONL), or show one trace's timeline.
    Replay(ReplayArgs),
    /// Compare a base and a new set of runs: which rates changed, significantly? (docs/diff.md)
    Diff(DiffArgs),
    /// Score refusal keyword lists (flips, replay effects, precision/recall) and mine new phrases. (docs/policy.md)
    Keywords(KeywordsArgs),
    /// Print the default policy file (upstream's behaviour), documented key by key.
    Policy(PolicyArgs),
    /// Write any input as ATIF trajectories (with the replay's verdicts), for trajectory viewers.
    Export(ExportArgs),
    /// Add up partial reports (analyze or diff --format partial) into the report of all their input. (docs/partial.md)
    Merge(MergeArgs),
    /// Record every call to an LLM API: a proxy in front of it, one JSONL line per call. (docs/record.md)
    #[cfg(feature = "record")]
    Record(RecordArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish; see docs/usage.md).
    Completions(CompletionsArgs),
    /// Print the man page (roff) of mirotrace or of one command (e.g. `mirotrace man | man -l -`).
    Man(ManArgs),
}

impl Command {
    /// The output options, for the commands that draw reports.
    pub fn output_args(&self) -> Option<&OutputArgs> {
        match self {
            Command::Analyze(a) => Some(&a.output),
            Command::Replay(a) => Some(&a.output),
            Command::Diff(a) => Some(&a.output),
            Command::Keywords(a) => Some(&a.output),
            Command::Merge(a) => Some(&a.output),
            Command::Policy(_) | Command::Export(_) | Command::Completions(_) | Command::Man(_) => {
                None
            }
            #[cfg(feature = "record")]
            Command::Record(_) => None,
        }
    }
}

/// `mirotrace record --upstream URL [--listen HOST:PORT] -o RECORDING.jsonl`.
#[cfg(feature = "record")]
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The API to forward to: http(s)://HOST[:PORT][/PREFIX]; a request for /PATH goes to URL + /PATH.
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// Where to listen (loopback by default; port 0 picks a free port, named in the `listening on` line).
    #[arg(long, value_name = "HOST:PORT", default_value = mirotrace::commands::record::DEFAULT_LISTEN)]
    pub listen: String,
    /// The recording: one JSON line per call, appended as each call ends. An existing non-empty file is refused without --append.
    #[arg(short, long, value_name = "RECORDING.jsonl")]
    pub output: PathBuf,
    /// Add to an existing recording; call numbers go on after its highest.
    #[arg(long)]
    pub append: bool,
    /// Seconds to wait for the upstream's response head (then 504), and for each next chunk of a body.
    #[arg(long, value_name = "SECONDS", default_value_t = mirotrace::commands::record::DEFAULT_TIMEOUT_SECONDS, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Bodies larger than this pass through whole but are not stored (bytes, or with K, M, G: 1024-based).
    #[arg(long, value_name = "BYTES", default_value = "32M", value_parser = byte_size)]
    pub max_body: u64,
    /// No progress line and no summary on stderr (the `listening on` line is still printed).
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--timeout`: a positive number of seconds (fractions allowed).
#[cfg(feature = "record")]
fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v <= 1e9 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

/// `--max-body`: bytes, with an optional K, M or G (KiB, MiB, GiB).
#[cfg(feature = "record")]
fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((k, _)) => t.split_at(k),
        None => (t, ""),
    };
    let shift = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{s:?}: give bytes, or a number with K, M or G")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| format!("{s:?}: give bytes, or a number with K, M or G"))
}

/// `mirotrace completions SHELL`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `mirotrace man [COMMAND]`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// A command's own page (`mirotrace-analyze(1)`) instead of the main one.
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// The completion script for `shell`, from the same definitions as the
/// parser (so it cannot drift from the options).
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "mirotrace", &mut out);
    out
}

/// The man page of mirotrace, or of `command` (`mirotrace-COMMAND`).
pub fn man_page(command: Option<&str>) -> Result<Vec<u8>, Error> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    cmd.build();
    let page = match command {
        None => cmd,
        Some(name) => {
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let sub = cmd.find_subcommand(name).ok_or_else(|| {
                Error::Usage(format!("no command {name:?}; one of: {}", names.join(", ")))
            })?;
            sub.clone()
                .display_name(format!("mirotrace-{name}"))
                .bin_name(format!("mirotrace {name}"))
        }
    };
    let mut out = Vec::new();
    // Every page, a command's too, names the version it documents.
    clap_mangen::Man::new(page)
        .source(format!("mirotrace {}", env!("CARGO_PKG_VERSION")))
        .render(&mut out)
        .map_err(|e| Error::Usage(format!("cannot write the man page: {e}")))?;
    Ok(out)
}

/// `mirotrace merge PART… [--format …] [-o FILE]`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Partial reports written by `analyze --format partial`, or partial diffs by `diff --format partial`.
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,
    /// Output format, as for analyze (partial: the merged partial, to merge again).
    #[arg(long, value_enum, default_value_t = merge::Format::Table)]
    pub format: merge::Format,
    /// Threads for the bootstrap: default all cores (at most 256).
    #[arg(short = 'j', long = "threads", value_name = "N", value_parser = threads_in_range())]
    pub threads: Option<usize>,
    /// No progress line on stderr while the parts are read.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The trace inputs of a reading command, and the options it shares with
/// every other one.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace files or directories (`-` for stdin): native JSONL, chat transcripts (OpenAI, Anthropic, tau-bench, MiroFlow), task logs, ATIF, Inspect (.json/.eval), OpenHands, SWE-agent (.traj), Claude Code, OTLP JSON; .gz/.zst too.
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub reading: ReadingArgs,
}

impl InputArgs {
    pub fn inputs(&self) -> Vec<InputSpec> {
        specs(&self.inputs)
    }
}

/// `-j`: 1 to [`MAX_THREADS`](mirotrace::engine::MAX_THREADS) (docs/limits.md).
fn threads_in_range() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=mirotrace::engine::MAX_THREADS as u64)
}

/// `--iterations`: 0 (no interval) to
/// [`MAX_ITERATIONS`](mirotrace::metrics::stats::bootstrap::MAX_ITERATIONS) (docs/limits.md).
fn iterations_in_range() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new()
        .range(0..=mirotrace::metrics::stats::bootstrap::MAX_ITERATIONS as u64)
}

/// The inputs as named on the command line (any bytes: a file name need
/// not be UTF-8).
pub fn specs(args: &[PathBuf]) -> Vec<InputSpec> {
    args.iter()
        .map(|a| InputSpec::parse_os(a.as_os_str()))
        .collect()
}

/// How every reading command reads (`diff` too, for both sides).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Reading")]
pub struct ReadingArgs {
    /// Threads: 1 = everything on one thread; N = a reader and N - 1 replay workers (default: all cores; at most 256).
    #[arg(short = 'j', long = "threads", value_name = "N", value_parser = threads_in_range())]
    pub threads: Option<usize>,
    /// A policy file (TOML, at most 4 MiB) replacing upstream's defaults.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Read every input as this format instead of detecting it per file.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = InputFormat::Auto)]
    pub input_format: InputFormat,
    /// A reply without a tool call: `final` ends the session (upstream's rule); `continue` judges it and goes on to the next turn (conversational agents).
    #[arg(long, value_enum, value_name = "RULE", default_value_t = PlainReply::Final)]
    pub plain_reply: PlainReply,
    /// Stop at the first line or file that has to be skipped (exit code 3; nothing more is written).
    #[arg(long)]
    pub strict: bool,
    /// Stop after N skipped lines or files (exit code 3; nothing more is written). Either way only the first few problems are printed in full, then one line counts the rest per kind.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_errors: Option<u64>,
    /// No progress line and no notes on stderr (skipped input is still reported).
    #[arg(short, long)]
    pub quiet: bool,
    /// Skip lines longer than this many bytes. Binary files, traces over 200000 attempts and, in folders, FIFOs and devices are skipped too (docs/limits.md).
    #[arg(long, value_name = "BYTES", default_value_t = mirotrace::read::reader::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
}

impl ReadingArgs {
    pub fn reading(&self) -> Result<Reading, Error> {
        let policy = match &self.policy {
            None => Policy::default(),
            Some(path) => Policy::load(path)?,
        };
        Ok(Reading {
            threads: self.threads,
            policy,
            plain_reply: self.plain_reply,
            read: ReadOptions {
                max_line_bytes: self.max_line_bytes,
                format: self.input_format,
                // Only export writes `meta` back out; the rest reads two fields of it.
                keep_meta: false,
                bytes_read: None,
                // Set from `-j` when the run starts (`Reading::run`).
                threads: 1,
            },
            quiet: self.quiet,
            strict: self.strict,
            max_errors: self.max_errors,
        })
    }
}

/// Where a report goes and whether it is coloured.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Colour tables: auto = only on a terminal (never into a file) and not when NO_COLOR is set.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The same as `--color never`.
    #[arg(long, hide = true)]
    pub no_color: bool,
    /// Draw every column of every table at its natural width, however wide the terminal (tables are fitted to it otherwise, leaving out columns that do not fit).
    #[arg(long)]
    pub wide: bool,
}

impl OutputArgs {
    pub fn color(&self) -> ColorChoice {
        if self.no_color {
            ColorChoice::Never
        } else {
            self.color
        }
    }
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Output format (jsonl, the default: the verdict format of the spec; parquet, arrow: the same rows as typed columns, needs -o FILE; with --trace: table, the default, jsonl or json).
    #[arg(long, value_enum)]
    pub format: Option<replay::Format>,
    /// Show the timeline of the trace with this id as a table.
    #[arg(long, value_name = "ID")]
    pub trace: Option<String>,
    // Own options first: the groups below set their help headings.
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Output format (json: the machine interface; html: one self-contained page, use with -o; partial: to merge later with `mirotrace merge`).
    #[arg(long, value_enum, default_value_t = analyze::Format::Table)]
    pub format: analyze::Format,
    /// Repeat the key rates per file, model (each attempt's, else the file) or agent.
    #[arg(long, value_enum, value_name = "KEY")]
    pub group_by: Option<mirotrace::analyze::GroupBy>,
    /// Entries in each ranking (duplicate hotspots, streaks, worst traces).
    #[arg(long, value_name = "N", default_value_t = mirotrace::analyze::DEFAULT_TOP)]
    pub top: usize,
    /// Bootstrap seed for the rollback rate's interval (the same seed gives the same report).
    #[arg(long, default_value_t = mirotrace::analyze::DEFAULT_SEED)]
    pub seed: u64,
    /// Bootstrap resamples (at most 100000).
    #[arg(long, value_name = "N", default_value_t = mirotrace::analyze::DEFAULT_ITERATIONS, value_parser = iterations_in_range())]
    pub iterations: usize,
    /// Prices per million input/output tokens per model (TOML, docs/metrics.md): the cost section in money too.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Exit 1 when this rule holds for the run (or a --group-by group): a figure against a number, e.g. 'rollback_rate>0.30' or 'refusal>=5%' (repeatable, OR-ed; quote it; metrics: mirotrace diff --list-metrics).
    #[arg(long, value_name = "RULE")]
    pub fail_on: Vec<String>,
    // Own options first: the groups below set their help headings.
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `mirotrace diff --base PATH… --new PATH…`: the inputs come in two
/// sides; the reading options are shared.
#[derive(Args, Debug)]
#[command(
    after_help = "Gate rules (--fail-on): any-significant-worse · any-significant-change · paired-worse · \
sig:METRIC OP VALUE (beyond VALUE and significant after Holm, as the report says) · \
METRIC OP VALUE (the point estimate alone) with OP one of > >= < <= and VALUE [+|-]N pp (rates), [+|-]N% (relative) or [+|-]N (counts) · \
new:METRIC OP LEVEL, base:METRIC OP LEVEL (one side's own figure: a rate as N% or a fraction 0.30, others a number). \
Rules are OR-ed. Quote each rule, or the shell takes > and < as redirections: \
--fail-on 'sig:rollback_rate>+1pp' --fail-on 'sig:refusal>+20%' --fail-on 'new:rollback_rate>0.30' --fail-on any-significant-worse. \
Every METRIC: mirotrace diff --list-metrics. \
Exit codes: 0 no gate fired · 1 a gate fired (even if input was skipped) · \
2 usage error · 3 some input was skipped · 4 a side had no readable trace. Method and metrics: docs/diff.md"
)]
pub struct DiffArgs {
    /// The base side's trace files or directories (`-` for stdin); required but with --format partial.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub base: Vec<PathBuf>,
    /// The new side's trace files or directories; required but with --format partial.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub new: Vec<PathBuf>,
    /// A policy diff: the trace files or directories replayed under both policies, each trace paired with itself (instead of --base and --new).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// A policy diff's base policy (TOML; default: --policy, else upstream's).
    #[arg(long, value_name = "FILE")]
    pub base_policy: Option<PathBuf>,
    /// A policy diff's new policy (TOML; default: --policy, else upstream's).
    #[arg(long, value_name = "FILE")]
    pub new_policy: Option<PathBuf>,
    /// List every metric a --fail-on rule can name, and exit.
    #[arg(long)]
    pub list_metrics: bool,
    /// Split the new side into groups, each compared with the whole base.
    #[arg(long, value_enum, value_name = "KEY")]
    pub group_by: Option<mirotrace::diff::GroupBy>,
    /// Exit 1 when this rule holds (repeatable, OR-ed; quote it: --fail-on 'sig:rollback_rate>+1pp'; see below).
    #[arg(long, value_name = "RULE")]
    pub fail_on: Vec<String>,
    /// Output format (markdown fits a pull-request comment; html: one self-contained page, use with -o).
    #[arg(long, value_enum, default_value_t = diff::Format::Table)]
    pub format: diff::Format,
    /// Bootstrap seed (the same seed gives the same numbers).
    #[arg(long, default_value_t = mirotrace::diff::CompareOptions::default().seed)]
    pub seed: u64,
    /// Bootstrap resamples per side (at most 100000).
    #[arg(long, value_name = "N", default_value_t = mirotrace::diff::CompareOptions::default().iterations, value_parser = iterations_in_range())]
    pub iterations: usize,
    /// Family-wise error rate (Holm); intervals are at 1 − alpha.
    #[arg(long, default_value_t = mirotrace::diff::CompareOptions::default().alpha)]
    pub alpha: f64,
    /// Noise threshold for rates, in percentage points: smaller changes are never significant.
    #[arg(long, value_name = "PP", default_value_t = mirotrace::diff::CompareOptions::default().noise_pp)]
    pub noise: f64,
    /// Noise threshold for per-trace and streak metrics, in percent of the base value.
    #[arg(long, value_name = "PCT", default_value_t = mirotrace::diff::CompareOptions::default().noise_relative_pct)]
    pub noise_relative: f64,
    /// Top movers shown per direction in the paired view.
    #[arg(long, value_name = "N", default_value_t = mirotrace::diff::CompareOptions::default().top)]
    pub top: usize,
    #[command(flatten)]
    pub reading: ReadingArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `mirotrace keywords FILE… [--list FILE]… [--labels FILE] [--suggest]`.
#[derive(Args, Debug)]
#[command(
    after_help = "A list file has one phrase per line; blank lines and # comments are ignored, \
`# match: exact` or `# match: normalized` (the default) sets how it matches. The current list is the \
policy's refusal_keywords. Labels: JSONL {trace_id, session, index, refusal: bool}. See docs/policy.md"
)]
pub struct KeywordsArgs {
    /// A candidate keyword list (repeatable, at most 4 MiB each); named after its file stem.
    #[arg(long = "list", value_name = "FILE")]
    pub lists: Vec<PathBuf>,
    /// Ground truth: precision, recall and F1 per list (JSONL, at most 64 MiB).
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Mine candidate refusal phrases and near-misses of the current keywords.
    #[arg(long)]
    pub suggest: bool,
    /// Output format (text: with --suggest, the phrases only, a list file).
    #[arg(long, value_enum, default_value_t = keywords::Format::Table)]
    pub format: keywords::Format,
    /// Suggestions kept, and rows shown per listing in the table.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Answers a suggested phrase must occur in.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub min_support: usize,
    // Own options first: the groups below set their help headings.
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `mirotrace policy [-o FILE]`.
#[derive(Args, Debug)]
pub struct PolicyArgs {
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = export::Format::Atif)]
    pub format: export::Format,
    /// With --format examples: the mistake whose attempts are written, as
    /// `<family>.<kind>` (e.g. format_error.cut_off, tool_error.KIND; the keys of analyze's `mistakes`).
    #[arg(long, value_name = "FAMILY.KIND")]
    pub kind: Option<String>,
    /// Write to this file (one trajectory per line, atomically), or into this
    /// directory (one `<trace_id>.json` each; an existing directory or a path ending in `/`).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    // Last: the group sets its help heading.
    #[command(flatten)]
    pub input: InputArgs,
}

#[cfg(all(test, feature = "record"))]
mod tests {
    use super::*;

    #[test]
    fn max_body_takes_bytes_and_1024_based_units() {
        assert_eq!(byte_size("32M"), Ok(32 << 20));
        assert_eq!(byte_size("1k"), Ok(1024));
        assert_eq!(byte_size("2GiB"), Ok(2 << 30));
        assert_eq!(byte_size("500"), Ok(500));
        assert_eq!(byte_size("0"), Ok(0));
        for bad in ["", "M", "12X", "-1", "1.5M", "99999999999999999999G"] {
            assert!(byte_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timeout_is_a_positive_number_of_seconds() {
        assert_eq!(positive_seconds("0.5"), Ok(0.5));
        assert_eq!(positive_seconds("600"), Ok(600.0));
        for bad in ["0", "-1", "nan", "inf", "x"] {
            assert!(positive_seconds(bad).is_err(), "{bad}");
        }
    }
}
