//! The three tool-call formats (upstream's `parse_llm_response_for_tool_calls`):
//! Responses API `function_call` items, Chat Completions `tool_calls`, and
//! MCP-XML blocks in the assistant text.

use std::sync::OnceLock;

use memchr::memmem::Finder;

use regex::Regex;
use serde_json::Value as Json;

use super::arguments::{
    filter_none_values, lenient_json_loads, safe_json_loads, JsonPath, ParsedArguments,
    ParserRaised,
};
use super::json_repair::Fixes;
use super::pytext::{is_py_space, py_strip, PY_SPACE_CLASS};
use crate::pyjson::Value;

/// A tool call as the parser returns it, before argument fixes.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    pub server_name: String,
    pub tool_name: String,
    pub arguments: Value,
    /// The call id (`null` for MCP-XML calls).
    pub id: Json,
    pub json: JsonPath,
    /// What json_repair fixed, for the `repaired` path (else empty).
    pub fixes: Fixes,
    /// `filter_none_values` dropped at least one key.
    pub none_filtered: bool,
}

/// Which tool-call shape a response carries, so which parser it goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFormat {
    Responses,
    ChatCompletions,
    McpXml,
}

/// Picks the parser: `output` present → Responses; a non-empty `tool_calls` →
/// Chat Completions; otherwise MCP-XML over the text.
pub fn format_of(tool_calls: Option<&Json>, output: Option<&Json>) -> CallFormat {
    if output.is_some() {
        CallFormat::Responses
    } else if tool_calls.is_some_and(truthy) {
        CallFormat::ChatCompletions
    } else {
        CallFormat::McpXml
    }
}

/// Parses all tool calls of one response.
pub fn parse_tool_calls(
    text: &str,
    tool_calls: Option<&Json>,
    output: Option<&Json>,
) -> Result<Vec<ParsedCall>, ParserRaised> {
    match format_of(tool_calls, output) {
        CallFormat::Responses => parse_responses(output.unwrap_or(&Json::Null)),
        CallFormat::ChatCompletions => parse_chat(tool_calls.unwrap_or(&Json::Null)),
        CallFormat::McpXml => parse_mcp(text),
    }
}

fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64() != Some(0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

fn raised(msg: &str) -> ParserRaised {
    ParserRaised(msg.to_string())
}

/// `name.rsplit("-", 1)`, or server `unknown` when there is no dash.
pub fn split_name(name: &str) -> (String, String) {
    match name.rsplit_once('-') {
        Some((server, tool)) => (server.to_string(), tool.to_string()),
        None => ("unknown".to_string(), name.to_string()),
    }
}

fn finish(server_name: String, tool_name: String, parsed: ParsedArguments, id: Json) -> ParsedCall {
    let (mut arguments, json, fixes) = parsed;
    let none_filtered = filter_none_values(&mut arguments);
    ParsedCall {
        server_name,
        tool_name,
        arguments,
        id,
        json,
        fixes,
        none_filtered,
    }
}

fn parse_responses(output: &Json) -> Result<Vec<ParsedCall>, ParserRaised> {
    let items = match output {
        Json::Array(items) => items.as_slice(),
        other if !truthy(other) => &[],
        _ => return Err(raised("AttributeError: output items are not objects")),
    };
    let mut calls = Vec::new();
    for item in items {
        let Json::Object(item) = item else {
            return Err(raised("AttributeError: output item has no attribute 'get'"));
        };
        if item.get("type").and_then(Json::as_str) != Some("function_call") {
            continue;
        }
        let name = match item.get("name") {
            None => "",
            Some(Json::String(s)) => s.as_str(),
            Some(_) => return Err(raised("TypeError: function_call name is not a string")),
        };
        let (server, tool) = split_name(name);
        let Some(Json::String(arguments)) = item.get("arguments") else {
            return Err(raised(
                "TypeError: the JSON object must be str, not NoneType",
            ));
        };
        let parsed = safe_json_loads(arguments)?;
        let id = item.get("call_id").cloned().unwrap_or(Json::Null);
        calls.push(finish(server, tool, parsed, id));
    }
    Ok(calls)
}

fn parse_chat(tool_calls: &Json) -> Result<Vec<ParsedCall>, ParserRaised> {
    let Json::Array(entries) = tool_calls else {
        return Err(raised("TypeError: tool_calls is not a list"));
    };
    let mut calls = Vec::new();
    for entry in entries {
        let function = entry
            .get("function")
            .and_then(Json::as_object)
            .ok_or_else(|| raised("AttributeError: tool call has no 'function'"))?;
        let Some(Json::String(name)) = function.get("name") else {
            return Err(raised(
                "AttributeError: tool call function has no string 'name'",
            ));
        };
        let (server, tool) = split_name(name);
        let Some(Json::String(arguments)) = function.get("arguments") else {
            return Err(raised(
                "TypeError: the JSON object must be str, not NoneType",
            ));
        };
        let parsed = lenient_json_loads(arguments)?;
        let id = entry.get("id").cloned().unwrap_or(Json::Null);
        calls.push(finish(server, tool, parsed, id));
    }
    Ok(calls)
}

fn mcp_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let s = PY_SPACE_CLASS;
        let pattern = format!(
            r"(?s)<use_mcp_tool>{s}*<server_name>(.*?)</server_name>{s}*<tool_name>(.*?)</tool_name>{s}*<arguments>{s}*(.*?){s}*</arguments>{s}*</use_mcp_tool>"
        );
        // A fixed pattern: compiling it cannot fail.
        Regex::new(&pattern).expect("MCP pattern")
    })
}

