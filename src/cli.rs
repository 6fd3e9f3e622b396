//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Replay recorded LLM agent traces through MiroThinker's error-correction
/// layer: which turns would roll back, and why.
#[derive(Parser, Debug)]
#[command(name = "mirotrace", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 ok · 1 a --fail-on gate fired · 2 usage error · 3 some input was skipped · 4 nothing readable"
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
}

/// Options shared by every command that reads traces.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Trace files or directories (`-` for stdin): native JSONL, chat transcripts, task logs, ATIF; .gz/.zst too.
    #[arg(required = true, value_name = "FILE")]
    pub inputs: Vec<String>,
    /// Threads: 1 = everything on one thread; N = a reader and N - 1 replay workers (default: all cores).
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// A policy file (TOML) replacing upstream's defaults.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Skip lines longer than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = mirotrace::read::reader::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// Read every input as this format instead of detecting it per file.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = InputFormatArg::Auto)]
    pub input_format: InputFormatArg,
    /// Stop at the first line or file that has to be skipped (exit code 3).
    #[arg(long)]
    pub strict: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--input-format`: native attempt lines, chat transcripts, MiroThinker task logs, ATIF.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormatArg {
    Auto,
    Native,
    Chat,
    Tasklog,
    Atif,
}

impl InputFormatArg {
    pub fn to_format(self) -> mirotrace::read::InputFormat {
        use mirotrace::read::InputFormat;
        match self {
            InputFormatArg::Auto => InputFormat::Auto,
            InputFormatArg::Native => InputFormat::Native,
            InputFormatArg::Chat => InputFormat::Chat,
            InputFormatArg::Tasklog => InputFormat::TaskLog,
            InputFormatArg::Atif => InputFormat::Atif,
        }
    }
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Output format (jsonl: the verdict format of the spec).
    #[arg(long, value_enum, default_value_t = ReplayFormat::Jsonl)]
    pub format: ReplayFormat,
    /// Show the timeline of the trace with this id as a table.
    #[arg(long, value_name = "ID")]
    pub trace: Option<String>,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Never colour the table.
    #[arg(long)]
    pub no_color: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayFormat {
    Jsonl,
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Output format (json: the machine interface).
    #[arg(long, value_enum, default_value_t = AnalyzeFormat::Table)]
    pub format: AnalyzeFormat,
    /// Repeat the key rates per file, model (meta.model, else the file) or agent.
    #[arg(long, value_enum, value_name = "KEY")]
    pub group_by: Option<AnalyzeGroupBy>,
    /// Entries in each ranking (duplicate hotspots, streaks, worst traces).
    #[arg(long, value_name = "N", default_value_t = mirotrace::report::DEFAULT_TOP)]
    pub top: usize,
    /// Bootstrap seed for the rollback rate's interval (the same seed gives the same report).
    #[arg(long, default_value_t = mirotrace::report::bootstrap::DEFAULT_SEED)]
    pub seed: u64,
    /// Bootstrap resamples.
    #[arg(long, value_name = "N", default_value_t = mirotrace::report::bootstrap::DEFAULT_ITERATIONS)]
    pub iterations: usize,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Never colour the table.
    #[arg(long)]
    pub no_color: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnalyzeFormat {
    Table,
    Json,
    Markdown,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnalyzeGroupBy {
    File,
    Model,
    Agent,
}

/// `mirotrace diff --base PATH… --new PATH…`. Not flattened from
/// [`CommonArgs`]: its positional inputs do not fit two sides.
#[derive(Args, Debug)]
#[command(
    after_help = "Gate rules (--fail-on): any-significant-worse · any-significant-change · paired-worse · \
METRIC OP VALUE with OP one of > >= < <= and VALUE [+|-]N pp (rates), [+|-]N% (relative) or [+|-]N (counts), \
e.g. rollback_rate>+1pp, refusal>+20%. Exit codes: 0 no gate fired · 1 a gate fired (even if input was skipped) · \
2 usage error · 3 some input was skipped · 4 a side had no readable trace. Method and metrics: docs/diff.md"
)]
pub struct DiffArgs {
    /// The base side's trace files (`-` for stdin).
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    pub base: Vec<String>,
    /// The new side's trace files.
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    pub new: Vec<String>,
    /// Threads: 1 = everything on one thread; N = a reader and N - 1 replay workers (default: all cores).
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// A policy file (TOML) replacing upstream's defaults, for both sides.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Skip lines longer than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = mirotrace::read::reader::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// Split the new side into groups, each compared with the whole base.
    #[arg(long, value_enum, value_name = "KEY")]
    pub group_by: Option<DiffGroupBy>,
    /// Exit 1 when this rule holds (repeatable; see below).
    #[arg(long, value_name = "RULE")]
    pub fail_on: Vec<String>,
    /// Output format (markdown fits a pull-request comment).
    #[arg(long, value_enum, default_value_t = DiffFormat::Table)]
    pub format: DiffFormat,
    /// Bootstrap seed (the same seed gives the same numbers).
    #[arg(long, default_value_t = mirotrace::diff::Config::default().seed)]
    pub seed: u64,
    /// Bootstrap resamples per side.
    #[arg(long, value_name = "N", default_value_t = mirotrace::diff::Config::default().iterations)]
    pub iterations: usize,
    /// Family-wise error rate (Holm); intervals are at 1 − alpha.
    #[arg(long, default_value_t = mirotrace::diff::Config::default().alpha)]
    pub alpha: f64,
    /// Noise threshold for rates, in percentage points: smaller changes are never significant.
    #[arg(long, value_name = "PP", default_value_t = mirotrace::diff::Config::default().noise_pp)]
    pub noise: f64,
    /// Noise threshold for per-trace and streak metrics, in percent of the base value.
    #[arg(long, value_name = "PCT", default_value_t = mirotrace::diff::Config::default().noise_relative_pct)]
    pub noise_relative: f64,
    /// Top movers shown per direction in the paired view.
    #[arg(long, value_name = "N", default_value_t = mirotrace::diff::Config::default().top)]
    pub top: usize,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Never colour the table.
    #[arg(long)]
    pub no_color: bool,
    /// No notes on stderr (gate messages are still printed).
    #[arg(short, long)]
    pub quiet: bool,
    /// Stop at the first line or file that has to be skipped (exit code 3, no report).
    #[arg(long)]
    pub strict: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffFormat {
    Table,
    Json,
    Markdown,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffGroupBy {
    Model,
    File,
}

/// `mirotrace keywords FILE… [--list FILE]… [--labels FILE] [--suggest]`.
#[derive(Args, Debug)]
#[command(
    after_help = "A list file has one phrase per line; blank lines and # comments are ignored, \
`# match: exact` or `# match: normalized` (the default) sets how it matches. The current list is the \
policy's refusal_keywords. Labels: JSONL {trace_id, session, index, refusal: bool}. See docs/policy.md"
)]
pub struct KeywordsArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// A candidate keyword list (repeatable); named after its file stem.
    #[arg(long = "list", value_name = "FILE")]
    pub lists: Vec<PathBuf>,
    /// Ground truth: precision, recall and F1 per list.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Mine candidate refusal phrases and near-misses of the current keywords.
    #[arg(long)]
    pub suggest: bool,
    /// Output format (text: with --suggest, the phrases only, a list file).
    #[arg(long, value_enum, default_value_t = KeywordsFormat::Table)]
    pub format: KeywordsFormat,
    /// Suggestions kept, and rows shown per listing in the table.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Answers a suggested phrase must occur in.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub min_support: usize,
    /// Write to this file (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Never colour the table.
    #[arg(long)]
    pub no_color: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeywordsFormat {
    Table,
    Json,
    Text,
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
    #[command(flatten)]
    pub common: CommonArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Atif)]
    pub format: ExportFormat,
    /// Write to this file (one trajectory per line, atomically), or into this
    /// directory (one `<trace_id>.json` each; an existing directory or a path ending in `/`).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// Harbor's Agent Trajectory Interchange Format (ATIF-v1.4).
    Atif,
}
