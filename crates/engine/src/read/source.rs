//! Input paths: files, directories (recursed) and `-` (stdin), opened as
//! streams of trace records. Gzip and zstd inputs are decompressed on the
//! fly; the layout (JSONL or one JSON document) is read off the first line.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::model::Origin;
use crate::read::attribution;
use crate::read::binary;
use crate::read::error::BadLine;
use crate::read::error::{NoAttempt, ReadError};
pub use crate::read::error::{OpenError, HOLDS_NO_ATTEMPT};
use crate::read::formats::{classify, InputFormat, Kind, INSPECT};
use crate::read::inspect::archive::{Archive, ZIP_MAGIC};
use crate::read::mapped::MappedFile;
use crate::read::openhands_v1;
use crate::read::reader::{DocumentReader, WholeLinesReader, DEFAULT_MAX_LINE_BYTES};
use crate::read::reader::{Record, TraceReader};
use crate::read::sniff::{layout_of, parse_json, Layout};

/// Options that shape how inputs are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Longest line (and longest JSON document) read.
    pub max_line_bytes: usize,
    /// `Auto` detects each file's format; anything else forces it.
    pub format: InputFormat,
    /// Keep each line's whole `meta` object (export needs it; the replay
    /// reads only `model` and `max_turns`).
    pub keep_meta: bool,
    /// Counts the bytes read from input files (compressed bytes for a
    /// compressed file), for a progress display.
    pub bytes_read: Option<Arc<AtomicU64>>,
    /// Threads a reader may use for one input (`-j`): an `.eval` archive's
    /// samples are unpacked this many at once.
    pub threads: usize,
    /// The request header that names a recorded call's run
    /// (`--trace-header`): a recording's calls are grouped into traces by it.
    pub trace_header: Arc<str>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            format: InputFormat::Auto,
            keep_meta: true,
            bytes_read: None,
            threads: 1,
            trace_header: Arc::from(crate::read::format::DEFAULT_TRACE_HEADER),
        }
    }
}

impl ReadOptions {
    /// What the gatherers of whole files are told.
    pub fn gathering(&self) -> crate::read::format::GatherOptions {
        crate::read::format::GatherOptions {
            trace_header: self.trace_header.clone(),
        }
    }
}

/// File names a directory walk picks up: JSON and JSONL, compressed, and
/// the formats' own (Inspect's `.eval` archives, SWE-agent's `.traj`), as
/// the registry lists them.
pub fn trace_extensions() -> impl Iterator<Item = &'static str> {
    crate::read::formats::extensions()
}

/// Buffer size for reading files and decompressed streams.
const BUF_BYTES: usize = 1 << 16;

/// One input as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSpec {
    Stdin,
    Path(PathBuf),
}

impl InputSpec {
    pub fn parse(arg: &str) -> InputSpec {
        InputSpec::parse_os(std::ffi::OsStr::new(arg))
    }

    /// `-` is stdin; anything else a path, whatever its bytes (a file name
    /// need not be UTF-8).
    pub fn parse_os(arg: &std::ffi::OsStr) -> InputSpec {
        if arg == "-" {
            InputSpec::Stdin
        } else {
            InputSpec::Path(PathBuf::from(arg))
        }
    }

    /// How the input is named in messages.
    pub fn label(&self) -> Arc<str> {
        match self {
            InputSpec::Stdin => "<stdin>".into(),
            InputSpec::Path(p) => path_label(p),
        }
    }
}

/// A path as text: as it is when it is UTF-8, else with each byte that is
/// not UTF-8 written `\xHH`. Unlike a lossy conversion (U+FFFD), two names
/// that differ only in such bytes (`x\xff.jsonl`, `x\xfe.jsonl`) keep
/// different labels, so `--group-by file` and messages tell them apart.
pub fn path_label(path: &Path) -> Arc<str> {
    if let Some(text) = path.to_str() {
        return text.into();
    }
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.into()
}

/// Expands the command-line inputs into the streams to read, in order:
/// files and `-` as given, directories walked recursively in sorted order
/// ([`trace_extensions`]; hidden entries skipped; each
/// directory entered once, so symlink loops end). A file named twice, or
/// named and found in a folder also named, is read once: see
/// [`expand_once`] for the notes that say so.
pub fn expand(specs: &[InputSpec]) -> Vec<Result<InputSpec, OpenError>> {
    expand_once(specs).inputs
}

