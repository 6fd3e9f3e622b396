//! A task log cut off mid-write (a crash during `TaskLog.save()`, a copy
//! that stopped): the JSON text up to its last complete element, closed.
//! Upstream writes the message histories before `step_logs`, so a cut
//! usually loses the end of the step log, and what precedes it still reads.

use serde_json::Value as Json;

/// Deepest nesting followed; deeper text is not salvaged.
const MAX_DEPTH: usize = 512;

/// The document cut at its last complete array element or object member
/// (an object inside a list, a message or a step, is kept whole or not at
/// all) and closed, with the 1-based line of the cut; `None` when nothing before
/// the cut parses.
pub fn complete_prefix(text: &str) -> Option<(Json, u64)> {
    let bytes = text.as_bytes();
    // Open containers: the bracket, and whether it is an array element.
    let mut stack: Vec<(u8, bool)> = Vec::new();
    // Open objects that are array elements: records (a message, a step)
    // that a cut inside would leave half there.
    let mut open_records = 0usize;
    // (cut position, open brackets there)
    let mut safe: Option<(usize, Vec<u8>)> = None;
    let mut in_string = false;
    let mut escaped = false;
    // The last byte outside strings that is not white space.
    let mut previous = 0u8;
    let snapshot = |stack: &[(u8, bool)]| stack.iter().map(|(b, _)| *b).collect::<Vec<u8>>();
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        let before = previous;
        if !b.is_ascii_whitespace() {
            previous = b;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                if stack.len() == MAX_DEPTH {
                    return None;
                }
                let element = stack.last().is_some_and(|(p, _)| *p == b'[');
                stack.push((b, element));
                if b == b'{' && element {
                    open_records += 1;
                }
                // An empty member value is complete; an empty array element
                // would be a made-up one.
                if open_records == 0 && !element && (stack.len() == 1 || before == b':') {
                    safe = Some((i + 1, snapshot(&stack)));
                }
            }
            b'}' | b']' => {
                if let Some((p, element)) = stack.pop() {
                    if p == b'{' && element {
                        open_records -= 1;
                    }
                }
                if stack.is_empty() {
                    // The document ended: nothing was cut.
                    return None;
                }
                if open_records == 0 {
                    safe = Some((i + 1, snapshot(&stack)));
                }
            }
            // The element before a comma is complete.
            b',' if open_records == 0 => safe = Some((i, snapshot(&stack))),
            _ => {}
        }
    }
    let (cut, open) = safe?;
    let mut fixed = String::with_capacity(cut + open.len());
    fixed.push_str(text.get(..cut)?);
    for c in open.iter().rev() {
        fixed.push(if *c == b'{' { '}' } else { ']' });
    }
    let value = serde_json::from_str(&fixed).ok()?;
    let line = 1 + text[..cut].matches('\n').count() as u64;
    Some((value, line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cut_document_keeps_its_complete_part() {
        let text =
            "{\n \"a\": [1, {\"b\": \"x,]}\"}, 3],\n \"steps\": [{\"n\": 1}, {\"n\": 2}, {\"n\": ";
        let (v, line) = complete_prefix(text).unwrap();
        assert_eq!(
            v,
            json!({"a": [1, {"b": "x,]}"}, 3], "steps": [{"n": 1}, {"n": 2}]})
        );
        assert_eq!(line, 3);
        // A record (an object in a list) cut in half is left out whole.
        let (v, _) = complete_prefix("{\"s\": [{\"n\": 1}, {\"n\": 2, \"m\": \"cu").unwrap();
        assert_eq!(v, json!({"s": [{"n": 1}]}));
        // Cut inside a key: the member before it stays.
        let (v, _) = complete_prefix("{\"a\": 1, \"lo").unwrap();
        assert_eq!(v, json!({"a": 1}));
        // Cut right after an opening brace.
        let (v, _) = complete_prefix("{\"a\": {").unwrap();
        assert_eq!(v, json!({"a": {}}));
        let (v, _) = complete_prefix("{\"a\": [ {\"b").unwrap();
        assert_eq!(v, json!({"a": []}));
    }

    #[test]
    fn whole_or_hopeless_documents_are_not_salvaged() {
        assert!(complete_prefix("{\"a\": 1}").is_none());
        assert!(complete_prefix("not json").is_none());
        assert!(complete_prefix("").is_none());
    }
}
