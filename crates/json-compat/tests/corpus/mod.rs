//! The json-repair corpus, kept in this crate
//! (`tests/data/json-repair/dev.jsonl.zst`, made as the repository's
//! `tests/data/README.md` says), decompressed. A missing corpus is a
//! failure, never a skip.

use std::io::Read;
use std::path::Path;

/// The corpus's text.
pub fn read() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/json-repair/dev.jsonl.zst");
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("cannot open the corpus {}: {e}", path.display()));
    let mut text = String::new();
    zstd::stream::read::Decoder::new(file)
        .and_then(|mut d| d.read_to_string(&mut text))
        .unwrap_or_else(|e| panic!("cannot read the corpus {}: {e}", path.display()));
    text
}
