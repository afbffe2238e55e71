//! Over HTTP/2 a check on the body sees the decoded
//! body (as over HTTP/1.1), and a check does not stop `--decode` from
//! counting the decoded bytes.

use stampede_testkit::{binary, one_thread, run_stampede, spawn_target};

#[test]
fn http2_body_checks_see_the_decoded_body() {
    let target = spawn_target(one_thread());
    for coding in ["br", "gzip", "zstd", "deflate"] {
        let url = format!("http://{}/{coding}", target.local_addr());
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--http2",
                "-n",
                "4",
                "-c",
                "1",
                "-t",
                "1",
                // The decoded body starts with the 64-byte alphabet and
                // repeats it. The check is anchored at the start and spans the
                // first repeat: an encoded body fails it, even zstd's, which
                // holds the first 64 bytes verbatim as literals and codes the
                // repeats as matches.
                "--check",
                "body ~ ^abcdefghij[0-9A-Za-z-]{53}\\nabcdefghij",
            ],
        );
        let at = format!("{coding}: {}", run.result());
        assert_eq!(run.code(), Some(0), "{at}");
        assert_eq!(run.count("/requests/success"), 4, "{at}");
        assert_eq!(run.result()["checks"][0]["passed"], 4, "{at}");
        assert_eq!(run.result()["checks"][0]["failed"], 0, "{at}");
    }
}

#[test]
fn http2_decode_counts_with_a_check_too() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/br/30000", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http2",
            "--decode",
            "-n",
            "4",
            "-c",
            "1",
            "-t",
            "1",
            "--check",
            "status == 200",
        ],
    );
    let at = run.result().to_string();
    assert_eq!(run.code(), Some(0), "{at}");
    assert_eq!(run.count("/compression/encoded_responses"), 4, "{at}");
    assert_eq!(run.count("/compression/decoded_bytes"), 4 * 30_000, "{at}");
    assert!(run.count("/bytes/body") < 4 * 30_000 / 4, "{at}");
}

#[test]
fn a_users_own_accept_encoding_is_decoded_for_body_checks_on_http1_and_http2() {
    // The request asks for gzip itself (no --compressed): the check still
    // reads the decoded body, over HTTP/1.1 and HTTP/2 alike.
    let target = spawn_target(one_thread());
    let url = format!("http://{}/gzip/2000", target.local_addr());
    for http2 in [false, true] {
        let mut args = vec![
            url.as_str(),
            "-n",
            "3",
            "-c",
            "1",
            "-t",
            "1",
            "--io",
            "tokio",
            "-H",
            "Accept-Encoding: gzip",
            "--check",
            "body ~ \"^abcdefghij\"",
        ];
        if http2 {
            args.push("--http2");
        }
        let run = run_stampede(binary(), &args);
        let at = format!("http2 {http2}: {}", run.result());
        assert_eq!(run.result()["checks"][0]["passed"], 3, "{at}");
    }
}
