//! Chat Completions `tool_calls` of any JSON shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirotrace::parse::toolcalls::parse_tool_calls;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let calls = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => v,
        // Not JSON: use it as the arguments string of a well-formed call.
        Err(_) => serde_json::json!([{"id": "c", "type": "function", "function": {"name": "s-t", "arguments": text}}]),
    };
    let _ = parse_tool_calls("", Some(&calls), None);
});