/// The inputs to read, and a note for each file left out because it was
/// already listed (the same device and inode, symlinks followed).
pub struct Expanded {
    pub inputs: Vec<Result<InputSpec, OpenError>>,
    pub repeated: Vec<String>,
}

/// [`expand`], with the notes on repeated files.
pub fn expand_once(specs: &[InputSpec]) -> Expanded {
    let mut listed = Vec::new();
    let mut seen = HashSet::<DirId>::new();
    // The folders named so far, by identity: a folder named again, or
    // one inside a folder already walked (`analyze runs runs/extra`, a
    // shell glob's `d d`), was read with it, not found empty.
    let mut named = Vec::<(DirId, Arc<str>)>::new();
    let mut repeated_dirs = Vec::new();
    for spec in specs {
        match spec {
            InputSpec::Path(p) if p.is_dir() => {
                if let Some(id) = dir_id(p).ok().filter(|id| seen.contains(id)) {
                    let label = spec.label();
                    repeated_dirs.push(match named.iter().find(|(n, _)| *n == id) {
                        Some((_, earlier)) if *earlier == label => {
                            format!("{label}: given more than once, read once")
                        }
                        Some((_, earlier)) => {
                            format!("{label}: the same folder as {earlier}, read once")
                        }
                        None => format!("{label}: inside a folder already named, read once"),
                    });
                    continue;
                }
                if let Ok(id) = dir_id(p) {
                    named.push((id, spec.label()));
                }
                let before = listed.len();
                walk(p, &mut seen, &mut listed);
                if listed.len() == before {
                    listed.push(Err(OpenError {
                        label: spec.label(),
                        reason: format!(
                            "no trace files ({}) in this directory",
                            trace_extensions()
                                .map(|e| format!("*.{e}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    }));
                }
            }
            other => listed.push(Ok(other.clone())),
        }
    }
    let mut expanded = once_each(listed);
    expanded.repeated.extend(repeated_dirs);
    expanded
}

/// Leaves out every regular file already listed (by its identity, so a
/// second spelling or a symlink is the same file), with a note for each.
fn once_each(listed: Vec<Result<InputSpec, OpenError>>) -> Expanded {
    let mut first = std::collections::HashMap::<DirId, Arc<str>>::new();
    let mut inputs = Vec::with_capacity(listed.len());
    let mut repeated = Vec::new();
    for item in listed {
        if let Ok(spec @ InputSpec::Path(path)) = &item {
            let id = fs::metadata(path)
                .ok()
                .filter(fs::Metadata::is_file)
                .and_then(|_| dir_id(path).ok());
            if let Some(id) = id {
                match first.get(&id) {
                    Some(earlier) => {
                        let label = spec.label();
                        repeated.push(if *earlier == label {
                            format!("{label}: given more than once, read once")
                        } else {
                            format!("{label}: the same file as {earlier}, read once")
                        });
                        continue;
                    }
                    None => {
                        first.insert(id, spec.label());
                    }
                }
            }
        }
        inputs.push(item);
    }
    Expanded { inputs, repeated }
}

fn walk(dir: &Path, seen: &mut HashSet<DirId>, out: &mut Vec<Result<InputSpec, OpenError>>) {
    let label = || path_label(dir);
    match dir_id(dir) {
        Ok(id) => {
            if !seen.insert(id) {
                return;
            }
        }
        Err(e) => {
            out.push(Err(OpenError {
                label: label(),
                reason: describe_io(&e),
            }));
            return;
        }
    }
    let entries = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            out.push(Err(OpenError {
                label: label(),
                reason: describe_io(&e),
            }));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    // The SDK's folder of one file per event is one conversation: the
    // folder is one input, its event files not inputs of their own.
    let events = openhands_v1::folder::event_files(&paths);
    if !events.is_empty() {
        out.push(Ok(InputSpec::Path(dir.to_path_buf())));
        // A set: a folder of 30 000 event files compared each path with
        // every event file (37 s).
        let events: HashSet<PathBuf> = events.into_iter().collect();
        paths.retain(|p| !events.contains(p));
    }
    for path in paths {
        // Followed through symlinks: a link to a folder is walked, a link
        // to a device is a device.
        let Ok(meta) = fs::metadata(&path) else {
            if has_trace_extension(&path) {
                out.push(Ok(InputSpec::Path(path)));
            }
            continue;
        };
        if meta.is_dir() {
            walk(&path, seen, out);
        } else if meta.is_file() {
            if has_trace_extension(&path) {
                out.push(Ok(InputSpec::Path(path)));
            }
        } else if has_trace_extension(&path) {
            // A FIFO, device or socket may never end (a `*.jsonl` link to
            // /dev/zero, a FIFO nobody writes to): named on the command
            // line it is read, found in a folder it is not.
            out.push(Err(OpenError {
                label: path.display().to_string().into(),
                reason: format!(
                    "{}, not a regular file: not read in a folder scan (name it on the command line to read it)",
                    special_kind(&meta)
                ),
            }));
        }
    }
}

/// A directory's (or file's) identity, so each is entered once (symlink
/// loops end): device and inode where there are such, else the canonical
/// path. One `stat` per directory, where canonicalising cost one per path
/// component.
#[cfg(unix)]
type DirId = (u64, u64);
#[cfg(not(unix))]
type DirId = PathBuf;

#[cfg(unix)]
fn dir_id(dir: &Path) -> io::Result<DirId> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> io::Result<DirId> {
    fs::canonicalize(dir)
}

/// What kind of special file `meta` describes, for the message.
fn special_kind(meta: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        } else if t.is_char_device() || t.is_block_device() {
            return "a device";
        } else if t.is_socket() {
            return "a socket";
        }
    }
    let _ = meta;
    "a special file"
}

fn has_trace_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| trace_extensions().any(|t| t.eq_ignore_ascii_case(e)))
}

/// The bytes `inputs` hold on disk, when every one is a regular file (the
/// size of stdin, a FIFO or a device is not known): the total a progress display counts towards.
pub fn total_bytes(inputs: &[Result<InputSpec, OpenError>]) -> Option<u64> {
    inputs.iter().try_fold(0u64, |sum, spec| match spec {
        // A FIFO or device reports size 0: its size is unknown, not empty.
        Ok(InputSpec::Path(p)) => fs::metadata(p)
            .ok()
            .filter(fs::Metadata::is_file)
            .map(|m| sum + m.len()),
        Ok(InputSpec::Stdin) => None,
        Err(_) => Some(sum),
    })
}

/// Adds the bytes read through it to a shared count.
struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// How an input is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// From the magic bytes only: a name can lie (plain JSONL called
    /// `.gz`, zstd data called `.jsonl`), the content cannot.
    fn detect(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// Names the compressed stream in read errors ("truncated or corrupt gzip
/// stream: …"), so a cut-off download is recognisable as such.
struct Labelled<R> {
    inner: R,
    what: &'static str,
}

impl<R: Read> Read for Labelled<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let kind = if e.kind() == io::ErrorKind::Interrupted {
                io::ErrorKind::Other
            } else {
                e.kind()
            };
            io::Error::new(
                kind,
                format!("truncated or corrupt {} stream: {e}", self.what),
            )
        })
    }
}

