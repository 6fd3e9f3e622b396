//! Where results go: stdout, or a file written atomically (a temporary file
//! beside it, renamed into place only when complete), and whether they are
//! coloured, decided from that destination.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

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
}

/// Opening or finishing an output failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write {path}: {reason}")]
    Open { path: String, reason: String },
    #[error("writing output failed: {0}")]
    Write(#[from] io::Error),
}

impl Output {
    /// `None` → stdout; `Some(path)` → that file, atomically.
    pub fn open(path: Option<&Path>) -> Result<Output, OutputError> {
        match path {
            None => Ok(Output {
                writer: BufWriter::with_capacity(1 << 16, Box::new(io::stdout())),
                atomic: None,
            }),
            Some(path) => {
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let tmp = dir.join(format!(".{name}.mirotrace-{}.tmp", std::process::id()));
                let file = File::create(&tmp).map_err(|e| OutputError::Open {
                    path: path.display().to_string(),
                    reason: if e.kind() == io::ErrorKind::NotFound {
                        format!("the directory {} does not exist", dir.display())
                    } else {
                        e.to_string()
                    },
                })?;
                Ok(Output {
                    writer: BufWriter::with_capacity(1 << 16, Box::new(file)),
                    atomic: Some((tmp, path.to_path_buf())),
                })
            }
        }
    }

    /// Whether output goes to a terminal (for colour and tables).
    pub fn is_terminal(&self) -> bool {
        self.atomic.is_none() && std::io::IsTerminal::is_terminal(&io::stdout())
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
    /// `-o` file is drawn at its natural width, not the width of the
    /// terminal it was asked from.
    pub fn width(&self) -> Option<usize> {
        if self.atomic.is_some() {
            return None;
        }
        terminal_width(std::io::IsTerminal::is_terminal(&io::stdout()))
    }

    /// Flushes and, for a file, moves it into place.
    pub fn finish(mut self) -> Result<(), OutputError> {
        self.writer.flush()?;
        if let Some((tmp, dest)) = self.atomic.take() {
            std::fs::rename(&tmp, &dest).map_err(|e| OutputError::Open {
                path: dest.display().to_string(),
                reason: e.to_string(),
            })?;
        }
        Ok(())
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
            let _ = std::fs::remove_file(tmp);
        }
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
}
