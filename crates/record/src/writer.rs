//! The recording file (`-o`) and its one writer thread. Each finished
//! call reaches the thread as a job that makes its line (decoding and
//! serialising happen there, off the connections' tasks); the line is
//! written whole with one `write_all` and nothing is buffered in between,
//! so a killed proxy loses at most the calls still in flight.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::error::Error;

/// An open recording file, and the call number its next call gets.
#[derive(Debug)]
pub struct Recording {
    file: File,
    path: PathBuf,
    next_call: u64,
    /// The file ends without `\n` (a line cut short by a killed
    /// writer): the first line written starts on a line of its own.
    needs_newline: bool,
}

impl Recording {
    /// Opens `path` for a new recording. An existing file that holds
    /// anything is refused, unless `append`: then it must be a recording,
    /// and call numbers go on after the highest one in it.
    pub fn create(path: &Path, append: bool) -> Result<Recording, Error> {
        let io_error = |what, source| Error::Io {
            what,
            path: path.display().to_string(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| io_error("cannot open the recording", e))?;
        let len = file
            .metadata()
            .map_err(|e| io_error("cannot read the recording", e))?
            .len();
        if len == 0 {
            return Ok(Recording {
                file,
                path: path.to_path_buf(),
                next_call: 1,
                needs_newline: false,
            });
        }
        if !append {
            return Err(Error::Refused(format!(
                "{} exists and is not empty: give --append to add to it, or another -o",
                path.display()
            )));
        }
        let highest = highest_call(&mut file, path)?;
        file.seek(SeekFrom::End(-1))
            .map_err(|e| io_error("cannot read the recording", e))?;
        let mut last = [0u8];
        file.read_exact(&mut last)
            .map_err(|e| io_error("cannot read the recording", e))?;
        Ok(Recording {
            file,
            path: path.to_path_buf(),
            next_call: highest + 1,
            needs_newline: last[0] != b'\n',
        })
    }

    /// The number the next call gets.
    pub fn next_call(&self) -> u64 {
        self.next_call
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The highest `call` in a recording; an error if a complete line is not
/// a recording's (a last line cut short, without `\n`, is let be).
fn highest_call(file: &mut File, path: &Path) -> Result<u64, Error> {
    #[derive(serde::Deserialize)]
    struct Mark {
        mirotrace_recording: u64,
        call: u64,
    }
    let mut reader = BufReader::new(&mut *file);
    let mut highest = 0;
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| Error::Io {
            what: "cannot read the recording",
            path: path.display().to_string(),
            source: e,
        })?;
        if n == 0 {
            break;
        }
        number += 1;
        let complete = line.last() == Some(&b'\n');
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Mark>(&line) {
            Ok(mark) if mark.mirotrace_recording >= 1 => highest = highest.max(mark.call),
            _ if !complete => break,
            _ => {
                return Err(Error::Refused(format!(
                    "{} line {number} is not a line of a mirotrace recording: not appending to it",
                    path.display()
                )))
            }
        }
    }
    Ok(highest)
}

/// A job that makes one line (with its `\n`).
pub type Job = Box<dyn FnOnce() -> Vec<u8> + Send>;

enum Msg {
    Line(Job),
    Close,
}

/// Where finished calls go: the writer thread's queue.
#[derive(Clone)]
pub struct Sink(mpsc::Sender<Msg>);

impl Sink {
    /// Queues a line; after a failed write, lines are dropped (the proxy
    /// is stopping by then).
    pub fn send(&self, job: Job) {
        let _ = self.0.send(Msg::Line(job));
    }

    /// Ends the writer once the lines queued before are written.
    pub fn close(&self) {
        let _ = self.0.send(Msg::Close);
    }
}

/// The writer thread: how many lines it wrote, or the write that failed.
pub struct Writer {
    handle: JoinHandle<Result<u64, Error>>,
}

impl Writer {
    /// Starts the thread; `on_failure` is called once if a write fails
    /// (the proxy stops accepting then).
    pub fn start(
        recording: Recording,
        on_failure: impl FnOnce() + Send + 'static,
    ) -> Result<(Sink, Writer), Error> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let handle = std::thread::Builder::new()
            .name("recording".into())
            .spawn(move || write_lines(recording, rx, on_failure))
            .map_err(Error::Runtime)?;
        Ok((Sink(tx), Writer { handle }))
    }

    /// Waits for the thread (after [`Sink::close`]).
    pub fn join(self) -> Result<u64, Error> {
        self.handle.join().unwrap_or_else(|_| {
            Err(Error::Runtime(io::Error::other(
                "the recording's writer thread panicked",
            )))
        })
    }
}

fn write_lines(
    mut recording: Recording,
    rx: mpsc::Receiver<Msg>,
    on_failure: impl FnOnce() + Send,
) -> Result<u64, Error> {
    let mut written = 0;
    let mut failed = None;
    let mut on_failure = Some(on_failure);
    while let Ok(Msg::Line(job)) = rx.recv() {
        if failed.is_some() {
            continue;
        }
        let mut bytes = job();
        if recording.needs_newline {
            bytes.insert(0, b'\n');
            recording.needs_newline = false;
        }
        match recording
            .file
            .write_all(&bytes)
            .and_then(|()| recording.file.flush())
        {
            Ok(()) => written += 1,
            Err(e) => {
                failed = Some(e);
                if let Some(f) = on_failure.take() {
                    f();
                }
            }
        }
    }
    match failed {
        None => Ok(written),
        Some(source) => Err(Error::Io {
            what: "cannot write the recording",
            path: recording.path.display().to_string(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, content: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mirotrace-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        p
    }

    #[test]
    fn an_existing_recording_is_refused_unless_appended_to() {
        let p = temp(
            "a.jsonl",
            b"{\"mirotrace_recording\":1,\"call\":7}\n{\"mirotrace_recording\":1,\"call\":3}\n",
        );
        assert!(matches!(
            Recording::create(&p, false),
            Err(Error::Refused(_))
        ));
        let r = Recording::create(&p, true).unwrap();
        assert_eq!(r.next_call(), 8);
        let (sink, writer) = Writer::start(r, || {}).unwrap();
        sink.send(Box::new(|| {
            b"{\"mirotrace_recording\":1,\"call\":8}\n".to_vec()
        }));
        sink.close();
        assert_eq!(writer.join().unwrap(), 1);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 3);
        // An empty file is a new recording.
        let e = temp("empty.jsonl", b"");
        assert_eq!(Recording::create(&e, false).unwrap().next_call(), 1);
        // Not a recording: refused even with --append.
        let other = temp("other.jsonl", b"{\"trace_id\":1}\n");
        assert!(matches!(
            Recording::create(&other, true),
            Err(Error::Refused(_))
        ));
        // A last line cut short: the next line starts on its own.
        let cut = temp(
            "cut.jsonl",
            b"{\"mirotrace_recording\":1,\"call\":2}\n{\"mirotrace_rec",
        );
        let r = Recording::create(&cut, true).unwrap();
        assert_eq!(r.next_call(), 3);
        let (sink, writer) = Writer::start(r, || {}).unwrap();
        sink.send(Box::new(|| b"{\"x\":1}\n".to_vec()));
        sink.close();
        writer.join().unwrap();
        assert!(std::fs::read_to_string(&cut)
            .unwrap()
            .ends_with("\"mirotrace_rec\n{\"x\":1}\n"));
    }
}