type Stream = Box<dyn BufRead + Send>;

/// Opens one input as a stream of records.
pub fn open_records(
    spec: &InputSpec,
    opts: &ReadOptions,
) -> Result<Box<dyn Iterator<Item = Record> + Send>, OpenError> {
    let label = spec.label();
    let raw: Box<dyn Read + Send> = match spec {
        InputSpec::Stdin => Box::new(io::stdin()),
        InputSpec::Path(path) if path.is_dir() && openhands_v1::folder::is_event_folder(path) => {
            let lines =
                openhands_v1::folder::open(path, opts.max_line_bytes).map_err(|e| OpenError {
                    label: label.clone(),
                    reason: describe_io(&e),
                })?;
            let problems = lines.problems();
            let records = open_stream(Box::new(lines), label.clone(), opts)?;
            return Ok(Box::new(WithProblems {
                inner: records,
                problems,
                label,
                done: false,
            }));
        }
        InputSpec::Path(path) => {
            let file = open_file(path, &label)?;
            let mapped = MappedFile::open(&file, opts.bytes_read.clone())
                .filter(|m| is_plain_jsonl(m.text(), opts.max_line_bytes));
            if let Some(mapped) = mapped {
                return open_buffered(Box::new(mapped), label, opts);
            }
            Box::new(file)
        }
    };
    open_stream(raw, label, opts)
}

/// An event folder's records, with a bad line for each event file that
/// could not be read, handed on as they are met.
struct WithProblems {
    inner: Box<dyn Iterator<Item = Record> + Send>,
    problems: openhands_v1::folder::Problems,
    label: Arc<str>,
    done: bool,
}

