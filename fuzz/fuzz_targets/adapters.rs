//! Every input reader (native, chat transcripts wherever their messages
//! sit, task logs, ATIF, Inspect logs and `.eval` archives, OpenHands
//! events V0 and V1, completion logs, SWE-agent trajectories, Claude Code
//! sessions, OTLP and plain-JSON spans, tau2-bench results, and detection) on any bytes, as a file would be read, then replay under
//! both plain-reply rules: the first byte picks the format and the rule.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mirotrace::policy::Policy;
use mirotrace::read::sniff::InputFormat;
use mirotrace::read::source::{open_stream, ReadOptions};
use mirotrace::read::{Record, TraceReader};
use mirotrace::replay::{PlainReply, Replayer};

fn replayers() -> &'static [Replayer; 2] {
    static R: OnceLock<[Replayer; 2]> = OnceLock::new();
    R.get_or_init(|| {
        [
            Replayer::new(Policy::default()),
            Replayer::new(Policy::default()).with_plain_reply(PlainReply::Continue),
        ]
    })
}

fn check(record: Record, replayer: &Replayer) {
    if let Record::Trace(t) = record {
        let verdicts = replayer.replay(&t);
        assert_eq!(verdicts.len(), t.attempts.len());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let formats = InputFormat::all();
    let format = formats[usize::from(selector) % formats.len()];
    let replayer = &replayers()[usize::from(selector / 128)];
    // Line by line, as a JSONL file's records are read.
    for record in TraceReader::with_format(rest, "fuzz.jsonl".into(), 1 << 20, format) {
        check(record, replayer);
    }
    // As a whole input: documents, archives, session and span files.
    let opts = ReadOptions {
        max_line_bytes: 1 << 20,
        format,
        keep_meta: false,
        ..ReadOptions::default()
    };
    let stream = Box::new(std::io::Cursor::new(rest.to_vec()));
    if let Ok(records) = open_stream(stream, "fuzz.json".into(), &opts) {
        for record in records {
            check(record, replayer);
        }
    }
});
