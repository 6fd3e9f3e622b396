//! The reading half of `analyze` alone, for `bench/`: a trace file read,
//! decoded and gathered into traces exactly as `analyze` does it (the same
//! reader, the same options, the same allocator), with no replay, no
//! figures and no report. Beside the decode floor and `analyze` on one
//! core, it says how much of `analyze`'s time is reading and how much is
//! the layer's work on what was read.
//!
//! usage: cargo run --release --example read_only -- FILE
//! Prints one line: `traces=<n> attempts=<n> bad=<n> seconds=<s>`.

use std::process::ExitCode;
use std::time::Instant;

use mirotrace_engine::read::source::{open_records, InputSpec, ReadOptions};
use mirotrace_engine::read::Record;

/// The binary's allocator, so reading allocates as it does in `analyze`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: read_only FILE");
        return ExitCode::from(2);
    };
    let start = Instant::now();
    // `analyze`'s reading options: the replay reads only `meta.model` and
    // `meta.max_turns`, so the whole `meta` object is not kept.
    let opts = ReadOptions {
        keep_meta: false,
        ..ReadOptions::default()
    };
    let records = match open_records(&InputSpec::parse_os(&path), &opts) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("read_only: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut traces, mut attempts, mut bad) = (0u64, 0u64, 0u64);
    for record in records {
        match record {
            Record::Trace(trace) => {
                traces += 1;
                attempts += trace.attempts.len() as u64;
            }
            Record::Failed(e) => {
                eprintln!("read_only: {e}");
                return ExitCode::from(2);
            }
            _ => bad += 1,
        }
    }
    println!(
        "traces={traces} attempts={attempts} bad={bad} seconds={:.3}",
        start.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