impl WithProblems {
    fn next_problem(&mut self) -> Option<Record> {
        let mut problems = self.problems.lock().ok()?;
        if problems.is_empty() {
            return None;
        }
        let (line, reason) = problems.remove(0);
        Some(Record::Bad(BadLine {
            origin: Origin {
                file: self.label.clone(),
                line,
            },
            reason,
        }))
    }
}

impl Iterator for WithProblems {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if let Some(problem) = self.next_problem() {
            return Some(problem);
        }
        if !self.done {
            match self.inner.next() {
                Some(record) => return Some(record),
                None => self.done = true,
            }
        }
        self.next_problem()
    }
}

/// The files an input reads: the file itself, or an event folder's event
/// files (so `-o` naming one of them is refused).
pub fn files_read(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        openhands_v1::folder::files_of(path)
    } else {
        vec![path.to_path_buf()]
    }
}

/// Whether a mapped file is read through its map ([`MappedFile`]): a JSONL
/// file, neither compressed nor an archive, of at least
/// [`MIN_MAPPED_BYTES`]. Such files are appended to, not rewritten; a file
/// truncated while it is mapped would fault, so JSON documents (a task log
/// is rewritten in place as its run goes on) are read with `read`, where a
/// truncation shows as a parse error.
fn is_plain_jsonl(text: &[u8], max_line_bytes: usize) -> bool {
    if text.len() < MIN_MAPPED_BYTES
        || Compression::detect(text) != Compression::None
        || text.starts_with(ZIP_MAGIC)
    {
        return false;
    }
    let mut rest = &text[..text.len().min(max_line_bytes.saturating_add(1))];
    loop {
        let Some(end) = memchr::memchr(b'\n', rest) else {
            // No whole first line within the cap: leave it to `read`.
            return false;
        };
        let line = &rest[..end];
        if !line.trim_ascii().is_empty() {
            return layout_of(line) == Layout::Lines;
        }
        rest = &rest[end + 1..];
    }
}

/// Smaller files are read with `read`: mapping them gains nothing measurable.
const MIN_MAPPED_BYTES: usize = 1 << 20;

/// Reads any byte stream as an input: decompression, archives, layout and
/// format detection, as for a file (all from the content: a file's name
/// plays no part).
pub fn open_stream(
    mut raw: Box<dyn Read + Send>,
    label: Arc<str>,
    opts: &ReadOptions,
) -> Result<Box<dyn Iterator<Item = Record> + Send>, OpenError> {
    if let Some(count) = &opts.bytes_read {
        raw = Box::new(Counted {
            inner: raw,
            count: count.clone(),
        });
    }
    open_buffered(
        Box::new(BufReader::with_capacity(BUF_BYTES, raw)),
        label,
        opts,
    )
}

/// [`open_stream`] once the bytes are buffered (and counted): a mapped
/// file is its own buffer.
fn open_buffered(
    buffered: Stream,
    label: Arc<str>,
    opts: &ReadOptions,
) -> Result<Box<dyn Iterator<Item = Record> + Send>, OpenError> {
    let stream = decompressed(buffered, &label)?;
    Ok(Box::new(Accounted::new(
        records_of(stream, label.clone(), opts),
        label,
    )))
}

/// A file's text, decompressed (gzip, zstd) when its content says so:
/// for a reader that looks at its lines before the run (the recordings a
/// task log is joined with, `read::join`).
pub fn open_text(spec: &InputSpec) -> Result<Box<dyn BufRead + Send>, OpenError> {
    let label = spec.label();
    let InputSpec::Path(path) = spec else {
        return Err(OpenError {
            label,
            reason: "stdin is read once, in its turn".into(),
        });
    };
    let file = open_file(path, &label)?;
    decompressed(Box::new(BufReader::with_capacity(BUF_BYTES, file)), &label)
}

/// The stream decompressed, when its magic bytes say it is compressed.
fn decompressed(mut buffered: Stream, label: &Arc<str>) -> Result<Stream, OpenError> {
    let head = match buffered.fill_buf() {
        Ok(h) => h,
        Err(e) => {
            return Err(OpenError {
                label: label.clone(),
                reason: describe_io(&e),
            })
        }
    };
    let compression = Compression::detect(head);
    Ok(match compression {
        Compression::None => buffered,
        Compression::Gzip => Box::new(BufReader::with_capacity(
            BUF_BYTES,
            Labelled {
                inner: flate2::bufread::MultiGzDecoder::new(buffered),
                what: compression.name(),
            },
        )),
        Compression::Zstd => match zstd::stream::read::Decoder::with_buffer(buffered) {
            Ok(d) => Box::new(BufReader::with_capacity(
                BUF_BYTES,
                Labelled {
                    inner: d,
                    what: compression.name(),
                },
            )),
            Err(e) => {
                return Err(OpenError {
                    label: label.clone(),
                    reason: format!("cannot start zstd decompression: {e}"),
                })
            }
        },
    })
}

