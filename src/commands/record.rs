//! `mirotrace record`: the recording proxy in front of an LLM API
//! (docs/record.md). The proxy is the `mirotrace-record` crate; this is
//! its edge: the listening line, signals, the progress line and the
//! summary on stderr, and errors as exit codes.

use std::io::IsTerminal;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mirotrace_record::{Options, Proxy, Recording, Stats, Upstream};

use super::{stderr, Error, Status};
use crate::render::format::counted;

/// The default `--listen`: loopback only (the recording holds prompts
/// and answers), on a port of no well-known service.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8642";
/// The default `--timeout`, in seconds: a long reasoning call without
/// streaming can take minutes before its first byte.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 600.0;
/// The default `--max-body`: 32 MiB.
pub const DEFAULT_MAX_BODY: u64 = 32 << 20;

/// What `record` was asked to do.
#[derive(Debug)]
pub struct RecordOptions {
    pub upstream: String,
    pub listen: String,
    pub output: PathBuf,
    pub append: bool,
    pub timeout: Duration,
    pub max_body: u64,
    pub quiet: bool,
}

impl From<mirotrace_record::Error> for Error {
    /// Every failure of the proxy is a usage or output error (exit 2): a
    /// bad `--upstream`, an address that cannot be bound, a recording
    /// that cannot be opened, is refused or cannot be written.
    fn from(e: mirotrace_record::Error) -> Error {
        Error::Usage(e.to_string())
    }
}

/// Runs the proxy until SIGINT or SIGTERM (exit 0, the recording whole);
/// a second signal ends the process at once (128 + the signal).
pub fn run(options: &RecordOptions) -> Result<Status, Error> {
    let upstream: Upstream = options.upstream.parse()?;
    let listen = resolve(&options.listen)?;
    if options.output.as_os_str() == "-" {
        return Err(Error::Usage(
            "the recording is a file: give -o RECORDING.jsonl (not -)".into(),
        ));
    }
    let recording = Recording::create(&options.output, options.append)?;
    let proxy = Proxy::bind(
        Options {
            upstream,
            listen,
            timeout: options.timeout,
            max_body: usize::try_from(options.max_body).unwrap_or(usize::MAX),
        },
        recording,
    )?;
    stderr::say(format_args!("listening on http://{}", proxy.local_addr()));
    let progress = Progress::start(options.quiet, proxy.stats());
    on_signals_stop(&proxy, options.quiet, progress.bar());
    let result = proxy.run();
    progress.stop();
    let summary = result?;
    if !options.quiet {
        stderr::say(format_args!(
            "recorded {} ({}, {} of bodies) to {}",
            counted(summary.calls, "call"),
            counted(summary.errors, "error"),
            HumanBytes(summary.bytes),
            options.output.display()
        ));
    }
    Ok(Status::Ok)
}

/// `HOST:PORT` (a name or an address) → the first address it names.
fn resolve(listen: &str) -> Result<SocketAddr, Error> {
    let bad = |why: String| Error::Usage(format!("--listen {listen:?}: {why}"));
    let mut addrs = listen
        .to_socket_addrs()
        .map_err(|e| bad(format!("not a HOST:PORT ({e})")))?;
    addrs
        .next()
        .ok_or_else(|| bad("names no address".to_string()))
}

/// The first SIGINT or SIGTERM stops the proxy gracefully; the second
/// exits at once with 128 + its number (the calls in flight are lost,
/// the lines written stay).
fn on_signals_stop(proxy: &Proxy, quiet: bool, bar: Option<ProgressBar>) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let shutdown = proxy.shutdown();
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        stderr::say("cannot watch for signals: SIGINT and SIGTERM end the proxy at once");
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut seen = false;
            for signal in signals.forever() {
                if seen {
                    std::process::exit(128 + signal);
                }
                seen = true;
                let say = || {
                    stderr::say(
                        "stopping: finishing the calls in flight (a second signal ends at once)",
                    )
                };
                match (&bar, quiet) {
                    (_, true) => {}
                    // Above the progress line, not over it.
                    (Some(bar), false) => bar.suspend(say),
                    (None, false) => say(),
                }
                shutdown.trigger();
            }
        });
    if let Err(e) = spawned {
        stderr::say(format_args!("cannot watch for signals: {e}"));
    }
}

/// The progress line: calls, errors, bytes, in flight; only on a
/// terminal and without `-q`.
struct Progress {
    shown: Option<(ProgressBar, Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Progress {
    fn start(quiet: bool, stats: Arc<Stats>) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { shown: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed_precise} {wide_msg}") {
            bar.set_style(style);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (bar.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                    b.set_message(format!(
                        "{} · {} · {} · {} in flight",
                        counted(load(&stats.calls), "call"),
                        counted(load(&stats.errors), "error"),
                        HumanBytes(load(&stats.bytes)),
                        load(&stats.in_flight)
                    ));
                    b.tick();
                    std::thread::sleep(Duration::from_millis(250));
                }
            });
        match thread {
            Ok(thread) => Progress {
                shown: Some((bar, stop, thread)),
            },
            Err(_) => Progress { shown: None },
        }
    }

    fn bar(&self) -> Option<ProgressBar> {
        self.shown.as_ref().map(|(bar, _, _)| bar.clone())
    }

    fn stop(self) {
        if let Some((bar, stop, thread)) = self.shown {
            stop.store(true, Ordering::Relaxed);
            let _ = thread.join();
            bar.finish_and_clear();
        }
    }
}
