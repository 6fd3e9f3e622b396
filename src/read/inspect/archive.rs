//! Inspect's `.eval` files: a ZIP archive of `header.json` (the log
//! without its samples), `samples/<id>_epoch_<n>.json` (one sample each)
//! and bookkeeping (`_journal/`, `summaries.json`, `reductions.json`).

use std::io::{Cursor, Read};
use std::sync::Arc;

use serde_json::Value as Json;

use super::{model_of, sample_trace};
use crate::model::{Origin, Trace};
use crate::read::sniff::parse_json;

/// The first bytes of a ZIP archive.
pub const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

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

/// One sample of an archive: its entry name and its trace, or why not.
pub type Sample = (String, Result<Trace, String>);

/// Reads every sample of an `.eval` archive held in memory, in sample
/// order; entries larger than `max_bytes` unpacked are reported, not read.
pub fn read(bytes: &[u8], file: &Arc<str>, max_bytes: usize) -> Result<Vec<Sample>, ArchiveError> {
    let mut zip =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| ArchiveError::Zip(e.to_string()))?;
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
    let header = entry_json(&mut zip, "header.json", max_bytes).map_err(ArchiveError::Header)?;
    let model = model_of(header.get("eval"));
    let mut samples: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
        .collect();
    samples.sort_by_key(|n| natural_key(n));
    let origin = Origin {
        file: file.clone(),
        line: 1,
    };
    Ok(samples
        .into_iter()
        .map(|name| {
            let trace = entry_json(&mut zip, name, max_bytes).and_then(|v| match v {
                Json::Object(sample) => {
                    sample_trace(&sample, model.as_deref(), &origin).map_err(|e| e.to_string())
                }
                _ => Err("not a JSON object".to_string()),
            });
            (name.clone(), trace)
        })
        .collect())
}

/// One entry, unpacked (within the size cap) and parsed.
fn entry_json<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    max_bytes: usize,
) -> Result<Json, String> {
    let entry = zip.by_name(name).map_err(|e| e.to_string())?;
    let mut text = String::new();
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

    fn zip_of(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        let mut w = zip::ZipWriter::new(&mut out);
        for (name, text) in entries {
            w.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(text.as_bytes()).unwrap();
        }
        w.finish().unwrap();
        out.into_inner()
    }

    #[test]
    fn samples_are_read_in_natural_order() {
        let sample = |id: u32| {
            format!(
                r#"{{"id": {id}, "epoch": 1, "input": "q", "messages": [{{"role": "assistant", "content": "a"}}]}}"#
            )
        };
        let (s10, s2) = (sample(10), sample(2));
        let bytes = zip_of(&[
            ("header.json", r#"{"version": 2, "eval": {"model": "m"}}"#),
            ("samples/10_epoch_1.json", &s10),
            ("samples/2_epoch_1.json", &s2),
            ("samples/3_epoch_1.json", "[1]"),
        ]);
        let got = read(&bytes, &"x.eval".into(), 1 << 20).unwrap();
        let ids: Vec<String> = got
            .iter()
            .map(|(n, t)| match t {
                Ok(t) => t.trace_id.to_string(),
                Err(e) => format!("{n}: {e}"),
            })
            .collect();
        assert_eq!(
            ids,
            [
                "2_epoch_1",
                "samples/3_epoch_1.json: not a JSON object",
                "10_epoch_1"
            ]
        );
    }

    #[test]
    fn other_archives_say_what_they_hold() {
        let bytes = zip_of(&[("report.pdf", "x"), ("data.csv", "y")]);
        let err = read(&bytes, &"x.zip".into(), 1 << 20).unwrap_err();
        assert!(
            err.to_string().contains("entries: report.pdf, data.csv"),
            "{err}"
        );
    }
}