/// Makes sure an input that yields no attempt never passes silently: when
/// it ends having yielded neither an attempt nor a problem, one problem
/// says so (an empty file, a conversation with no LLM response, a task
/// log with no step). Every trace read passes through it, and gets its
/// models here ([`attribution::settle`]).
struct Accounted {
    inner: Box<dyn Iterator<Item = Record> + Send>,
    file: Arc<str>,
    traces: u64,
    /// An attempt or a problem was yielded.
    spoke: bool,
    done: bool,
}

impl Accounted {
    fn new(inner: Box<dyn Iterator<Item = Record> + Send>, file: Arc<str>) -> Accounted {
        Accounted {
            inner,
            file,
            traces: 0,
            spoke: false,
            done: false,
        }
    }
}

impl Iterator for Accounted {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if self.done {
            return None;
        }
        match self.inner.next() {
            Some(record) => {
                let mut record = record;
                match &mut record {
                    Record::Trace(t) => {
                        self.traces += 1;
                        self.spoke |= !t.attempts.is_empty();
                        // Every input's traces pass here: each attempt
                        // gets its model, whatever the format.
                        attribution::settle(t);
                    }
                    _ => self.spoke = true,
                }
                Some(record)
            }
            None => {
                self.done = true;
                (!self.spoke).then(|| {
                    Record::NoAttempt(NoAttempt {
                        file: self.file.clone(),
                        traces: self.traces,
                    })
                })
            }
        }
    }
}

/// Which reader an input's content goes to, decided from its first bytes
/// and first non-blank line (kept in `head` for the reader).
enum Route {
    /// A ZIP archive (an Inspect `.eval`): nothing read yet.
    Archive,
    /// Not text, or cut before its first line ended: this record says why.
    Failed(ReadError),
    /// JSONL whose lines make traces only together (a session, spans).
    WholeLines(Kind),
    /// JSONL of trace lines, read line by line.
    Lines,
    /// One JSON document, after the lines of text reported before it.
    Document(Vec<BadLine>),
}

fn route(stream: &mut Stream, head: &mut Vec<u8>, label: &Arc<str>, opts: &ReadOptions) -> Route {
    match stream.fill_buf() {
        Ok(h) if h.starts_with(ZIP_MAGIC) => return Route::Archive,
        Ok(h) => {
            if let Some(reason) = binary::binary_head(h) {
                return Route::Failed(ReadError::Unreadable {
                    file: label.clone(),
                    cause: reason,
                });
            }
        }
        _ => {}
    }
    let first = match first_line(stream, head, opts.max_line_bytes) {
        Ok(range) => range,
        Err(e) => {
            let lines = head.iter().filter(|&&b| b == b'\n').count();
            return Route::Failed(ReadError::Cut {
                file: label.clone(),
                lines: lines as u64,
                cause: e.to_string(),
            });
        }
    };
    // Lines of text before a document (`Running tau2 …` printed above the
    // results) cost their lines, not the document.
    let (first, banners) = match first {
        Some(r) if head.len() <= opts.max_line_bytes => {
            skip_banners(stream, head, r, opts.max_line_bytes, label)
        }
        other => (other, Vec::new()),
    };
    match route_from(stream, head, first, opts) {
        // Banners are reported only before a document.
        Route::Document(_) => Route::Document(banners),
        route => route,
    }
}

/// Whether a line is text, not JSON (nor the start of a JSON document).
fn is_text_line(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii();
    let trimmed = trimmed.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(trimmed);
    !trimmed.is_empty() && !matches!(trimmed.first(), Some(b'{' | b'[' | b'"'))
}

/// Lines of text read past before a document opens.
const MAX_BANNER_LINES: usize = 16;

