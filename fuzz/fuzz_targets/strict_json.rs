//! The Python-semantics strict parser: no panic; what it accepts, dump then
//! load gives back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirotrace::pyjson;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(v) = pyjson::loads(text) {
        let again = pyjson::loads(&pyjson::dump(&v)).expect("dump is loadable");
        let _ = again;
    }
});
