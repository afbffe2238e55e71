//! cargo-fuzz target: the built-in target's request parser and chunked decoder.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stampede_target::fuzzing::check_request_parser(data);
});