/// When the first line (`first` in `head`) and up to
/// [`MAX_BANNER_LINES`] after it are text and the next line opens a JSON
/// document, those lines are blanked in `head` (so the document's lines
/// keep their numbers) and reported: the document's first line and the
/// reports. Otherwise nothing changes (the lines read stay in `head`).
fn skip_banners(
    stream: &mut Stream,
    head: &mut Vec<u8>,
    first: std::ops::Range<usize>,
    max: usize,
    label: &Arc<str>,
) -> (Option<std::ops::Range<usize>>, Vec<BadLine>) {
    let mut text_lines = Vec::new();
    let mut line = first;
    while is_text_line(&head[line.clone()]) && text_lines.len() < MAX_BANNER_LINES {
        text_lines.push(line.clone());
        match first_line(stream, head, max) {
            Ok(Some(next)) if head.len() <= max => line = next,
            _ => return (Some(text_lines[0].clone()), Vec::new()),
        }
    }
    if text_lines.is_empty() || layout_of(&head[line.clone()]) != Layout::Document {
        let first = text_lines.first().cloned().unwrap_or(line);
        return (Some(first), Vec::new());
    }
    let mut reports = Vec::with_capacity(text_lines.len());
    for range in text_lines {
        let number = 1 + head[..range.start].iter().filter(|&&b| b == b'\n').count() as u64;
        reports.push(BadLine {
            origin: Origin {
                file: label.clone(),
                line: number,
            },
            reason: "not JSON: a line of text before a JSON document, skipped".into(),
        });
        for b in &mut head[range] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    (Some(line), reports)
}

/// [`route`] once the first line (`first` in `head`) is read.
fn route_from(
    stream: &mut Stream,
    head: &mut Vec<u8>,
    first: Option<std::ops::Range<usize>>,
    opts: &ReadOptions,
) -> Route {
    // A first line cut by the length cap says nothing of the layout: the
    // line reader reports it as too long and reads on.
    let layout = match first.clone() {
        Some(r) if head.len() <= opts.max_line_bytes => layout_of(&head[r]),
        _ => Layout::Lines,
    };
    // Session and span files are JSONL whose lines make traces only
    // together. Their kind is the first record's; a first line of no kind
    // (an event of a kind not known yet, a line cut short) costs that
    // line, not the file: the next lines are looked at for the kind.
    let whole_kind = match opts.format.forced_kind() {
        Some(kind) => Some(kind).filter(|k| k.reads_whole_file()),
        None if layout == Layout::Lines => {
            let kind_of = |line: &[u8]| {
                std::str::from_utf8(line)
                    .ok()
                    .map(str::trim)
                    .and_then(|line| parse_json(line).ok())
                    .and_then(|v| v.as_object().and_then(classify))
            };
            match first.clone().map(|r| kind_of(&head[r])) {
                Some(Some(kind)) => Some(kind),
                Some(None) => lookahead_kind(stream, head, kind_of),
                None => None,
            }
            .filter(|k| k.reads_whole_file())
        }
        None => None,
    };
    match (whole_kind, layout) {
        (Some(kind), Layout::Lines) => Route::WholeLines(kind),
        (_, Layout::Lines) => Route::Lines,
        (_, Layout::Document) => Route::Document(Vec::new()),
    }
}

/// Reads the first non-blank line to choose the layout, then hands the
/// whole stream (that line included) to the matching reader.
fn records_of(
    mut stream: Stream,
    label: Arc<str>,
    opts: &ReadOptions,
) -> Box<dyn Iterator<Item = Record> + Send> {
    let mut head = Vec::new();
    let route = route(&mut stream, &mut head, &label, opts);
    let whole: Stream = Box::new(Cursor::new(head).chain(stream));
    match route {
        Route::Archive => archive_records(whole, label, opts),
        Route::Failed(e) => Box::new(std::iter::once(Record::Failed(e))),
        Route::WholeLines(kind) => Box::new(
            WholeLinesReader::new(whole, label, opts.max_line_bytes, kind, &opts.gathering())
                .forced(opts.format.forced_kind().is_some()),
        ),
        Route::Lines => Box::new(
            TraceReader::with_format(whole, label, opts.max_line_bytes, opts.format)
                .keep_meta(opts.keep_meta),
        ),
        Route::Document(banners) => Box::new(
            banners.into_iter().map(Record::Bad).chain(
                DocumentReader::new(whole, label, opts.max_line_bytes, opts.format)
                    .gathering(opts.gathering()),
            ),
        ),
    }
}

/// How an input is read, for a job that spreads inputs over machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// JSONL of trace lines that the line reader reads one by one: its
    /// traces may be read apart, each whole and in order.
    Lines,
    /// Everything else, read as one: a JSON document, an archive, a session
    /// or span file, a folder of events, an input with no line, or one that
    /// cannot be opened or read (reading it says why).
    Whole,
}