/// The MCP-XML blocks in `text`, as `(server, tool, arguments)` text, stripped.
///
/// Equivalent to upstream's `re.findall` with its pattern. The pattern is a
/// chain of literals, lazy groups and whitespace runs, so a walk over the
/// literals in the backtracker's order finds the same matches, usually
/// much faster than the regex engine. The walk has a work budget; past it
/// (adversarial text) the regex, which is linear-time, decides.
pub fn mcp_blocks(text: &str) -> Vec<(&str, &str, &str)> {
    let open = finder(&OPEN_TOOL, "<use_mcp_tool>");
    if open.find(text.as_bytes()).is_none() {
        return Vec::new();
    }
    let mut budget = Budget::for_text(text);
    let mut blocks = Vec::new();
    let mut pos = 0;
    while let Some(off) = open.find(&text.as_bytes()[pos..]) {
        let start = pos + off;
        match walk_match(&text[start..], &mut budget) {
            Walk::Match(end, (g1, g2, g3)) => {
                blocks.push((py_strip(g1), py_strip(g2), py_strip(g3)));
                pos = start + end;
            }
            // `<` is one byte: the next search starts on a char boundary.
            Walk::NoMatch => pos = start + 1,
            Walk::OutOfBudget => return mcp_blocks_by_regex(text),
        }
    }
    blocks
}

/// The regex route: matches on the DFA, groups by the walk within each match
/// (or, failing that, the regex's capture search).
pub fn mcp_blocks_by_regex(text: &str) -> Vec<(&str, &str, &str)> {
    let re = mcp_pattern();
    re.find_iter(text)
        .filter_map(|m| {
            let mut budget = Budget::for_text(m.as_str());
            let (g1, g2, g3) = match walk_match(m.as_str(), &mut budget) {
                Walk::Match(end, groups) if end == m.len() => groups,
                _ => {
                    let c = re.captures(m.as_str())?;
                    let g = |i| c.get(i).map_or("", |g| g.as_str());
                    (g(1), g(2), g(3))
                }
            };
            Some((py_strip(g1), py_strip(g2), py_strip(g3)))
        })
        .collect()
}

static OPEN_TOOL: OnceLock<Finder<'static>> = OnceLock::new();
static END_SERVER: OnceLock<Finder<'static>> = OnceLock::new();
static END_TOOL: OnceLock<Finder<'static>> = OnceLock::new();
static END_ARGS: OnceLock<Finder<'static>> = OnceLock::new();

fn finder(
    cell: &'static OnceLock<Finder<'static>>,
    needle: &'static str,
) -> &'static Finder<'static> {
    cell.get_or_init(|| Finder::new(needle))
}

/// Bytes the walk may scan before handing over to the regex.
struct Budget(usize);

impl Budget {
    fn for_text(text: &str) -> Budget {
        Budget(8 * text.len() + 4096)
    }

    fn spend(&mut self, bytes: usize) -> bool {
        match self.0.checked_sub(bytes) {
            Some(left) => {
                self.0 = left;
                true
            }
            None => false,
        }
    }
}

