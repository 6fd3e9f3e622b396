//! One record → its attempts: the native decoder on the fast path, else
//! the reader of the record's format, as the registry
//! ([`crate::read::formats`]) recognises it.

use serde_json::{Map, Value as Json};

use crate::model::Origin;
pub(super) use crate::read::formats::Unit;
use crate::read::formats::{classify, forced_mismatch, unknown_record, InputFormat, Kind, NATIVE};
use crate::read::native::{LineDecoder, LineError};
use crate::read::ours;
use crate::read::sniff::{nothing_native, parse_json};

/// Reads one line: natively when the file is native (forced, or its first
/// record was), else by the format of its JSON object. `mode` remembers
/// the format of the file's first record.
pub(super) fn parse_unit(
    text: &str,
    origin: &Origin,
    format: InputFormat,
    mode: &mut Option<Kind>,
    decoder: &mut LineDecoder,
) -> Result<Unit, String> {
    let forced = format.forced_kind();
    if forced == Some(NATIVE) || (forced.is_none() && *mode == Some(NATIVE)) {
        return match decoder.decode(text, origin.clone()) {
            // Shaped as a chat record: read as `classify` reads it at the top.
            Ok(a) if forced.is_none() && decoder.last_was_message_list_only() => {
                match other_kind(text) {
                    Some((kind, obj)) => read_object(kind, obj, origin),
                    None => Ok(Unit::One(a)),
                }
            }
            Ok(a) => Ok(Unit::One(a)),
            // Not an attempt; perhaps a record of another kind (mixed file).
            Err(LineError::NoTraceId) if forced.is_none() => match other_kind(text) {
                Some((kind, obj)) => read_object(kind, obj, origin),
                None => not_an_attempt(text, LineError::NoTraceId, false),
            },
            Err(e @ (LineError::NoTraceId | LineError::NoAttemptFields)) => {
                not_an_attempt(text, e, forced.is_some())
            }
            Err(e) => Err(e.to_string()),
        };
    }
    // The file's format may decode its lines faster than a whole parse.
    if let Some(fast) = forced.or(*mode).and_then(|k| k.read_text) {
        if let Some(unit) = fast(text, origin, classify) {
            return unit;
        }
    }
    let value = parse_json(text).map_err(|e| LineError::NotJson(e.to_string()).to_string())?;
    let Json::Object(obj) = value else {
        return Err(LineError::NotObject.to_string());
    };
    let detected = classify(&obj);
    if detected.is_none() {
        if let Some(output) = ours::recognise(&obj) {
            return Ok(Unit::NotTrace(output));
        }
        // Nothing native in it either: not a broken attempt line but a
        // record of a format mirotrace does not know.
        if forced.is_none() && nothing_native(&obj) {
            return Err(unknown_record(&Json::Object(obj)));
        }
    }
    if let Some(why) = forced.and_then(|k| forced_mismatch(k, &obj)) {
        return Err(why);
    }
    let kind = forced.or(detected).unwrap_or(NATIVE);
    mode.get_or_insert(kind);
    if kind == NATIVE {
        return decoder
            .decode(text, origin.clone())
            .map(Unit::One)
            .map_err(|e| e.to_string());
    }
    read_object(kind, obj, origin)
}

/// A line the native decoder refused as no attempt: one of mirotrace's
/// own outputs (said so), a record of no format mirotrace knows (said
/// so, with the formats tried, unless the format was `forced`), or
/// reported as it was refused.
fn not_an_attempt(text: &str, e: LineError, forced: bool) -> Result<Unit, String> {
    match parse_json(text) {
        Ok(Json::Object(obj)) => match ours::recognise(&obj) {
            Some(output) => Ok(Unit::NotTrace(output)),
            None if !forced && nothing_native(&obj) => Err(unknown_record(&Json::Object(obj))),
            None => Err(e.to_string()),
        },
        _ => Err(e.to_string()),
    }
}

/// A line that failed the native reader, if it is a record of another kind.
fn other_kind(text: &str) -> Option<(Kind, Map<String, Json>)> {
    let Json::Object(obj) = parse_json(text).ok()? else {
        return None;
    };
    classify(&obj).filter(|k| *k != NATIVE).map(|k| (k, obj))
}

/// Reads a JSON object of a known format.
pub(super) fn read_object(
    kind: Kind,
    obj: Map<String, Json>,
    origin: &Origin,
) -> Result<Unit, String> {
    (kind.read)(obj, origin)
}
