//! The SDK's folder of one file per event: a persisted conversation keeps
//! its events in `CONVERSATION/events/`, each in `event-<index>-<id>.json`
//! (the index zero-padded to at least 5 digits, the id the event's uuid),
//! one compact JSON object each. Such a folder is one conversation: its
//! event files are read in index order as the lines of one event stream
//! (line N is the N-th event file), so the folder makes one trace, not one
//! per file. Other files beside them are read as any other file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The index of an event file's name (`event-00012-1f0c….json` → 12), if
/// it is one.
pub fn event_file_index(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let (index, id) = rest.split_once('-')?;
    let digits = index.len() >= 5 && index.bytes().all(|b| b.is_ascii_digit());
    let uuid_like = id.len() >= 8 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if digits && uuid_like {
        index.parse().ok()
    } else {
        None
    }
}

/// The event files among `paths`, in index order.
pub fn event_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<(u64, &PathBuf)> = paths
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            Some((event_file_index(name)?, p))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p.clone()).collect()
}

/// Whether `dir` holds event files (it is then read as one conversation).
pub fn is_event_folder(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| event_file_index(n).is_some())
        })
    })
}

/// The folder's event files as one stream of lines, in index order, one
/// file at a time: each file's line breaks (JSON whitespace, never inside
/// a string) become spaces, and each file ends its line.
///
/// One file that cannot be read costs its line, never the rest of the
/// stream: a dangling link, a FIFO or device (never opened: it may never
/// end), a file longer than `max_bytes` (not read) or a read error leave
/// an empty line and a problem, `(line, reason)`, in [`EventLines::problems`].
pub fn open(dir: &Path, max_bytes: usize) -> io::Result<EventLines> {
    let paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    Ok(EventLines {
        files: event_files(&paths).into(),
        current: Cursor::new(Vec::new()),
        line: 0,
        max_bytes,
        problems: Arc::default(),
    })
}

/// The event files a folder input reads (none if `dir` is no event
/// folder): what `-o` may not name.
pub fn files_of(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            let paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
            event_files(&paths)
        })
        .unwrap_or_default()
}

/// Problems met reading an event folder: the line (event file) and why.
pub type Problems = Arc<Mutex<Vec<(u64, String)>>>;

/// See [`open`].
pub struct EventLines {
    files: VecDeque<PathBuf>,
    current: Cursor<Vec<u8>>,
    /// The line of the file read last.
    line: u64,
    max_bytes: usize,
    problems: Problems,
}

impl EventLines {
    /// Where the files that could not be read are listed, as they are met.
    pub fn problems(&self) -> Problems {
        self.problems.clone()
    }

    /// One event file's bytes as its line, or why it is not read.
    fn line_of(&self, path: &Path) -> Result<Vec<u8>, String> {
        let shown = path.display();
        // Followed through links: what would be opened.
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => {
                format!("{shown}: no such file (a dangling link?), not read")
            }
            _ => format!("{shown}: {e}, not read"),
        })?;
        if !meta.is_file() {
            return Err(format!(
                "{shown}: not a regular file (a FIFO, device or socket may never end), not read"
            ));
        }
        let cap = self.max_bytes as u64;
        let too_long = || {
            format!("{shown}: event file longer than {cap} bytes (raise it with --max-line-bytes), not read")
        };
        if meta.len() > cap {
            return Err(too_long());
        }
        let mut bytes = Vec::new();
        File::open(path)
            .and_then(|f| f.take(cap + 1).read_to_end(&mut bytes))
            .map_err(|e| format!("{shown}: {e}, not read"))?;
        if bytes.len() as u64 > cap {
            return Err(too_long());
        }
        Ok(bytes)
    }
}

impl Read for EventLines {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.current.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let Some(path) = self.files.pop_front() else {
                return Ok(0);
            };
            self.line += 1;
            let mut bytes = match self.line_of(&path) {
                Ok(bytes) => bytes,
                Err(reason) => {
                    if let Ok(mut problems) = self.problems.lock() {
                        problems.push((self.line, reason));
                    }
                    Vec::new()
                }
            };
            for b in &mut bytes {
                if *b == b'\n' || *b == b'\r' {
                    *b = b' ';
                }
            }
            bytes.push(b'\n');
            self.current = Cursor::new(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_file_names_as_the_sdk_writes_them() {
        assert_eq!(
            event_file_index("event-00012-1f0c2d3e-aaaa-bbbb-cccc-0123456789ab.json"),
            Some(12)
        );
        assert_eq!(event_file_index("event-123456-deadbeef.json"), Some(123456));
        for name in [
            "event-0012-deadbeef.json",
            "event-00012-xyz.json",
            "event-00012-deadbeef.jsonl",
            "events.jsonl",
            "base_state.json",
        ] {
            assert_eq!(event_file_index(name), None, "{name}");
        }
    }

    #[test]
    fn files_are_read_in_index_order_one_line_each() {
        let dir = std::env::temp_dir().join(format!("mirotrace-v1-folder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Written out of order, the later index with more digits, one
        // pretty-printed.
        for (name, text) in [
            ("event-100000-0000000b.json", "{\"n\": 3}"),
            ("event-00000-0000000a.json", "{\n  \"n\": 1\n}\n"),
            ("event-00001-0000000c.json", "{\"n\": \"a\\nb\"}"),
        ] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let mut out = String::new();
        open(&dir, 1 << 20)
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(out, "{   \"n\": 1 } \n{\"n\": \"a\\nb\"}\n{\"n\": 3}\n");
        assert!(!is_event_folder(&std::env::temp_dir().join("no-such-dir")));
    }
}
