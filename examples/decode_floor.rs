//! The throughput floor for `bench/`: a plain `serde_json` decode of the
//! bytes of a trace file into `serde_json::Value`s, on one thread, with
//! nothing else done. `mirotrace analyze` reads, decodes, replays and
//! aggregates the same bytes; this says how fast decoding alone can go.
//!
//! A JSONL file (its first line a whole JSON value) is decoded line by
//! line; any other file as one document; a ZIP archive (Inspect's `.eval`)
//! entry by entry after unpacking, the unpacking included in the time.
//!
//! usage: cargo run --release --example decode_floor -- FILE
//! Prints one line: `bytes=<n> lines=<n> seconds=<s> bytes_per_sec=<n>`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
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
    let head = match reader.fill_buf() {
        Ok(h) => h.to_vec(),
        Err(e) => {
            eprintln!("decode_floor: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let result = if head.starts_with(b"PK\x03\x04") {
        decode_archive(reader)
    } else if first_line_is_json(&head) {
        decode_lines(reader)
    } else {
        decode_document(reader)
    };
    let (bytes, lines, objects) = match result {
        Ok(counts) => counts,
        Err(e) => {
            eprintln!("decode_floor: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "bytes={bytes} lines={lines} objects={objects} seconds={seconds:.3} bytes_per_sec={:.0}",
        bytes as f64 / seconds
    );
    ExitCode::SUCCESS
}

type Counts = (u64, u64, u64);

fn first_line_is_json(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde::de::IgnoredAny>(line.trim_ascii()).is_ok()
}

fn decode_lines(mut reader: impl BufRead) -> std::io::Result<Counts> {
    let mut line = Vec::new();
    let (mut bytes, mut lines, mut objects) = (0u64, 0u64, 0u64);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line)? {
            0 => break,
            n => bytes += n as u64,
        }
        lines += 1;
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&line) {
            // Keep the optimiser from dropping the decode.
            objects += u64::from(value.is_object());
        }
    }
    Ok((bytes, lines, objects))
}

fn decode_document(mut reader: impl Read) -> std::io::Result<Counts> {
    let mut text = Vec::new();
    reader.read_to_end(&mut text)?;
    let value: serde_json::Value = serde_json::from_slice(&text).map_err(std::io::Error::other)?;
    Ok((
        text.len() as u64,
        1,
        u64::from(value.is_object() || value.is_array()),
    ))
}

fn decode_archive(mut reader: impl Read) -> std::io::Result<Counts> {
    let mut zipped = Vec::new();
    reader.read_to_end(&mut zipped)?;
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(&zipped)).map_err(std::io::Error::other)?;
    let (mut entries, mut objects) = (0u64, 0u64);
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(std::io::Error::other)?;
        let mut text = Vec::new();
        entry.read_to_end(&mut text)?;
        entries += 1;
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&text) {
            objects += u64::from(value.is_object());
        }
    }
    Ok((zipped.len() as u64, entries, objects))
}