enum Walk<'a> {
    /// The match's length and its three groups (the third may keep trailing
    /// whitespace, which the caller strips anyway).
    Match(usize, (&'a str, &'a str, &'a str)),
    NoMatch,
    OutOfBudget,
}

/// Matches the pattern at the start of `s` (which begins with
/// `<use_mcp_tool>`) the way a backtracking engine would: each lazy group
/// tries the next closing tag in turn; every whitespace run is followed by a
/// literal starting with `<`, so it never gives characters back.
fn walk_match<'a>(s: &'a str, budget: &mut Budget) -> Walk<'a> {
    const CLOSE: &str = "</use_mcp_tool>";
    let Some(g1s) = s
        .strip_prefix("<use_mcp_tool>")
        .and_then(|_| after(s, skip_py_space(s, "<use_mcp_tool>".len()), "<server_name>"))
    else {
        return Walk::NoMatch;
    };
    let mut out_of_budget = false;
    let mut from1 = g1s;
    while let Some(g1e) = next_occurrence(
        s,
        from1,
        finder(&END_SERVER, "</server_name>"),
        budget,
        &mut out_of_budget,
    ) {
        from1 = g1e + "</server_name>".len();
        let Some(g2s) = after(s, skip_py_space(s, from1), "<tool_name>") else {
            continue;
        };
        let mut from2 = g2s;
        while let Some(g2e) = next_occurrence(
            s,
            from2,
            finder(&END_TOOL, "</tool_name>"),
            budget,
            &mut out_of_budget,
        ) {
            from2 = g2e + "</tool_name>".len();
            let Some(args) = after(s, skip_py_space(s, from2), "<arguments>") else {
                continue;
            };
            let g3s = skip_py_space(s, args);
            let mut from3 = g3s;
            while let Some(q) = next_occurrence(
                s,
                from3,
                finder(&END_ARGS, "</arguments>"),
                budget,
                &mut out_of_budget,
            ) {
                from3 = q + "</arguments>".len();
                let e = skip_py_space(s, from3);
                if s[e..].starts_with(CLOSE) {
                    return Walk::Match(e + CLOSE.len(), (&s[g1s..g1e], &s[g2s..g2e], &s[g3s..q]));
                }
            }
            if out_of_budget {
                return Walk::OutOfBudget;
            }
        }
        if out_of_budget {
            return Walk::OutOfBudget;
        }
    }
    if out_of_budget {
        Walk::OutOfBudget
    } else {
        Walk::NoMatch
    }
}

/// The next occurrence of `needle` in `s` at or after `from`, charging the
/// bytes scanned to the budget.
fn next_occurrence(
    s: &str,
    from: usize,
    needle: &Finder<'_>,
    budget: &mut Budget,
    out_of_budget: &mut bool,
) -> Option<usize> {
    let hay = s.as_bytes().get(from..)?;
    let found = needle.find(hay);
    let scanned = found.map_or(hay.len(), |i| i + needle.needle().len());
    if !budget.spend(scanned + 64) {
        *out_of_budget = true;
        return None;
    }
    found.map(|i| from + i)
}

/// The index after `lit` when `s[i..]` starts with it.
fn after(s: &str, i: usize, lit: &str) -> Option<usize> {
    s.get(i..)?.starts_with(lit).then(|| i + lit.len())
}

fn skip_py_space(s: &str, i: usize) -> usize {
    s[i..]
        .char_indices()
        .find(|(_, c)| !is_py_space(*c))
        .map_or(s.len(), |(k, _)| i + k)
}

