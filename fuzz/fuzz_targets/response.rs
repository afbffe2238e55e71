//! cargo-fuzz target: the client's response parser and body framer.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stampede_engine::http1::check_response_parser(data);
});
