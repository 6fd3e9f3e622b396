//! Inspect's `.eval` files: a ZIP archive of `header.json` (the log
//! without its samples), `samples/<id>_epoch_<n>.json` (one sample each)
//! and bookkeeping (`_journal/`, `summaries.json`, `reductions.json`).
//! Members are deflated (older releases) or zstd-compressed (ZIP method
//! 93, what current releases write).
//!
//! The archive's compressed bytes are held once; samples are unpacked and
//! converted one at a time ([`Archive::sample`]), so memory holds one
//! unpacked sample per thread, never the unpacked archive. [`Samples`]
//! converts a few at once on a small pool when more threads are given.

use std::collections::VecDeque;
use std::io::{Cursor, Read};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value as Json;

use super::{model_of, sample_trace_owned};
use crate::model::{Origin, Trace};
use crate::read::sniff::parse_json;

/// The first bytes of a ZIP archive.
pub const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

/// Samples converted at once per thread, at most: enough that a long
/// sample does not leave the other threads idle.
const SAMPLES_PER_THREAD: usize = 4;

/// Unpacked bytes converted at once past one sample per thread: large
/// samples go one per thread, so memory holds about one sample per thread.
const WINDOW_BYTES: u64 = 32 << 20;

/// Why an archive could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("not a readable ZIP archive: {0}")]
    Zip(String),
    #[error(
        "a ZIP archive of something else, not an Inspect .eval log (no header.json; entries: {entries})"
    )]
    NotEval { entries: String },
    #[error("header.json: {0}")]
    Header(String),
}

/// One sample of an archive: its entry name and what was read of it.
pub type Sample = (String, Result<Trace, String>);

/// The compressed bytes are shared by every handle on them.
type Bytes = Cursor<Arc<[u8]>>;

/// An opened `.eval` archive: its header read, its samples listed in
/// natural order, none unpacked yet.
pub struct Archive {
    zip: zip::ZipArchive<Bytes>,
    /// `(entry index, entry name, unpacked size)` of each sample, in
    /// natural order.
    samples: Vec<(usize, String, u64)>,
    model: Option<String>,
    origin: Origin,
    max_bytes: usize,
}

impl Archive {
    /// Opens an archive held in memory; entries larger than `max_bytes`
    /// unpacked are reported when read, not unpacked.
    pub fn open(bytes: Arc<[u8]>, file: &Arc<str>, max_bytes: usize) -> Result<Self, ArchiveError> {
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| ArchiveError::Zip(e.to_string()))?;
        let names: Vec<String> = zip.file_names().map(str::to_string).collect();
        if !names.iter().any(|n| n == "header.json") {
            let mut shown: Vec<&str> = names.iter().map(String::as_str).take(5).collect();
            if names.len() > shown.len() {
                shown.push("…");
            }
            return Err(ArchiveError::NotEval {
                entries: shown.join(", "),
            });
        }
        let header =
            entry_json(&mut zip, "header.json", max_bytes).map_err(ArchiveError::Header)?;
        let model = model_of(header.get("eval"));
        drop(header);
        let mut samples: Vec<(usize, String, u64)> = (0..zip.len())
            .filter_map(|i| {
                let name = zip.name_for_index(i)?;
                (name.starts_with("samples/") && name.ends_with(".json"))
                    .then(|| (i, name.to_string()))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|(i, name)| {
                let size = zip.by_index_raw(i).map_or(0, |e| e.size());
                (i, name, size)
            })
            .collect();
        samples.sort_by_cached_key(|(_, n, _)| natural_key(n));
        Ok(Archive {
            zip,
            samples,
            model,
            origin: Origin {
                file: file.clone(),
                line: 1,
            },
            max_bytes,
        })
    }

    /// How many samples the archive holds.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The `n`th sample (natural order), unpacked and converted on its own
    /// handle on the archive, so several can be read at once.
    pub fn sample(&self, n: usize) -> Option<Sample> {
        let (index, name, _) = self.samples.get(n)?;
        let mut zip = self.zip.clone();
        let read = entry_json_at(&mut zip, *index, self.max_bytes).and_then(|v| match v {
            Json::Object(sample) => sample_trace_owned(sample, self.model.as_deref(), &self.origin)
                .map_err(|e| e.to_string()),
            _ => Err("not a JSON object".to_string()),
        });
        Some((name.clone(), read))
    }

    /// Every sample in order, converted `threads` at a time (one at a time
    /// with one thread).
    pub fn samples(self, threads: usize) -> Samples {
        let threads = threads.max(1);
        let pool = (threads > 1 && self.len() > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .ok()
            })
            .flatten();
        Samples {
            threads: if pool.is_some() { threads } else { 1 },
            archive: self,
            pool,
            next: 0,
            ready: VecDeque::new(),
        }
    }
}

/// An archive's samples in order, a window of them converted at a time.
pub struct Samples {
    archive: Archive,
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    next: usize,
    ready: VecDeque<Sample>,
}

impl Iterator for Samples {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        if self.ready.is_empty() {
            let end = self.window_end();
            let range = self.next..end;
            self.next = end;
            let archive = &self.archive;
            match &self.pool {
                Some(pool) => pool.install(|| {
                    let read: Vec<Sample> = range
                        .into_par_iter()
                        .filter_map(|n| archive.sample(n))
                        .collect();
                    self.ready.extend(read);
                }),
                None => self.ready.extend(range.filter_map(|n| archive.sample(n))),
            }
        }
        self.ready.pop_front()
    }
}

