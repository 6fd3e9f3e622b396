//! The `mirotrace` binary: `main` parses the arguments, `run` runs the
//! command, and `main` turns its status or error into the exit code.

#![deny(clippy::print_stderr)]

mod cli;

/// mimalloc: traces are parsed on the reader thread and freed on the workers;
/// glibc's allocator is slow at cross-thread frees, which dominated profiles.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mirotrace::analyze::ReportOptions;
use mirotrace::commands::{
    analyze, diff, export, keywords, merge, policy, replay, stderr, Error, Status,
};
use mirotrace::engine::WORKER_STACK_BYTES;

fn main() -> ExitCode {
    // Suggested commands name the program as it was run (render::shell).
    mirotrace::render::shell::set_program(mirotrace::render::shell::invoked());
    // `--help` wraps at the same width as the tables (see `terminal_width`).
    let mut command = <cli::Cli as clap::CommandFactory>::command();
    if let Some(width) =
        mirotrace::output::terminal_width(std::io::IsTerminal::is_terminal(&std::io::stdout()))
    {
        command = command.term_width(width).max_term_width(width);
    }
    let parsed = command
        .try_get_matches()
        .and_then(|m| <cli::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let usage = e.use_stderr();
            if usage {
                print_usage_error(e);
            } else {
                let _ = e.print();
            }
            return if usage { Status::Usage } else { Status::Ok }.into();
        }
    };
    // `record` stops on its first signal and exits on the second
    // (commands/record.rs); it writes no `-o` temporary.
    if !is_record(&cli.command) {
        on_signals_remove_temporaries();
    }
    if cli.command.output_args().is_some_and(|o| o.wide) {
        mirotrace::output::draw_wide();
    }
    // Python-depth nesting is parsed recursively, and with `-j 1` all the
    // work happens on this thread: give it the workers' stack.
    let thread = std::thread::Builder::new()
        .name("mirotrace".into())
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || run(cli));
    let result = match thread.map(|handle| handle.join()) {
        Ok(Ok(result)) => result,
        // A panic was already reported by the panic hook: exit as Rust does.
        Ok(Err(_)) => return ExitCode::from(101),
        Err(e) => {
            stderr::say(format_args!("cannot start the main thread: {e}"));
            return ExitCode::from(101);
        }
    };
    match result {
        Ok(status) => status.into(),
        // A closed pipe (`| head`) ends the run quietly, with its status.
        Err(e) if e.is_quiet() => e.status().into(),
        Err(e) => {
            stderr::say(&e);
            e.status().into()
        }
    }
}

/// An argument error quotes what was typed (a file name, maybe with
/// terminal controls in it). Parsed again without styles, so the only
/// escape sequences left are the user's, and printed with those escaped.
fn print_usage_error(e: clap::Error) {
    let plain = <cli::Cli as clap::CommandFactory>::command()
        .styles(clap::builder::Styles::plain())
        .try_get_matches()
        .and_then(|m| <cli::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let text = match plain {
        Err(plain) => plain.render().ansi().to_string(),
        // Not expected (the same arguments); the styled error, stripped.
        Ok(_) => e.render().to_string(),
    };
    stderr::write_escaped(&text);
}

/// Whether the command is `record`.
fn is_record(command: &cli::Command) -> bool {
    #[cfg(feature = "record")]
    if let cli::Command::Record(_) = command {
        return true;
    }
    let _ = command;
    false
}

/// On SIGINT, SIGTERM or SIGHUP (a closed terminal or SSH session),
/// removes the `-o` temporary files still open and exits with the shell's
/// status for that signal (128 + its number: 130, 143, 129). signal-hook's iterator runs this on an ordinary thread, where
/// removing files and exiting are allowed (unlike in a signal handler).
fn on_signals_remove_temporaries() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        // Without the handler the default applies: the run ends, a
        // temporary file may stay behind.
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                mirotrace::output::remove_temporaries();
                std::process::exit(128 + signal);
            }
        });
    if let Err(e) = spawned {
        stderr::say(format_args!("cannot watch for signals: {e}"));
    }
}

/// The `-o` path of a command and the files it reads besides its trace
/// inputs (partials, policy, prices, lists, labels): an `-o` naming one of
/// them is refused before anything is read
/// ([`mirotrace::commands::refuse_output_over_reads`]); the trace inputs
/// are checked where the command expands them.
fn output_and_reads(command: &cli::Command) -> (Option<&Path>, Vec<PathBuf>) {
    use cli::Command as C;
    let policy = |p: &Option<PathBuf>| p.iter().cloned().collect::<Vec<_>>();
    match command {
        C::Analyze(a) => {
            let mut reads = policy(&a.input.reading.policy);
            reads.extend(a.prices.iter().cloned());
            (a.output.output.as_deref(), reads)
        }
        C::Replay(a) => (a.output.output.as_deref(), policy(&a.input.reading.policy)),
        C::Diff(a) => (a.output.output.as_deref(), policy(&a.reading.policy)),
        C::Keywords(a) => {
            let mut reads = policy(&a.input.reading.policy);
            reads.extend(a.lists.iter().chain(&a.labels).cloned());
            (a.output.output.as_deref(), reads)
        }
        C::Merge(a) => (a.output.output.as_deref(), a.parts.clone()),
        C::Export(a) => (a.output.as_deref(), policy(&a.input.reading.policy)),
        C::Policy(_) | C::Completions(_) | C::Man(_) => (None, Vec::new()),
        #[cfg(feature = "record")]
        C::Record(_) => (None, Vec::new()),
    }
}

