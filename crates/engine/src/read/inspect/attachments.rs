//! `attachment://HASH` references: Inspect stores a long string once, in a
//! sample's `attachments`, and writes the reference wherever it occurs.
//! An attempt holds its texts as owned strings, so each resolved reference
//! is a copy; the copies a sample may make are bounded (docs/limits.md),
//! else a few kilobytes of references to one large attachment would take
//! gigabytes.

use serde_json::{Map, Value as Json};

/// Bytes of attachment text one sample may copy into its messages beyond
/// one copy of each attachment (docs/limits.md): each attachment may be
/// referred to once, and repeats may add this much.
pub const MAX_REPEATED_BYTES: usize = 16 * 1024 * 1024;

/// The references of a sample resolved past its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    pub limit: usize,
}

/// How many bytes a sample with these attachments may resolve: all of
/// them once, plus [`MAX_REPEATED_BYTES`].
pub fn limit_for(attachments: &Map<String, Json>) -> usize {
    attachments
        .values()
        .filter_map(Json::as_str)
        .map(str::len)
        .fold(MAX_REPEATED_BYTES, usize::saturating_add)
}

/// Replaces each `attachment://HASH` string in `value` by the text stored
/// for it, copying at most `limit` bytes in all. A reference to a hash
/// that is not stored stays as it is (Inspect writes it so too).
pub fn resolve(
    value: &mut Json,
    attachments: &Map<String, Json>,
    limit: usize,
) -> Result<(), TooLarge> {
    let mut budget = limit;
    resolve_within(value, attachments, &mut budget).map_err(|()| TooLarge { limit })
}

fn resolve_within(
    value: &mut Json,
    attachments: &Map<String, Json>,
    budget: &mut usize,
) -> Result<(), ()> {
    match value {
        Json::String(s) => {
            if let Some(text) = s
                .strip_prefix("attachment://")
                .and_then(|hash| attachments.get(hash))
                .and_then(Json::as_str)
            {
                *budget = budget.checked_sub(text.len()).ok_or(())?;
                *s = text.to_string();
            }
            Ok(())
        }
        Json::Array(items) => items
            .iter_mut()
            .try_for_each(|v| resolve_within(v, attachments, budget)),
        Json::Object(obj) => obj
            .values_mut()
            .try_for_each(|v| resolve_within(v, attachments, budget)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_resolved_within_the_bound() {
        let stored = json!({"h": "0123456789"});
        let attachments = stored.as_object().unwrap();
        let mut v = json!([{"content": "attachment://h"}, "attachment://h", "attachment://other"]);
        resolve(&mut v, attachments, 20).unwrap();
        assert_eq!(
            v,
            json!([{"content": "0123456789"}, "0123456789", "attachment://other"])
        );
        let mut v = json!(["attachment://h", "attachment://h", "attachment://h"]);
        assert_eq!(
            resolve(&mut v, attachments, 25),
            Err(TooLarge { limit: 25 })
        );
    }

    #[test]
    fn each_attachment_may_be_resolved_once_and_repeats_a_little() {
        let stored = json!({"a": "0123456789", "b": "xyz", "c": 7});
        assert_eq!(
            limit_for(stored.as_object().unwrap()),
            MAX_REPEATED_BYTES + 13
        );
    }
}
