//! `attachment://HASH` references: Inspect stores a long string once, in a
//! sample's `attachments`, and writes the reference wherever it occurs.
//! An attempt holds its texts as owned strings, so each resolved reference
//! is a copy; the copies a sample may make are bounded (docs/limits.md),
//! else a few kilobytes of references to one large attachment would take
//! gigabytes.

use serde_json::{Map, Value as Json};

/// Bytes of attachment text one sample may copy into its messages, at the
/// least; a sample larger than this unpacked may copy as much as its own
/// size (docs/limits.md).
pub const MAX_RESOLVED_BYTES: usize = 64 * 1024 * 1024;

/// The references of a sample resolved past its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    pub limit: usize,
}

/// How many bytes a sample of `size` unpacked bytes may resolve.
pub fn limit_for(size: usize) -> usize {
    MAX_RESOLVED_BYTES.max(size)
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
    fn a_large_sample_may_resolve_its_own_size() {
        assert_eq!(limit_for(10), MAX_RESOLVED_BYTES);
        assert_eq!(limit_for(MAX_RESOLVED_BYTES * 2), MAX_RESOLVED_BYTES * 2);
    }
}