/// How `spec` is read: the choice [`open_records`] makes, from the same
/// content (decompressed, the first non-blank line sniffed), without
/// reading further.
pub fn reading_of(spec: &InputSpec, opts: &ReadOptions) -> Reading {
    let InputSpec::Path(path) = spec else {
        return Reading::Lines;
    };
    let label = spec.label();
    let Ok(file) = open_file(path, &label) else {
        return Reading::Whole;
    };
    let buffered: Stream = Box::new(BufReader::with_capacity(BUF_BYTES, file));
    let Ok(mut stream) = decompressed(buffered, &label) else {
        return Reading::Whole;
    };
    let mut head = Vec::new();
    match route(&mut stream, &mut head, &label, opts) {
        // Blank or empty: no line to cut, and the whole input says so.
        Route::Lines if !head.trim_ascii().is_empty() => Reading::Lines,
        _ => Reading::Whole,
    }
}

/// An Inspect `.eval` archive (or another ZIP, reported as such): its
/// compressed bytes held, its samples unpacked and converted one at a
/// time (a few at once with more threads).
fn archive_records(
    stream: Stream,
    label: Arc<str>,
    opts: &ReadOptions,
) -> Box<dyn Iterator<Item = Record> + Send> {
    let failed = |reason: String| -> Box<dyn Iterator<Item = Record> + Send> {
        Box::new(std::iter::once(Record::Failed(ReadError::Unreadable {
            file: label.clone(),
            cause: reason,
        })))
    };
    if let Some(kind) = opts.format.forced_kind().filter(|k| *k != INSPECT) {
        return failed(format!(
            "a ZIP archive, not {} (--input-format {})",
            kind.describe(),
            kind.name
        ));
    }
    let mut bytes = Vec::new();
    let cap = opts.max_line_bytes as u64;
    if let Err(e) = stream.take(cap + 1).read_to_end(&mut bytes) {
        return failed(format!("read error: {e}"));
    }
    if bytes.len() as u64 > cap {
        return failed(format!(
            "archive longer than {cap} bytes (raise it with --max-line-bytes)"
        ));
    }
    let archive = match Archive::open(bytes.into(), &label, opts.max_line_bytes) {
        Ok(a) => a,
        Err(e) => return failed(e.to_string()),
    };
    Box::new(
        archive
            .samples(opts.threads)
            .map(move |(entry, trace)| match trace {
                Ok(t) => Record::Trace(t),
                Err(reason) => Record::Bad(BadLine {
                    origin: Origin {
                        file: label.clone(),
                        line: 1,
                    },
                    reason: format!("{entry}: {reason}"),
                }),
            }),
    )
}

/// Lines, and bytes, read past a first line of no kind to find the kind
/// of a session or span file ([`records_of`]).
const LOOKAHEAD_LINES: usize = 16;
const LOOKAHEAD_BYTES: usize = 1 << 20;

/// The kind of the first of the next lines that has one, those lines
/// appended to `head` (read on from there): at most [`LOOKAHEAD_LINES`]
/// lines and [`LOOKAHEAD_BYTES`] bytes, a longer line looked at no further.
fn lookahead_kind(
    stream: &mut Stream,
    head: &mut Vec<u8>,
    kind_of: impl Fn(&[u8]) -> Option<Kind>,
) -> Option<Kind> {
    let budget = head.len().saturating_add(LOOKAHEAD_BYTES);
    for _ in 0..LOOKAHEAD_LINES {
        let start = head.len();
        let limit = budget.saturating_sub(start) as u64;
        match stream.by_ref().take(limit).read_until(b'\n', head) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        if !head.ends_with(b"\n") {
            // Cut by the budget, or the end of the input.
            return None;
        }
        if let Some(kind) = kind_of(&head[start..]) {
            return Some(kind);
        }
    }
    None
}

