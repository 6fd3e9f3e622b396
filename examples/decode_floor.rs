//! The throughput floor for `bench/`: a plain `serde_json` decode of every
//! line of a JSONL file into a `serde_json::Value`, on one thread, with
//! nothing else done. `mirotrace analyze` reads, decodes, replays and
//! aggregates the same bytes; this says how fast decoding alone can go.
//!
//! usage: cargo run --release --example decode_floor -- FILE
//! Prints one line: `bytes=<n> lines=<n> seconds=<s> bytes_per_sec=<n>`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: decode_floor FILE");
        return ExitCode::from(2);
    };
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("decode_floor: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let (mut bytes, mut lines, mut objects) = (0u64, 0u64, 0u64);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            Err(e) => {
                eprintln!("decode_floor: {path}: {e}");
                return ExitCode::from(2);
            }
        }
        lines += 1;
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&line) {
            // Keep the optimiser from dropping the decode.
            objects += u64::from(value.is_object());
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "bytes={bytes} lines={lines} objects={objects} seconds={seconds:.3} bytes_per_sec={:.0}",
        bytes as f64 / seconds
    );
    ExitCode::SUCCESS
}
