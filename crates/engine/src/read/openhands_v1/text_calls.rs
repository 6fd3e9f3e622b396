//! OpenHands' own text tool-call format, written when the model is driven
//! without function calling (the SDK's non-native tool calling, and
//! OpenHands V0's `fn_call_converter`):
//!
//! ```text
//! <function=execute_bash>
//! <parameter=command>
//! ls -la
//! </parameter>
//! </function>
//! ```
//!
//! OpenHands stops generation at `</function`, so the last call's closing
//! tag is often missing: a call runs to its `</function>` or the end of the
//! text. A parameter's value is its text without the one newline after the
//! opening tag and before the closing one. Values stay strings (their types
//! are the tool's schema's business). This is that harness's format, read
//! here into native calls; MiroThinker's MCP format is the parser's.

use serde_json::{Map, Value as Json};

use crate::read::calls::chat_call;

const OPEN: &str = "<function=";
const CLOSE: &str = "</function>";
const PARAM: &str = "<parameter=";
const PARAM_CLOSE: &str = "</parameter>";

/// The text before the first call, and the calls (Chat Completions form,
/// ids `text-call-N`); `None` when the text holds no `<function=NAME>`.
pub fn split_text_calls(text: &str) -> Option<(String, Vec<Json>)> {
    let first = find_open(text, 0)?;
    let mut calls = Vec::new();
    let mut at = first;
    while let Some(start) = find_open(text, at) {
        let name_start = start + OPEN.len();
        let name_end = name_start + text[name_start..].find('>')?;
        let name = text[name_start..name_end].trim();
        let body_start = name_end + 1;
        let (body_end, next) = match text[body_start..].find(CLOSE) {
            Some(i) => (body_start + i, body_start + i + CLOSE.len()),
            None => {
                // Unclosed: up to the next call or the end.
                let end = find_open(text, body_start).unwrap_or(text.len());
                (end, end)
            }
        };
        let args = parameters(&text[body_start..body_end]);
        let id = Json::from(format!("text-call-{}", calls.len()));
        calls.push(chat_call(Some(&id), name, &Json::Object(args)));
        at = next;
    }
    Some((text[..first].trim_end().to_string(), calls))
}

/// Where the next `<function=NAME>` opens, from byte `from`.
fn find_open(text: &str, from: usize) -> Option<usize> {
    let i = from + text.get(from..)?.find(OPEN)?;
    let rest = &text[i + OPEN.len()..];
    let name_ok = rest.find('>').is_some_and(|end| {
        let name = &rest[..end];
        !name.trim().is_empty() && !name.contains(['<', '\n'])
    });
    if name_ok {
        Some(i)
    } else {
        find_open(text, i + OPEN.len())
    }
}

/// The `<parameter=KEY>value</parameter>` pairs of a call's body.
fn parameters(body: &str) -> Map<String, Json> {
    let mut args = Map::new();
    let mut rest = body;
    while let Some(i) = rest.find(PARAM) {
        let after = &rest[i + PARAM.len()..];
        let Some(key_end) = after.find('>') else {
            break;
        };
        let key = after[..key_end].trim().to_string();
        let value_and_more = &after[key_end + 1..];
        let (value, more) = match value_and_more.find(PARAM_CLOSE) {
            Some(j) => (
                &value_and_more[..j],
                &value_and_more[j + PARAM_CLOSE.len()..],
            ),
            None => match value_and_more.find(PARAM) {
                Some(j) => (&value_and_more[..j], &value_and_more[j..]),
                None => (value_and_more, ""),
            },
        };
        let value = value.strip_prefix('\n').unwrap_or(value);
        let value = value.strip_suffix('\n').unwrap_or(value);
        args.insert(key, Json::from(value));
        rest = more;
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(call: &Json) -> Json {
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap()
    }

    #[test]
    fn calls_with_and_without_their_closing_tag() {
        let text = "Let me look.\n\n<function=execute_bash>\n<parameter=command>\nls -la\n</parameter>\n</function>\n<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/a.py</parameter>\n";
        let (before, calls) = split_text_calls(text).unwrap();
        assert_eq!(before, "Let me look.");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["function"]["name"], "execute_bash");
        assert_eq!(args(&calls[0])["command"], "ls -la");
        assert_eq!(args(&calls[1])["path"], "/a.py");
        assert_eq!(calls[1]["id"], "text-call-1");
    }

    #[test]
    fn text_without_a_call_is_not_split() {
        assert!(split_text_calls("plain answer").is_none());
        assert!(split_text_calls("a <function=> b").is_none());
        assert!(split_text_calls("<function=x\ny>").is_none());
        let (_, calls) = split_text_calls("<function=finish>").unwrap();
        assert_eq!(args(&calls[0]), serde_json::json!({}));
    }
}
