//! cargo-fuzz target: the HTTP/2 client codec fed arbitrary server bytes
//! (no panic, every stream ends exactly once).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    stampede_h2::fuzzing::check_client(data);
});
