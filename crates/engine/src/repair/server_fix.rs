//! The server-name repair: a tool→server mapping read from the system
//! prompt's `## Server name:` / `### Tool name:` lines, applied to the MCP-XML
//! in the assistant text before it is parsed (upstream's
//! `parse_tool_server_mapping` and `fix_server_name_in_text`).

use std::borrow::Cow;
use std::sync::OnceLock;

use indexmap::IndexMap;
use memchr::memmem::Finder;

use crate::parse::pytext::{is_py_space, py_strip};
use crate::policy::Policy;

/// tool name → correct server name, in the order tools first appear.
pub type ToolServerMapping = IndexMap<String, String>;

/// Reads the mapping for the policy's target tools from a system prompt
/// (builds the policy's tool set each call: a replay uses
/// [`ServerFixer::mapping`]).
pub fn parse_mapping(system_prompt: &str, policy: &Policy) -> ToolServerMapping {
    ServerFixer::new(policy).mapping(system_prompt)
}

/// `re.match(prefix + r"\s*(.+)", line)` then `.strip()`: the prefix must
/// start the line and be followed by at least one character.
fn header_value<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(prefix)?;
    (!rest.is_empty()).then(|| py_strip(rest))
}

/// Rewrites wrong server and tool names in MCP-XML tool calls.
///
/// Upstream compiles one regex per target tool; here one hand-written
/// matcher serves them all ([`replace_servers`]) and the target tools are a
/// set, so a policy of 200 000 tools costs its strings and no more.
pub struct ServerFixer {
    tools: foldhash::HashSet<String>,
    python_aliases: Vec<String>,
}

impl ServerFixer {
    pub fn new(policy: &Policy) -> ServerFixer {
        ServerFixer {
            tools: policy.server_fix_tools.iter().cloned().collect(),
            python_aliases: policy.python_aliases.clone(),
        }
    }

    /// Reads the mapping for the target tools from a system prompt
    /// (upstream's `parse_tool_server_mapping`).
    pub fn mapping(&self, system_prompt: &str) -> ToolServerMapping {
        let mut mapping = ToolServerMapping::new();
        let mut current_server: Option<String> = None;
        for line in system_prompt.split('\n') {
            if let Some(server) = header_value(line, "## Server name:") {
                current_server = Some(server.to_string());
                continue;
            }
            if let Some(tool) = header_value(line, "### Tool name:") {
                // An empty server name is falsy upstream: its tools are not mapped.
                if let Some(server) = current_server.as_deref().filter(|s| !s.is_empty()) {
                    if self.tools.contains(tool) {
                        mapping.insert(tool.to_string(), server.to_string());
                    }
                }
            }
        }
        mapping
    }

    /// Applies the mapping to `text`, exactly as upstream (including its
    /// quirk: a tool is left alone when the correct server tag appears
    /// anywhere in the text, even on another call).
    ///
    /// Upstream tests `tag in text` for each candidate tag; the same answers
    /// come here from one scan for where `<tool_name>` / `<server_name>`
    /// tags open, then a prefix check per candidate.
    pub fn fix<'t>(&self, text: &'t str, mapping: &ToolServerMapping) -> Cow<'t, str> {
        let mut text = Cow::Borrowed(text);
        if mapping.is_empty() {
            return text;
        }
        let mut tools = TagIndex::new(&text, tool_open());
        // Every rewrite needs a `<tool_name>` tag: most texts are done here.
        if tools.is_empty() {
            return text;
        }
        if mapping.contains_key("run_python_code") {
            for wrong in &self.python_aliases {
                if tools.has(&text, wrong, "</tool_name>") {
                    let tag = format!("<tool_name>{wrong}</tool_name>");
                    text = Cow::Owned(text.replace(&tag, "<tool_name>run_python_code</tool_name>"));
                    tools = TagIndex::new(&text, tool_open());
                }
            }
        }
        let mut servers: Option<TagIndex> = None;
        for (tool, server) in mapping {
            if !tools.has(&text, tool, "</tool_name>") {
                continue;
            }
            let servers = servers.get_or_insert_with(|| TagIndex::new(&text, server_open()));
            if servers.has(&text, server, "</server_name>") {
                continue;
            }
            if let Some(replaced) = replace_servers(&text, tool, server) {
                text = Cow::Owned(replaced);
                tools = TagIndex::new(&text, tool_open());
                *servers = TagIndex::new(&text, server_open());
            }
        }
        text
    }
}

/// Rewrites every `<server_name>…</server_name>` right before the tool's
/// tag to name `server`; `None` when there is none. The same matches as
/// upstream's `re.sub(r"<server_name>[^<]+</server_name>(\s*<tool_name>TOOL</tool_name>)", …)`:
/// a match can only open at a `<server_name>` tag, and from there the
/// pattern has one way to match (`[^<]+` runs to the next `<`, which must
/// open `</server_name>`; `\s*` cannot take the `<` of the tool's tag), so
/// testing each tag in order, from the end of the last match, finds
/// exactly the regex's leftmost, non-overlapping matches.
fn replace_servers(text: &str, tool: &str, server: &str) -> Option<String> {
    const OPEN: &str = "<server_name>";
    const CLOSE: &str = "</server_name>";
    let mut out = String::new();
    let mut last = 0;
    for at in server_open().find_iter(text.as_bytes()) {
        if at < last {
            continue;
        }
        let Some((rest, end)) = server_match(text, at + OPEN.len(), tool) else {
            continue;
        };
        if out.is_empty() {
            out.reserve(text.len() + 32);
        }
        out.push_str(&text[last..at]);
        out.push_str(OPEN);
        out.push_str(server);
        out.push_str(CLOSE);
        out.push_str(rest);
        last = end;
    }
    if last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// From just past a `<server_name>` tag: one or more characters other than
/// `<`, `</server_name>`, Python white space, `<tool_name>TOOL</tool_name>`.
/// Returns the part after `</server_name>` and where the match ends.
fn server_match<'t>(text: &'t str, from: usize, tool: &str) -> Option<(&'t str, usize)> {
    const CLOSE: &str = "</server_name>";
    let name_len = text[from..].find('<')?;
    if name_len == 0 || !text[from + name_len..].starts_with(CLOSE) {
        return None;
    }
    let after = from + name_len + CLOSE.len();
    let spaces = text[after..]
        .find(|c: char| !is_py_space(c))
        .unwrap_or(text.len() - after);
    let tag_at = after + spaces;
    let tag = &text[tag_at..];
    let tail = tag
        .strip_prefix("<tool_name>")?
        .strip_prefix(tool)?
        .strip_prefix("</tool_name>")?;
    let end = text.len() - tail.len();
    Some((&text[after..end], end))
}