impl Samples {
    /// Where the next window ends: one sample with one thread; with more,
    /// up to [`SAMPLES_PER_THREAD`] each while they stay within
    /// [`WINDOW_BYTES`] unpacked, and never fewer than one per thread.
    fn window_end(&self) -> usize {
        if self.threads == 1 {
            return (self.next + 1).min(self.archive.len());
        }
        let mut bytes = 0u64;
        let mut end = self.next;
        for (_, _, size) in &self.archive.samples[self.next..] {
            let count = end - self.next;
            bytes = bytes.saturating_add(*size);
            if count >= self.threads * SAMPLES_PER_THREAD
                || (count >= self.threads && bytes > WINDOW_BYTES)
            {
                break;
            }
            end += 1;
        }
        end
    }
}

/// One entry by name, unpacked (within the size cap) and parsed.
fn entry_json(
    zip: &mut zip::ZipArchive<Bytes>,
    name: &str,
    max_bytes: usize,
) -> Result<Json, String> {
    let index = zip
        .index_for_name(name)
        .ok_or_else(|| "missing".to_string())?;
    entry_json_at(zip, index, max_bytes)
}

/// One entry by index, unpacked (within the size cap) and parsed.
fn entry_json_at(
    zip: &mut zip::ZipArchive<Bytes>,
    index: usize,
    max_bytes: usize,
) -> Result<Json, String> {
    let entry = zip.by_index(index).map_err(|e| e.to_string())?;
    let declared = entry.size();
    let mut text = String::with_capacity(declared.min(max_bytes as u64).min(1 << 26) as usize);
    entry
        .take(max_bytes as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot unpack: {e}"))?;
    if text.len() > max_bytes {
        return Err(format!(
            "longer than {max_bytes} bytes unpacked (raise it with --max-line-bytes)"
        ));
    }
    parse_json(&text).map_err(|e| format!("not JSON: {e}"))
}

/// A sort key that puts `samples/2_epoch_1.json` before `samples/10_epoch_1.json`.
fn natural_key(name: &str) -> Vec<(u64, String)> {
    let mut key = Vec::new();
    let mut rest = name;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            key.push((rest[..digits].parse().unwrap_or(u64::MAX), String::new()));
            rest = &rest[digits..];
        } else {
            let text = rest.len() - rest.trim_start_matches(|c: char| !c.is_ascii_digit()).len();
            key.push((0, rest[..text].to_string()));
            rest = &rest[text..];
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::CompressionMethod;

    fn zip_of(entries: &[(&str, &str)], method: CompressionMethod) -> Arc<[u8]> {
        let mut out = Cursor::new(Vec::new());
        let mut w = zip::ZipWriter::new(&mut out);
        for (name, text) in entries {
            let options = zip::write::SimpleFileOptions::default().compression_method(method);
            w.start_file(*name, options).unwrap();
            w.write_all(text.as_bytes()).unwrap();
        }
        w.finish().unwrap();
        out.into_inner().into()
    }

    fn ids(bytes: Arc<[u8]>, threads: usize) -> Vec<String> {
        let archive = Archive::open(bytes, &"x.eval".into(), 1 << 20).unwrap();
        archive
            .samples(threads)
            .map(|(n, t)| match t {
                Ok(t) => t.trace_id.to_string(),
                Err(e) => format!("{n}: {e}"),
            })
            .collect()
    }

    fn sample(id: u32) -> String {
        format!(
            r#"{{"id": {id}, "epoch": 1, "input": "q", "messages": [{{"role": "assistant", "content": "a"}}]}}"#
        )
    }

    #[test]
    fn samples_are_read_in_natural_order() {
        let (s10, s2) = (sample(10), sample(2));
        for method in [CompressionMethod::Deflated, CompressionMethod::Zstd] {
            let bytes = zip_of(
                &[
                    ("header.json", r#"{"version": 2, "eval": {"model": "m"}}"#),
                    ("samples/10_epoch_1.json", &s10),
                    ("samples/2_epoch_1.json", &s2),
                    ("samples/3_epoch_1.json", "[1]"),
                ],
                method,
            );
            assert_eq!(
                ids(bytes, 1),
                [
                    "2_epoch_1",
                    "samples/3_epoch_1.json: not a JSON object",
                    "10_epoch_1"
                ],
                "{method:?}"
            );
        }
    }

    #[test]
    fn several_threads_keep_the_order() {
        let texts: Vec<(String, String)> = (1..=23)
            .map(|i| (format!("samples/{i}_epoch_1.json"), sample(i)))
            .collect();
        let mut entries = vec![("header.json", r#"{"eval": {"model": "m"}}"#)];
        entries.extend(texts.iter().map(|(n, t)| (n.as_str(), t.as_str())));
        let bytes = zip_of(&entries, CompressionMethod::Zstd);
        let one = ids(bytes.clone(), 1);
        assert_eq!(one.len(), 23);
        assert_eq!(one[22], "23_epoch_1");
        assert_eq!(ids(bytes, 3), one);
    }

    #[test]
    fn other_archives_say_what_they_hold() {
        let bytes = zip_of(
            &[("report.pdf", "x"), ("data.csv", "y")],
            CompressionMethod::Deflated,
        );
        let err = Archive::open(bytes, &"x.zip".into(), 1 << 20)
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("entries: report.pdf, data.csv"),
            "{err}"
        );
    }
}