/// MCP-XML calls. `safe_json_loads` only raises on inputs Python cannot
/// decode at all (too deep, oversized ints); that aborts the whole parse.
fn parse_mcp(text: &str) -> Result<Vec<ParsedCall>, ParserRaised> {
    mcp_blocks(text)
        .into_iter()
        .map(|(server, tool, arguments)| {
            Ok(finish(
                server.to_string(),
                tool.to_string(),
                safe_json_loads(arguments)?,
                Json::Null,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::dump;
    use serde_json::json;

    #[test]
    fn mcp_blocks_are_found_and_stripped() {
        let text = "hi <use_mcp_tool>\n<server_name> s </server_name>\n<tool_name>t</tool_name>\n<arguments>\n{\"q\": \"a\", \"x\": null}\n</arguments>\n</use_mcp_tool> and <use_mcp_tool><server_name>s2</server_name><tool_name>t2</tool_name><arguments>[1]</arguments></use_mcp_tool>";
        let calls = parse_mcp(text).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].server_name.as_str(), calls[0].tool_name.as_str()),
            ("s", "t")
        );
        assert_eq!(dump(&calls[0].arguments), r#"{"q": "a"}"#);
        assert!(calls[0].none_filtered);
        assert_eq!(calls[1].json, JsonPath::Strict);
    }

    #[test]
    fn literal_walk_agrees_with_regex_captures() {
        let cases = [
            "<use_mcp_tool> <server_name>a</server_name>x</server_name>\n<tool_name>t</tool_name><arguments> {} </arguments></use_mcp_tool>",
            "<use_mcp_tool><server_name>a</server_name><tool_name>t</tool_name>y</tool_name><arguments>[1]</arguments> z </arguments>\u{1f}</use_mcp_tool>",
            "<use_mcp_tool><server_name></server_name><tool_name></tool_name><arguments></arguments></use_mcp_tool>",
            "<use_mcp_tool><server_name>s</server_name> <tool_name>t</tool_name> <arguments>\n{\"a\": \"</arguments>\"}\n</arguments>\n</use_mcp_tool>",
        ];
        let re = mcp_pattern();
        for text in cases {
            for m in re.find_iter(text) {
                let c = re.captures(m.as_str()).unwrap();
                let want: Vec<&str> = (1..=3)
                    .map(|i| py_strip(c.get(i).unwrap().as_str()))
                    .collect();
                let mut budget = Budget::for_text(m.as_str());
                let Walk::Match(end, (a, b, g)) = walk_match(m.as_str(), &mut budget) else {
                    panic!("walk fails on {text:?}");
                };
                assert_eq!(end, m.len());
                assert_eq!(
                    vec![py_strip(a), py_strip(b), py_strip(g)],
                    want,
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn walk_and_regex_find_the_same_blocks() {
        let texts = [
            "<use_mcp_tool><server_name>a</server_name><tool_name>t</tool_name><arguments>1</arguments></use_mcp_tool>x<use_mcp_tool><server_name>b</server_name><tool_name>u</tool_name><arguments>2</arguments></use_mcp_tool>",
            "<use_mcp_tool><use_mcp_tool><server_name>a</server_name><tool_name>t</tool_name><arguments>1</arguments></use_mcp_tool>",
            "<use_mcp_tool><server_name>a</server_name><tool_name>t</tool_name><arguments>1</arguments><use_mcp_tool><server_name>b</server_name><tool_name>u</tool_name><arguments>2</arguments></use_mcp_tool>",
            "<use_mcp_tool><server_name>a</server_name>\n<tool_name>t</tool_name>\n<arguments>\n{}\n</arguments>\n</use_mcp_tool></use_mcp_tool>",
            "no tools here",
        ];
        for text in texts {
            assert_eq!(mcp_blocks(text), mcp_blocks_by_regex(text), "{text:?}");
        }
        let adversarial =
            "<use_mcp_tool><server_name>".repeat(3000) + &"</server_name>".repeat(3000);
        assert_eq!(mcp_blocks(&adversarial), mcp_blocks_by_regex(&adversarial));
    }

    #[test]
    fn incomplete_block_is_not_a_call() {
        assert!(parse_mcp("<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{}</arguments>").unwrap().is_empty());
    }

    #[test]
    fn chat_completions_split_names() {
        let tc = json!([{"id": "c1", "type": "function", "function": {"name": "a-b-c", "arguments": "{'q': True}"}},
                        {"id": "c2", "type": "function", "function": {"name": "plain", "arguments": "{}"}}]);
        let calls = parse_tool_calls("", Some(&tc), None).unwrap();
        assert_eq!(
            (calls[0].server_name.as_str(), calls[0].tool_name.as_str()),
            ("a-b", "c")
        );
        assert_eq!(calls[0].json, JsonPath::Lenient);
        assert_eq!(calls[1].server_name, "unknown");
        assert_eq!(calls[1].id, json!("c2"));
    }

    #[test]
    fn bad_shapes_raise() {
        let no_args = json!([{"type": "function_call", "name": "a-b", "call_id": "x"}]);
        assert!(parse_tool_calls("", None, Some(&no_args)).is_err());
        assert!(parse_tool_calls("", None, Some(&json!(["x"]))).is_err());
        assert!(parse_tool_calls("", Some(&json!([{"id": "1"}])), None).is_err());
        assert_eq!(
            parse_tool_calls("", None, Some(&json!([]))).unwrap(),
            vec![]
        );
    }

    #[test]
    fn empty_tool_calls_fall_back_to_text() {
        assert_eq!(format_of(Some(&json!([])), None), CallFormat::McpXml);
        assert_eq!(
            format_of(Some(&json!([])), Some(&json!([]))),
            CallFormat::Responses
        );
    }
}
