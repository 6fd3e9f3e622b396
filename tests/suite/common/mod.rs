//! What every test module shares: the binary ([`BIN`], [`mirotrace`],
//! [`run_with_stdin`]),
//! fixtures ([`fixture`], [`fixture_path`]), scratch folders ([`tempdir`],
//! [`scratch`]), snapshots ([`snapshot`]), the HTML pages ([`html`]) and the
//! conformance corpora in `tests/data/`.
//!
//! A corpus is named by its uncompressed path under `tests/data/`
//! (`"replay/dev.jsonl"`); the file in the repository is that path plus
//! `.zst` (see `tests/data/README.md`). `mirotrace` itself reads `.zst`, so a
//! test that runs the CLI passes [`path`]; a test that reads the text calls
//! [`open`] (streamed) or [`read_to_string`]; [`unpack`] writes a folder of
//! corpora decompressed into a scratch directory. A missing corpus is a test
//! failure, never a skip.

// Each test module uses only some of these.
#![allow(dead_code)]

pub mod html;
pub mod snapshot;

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The `mirotrace` binary that cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_mirotrace");

/// A command running the `mirotrace` binary.
pub fn mirotrace() -> Command {
    Command::new(BIN)
}

/// Runs `cmd` with `input` on its stdin and its stdout and stderr captured.
/// The input is written from another thread: a command whose output fills
/// its pipe before it has read all of its input would otherwise wait on
/// the test while the test waits on it.
pub fn run_with_stdin(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mirotrace");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("mirotrace ends");
    writer
        .join()
        .expect("the writer thread")
        .expect("write stdin");
    output
}

/// A name no other scratch folder of this process has: every test module
/// runs in this one process, so tags alone may repeat.
pub fn unique(tag: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{tag}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// `tests/data/`.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The compressed file of corpus `name` (`"replay/dev.jsonl"` →
/// `tests/data/replay/dev.jsonl.zst`), or of a folder of corpora
/// (`"tasklogs/logs"`); panics if it is missing.
pub fn path(name: &str) -> PathBuf {
    let dir = data_dir().join(name);
    let p = if dir.is_dir() {
        dir
    } else {
        data_dir().join(format!("{name}.zst"))
    };
    assert!(
        p.exists(),
        "conformance corpus {} is missing: it is part of the repository \
         (tests/data/README.md says how it is made; scripts/refresh-conformance.sh refreshes it)",
        p.display()
    );
    p
}

/// Corpus `name`, decompressed as it is read.
pub fn open(name: &str) -> BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>> {
    let p = path(name);
    let file = File::open(&p).unwrap_or_else(|e| panic!("cannot open {}: {e}", p.display()));
    let decoder = zstd::stream::read::Decoder::new(file)
        .unwrap_or_else(|e| panic!("cannot start decompressing {}: {e}", p.display()));
    BufReader::new(decoder)
}

/// Corpus `name`, decompressed, as UTF-8 text.
pub fn read_to_string(name: &str) -> String {
    let mut text = String::new();
    open(name)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("cannot read corpus {name}: {e}"));
    text
}

/// The lines of corpus `name`, decompressed.
pub fn lines(name: &str) -> impl Iterator<Item = String> {
    let name = name.to_string();
    open(&name)
        .lines()
        .map(move |l| l.unwrap_or_else(|e| panic!("cannot read corpus {name}: {e}")))
}

/// Every `*.zst` of folder `name` (`"tasklogs/logs"`), decompressed into a
/// scratch directory under its name without `.zst`.
pub fn unpack(name: &str) -> TempDir {
    let src = path(name);
    let dir = tempdir(&format!("data-{}", name.replace('/', "-")));
    let mut n = 0;
    for entry in std::fs::read_dir(&src).expect("read the corpus folder") {
        let from = entry.expect("a folder entry").path();
        let Some(file_name) = from.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        let Some(stem) = file_name.strip_suffix(".zst") else {
            continue;
        };
        let mut out = File::create(dir.join(stem)).expect("create a decompressed file");
        zstd::stream::copy_decode(File::open(&from).expect("open a corpus file"), &mut out)
            .unwrap_or_else(|e| panic!("cannot decompress {}: {e}", from.display()));
        n += 1;
    }
    assert!(n > 0, "no *.zst corpus files in {}", src.display());
    dir
}

/// A scratch directory, removed when the test is done with it.
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh, empty scratch directory named after `name` and the process
/// ([`unique`]).
pub fn tempdir(name: &str) -> TempDir {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(unique(name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    TempDir(dir)
}

/// A file (or folder) of `fixtures/`.
pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// A file of `fixtures/`, as a command-line argument.
pub fn fixture(name: &str) -> String {
    fixture_path(name).display().to_string()
}

/// An empty scratch directory under `target/` for one test, named after
/// `tag` and the process ([`unique`]). Kept after the test (for a look at
/// what it wrote); `cargo clean` removes it.
pub fn scratch(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(unique(tag));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
