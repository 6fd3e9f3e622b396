//! The MCP-XML parser with the server-name repair on any assistant text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirotrace::repair::server_fix::{parse_mapping, ServerFixer};
use mirotrace::parse::toolcalls::parse_tool_calls;
use mirotrace::policy::Policy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let policy = Policy::default();
    let (prompt, content) = text.split_once('\u{0}').unwrap_or(("## Server name: tool-python\n### Tool name: run_python_code\n## Server name: s\n### Tool name: google_search\n", text));
    let mapping = parse_mapping(prompt, &policy);
    let fixed = ServerFixer::new(&policy).fix(content, &mapping);
    let _ = parse_tool_calls(&fixed, None, None);
});
