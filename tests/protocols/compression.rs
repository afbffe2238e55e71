//! `--compressed` and `--decode` against the built-in target's
//! `/gzip`, `/deflate`, `/br` and `/zstd` routes and `serve --compress`,
//! on every engine path: the reactors (epoll, io_uring), tokio's
//! HTTP/1.1, HTTP/2 and HTTP/3. Byte counts are the bytes on the wire;
//! `--decode` adds the decoded bytes, which equal the uncompressed size;
//! a check on the body passes only once the body is decoded, with or
//! without `--decode`.

use stampede_testkit::{
    binary, event_loop_or_skip, one_thread, run_on_one_loop, run_stampede, spawn_target,
    TargetConfig, EVENT_LOOPS,
};

#[test]
fn every_coding_decodes_to_the_uncompressed_size_on_every_loop() {
    let target = spawn_target(one_thread());
    for coding in ["gzip", "deflate", "br", "zstd"] {
        let url = format!("http://{}/{coding}/10000", target.local_addr());
        for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
            let Some(run) = run_on_one_loop(io, &[&url, "--decode", "-n", "20", "-c", "2"]) else {
                continue;
            };
            let at = format!("{coding} --io {io}: {}", run.stderr());
            assert_eq!(run.code(), Some(0), "{at}");
            assert_eq!(run.count("/requests/success"), 20, "{at}");
            assert_eq!(run.count("/compression/decoded_bytes"), 20 * 10_000, "{at}");
            assert_eq!(run.count("/compression/encoded_responses"), 20, "{at}");
            let wire = run.count("/bytes/body");
            assert!(
                wire > 0 && wire < 20 * 10_000 / 4,
                "{at}: {wire} on the wire"
            );
            assert_eq!(
                run.result()["compression"]["accept_encoding"],
                "gzip, br, zstd",
                "{at}"
            );
            // Without --decode: the same bytes on the wire, nothing decoded.
            let Some(plain) = run_on_one_loop(io, &[&url, "--compressed", "-n", "20", "-c", "2"])
            else {
                continue;
            };
            assert_eq!(plain.count("/bytes/body"), wire, "{at}");
            let compression = &plain.result()["compression"];
            assert_eq!(compression["decode"], false, "{at}");
            assert!(compression.get("decoded_bytes").is_none(), "{at}");
        }
    }
}

#[test]
fn a_body_check_passes_only_on_the_decoded_body_without_decode() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/gzip/2000", target.local_addr());
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = run_on_one_loop(
            io,
            &[
                &url,
                "-n",
                "12",
                "-c",
                "2",
                "--check",
                "body contains \"abcdefghijklmnopqrstuvwxyz0123456789\"",
                "--check",
                "body ~ \"^abcdefghij\"",
            ],
        ) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(
            run.count("/requests/success"),
            12,
            "--io {io}: {}",
            run.result()
        );
        assert_eq!(run.count("/requests/check_failed"), 0, "--io {io}");
        assert!(run.result().get("compression").is_none(), "not asked for");
    }
}

#[test]
fn serve_compress_encodes_what_asks_and_leaves_the_rest() {
    let target = spawn_target(TargetConfig {
        compress: true,
        ..one_thread()
    });
    let url = format!("http://{}/1k.html", target.local_addr());
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(decoded) = run_on_one_loop(io, &[&url, "--decode", "-n", "10", "-c", "1"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", decoded.stderr());
        assert_eq!(decoded.count("/requests/success"), 10, "{at}");
        assert_eq!(decoded.count("/compression/encoded_responses"), 10, "{at}");
        assert_eq!(
            decoded.count("/compression/decoded_bytes"),
            10 * 1024,
            "{at}"
        );
        assert!(decoded.count("/bytes/body") < 10 * 1024 / 2, "{at}");
        // No Accept-Encoding: the page as it is, not encoded.
        let plain = run_on_one_loop(io, &[&url, "-n", "10", "-c", "1"]).expect("ran above");
        assert_eq!(plain.count("/bytes/body"), 10 * 1024, "{at}");
        // A coding it was not asked for is not sent: gzip only.
        let gzip =
            run_on_one_loop(io, &[&url, "--compressed=gzip", "--decode", "-n", "4"]).unwrap();
        assert_eq!(gzip.count("/compression/encoded_responses"), 4, "{at}");
        assert_eq!(gzip.result()["compression"]["accept_encoding"], "gzip");
    }
    // A JSON body (the /json echo) checked and extracted through the coding.
    let json = format!("http://{}/json", target.local_addr());
    let body = format!("{{\"user\":{{\"id\":42}},\"pad\":\"{}\"}}", "x".repeat(300));
    let run = run_on_one_loop(
        "auto",
        &[
            &json,
            "-m",
            "POST",
            "-b",
            &body,
            "--compressed",
            "-n",
            "6",
            "--check",
            "json($.user.id) == 42",
            "--extract",
            "id=json($.user.id)",
        ],
    )
    .expect("auto runs");
    assert_eq!(run.count("/requests/success"), 6, "{}", run.result());
    assert!(
        run.count("/bytes/body") < 6 * body.len() as u64 / 2,
        "the JSON came compressed"
    );
}

#[test]
fn http2_and_http3_decode_too() {
    let target = spawn_target(one_thread());
    let h2c = format!("http://{}/br/30000", target.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &h2c,
            "--http2",
            "--decode",
            "-n",
            "12",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/compression/decoded_bytes"), 12 * 30_000);
    assert_eq!(run.count("/compression/encoded_responses"), 12);
    assert!(run.count("/bytes/body") < 12 * 30_000 / 4);
    // The Accept-Encoding goes out over HTTP/2 too: serve --compress answers it.
    let compressing = spawn_target(TargetConfig {
        compress: true,
        ..one_thread()
    });
    let page = format!("http://{}/1k.html", compressing.local_addr());
    let run = run_stampede(
        binary(),
        &[
            &page, "--http2", "--decode", "-n", "6", "-c", "1", "-t", "1",
        ],
    );
    assert_eq!(
        run.count("/compression/encoded_responses"),
        6,
        "{}",
        run.result()
    );
    assert_eq!(run.count("/compression/decoded_bytes"), 6 * 1024);

    let quic = spawn_target(TargetConfig {
        http3: true,
        tls: Some(stampede_target::TlsConfig::new(
            stampede_target::CertSource::SelfSigned,
        )),
        ..one_thread()
    });
    let url = format!("https://127.0.0.1:{}/zstd/30000", quic.local_addr().port());
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http3",
            "--insecure",
            "--decode",
            "-n",
            "8",
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(
        run.count("/compression/decoded_bytes"),
        8 * 30_000,
        "{}",
        run.result()
    );
    assert_eq!(run.count("/compression/encoded_responses"), 8);
}

#[test]
fn the_summary_says_what_came_and_what_it_decoded_to() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/gzip/10000", target.local_addr());
    let output = stampede_testkit::stampede(&[&url, "--decode", "-n", "5", "-c", "1", "-t", "1"]);
    let text = stampede_testkit::text(&output.stdout);
    assert!(output.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Compression"))
        .unwrap_or_else(|| panic!("a Compression line in:\n{text}"));
    assert!(
        line.contains("Accept-Encoding: gzip, br, zstd; 5 of 5 responses encoded"),
        "{line}"
    );
    assert!(line.contains("48.83KiB decoded"), "{line}");
}
