//! A wrk script with `--http2` or `--http3`: not supported yet, refused in
//! one line that names the script, before the script runs or anything
//! connects (trial D15: the refusal used to be the workload's message,
//! which never named the script).

#[path = "lua_support/mod.rs"]
mod support;

use stampede_testkit::binary;
use std::net::TcpListener;
use support::script;

#[test]
fn http2_and_http3_with_a_script_are_refused_in_one_line_naming_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let file = script(
        "h2.lua",
        "print('top level ran')\nfunction request() return wrk.format() end\n",
    );
    let file = file.to_str().unwrap();
    for (scheme, flag, version) in [
        ("http", "--http2", "HTTP/2"),
        ("https", "--http3", "HTTP/3"),
    ] {
        let url = format!("{scheme}://{addr}/");
        let (code, stdout, stderr) =
            support::run(binary(), &["run", &url, "-d", "1s", flag, "--script", file]);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "--script {file}: {version} scripts are not supported yet"
            )),
            "{flag}: {stderr}"
        );
        assert!(stderr.contains(&format!("drop {flag}")), "{flag}: {stderr}");
        assert!(!stdout.contains("top level ran"), "{flag}: {stdout}");
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(listener.accept().is_err(), "nothing connected");
}
