//! Any bytes as the start of a file, then good JSONL lines, read as a file
//! is (compression and layout sniffing, the document reader and its
//! fallbacks to lines). No panic, one verdict per attempt, and, when the
//! bytes are one line that starts no compressed stream or archive, every
//! good line after it is read, whatever the line looks like (a Claude Code
//! session line and OTLP spans included): the first line never decides how
//! the rest of the file is read.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mirotrace::policy::Policy;
use mirotrace::read::source::{open_stream, ReadOptions};
use mirotrace::read::Record;
use mirotrace::replay::Replayer;

fn replayer() -> &'static Replayer {
    static R: OnceLock<Replayer> = OnceLock::new();
    R.get_or_init(|| Replayer::new(Policy::default()))
}

const GOOD: [&str; 3] = ["fuzz-good-1", "fuzz-good-2", "fuzz-good-3"];

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    bytes.push(b'\n');
    for id in GOOD {
        bytes.extend(format!("{{\"trace_id\": \"{id}\", \"content\": \"ok\"}}\n").as_bytes());
    }
    let opts = ReadOptions {
        max_line_bytes: 1 << 16,
        ..ReadOptions::default()
    };
    let Ok(records) = open_stream(
        Box::new(std::io::Cursor::new(bytes)),
        "fuzz.jsonl".into(),
        &opts,
    ) else {
        return;
    };
    let mut ids = Vec::new();
    for record in records {
        if let Record::Trace(t) = record {
            assert_eq!(replayer().replay(&t).len(), t.attempts.len());
            ids.push(t.trace_id.to_string());
        }
    }
    let magic = [&[0x1f, 0x8b][..], &[0x28, 0xb5, 0x2f, 0xfd], b"PK\x03\x04"]
        .iter()
        .any(|m| data.starts_with(m));
    if !data.contains(&b'\n') && !magic && data.len() < 1 << 16 {
        for id in GOOD {
            assert!(
                ids.iter().any(|i| i == id),
                "{id} lost after {:?}",
                String::from_utf8_lossy(data)
            );
        }
    }
});
