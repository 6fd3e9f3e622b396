//! The `mirotrace` binary: parse arguments, run a command, map its status
//! to the documented exit code.

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use mirotrace::commands::{self, replay, Common, Status};
use mirotrace::input::{InputSpec, ReadOptions};
use mirotrace::policy::Policy;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let usage = e.use_stderr();
            let _ = e.print();
            return ExitCode::from(if usage { Status::Usage.code() } else { 0 });
        }
    };
    let result = match cli.command {
        cli::Command::Replay(args) => common(&args.common).and_then(|common| {
            replay::run(&replay::ReplayOptions {
                common,
                trace: args.trace,
                output: args.output,
                color: !args.no_color && std::io::stdout().is_terminal(),
            })
        }),
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
        },
        quiet: args.quiet,
        strict: args.strict,
    })
}
