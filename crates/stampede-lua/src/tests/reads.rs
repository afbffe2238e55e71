//! lua/reads.lua: which of `response`'s arguments a function reads, and
//! that a worker builds only those (the headers table and the body string
//! cost the most per response), with identical behaviour for scripts that
//! read them.

use super::{prepared, respond};
use mlua::{Function, Lua};
use stampede_workload::Script;

fn reads(code: &str) -> i64 {
    let lua = Lua::new();
    let reads: Function = lua.load(crate::worker::READS).call(()).unwrap();
    let f: Function = lua.load(code).eval().unwrap();
    reads.call(f).unwrap()
}

#[test]
fn the_mask_names_the_parameters_the_bytecode_reads() {
    let cases = [
        ("function() end", 0),
        ("function(status) end", 0),
        ("function(status) n = (n or 0) + 1 end", 0),
        (
            "function(status, headers, body) if status == 200 then n = 1 end end",
            1,
        ),
        ("function(s, h, b) token = h['X-Token'] end", 2),
        ("function(s, h, b) size = #b end", 4),
        ("function(s, h, b) return b end", 4),
        ("function(s, h, b) return s, h end", 3),
        (
            "function(s, h, b) for k, v in pairs(h) do last = k end end",
            2,
        ),
        ("function(s, h, b) print(s, h, b) end", 7),
        ("function(s, h, b) x = s .. b end", 5),
        ("function(s, h) h = nil end", 2),
        ("function(s, h, b) while s > 0 do s = s - 1 end end", 1),
        // Unsure: all.
        ("function(...) end", 7),
        ("function(s, h, b) local f = function() return b end end", 7),
        ("print", 7),
    ];
    for (code, expected) in cases {
        assert_eq!(reads(&format!("return {code}")), expected, "{code}");
    }
}

#[test]
fn a_response_that_reads_no_headers_still_counts_and_one_that_does_sees_them() {
    let script = prepared(
        r#"
           n, seen = 0, nil
           function response(status)
              n = n + 1
              if n == 2 then
                 response = function(status, headers, body)
                    seen = status .. " " .. headers["X-Token"] .. " " .. body
                 end
              end
           end
        "#,
        1,
    );
    {
        let mut thread = script.thread(0).unwrap();
        let headers: &[(&[u8], &[u8])] = &[(b"X-Token", b"abc")];
        for _ in 0..3 {
            respond(thread.as_mut(), 200, headers, b"body");
        }
    }
    let lua = &script;
    assert_eq!(lua.eval_in_thread::<i64>(0, "return n").unwrap(), 2);
    assert_eq!(
        lua.eval_in_thread::<String>(0, "return seen").unwrap(),
        "200 abc body"
    );
}