/// Runs the chosen command.
fn run(cli: cli::Cli) -> Result<Status, Error> {
    let (output, reads) = output_and_reads(&cli.command);
    mirotrace::commands::refuse_output_over_reads(output, &reads)?;
    match cli.command {
        cli::Command::Analyze(args) => {
            let reading = args.input.reading.reading()?;
            analyze::run(&analyze::AnalyzeOptions {
                report: ReportOptions {
                    top: args.top,
                    group_by: args.group_by,
                    seed: args.seed,
                    iterations: args.iterations,
                    prices: match &args.prices {
                        Some(path) => Some(std::sync::Arc::new(
                            mirotrace::metrics::prices::Prices::load(path)?,
                        )),
                        None => None,
                    },
                    // timelines: set by the command, from its format.
                    ..ReportOptions::default()
                }
                .replaying(
                    &reading.policy,
                    args.input
                        .reading
                        .policy
                        .as_ref()
                        .map(|p| p.display().to_string()),
                ),
                reading,
                inputs: args.input.inputs(),
                format: args.format,
                output: args.output.output.clone(),
                color: args.output.color(),
                fail_on: args.fail_on,
            })
        }
        cli::Command::Replay(args) => replay::run(&replay::ReplayOptions {
            reading: args.input.reading.reading()?,
            inputs: args.input.inputs(),
            format: args.format.unwrap_or(if args.trace.is_some() {
                replay::Format::Table
            } else {
                replay::Format::Jsonl
            }),
            trace: args.trace,
            output: args.output.output.clone(),
            color: args.output.color(),
        }),
        cli::Command::Diff(args) if args.list_metrics => {
            let width = mirotrace::output::Output::open(None)?.width();
            print_bytes(mirotrace::diff::gate::metrics_listing(width).as_bytes())
        }
        cli::Command::Completions(args) => print_bytes(&cli::completions(args.shell)),
        cli::Command::Man(args) => print_bytes(&cli::man_page(args.command.as_deref())?),
        cli::Command::Diff(args) => diff::run(&diff::DiffOptions {
            reading: args.reading.reading()?,
            base: cli::specs(&args.base),
            new: cli::specs(&args.new),
            group_by: args.group_by,
            fail_on: args.fail_on,
            format: args.format,
            config: mirotrace::diff::CompareOptions {
                seed: args.seed,
                iterations: args.iterations,
                alpha: args.alpha,
                noise_pp: args.noise,
                noise_relative_pct: args.noise_relative,
                top: args.top,
            },
            output: args.output.output.clone(),
            color: args.output.color(),
            files: cli::specs(&args.files),
            base_policy: args.base_policy,
            new_policy: args.new_policy,
        }),
        cli::Command::Keywords(args) => keywords::run(&keywords::KeywordsOptions {
            reading: args.input.reading.reading()?,
            inputs: args.input.inputs(),
            lists: args.lists,
            labels: args.labels,
            suggest: args.suggest,
            format: args.format,
            top: args.top,
            min_support: args.min_support,
            output: args.output.output.clone(),
            color: args.output.color(),
        }),
        cli::Command::Policy(args) => policy::run(args.output.as_deref()),
        #[cfg(feature = "record")]
        cli::Command::Record(args) => {
            mirotrace::commands::record::run(&mirotrace::commands::record::RecordOptions {
                upstream: args.upstream,
                listen: args.listen,
                output: args.output,
                append: args.append,
                timeout: std::time::Duration::from_secs_f64(args.timeout),
                max_body: args.max_body,
                quiet: args.quiet,
            })
        }
        cli::Command::Merge(args) => merge::run(&merge::MergeOptions {
            parts: args.parts,
            format: args.format,
            output: args.output.output.clone(),
            color: args.output.color(),
            threads: args.threads,
            quiet: args.quiet,
        }),
        cli::Command::Export(args) => {
            let mut reading = args.input.reading.reading()?;
            // Export writes each line's whole `meta` back out.
            reading.read.keep_meta = true;
            export::run(&export::ExportOptions {
                reading,
                inputs: args.input.inputs(),
                output: args.output,
                format: args.format,
                kind: args.kind,
            })
        }
    }
}

/// Writes generated text (completions, a man page, a listing) to stdout.
fn print_bytes(bytes: &[u8]) -> Result<Status, Error> {
    let out = mirotrace::output::Output::open(None)?;
    mirotrace::commands::write_report(out, &String::from_utf8_lossy(bytes), Status::Ok)
}
