//! The progress line on stderr while inputs are read: only on a terminal,
//! only without `--quiet`, and only once a run has taken more than a
//! moment. It counts the bytes read from the input files (compressed bytes
//! for a compressed file), so it can show a percentage, a rate and an ETA
//! when every input's size is known; from stdin it shows bytes and rate.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A run shorter than this never shows a progress line.
const DELAY: Duration = Duration::from_millis(700);
/// Overrides [`DELAY`] (in milliseconds), so a test can see the line on a
/// small input.
const DELAY_VAR: &str = "MIROTRACE_PROGRESS_DELAY_MS";

const WITH_TOTAL: &str =
    "{spinner} [{bar:28}] {percent:>3}% {bytes}/{total_bytes} · {bytes_per_sec} · ETA {eta} · {wide_msg}";
const WITHOUT_TOTAL: &str =
    "{spinner} {elapsed_precise} {bytes} read · {bytes_per_sec} · {wide_msg}";

/// A progress line, or nothing (quiet, or stderr is not a terminal).
pub struct Progress {
    shown: Option<Shown>,
}

struct Shown {
    bar: ProgressBar,
    bytes: Arc<AtomicU64>,
    started: Instant,
    delay: Duration,
    drawing: bool,
    files: usize,
}

impl Progress {
    /// `total`: the bytes the inputs hold, when known.
    pub fn new(quiet: bool, total: Option<u64>) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { shown: None };
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
        let template = if total.is_some() {
            WITH_TOTAL
        } else {
            WITHOUT_TOTAL
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            shown: Some(Shown {
                bar,
                bytes: Arc::new(AtomicU64::new(0)),
                started: Instant::now(),
                delay: std::env::var(DELAY_VAR)
                    .ok()
                    .and_then(|ms| ms.parse().ok())
                    .map_or(DELAY, Duration::from_millis),
                drawing: false,
                files: 0,
            }),
        }
    }

    /// The count the readers add their bytes to (none when nothing is shown,
    /// so a quiet run pays nothing).
    pub fn bytes_read(&self) -> Option<Arc<AtomicU64>> {
        self.shown.as_ref().map(|s| s.bytes.clone())
    }

    /// An input was opened.
    pub fn file_started(&mut self, label: &str) {
        if let Some(s) = &mut self.shown {
            s.files += 1;
            // A name from the input: escaped as stderr's messages are.
            let label = crate::render::visible::visible(label).replace('\n', "\\n");
            s.bar.set_message(format!("file {}: {label}", s.files));
        }
        self.tick();
    }

    /// Brings the line up to date (cheap: call it as often as you like).
    pub fn tick(&mut self) {
        let Some(s) = &mut self.shown else { return };
        if !s.drawing {
            if s.started.elapsed() < s.delay {
                return;
            }
            s.bar.set_draw_target(ProgressDrawTarget::stderr());
            s.bar.enable_steady_tick(Duration::from_millis(200));
            s.drawing = true;
        }
        s.bar.set_position(s.bytes.load(Ordering::Relaxed));
    }

    /// Runs `f` (which writes to stderr) with the line out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.shown {
            Some(s) if s.drawing => s.bar.suspend(f),
            _ => f(),
        }
    }

    /// Clears the line.
    pub fn finish(&self) {
        if let Some(s) = &self.shown {
            s.bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_total_shows_percentage_rate_and_eta() {
        for field in ["{percent", "{bytes_per_sec}", "{eta}", "{total_bytes}"] {
            assert!(WITH_TOTAL.contains(field), "{field}");
        }
        assert!(WITHOUT_TOTAL.contains("{bytes_per_sec}"));
        assert!(ProgressStyle::with_template(WITH_TOTAL).is_ok());
        assert!(ProgressStyle::with_template(WITHOUT_TOTAL).is_ok());
    }
}