fn tool_open() -> &'static Finder<'static> {
    static F: OnceLock<Finder<'static>> = OnceLock::new();
    F.get_or_init(|| Finder::new("<tool_name>"))
}

fn server_open() -> &'static Finder<'static> {
    static F: OnceLock<Finder<'static>> = OnceLock::new();
    F.get_or_init(|| Finder::new("<server_name>"))
}

/// Where an opening tag occurs in a text, to answer "is `<tag>NAME</tag>`
/// a substring?" for many names with one scan.
struct TagIndex {
    /// Byte offsets just past each opening tag.
    starts: Vec<usize>,
}

impl TagIndex {
    fn new(text: &str, open: &Finder<'_>) -> TagIndex {
        let n = open.needle().len();
        TagIndex {
            starts: open.find_iter(text.as_bytes()).map(|p| p + n).collect(),
        }
    }

    fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Whether `name` followed by `close` directly follows an opening tag.
    fn has(&self, text: &str, name: &str, close: &str) -> bool {
        self.starts.iter().any(|&p| {
            let rest = &text.as_bytes()[p..];
            rest.starts_with(name.as_bytes()) && rest[name.len()..].starts_with(close.as_bytes())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "## Server name: tool-python\n### Tool name: run_python_code\n## Server name: search\n### Tool name: google_search\n### Tool name: other\n## Server name:   \n### Tool name: scrape_and_extract_info\n";

    fn call(server: &str, tool: &str) -> String {
        format!("<use_mcp_tool>\n<server_name>{server}</server_name>\n<tool_name>{tool}</tool_name>\n<arguments>{{}}</arguments>\n</use_mcp_tool>")
    }

    #[test]
    fn mapping_keeps_only_target_tools_with_named_servers() {
        let m = parse_mapping(PROMPT, &Policy::default());
        assert_eq!(m.len(), 2);
        assert_eq!(m["run_python_code"], "tool-python");
        assert_eq!(m["google_search"], "search");
    }

    #[test]
    fn fixes_server_and_python_alias() {
        let p = Policy::default();
        let m = parse_mapping(PROMPT, &p);
        let f = ServerFixer::new(&p);
        let wrong = call("wrong", "python");
        assert_eq!(f.fix(&wrong, &m), call("tool-python", "run_python_code"));
        assert_eq!(f.fix(&call("x", "other"), &m), call("x", "other"));
    }

    #[test]
    fn correct_tag_elsewhere_blocks_the_fix() {
        let p = Policy::default();
        let m = parse_mapping(PROMPT, &p);
        let text = format!(
            "{}{}",
            call("tool-python", "python"),
            call("tool-code", "run_python_code")
        );
        let fixed = ServerFixer::new(&p).fix(&text, &m);
        assert_eq!(
            fixed,
            format!(
                "{}{}",
                call("tool-python", "run_python_code"),
                call("tool-code", "run_python_code")
            )
        );
    }

    #[test]
    fn empty_mapping_changes_nothing() {
        let p = Policy::default();
        let t = call("a", "python");
        assert_eq!(ServerFixer::new(&p).fix(&t, &ToolServerMapping::new()), t);
    }

    /// The hand-written matcher against upstream's regex, on texts built
    /// from the pieces that decide a match.
    #[test]
    fn matcher_agrees_with_upstreams_regex() {
        use crate::parse::pytext::PY_SPACE_CLASS;
        let pieces = [
            "<server_name>",
            "</server_name>",
            "<tool_name>t</tool_name>",
            "<tool_name>tt</tool_name>",
            "<tool_name>",
            "s",
            " \u{1f}\n",
            "<",
            "x<server_name>y",
        ];
        let tool = "t";
        let re = regex::Regex::new(&format!(
            r"<server_name>[^<]+</server_name>({PY_SPACE_CLASS}*{})",
            regex::escape("<tool_name>t</tool_name>")
        ))
        .unwrap();
        let mut checked = 0;
        // Every text of up to five pieces.
        let mut stack: Vec<Vec<usize>> = vec![vec![]];
        while let Some(seq) = stack.pop() {
            let text: String = seq.iter().map(|&i| pieces[i]).collect();
            let want = re.is_match(&text).then(|| {
                re.replace_all(&text, "<server_name>S</server_name>$1")
                    .into_owned()
            });
            assert_eq!(replace_servers(&text, tool, "S"), want, "{text:?}");
            checked += 1;
            if seq.len() < 5 {
                for i in 0..pieces.len() {
                    let mut next = seq.clone();
                    next.push(i);
                    stack.push(next);
                }
            }
        }
        assert!(checked > 60_000);
    }
}