/// Reads lines into `head` until one is not blank (or `max` bytes are read);
/// returns that line's byte range.
fn first_line(
    stream: &mut Stream,
    head: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<std::ops::Range<usize>>> {
    loop {
        let start = head.len();
        let limit = (max.saturating_add(1)).saturating_sub(start) as u64;
        let n = stream.by_ref().take(limit).read_until(b'\n', head)?;
        if n == 0 {
            return Ok(None);
        }
        let line = &head[start..];
        if !line.iter().all(u8::is_ascii_whitespace) || head.len() > max {
            return Ok(Some(start..head.len()));
        }
    }
}

fn open_file(path: &Path, label: &Arc<str>) -> Result<File, OpenError> {
    let err = |reason: String| OpenError {
        label: label.clone(),
        reason,
    };
    if path.is_dir() {
        return Err(err("is a directory".into()));
    }
    File::open(path).map_err(|e| err(describe_io(&e)))
}

/// A short, actionable description of an I/O error.
pub fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => {
            "permission denied (check the file's read permission)".into()
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_jsonl_files_are_read_through_a_map() {
        let line = b"{\"trace_id\": \"t\", \"content\": \"x\"}\n";
        let jsonl: Vec<u8> = line.repeat(MIN_MAPPED_BYTES / line.len() + 1);
        assert!(is_plain_jsonl(&jsonl, DEFAULT_MAX_LINE_BYTES));
        // Blank lines and a byte-order mark before the first line.
        let lead = [&b"\n \r\n\xEF\xBB\xBF"[..], &jsonl].concat();
        assert!(is_plain_jsonl(&lead, DEFAULT_MAX_LINE_BYTES));
        // Too small, a document, compressed, an archive, a first line past the cap.
        assert!(!is_plain_jsonl(line, DEFAULT_MAX_LINE_BYTES));
        let document = [&b"{\n  \"steps\": [\n"[..], &jsonl].concat();
        assert!(!is_plain_jsonl(&document, DEFAULT_MAX_LINE_BYTES));
        for magic in [&[0x1f, 0x8b, 8][..], &[0x28, 0xb5, 0x2f, 0xfd], ZIP_MAGIC] {
            assert!(!is_plain_jsonl(
                &[magic, &jsonl].concat(),
                DEFAULT_MAX_LINE_BYTES
            ));
        }
        assert!(!is_plain_jsonl(&jsonl, 10));
    }

    #[test]
    fn reading_of_is_the_choice_open_records_makes() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("mirotrace-reading-of-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("temp dir");
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            fs::write(&path, bytes).expect("write");
            InputSpec::Path(path)
        };
        let auto = ReadOptions::default();
        let line = b"{\"trace_id\": \"a\", \"content\": \"x\"}\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(line).expect("gzip");
        let gz = gz.finish().expect("gzip");
        let zst = zstd::encode_all(&line[..], 1).expect("zstd");
        for (name, bytes) in [
            ("a.jsonl", &line[..]),
            ("lead.jsonl", &[&b"\n  \n"[..], line].concat()[..]),
            ("a.jsonl.gz", &gz[..]),
            ("a.jsonl.zst", &zst[..]),
        ] {
            assert_eq!(
                reading_of(&write(name, bytes), &auto),
                Reading::Lines,
                "{name}"
            );
        }
        for (name, bytes) in [
            ("doc.json", &b"{\n  \"steps\": []\n}\n"[..]),
            ("empty.jsonl", b""),
            ("blank.jsonl", b"\n \r\n"),
            ("zip.eval", b"PK\x03\x04rest"),
            ("binary.jsonl", b"\x00\x01\x02\x03 not text"),
        ] {
            assert_eq!(
                reading_of(&write(name, bytes), &auto),
                Reading::Whole,
                "{name}"
            );
        }
        // A format forced to one read whole, a folder, a missing file.
        let forced = ReadOptions {
            format: InputFormat::ClaudeCode,
            ..ReadOptions::default()
        };
        assert_eq!(reading_of(&write("s.jsonl", line), &forced), Reading::Whole);
        assert_eq!(
            reading_of(&InputSpec::Path(dir.clone()), &auto),
            Reading::Whole
        );
        let missing = InputSpec::Path(dir.join("missing.jsonl"));
        assert_eq!(reading_of(&missing, &auto), Reading::Whole);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn compression_is_sniffed_from_the_content_only() {
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8]), Compression::Gzip);
        assert_eq!(
            Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd]),
            Compression::Zstd
        );
        assert_eq!(Compression::detect(b"{"), Compression::None);
    }

    #[test]
    fn the_first_line_read_is_kept_for_the_reader() {
        let mut s: Stream = Box::new(Cursor::new(b"\n  \n{\"trace_id\": \"a\"}\nrest\n".to_vec()));
        let mut head = Vec::new();
        let r = first_line(&mut s, &mut head, 1000).unwrap().unwrap();
        assert_eq!(&head[r], b"{\"trace_id\": \"a\"}\n");
        let mut rest = String::new();
        s.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "rest\n");
    }
}
