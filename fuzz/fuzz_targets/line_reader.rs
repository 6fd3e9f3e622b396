//! Any bytes as a trace file: read, group and replay without panicking, and
//! the same verdicts whether lines are lent from a large buffer or copied
//! out of a tiny one, and whether `meta` is kept whole or not.
#![no_main]

use std::io::BufReader;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mirotrace::policy::Policy;
use mirotrace::replay::Replayer;
use mirotrace::read::{Record, TraceReader};

fn replayer() -> &'static Replayer {
    static R: OnceLock<Replayer> = OnceLock::new();
    R.get_or_init(|| Replayer::new(Policy::default()))
}

/// Every record, as text: verdict lines for traces, the message for the rest.
fn replay_all(records: impl Iterator<Item = Record>) -> Vec<String> {
    let replayer = replayer();
    let mut out = Vec::new();
    for record in records {
        match record {
            Record::Trace(t) => {
                let verdicts = replayer.replay(&t);
                assert_eq!(verdicts.len(), t.attempts.len());
                out.extend(verdicts.iter().map(|v| v.to_json_line()));
            }
            Record::Bad(b) => out.push(b.to_string()),
            Record::Failed(e) => out.push(e.to_string()),
            Record::NoAttempt(n) => out.push(n.to_string()),
            Record::NotTraces(n) => out.push(n.to_string()),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = replay_all(TraceReader::new(data, "fuzz.jsonl".into(), 1 << 20));
    let small = TraceReader::new(BufReader::with_capacity(7, data), "fuzz.jsonl".into(), 1 << 20)
        .keep_meta(false);
    assert_eq!(whole, replay_all(small));
});
