//! json_repair on any text: no panic, no unbounded recursion; a repaired
//! value always serialises to JSON that the strict parser reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirotrace::parse::json_repair::repair_and_load;
use mirotrace::pyjson;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(v) = repair_and_load(text) {
        let dumped = pyjson::dump(&v);
        assert!(pyjson::loads(&dumped).is_ok(), "{dumped}");
    }
});
