//! The `mirotrace` binary: parse arguments, run a command, map its status
//! to the documented exit code.

mod cli;

/// mimalloc: traces are parsed on the reader thread and freed on the workers;
/// glibc's allocator is slow at cross-thread frees, which dominated profiles.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use mirotrace::commands::{self, analyze, replay, Common, Status};
use mirotrace::policy::Policy;
use mirotrace::read::source::{InputSpec, ReadOptions};

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let usage = e.use_stderr();
            let _ = e.print();
            return ExitCode::from(if usage { Status::Usage.code() } else { 0 });
        }
    };
    // Python-depth nesting is parsed recursively, and with `-j 1` all the
    // work happens on this thread: give it the workers' stack.
    let run = std::thread::Builder::new()
        .name("mirotrace".into())
        .stack_size(commands::WORKER_STACK_BYTES)
        .spawn(move || dispatch(cli));
    match run {
        // A panic was already reported by the panic hook: exit as Rust does.
        Ok(handle) => handle.join().unwrap_or(ExitCode::from(101)),
        Err(e) => {
            eprintln!("mirotrace: cannot start the main thread: {e}");
            ExitCode::from(101)
        }
    }
}

/// Runs the chosen command and maps its result to the exit code.
fn dispatch(cli: cli::Cli) -> ExitCode {
    let result = match cli.command {
        cli::Command::Analyze(args) => {
            common(&args.common).and_then(|common| analyze::run(&analyze_options(args, common)))
        }
        cli::Command::Replay(args) => common(&args.common).and_then(|common| {
            replay::run(&replay::ReplayOptions {
                common,
                trace: args.trace,
                output: args.output,
                color: !args.no_color && std::io::stdout().is_terminal(),
            })
        }),
        cli::Command::Diff(args) => diff_options(args).and_then(|o| commands::diff::run(&o)),
        cli::Command::Keywords(args) => common(&args.common).and_then(|common| {
            use commands::keywords::{KeywordsFormat, KeywordsOptions};
            commands::keywords::run(&KeywordsOptions {
                common,
                lists: args.lists,
                labels: args.labels,
                suggest: args.suggest,
                format: match args.format {
                    cli::KeywordsFormat::Table => KeywordsFormat::Table,
                    cli::KeywordsFormat::Json => KeywordsFormat::Json,
                    cli::KeywordsFormat::Text => KeywordsFormat::Text,
                },
                top: args.top,
                min_support: args.min_support,
                output: args.output,
                color: !args.no_color && std::io::stdout().is_terminal(),
            })
        }),
        cli::Command::Policy(args) => commands::policy::run(args.output.as_deref()),
        cli::Command::Export(args) => common(&args.common).and_then(|mut common| {
            common.read.keep_meta = true;
            commands::export::run(&commands::export::ExportOptions {
                common,
                output: args.output,
            })
        }),
    };
    match result {
        Ok(status) => ExitCode::from(status.code()),
        Err(msg) => {
            eprintln!("mirotrace: {msg}");
            ExitCode::from(commands::Status::Usage.code())
        }
    }
}

fn common(args: &cli::CommonArgs) -> Result<Common, String> {
    let policy = match &args.policy {
        None => Policy::default(),
        Some(path) => Policy::load(path).map_err(|e| e.to_string())?,
    };
    Ok(Common {
        inputs: args.inputs.iter().map(|s| InputSpec::parse(s)).collect(),
        threads: args.threads,
        policy,
        read: ReadOptions {
            max_line_bytes: args.max_line_bytes,
            format: args.input_format.to_format(),
            // Only export writes `meta` back out; the rest reads two fields of it.
            keep_meta: false,
        },
        quiet: args.quiet,
        strict: args.strict,
    })
}

/// `analyze`'s options from its arguments.
fn analyze_options(args: cli::AnalyzeArgs, common: Common) -> analyze::AnalyzeOptions {
    use mirotrace::report::{GroupBy, ReportOptions};
    analyze::AnalyzeOptions {
        report: ReportOptions {
            top: args.top,
            group_by: args.group_by.map(|g| match g {
                cli::AnalyzeGroupBy::File => GroupBy::File,
                cli::AnalyzeGroupBy::Model => GroupBy::Model,
                cli::AnalyzeGroupBy::Agent => GroupBy::Agent,
            }),
            seed: args.seed,
            iterations: args.iterations,
            rollback_limit: common.policy.rollback_limit,
        },
        common,
        format: match args.format {
            cli::AnalyzeFormat::Table => analyze::Format::Table,
            cli::AnalyzeFormat::Json => analyze::Format::Json,
            cli::AnalyzeFormat::Markdown => analyze::Format::Markdown,
        },
        output: args.output,
        color: !args.no_color,
    }
}

/// `diff` reads two sides with the same shared options.
fn diff_options(args: cli::DiffArgs) -> Result<commands::diff::DiffOptions, String> {
    use mirotrace::diff::{render::Format, Config, GroupBy};
    let side = |inputs: Vec<String>| {
        common(&cli::CommonArgs {
            inputs,
            threads: args.threads,
            policy: args.policy.clone(),
            max_line_bytes: args.max_line_bytes,
            input_format: cli::InputFormatArg::Auto,
            strict: args.strict,
            quiet: args.quiet,
        })
    };
    Ok(commands::diff::DiffOptions {
        base: side(args.base.clone())?,
        new: side(args.new.clone())?,
        group_by: args.group_by.map(|g| match g {
            cli::DiffGroupBy::Model => GroupBy::Model,
            cli::DiffGroupBy::File => GroupBy::File,
        }),
        fail_on: args.fail_on,
        format: match args.format {
            cli::DiffFormat::Table => Format::Table,
            cli::DiffFormat::Json => Format::Json,
            cli::DiffFormat::Markdown => Format::Markdown,
        },
        config: Config {
            seed: args.seed,
            iterations: args.iterations,
            alpha: args.alpha,
            noise_pp: args.noise,
            noise_relative_pct: args.noise_relative,
            top: args.top,
        },
        output: args.output,
        color: !args.no_color && std::io::stdout().is_terminal(),
    })
}
