//! System prompts seen so far in an input. A trace's sessions alternate
//! between a few long prompts (main agent, sub-agents), each repeated on
//! many lines: a line whose prompt is, byte for byte, one already read
//! gets the shared copy, and its text is never unescaped again.

use std::sync::Arc;

use super::recent::Recent;

/// Distinct prompts remembered (a trace rarely has more agents).
const PROMPTS_REMEMBERED: usize = 8;
/// Longest prompt remembered: a pathological file of huge prompts must not
/// keep eight of them alive (they are read line by line as before).
pub const MAX_REMEMBERED_PROMPT_BYTES: usize = 1 << 20;

/// What a line's first top-level `system_prompt` is.
#[derive(Debug, Default)]
pub(super) enum LinePrompt {
    /// Not located, or already read.
    #[default]
    Unknown,
    /// A known prompt, written as the bytes `start..end` of the line.
    Known {
        text: Arc<str>,
        start: usize,
        end: usize,
    },
    /// A string token not seen before: read it, and remember how it was written.
    Fresh(Box<[u8]>),
}

#[derive(Debug, Default)]
pub(super) struct PromptCache {
    /// Each prompt with its JSON string token as it was written, when known.
    recent: Recent<Option<Box<[u8]>>, PROMPTS_REMEMBERED>,
}

impl PromptCache {
    /// What the string token starting at `start` of `line` is.
    pub fn locate(&self, line: &[u8], start: usize) -> LinePrompt {
        let rest = &line[start..];
        let known = self.recent.newest_first().find_map(|(text, raw)| {
            let raw = raw.as_deref()?;
            // A string token ends at its own closing quote, so a token
            // that starts `rest` ends exactly where the copy does.
            rest.starts_with(raw).then(|| (text.clone(), raw.len()))
        });
        match known {
            Some((text, len)) => LinePrompt::Known {
                text,
                start,
                end: start + len,
            },
            None => match super::raw_scan::string_end(
                &line[..line.len().min(start + MAX_REMEMBERED_PROMPT_BYTES)],
                start,
            ) {
                Some(end) => LinePrompt::Fresh(line[start..end].into()),
                None => LinePrompt::Unknown,
            },
        }
    }

    /// The shared copy of `text`, written as `raw` when known.
    pub fn intern(&mut self, text: &str, raw: Option<Box<[u8]>>) -> Arc<str> {
        if text.len() > MAX_REMEMBERED_PROMPT_BYTES {
            return text.into();
        }
        let (shared, known_raw) = self.recent.intern(text, || None);
        if raw.is_some() {
            *known_raw = raw;
        }
        shared.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_written_before_is_found_with_its_extent() {
        let mut cache = PromptCache::default();
        let line = br#"{"system_prompt": "a\"b\n", "x": 1}"#;
        let LinePrompt::Fresh(raw) = cache.locate(line, 18) else {
            panic!("first sight is fresh");
        };
        assert_eq!(&*raw, br#""a\"b\n""#);
        let text = cache.intern("a\"b\n", Some(raw));
        match cache.locate(line, 18) {
            LinePrompt::Known {
                text: found,
                start,
                end,
            } => {
                assert!(Arc::ptr_eq(&found, &text));
                assert_eq!(&line[start..end], br#""a\"b\n""#);
            }
            other => panic!("expected a known prompt, got {other:?}"),
        }
        // The same text written differently is read again, then shared.
        let other = br#"{"system_prompt": "a\u0022b\n"}"#;
        assert!(matches!(cache.locate(other, 18), LinePrompt::Fresh(_)));
        assert!(Arc::ptr_eq(&cache.intern("a\"b\n", None), &text));
    }

    #[test]
    fn huge_prompts_are_not_remembered() {
        let mut cache = PromptCache::default();
        let huge = "x".repeat(MAX_REMEMBERED_PROMPT_BYTES + 1);
        let line = format!("{{\"system_prompt\": \"{huge}\"}}");
        assert!(matches!(
            cache.locate(line.as_bytes(), 18),
            LinePrompt::Unknown
        ));
        let a = cache.intern(&huge, None);
        assert!(!Arc::ptr_eq(&a, &cache.intern(&huge, None)));
        assert_eq!(cache.recent.newest_first().count(), 0);
    }

    #[test]
    fn only_the_newest_prompts_are_kept() {
        let mut cache = PromptCache::default();
        let first = cache.intern("p0", None);
        for i in 1..=PROMPTS_REMEMBERED {
            cache.intern(&format!("p{i}"), None);
        }
        assert!(!Arc::ptr_eq(&cache.intern("p0", None), &first));
    }
}
