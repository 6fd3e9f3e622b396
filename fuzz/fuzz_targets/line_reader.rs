//! Any bytes as a trace file: read, group and replay without panicking.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mirotrace::policy::Policy;
use mirotrace::replay::Replayer;
use mirotrace::trace::{Record, TraceReader};

fn replayer() -> &'static Replayer {
    static R: OnceLock<Replayer> = OnceLock::new();
    R.get_or_init(|| Replayer::new(Policy::default()))
}

fuzz_target!(|data: &[u8]| {
    let replayer = replayer();
    for record in TraceReader::new(data, "fuzz.jsonl".into(), 1 << 20) {
        if let Record::Trace(t) = record {
            let verdicts = replayer.replay(&t);
            assert_eq!(verdicts.len(), t.attempts.len());
        }
    }
});
