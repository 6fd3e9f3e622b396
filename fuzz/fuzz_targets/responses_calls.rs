//! Responses API `output` items of any JSON shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirotrace::parse::toolcalls::parse_tool_calls;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let output = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => v,
        Err(_) => serde_json::json!([{"type": "function_call", "name": "s-t", "arguments": text, "call_id": "x"}]),
    };
    let _ = parse_tool_calls("", None, Some(&output));
});
