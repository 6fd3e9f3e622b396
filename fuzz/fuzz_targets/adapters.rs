//! Every input adapter (native, chat transcripts, task logs, ATIF, and
//! detection) on any bytes, then replay: the first byte picks the format.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mirotrace::policy::Policy;
use mirotrace::replay::Replayer;
use mirotrace::read::sniff::InputFormat;
use mirotrace::read::{Record, TraceReader};

fn replayer() -> &'static Replayer {
    static R: OnceLock<Replayer> = OnceLock::new();
    R.get_or_init(|| Replayer::new(Policy::default()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let format = match selector % 5 {
        0 => InputFormat::Auto,
        1 => InputFormat::Native,
        2 => InputFormat::Chat,
        3 => InputFormat::TaskLog,
        _ => InputFormat::Atif,
    };
    for record in TraceReader::with_format(rest, "fuzz.json".into(), 1 << 20, format) {
        if let Record::Trace(t) = record {
            let verdicts = replayer().replay(&t);
            assert_eq!(verdicts.len(), t.attempts.len());
        }
    }
});
