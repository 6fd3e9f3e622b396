//! Writes a synthetic trace corpus with known rates (JSONL on stdout), for
//! trying `mirotrace diff`:
//!
//! ```text
//! cargo run --example gen_corpus -- --model m1 --seed 1 > base.jsonl
//! cargo run --example gen_corpus -- --model m2 --seed 2 --refusal 0.08 --duplicate 0.08 > new.jsonl
//! mirotrace diff --base base.jsonl --new new.jsonl --fail-on any-significant-worse
//! ```
//!
//! Every field of `mirotrace::diff::synth::CorpusSpec` is an option
//! (`--tasks`, `--steps`, `--refusal`, `--duplicate`, `--format-error`,
//! `--unknown-tool`, `--tool-error`, `--empty-search`, `--llm-failure`,
//! `--stuck`, `--server-repair`, `--json-repair`, `--context-exceeded`,
//! `--crash`, `--seed`, `--task-seed`, `--model`, `--prefix`).

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use mirotrace::diff::synth::{write_corpus, CorpusSpec};

fn main() -> ExitCode {
    let mut spec = CorpusSpec::default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let result = match pair {
            [key, value] => match key.strip_prefix("--") {
                Some(k) => spec.set(k, value),
                None => Err(format!("expected --OPTION VALUE, got {key:?}")),
            },
            [key] => Err(format!("{key}: missing value")),
            _ => Ok(()),
        };
        if let Err(e) = result {
            eprintln!("gen_corpus: {e}");
            return ExitCode::from(2);
        }
    }
    let mut out = BufWriter::new(io::stdout().lock());
    match write_corpus(&spec, &mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_corpus: {e}");
            ExitCode::from(1)
        }
    }
}
