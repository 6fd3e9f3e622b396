//! Where results go: stdout, or a file written atomically (a temporary file
//! beside it, renamed into place only when complete), and whether they are
//! coloured, decided from that destination. Only a regular file (or a new
//! path) is replaced that way: a device, FIFO or socket (`-o /dev/null`)
//! is written into as a shell's `>` would, never renamed over, and a
//! symlink is followed to the file it names. [`refuse_inputs`] keeps `-o`
//! from naming one of the inputs (docs/limits.md, "Robustness").

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The longest file name (in bytes) most file systems take (`NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Temporary files not yet renamed into place or removed, so a signal
/// handler can remove them before the process exits ([`remove_temporaries`]).
static TEMPORARIES: Mutex<Temporaries> = Mutex::new(Temporaries {
    closing: false,
    live: None,
});

struct Temporaries {
    /// [`remove_temporaries`] ran: the process is exiting, no temporary
    /// file may be created any more (another thread may still try).
    closing: bool,
    live: Option<HashSet<PathBuf>>,
}

fn temporaries() -> std::sync::MutexGuard<'static, Temporaries> {
    TEMPORARIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates a temporary file and lists it, as one step under the list's
/// lock: the signal handler removes either nothing of it (it does not
/// exist yet, and will not be created: `closing`) or the file.
fn create_tracked(tmp: &Path) -> io::Result<File> {
    let mut temporaries = temporaries();
    if temporaries.closing {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "interrupted: the run is ending",
        ));
    }
    let file = File::create(tmp)?;
    temporaries
        .live
        .get_or_insert_with(HashSet::new)
        .insert(tmp.to_path_buf());
    Ok(file)
}

fn untrack(tmp: &Path) {
    if let Some(set) = temporaries().live.as_mut() {
        set.remove(tmp);
    }
}

/// Removes every temporary file this process still has open (called on
/// SIGINT, SIGTERM and SIGHUP, just before exiting: nothing half-written
/// stays behind), and lets no other thread create one from now on.
pub fn remove_temporaries() {
    let mut temporaries = temporaries();
    temporaries.closing = true;
    for tmp in temporaries.live.take().into_iter().flatten() {
        let _ = std::fs::remove_file(tmp);
    }
}

/// FNV-1a, 64 bits: a short, stable fingerprint for names that had to be
/// shortened (stable across versions and platforms, unlike `std`'s hasher).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The longest prefix of `s` of at most `max` bytes that ends on a
/// character boundary.
pub fn cut_at(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The temporary name beside `name`: `.NAME.mirotrace-PID.tmp`, or, when
/// that would pass [`NAME_MAX`], `NAME` cut short and followed by `~` and
/// a fingerprint of the whole name (so two long names never share one).
fn temporary_name(name: &str, pid: u32) -> String {
    let suffix = format!(".mirotrace-{pid}.tmp");
    if 1 + name.len() + suffix.len() <= NAME_MAX {
        return format!(".{name}{suffix}");
    }
    let mark = format!("~{:016x}", fingerprint(name.as_bytes()));
    let room = NAME_MAX - 1 - suffix.len() - mark.len();
    format!(".{}{mark}{suffix}", cut_at(name, room))
}

use crate::render::TableStyle;

/// `--color`: whether tables are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Only on a terminal, and not when `NO_COLOR` is set (no-color.org).
    #[default]
    Auto,
    Always,
    Never,
}

/// Used when a terminal reports no size (or 0×0, as some do under
/// emulators and containers).
pub const FALLBACK_WIDTH: usize = 100;

/// Narrower than this, nothing is readable: `COLUMNS=5` is treated as this.
pub const MIN_WIDTH: usize = 40;

/// `--wide`: tables at their natural width, every column shown.
static WIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks for `--wide` drawing: from now on [`Output::width`] is `None`
/// (set once by the binary, from the command line).
pub fn draw_wide() {
    WIDE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The width of stdout, decided once for tables, the headline and `--help`:
/// a terminal's own size, else `COLUMNS`, else [`FALLBACK_WIDTH`]; piped,
/// `COLUMNS` when set (so `COLUMNS=80 mirotrace … | less` fits), else
/// `None` (no limit).
pub fn terminal_width(is_terminal: bool) -> Option<usize> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&w| w > 0);
    let measured = if is_terminal {
        terminal_size::terminal_size_of(io::stdout())
            .map(|(w, _)| usize::from(w.0))
            .filter(|&w| w > 0)
    } else {
        None
    };
    let width = match (measured, columns) {
        (Some(w), _) | (None, Some(w)) => Some(w),
        (None, None) if is_terminal => Some(FALLBACK_WIDTH),
        (None, None) => None,
    };
    width.map(|w| w.max(MIN_WIDTH))
}

/// A buffered destination for a command's output. Dropped without
/// [`Output::finish`], a file is abandoned (never half-written in place);
/// what was written to stdout stays.
pub struct Output {
    writer: BufWriter<Box<dyn Write + Send>>,
    /// For `-o FILE`: (temporary path, final path).
    atomic: Option<(PathBuf, PathBuf)>,
    /// `-o` names a device, FIFO or socket, written into directly.
    special: bool,
}

/// Opening or finishing an output failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write {path}: {reason}")]
    Open { path: String, reason: String },
    #[error("writing output failed: {0}")]
    Write(#[from] io::Error),
    /// `-o` names a file the command reads: writing would destroy it.
    #[error("refusing to write {output}: it is the input {input} (choose another -o path)")]
    IsAnInput { output: String, input: String },
    /// A file already in an output folder that this run did not write
    /// (`export -o DIR/`): never overwritten.
    #[error("refusing to overwrite {path}: it was already there, not written by this run (remove it or export into another folder)")]
    Exists { path: String },
}

/// What `-o PATH` names, decided before anything is written.
enum Destination {
    /// A new path, or a regular file: written beside it and renamed into
    /// place (the path given, or the file a symlink names).
    Replace(PathBuf),
    /// A device, FIFO or socket: opened and written into, as `>` does.
    Into,
}

fn destination(path: &Path) -> Result<Destination, OutputError> {
    let open_error = |reason: String| OutputError::Open {
        path: crate::read::source::path_label(path).to_string(),
        reason,
    };
    let Ok(link) = std::fs::symlink_metadata(path) else {
        return Ok(Destination::Replace(path.to_path_buf()));
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(open_error("it is a directory".into())),
        Ok(m) if m.is_file() && link.file_type().is_symlink() => {
            // Rename over the file the link names, keeping the link.
            std::fs::canonicalize(path)
                .map(Destination::Replace)
                .map_err(|e| open_error(e.to_string()))
        }
        Ok(m) if m.is_file() => Ok(Destination::Replace(path.to_path_buf())),
        Ok(_) => Ok(Destination::Into),
        // A dangling symlink: created through, as `>` would.
        Err(_) => Ok(Destination::Into),
    }
}

/// The identity of an existing regular file (device and inode), so two
/// spellings of one file (`x`, `./x`, `d/../x`, a symlink, a hard link)
/// are known as one.
#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    let canonical = std::fs::canonicalize(path).ok()?;
    m.is_file()
        .then(|| (0, fingerprint(canonical.as_os_str().as_encoded_bytes())))
}

/// Refuses an `-o` path that is one of `inputs` (the same regular file,
/// however spelled), before anything is read or written. Devices and
/// FIFOs are never refused: writing into them destroys nothing.
pub fn refuse_inputs<'a>(
    output: &Path,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), OutputError> {
    let Some(out) = file_id(output) else {
        return Ok(());
    };
    for input in inputs {
        if file_id(input) == Some(out) {
            return Err(OutputError::IsAnInput {
                output: crate::read::source::path_label(output).to_string(),
                input: crate::read::source::path_label(input).to_string(),
            });
        }
    }
    Ok(())
}

impl Output {
    /// `None` → stdout; `Some(path)` → that file, atomically.
    pub fn open(path: Option<&Path>) -> Result<Output, OutputError> {
        match path {
            None => Ok(Output {
                writer: BufWriter::with_capacity(1 << 16, Box::new(io::stdout())),
                atomic: None,
                special: false,
            }),
            Some(given) => {
                let path = match destination(given)? {
                    Destination::Replace(path) => path,
                    Destination::Into => return Output::into_special(given),
                };
                let path = path.as_path();
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let tmp = dir.join(temporary_name(&name, std::process::id()));
                let file = create_tracked(&tmp).map_err(|e| OutputError::Open {
                    path: path.display().to_string(),
                    reason: if e.kind() == io::ErrorKind::NotFound {
                        format!("the directory {} does not exist", dir.display())
                    } else {
                        e.to_string()
                    },
                });
                let file = file?;
                Ok(Output {
                    writer: BufWriter::with_capacity(1 << 16, Box::new(file)),
                    atomic: Some((tmp, path.to_path_buf())),
                    special: false,
                })
            }
        }
    }

    /// A device, FIFO or socket (or a dangling symlink): opened for writing
    /// as a shell's `>` opens it (a FIFO waits for its reader).
    fn into_special(path: &Path) -> Result<Output, OutputError> {
        let file = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| OutputError::Open {
                path: crate::read::source::path_label(path).to_string(),
                reason: e.to_string(),
            })?;
        Ok(Output {
            writer: BufWriter::with_capacity(1 << 16, Box::new(file)),
            atomic: None,
            special: true,
        })
    }

    /// Whether output goes to a terminal (for colour and tables).
    pub fn is_terminal(&self) -> bool {
        self.atomic.is_none() && !self.special && std::io::IsTerminal::is_terminal(&io::stdout())
    }

    /// Whether to colour what goes here: `Auto` colours only a terminal
    /// (so never a `-o` file) and only when `NO_COLOR` is unset or empty.
    pub fn color(&self, choice: ColorChoice) -> bool {
        match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                self.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }

    /// How tables are drawn here: coloured per `choice`, fitted to
    /// [`Output::width`].
    pub fn table_style(&self, choice: ColorChoice) -> TableStyle {
        TableStyle {
            color: self.color(choice),
            width: self.width(),
        }
    }

    /// The width to fit text into: stdout's (see [`terminal_width`]); a
    /// `-o` file, and everything under `--wide`, is drawn at its natural
    /// width, not the width of the terminal it was asked from.
    pub fn width(&self) -> Option<usize> {
        if self.atomic.is_some() || self.special || WIDE.load(std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        terminal_width(std::io::IsTerminal::is_terminal(&io::stdout()))
    }

    /// Flushes and, for a file, moves it into place.
    pub fn finish(self) -> Result<(), OutputError> {
        match self.finish_later()? {
            Some(pending) => pending.commit(),
            None => Ok(()),
        }
    }

    /// Flushes and closes a file without moving it into place yet: the
    /// [`Pending`] file is committed later, or removed when dropped (export
    /// into a directory commits its files only once the whole run is good).
    /// Stdout is flushed, and `None` is returned.
    pub fn finish_later(mut self) -> Result<Option<Pending>, OutputError> {
        let flushed = self.writer.flush();
        let pending = self.atomic.take().map(|(tmp, dest)| Pending { tmp, dest });
        flushed?;
        Ok(pending)
    }

    /// Ends an output whose run was stopped (`--strict`): a file is not
    /// committed, and what was already written to stdout is flushed (so a
    /// failed write is reported: an output error outranks the stop).
    pub fn abandon(self) -> Result<(), OutputError> {
        match self.finish_later()? {
            Some(pending) => {
                drop(pending);
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // An unfinished file output is abandoned, never half-written in place.
        if let Some((tmp, _)) = self.atomic.take() {
            let _ = std::fs::remove_file(&tmp);
            untrack(&tmp);
        }
    }
}

/// A complete file, closed, waiting to be moved into place.
pub struct Pending {
    tmp: PathBuf,
    dest: PathBuf,
}

impl Pending {
    /// Moves the file into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let renamed = std::fs::rename(&self.tmp, &self.dest);
        // On failure, Drop removes the temporary file.
        renamed.map_err(|e| OutputError::Open {
            path: self.dest.display().to_string(),
            reason: e.to_string(),
        })?;
        untrack(&self.tmp);
        std::mem::forget(self);
        Ok(())
    }
}

impl Pending {
    /// Moves the file into place only if nothing is there (`export -o
    /// DIR/`, which never overwrites a file it did not write): linked to
    /// its name, which fails if the name is taken even by a file another
    /// process put there a moment ago, then unlinked from its temporary
    /// name. Where a file system has no hard links, the name is checked,
    /// then renamed to (a narrow window).
    pub fn commit_new(self) -> Result<(), OutputError> {
        let exists = || OutputError::Exists {
            path: crate::read::source::path_label(&self.dest).to_string(),
        };
        match std::fs::hard_link(&self.tmp, &self.dest) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(exists()),
            Err(_) => {
                if std::fs::symlink_metadata(&self.dest).is_ok() {
                    return Err(exists());
                }
                return self.commit();
            }
        }
        // Dropping removes the temporary name and forgets it.
        Ok(())
    }

    /// Where the file goes.
    pub fn dest(&self) -> &Path {
        &self.dest
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
        untrack(&self.tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_never_coloured_unless_asked() {
        let dir = std::env::temp_dir().join(format!("mirotrace-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let out = Output::open(Some(&dir.join("report.txt"))).expect("open");
        assert!(!out.is_terminal());
        assert!(!out.color(ColorChoice::Auto), "whatever stdout is");
        assert!(out.color(ColorChoice::Always));
        assert!(!out.color(ColorChoice::Never));
        drop(out);
        assert!(
            std::fs::read_dir(&dir).expect("dir").next().is_none(),
            "an unfinished file is not left behind"
        );
    }

    #[test]
    fn temporary_names_fit_name_max_and_stay_apart() {
        let short = temporary_name("report.txt", 42);
        assert_eq!(short, ".report.txt.mirotrace-42.tmp");
        let long_a = format!("{}a", "é".repeat(122));
        let long_b = format!("{}b", "é".repeat(122));
        let (a, b) = (
            temporary_name(&long_a, u32::MAX),
            temporary_name(&long_b, u32::MAX),
        );
        assert!(a.len() <= NAME_MAX && b.len() <= NAME_MAX, "{}", a.len());
        assert_ne!(a, b);
        assert!(a.ends_with(".tmp"));
    }

    #[cfg(unix)]
    #[test]
    fn every_spelling_of_an_input_is_known_and_devices_are_written_into() {
        let dir = std::env::temp_dir().join(format!("mirotrace-same-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("d")).expect("temp dir");
        let input = dir.join("x.jsonl");
        std::fs::write(&input, "{}").expect("write");
        let _ = std::fs::remove_file(dir.join("l"));
        let _ = std::fs::remove_file(dir.join("h"));
        std::os::unix::fs::symlink(&input, dir.join("l")).expect("symlink");
        std::fs::hard_link(&input, dir.join("h")).expect("hard link");
        for spelling in ["x.jsonl", "d/../x.jsonl", "./l", "h"] {
            let out = dir.join(spelling);
            let refused = refuse_inputs(&out, [input.as_path()]);
            assert!(
                matches!(refused, Err(OutputError::IsAnInput { .. })),
                "{spelling}"
            );
        }
        assert!(refuse_inputs(&dir.join("new.txt"), [input.as_path()]).is_ok());
        assert!(refuse_inputs(Path::new("/dev/null"), [Path::new("/dev/null")]).is_ok());
        assert!(matches!(
            destination(Path::new("/dev/null")),
            Ok(Destination::Into)
        ));
        assert!(matches!(destination(&dir), Err(OutputError::Open { .. })));
        match destination(&dir.join("l")) {
            Ok(Destination::Replace(p)) => assert_eq!(p, input.canonicalize().expect("real")),
            _ => panic!("a link to a file replaces that file"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_245_byte_name_is_written() {
        let dir = std::env::temp_dir().join(format!("mirotrace-long-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let dest = dir.join("x".repeat(245));
        let mut out = Output::open(Some(&dest)).expect("open");
        out.write_all(b"ok").expect("write");
        out.finish().expect("finish");
        assert_eq!(std::fs::read(&dest).expect("written"), b"ok");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
