//! curl as the independent peer of the built-in target's compression:
//! curl's own decoders turn `/gzip/{n}` (and `/br`, `/zstd`
//! where this curl was built with them) into exactly the bytes of
//! `/bytes/{n}`'s pattern, and `serve --compress` answers `curl
//! --compressed` with an encoded page that decodes to the plain page,
//! `Vary: Accept-Encoding` and a Content-Length that frames it.

use stampede_testkit::{one_thread, spawn_target, TargetConfig};
use std::path::Path;
use std::process::Command;

fn curl(program: &Path, args: &[&str]) -> Vec<u8> {
    let output = Command::new(program)
        .args(["--silent", "--show-error"])
        .args(args)
        .output()
        .expect("curl runs");
    assert!(output.status.success(), "curl {args:?}: {output:?}");
    output.stdout
}

#[test]
fn curl_decodes_each_route_to_the_plain_bytes() {
    let program = stampede_testkit::require_tool!("curl");
    let target = spawn_target(one_thread());
    let base = format!("http://{}", target.local_addr());
    let features = String::from_utf8_lossy(&curl(&program, &["--version"])).to_lowercase();
    let plain = curl(&program, &[&format!("{base}/bytes/10000")]);
    assert_eq!(plain.len(), 10_000);
    for (route, feature) in [
        ("gzip", "libz"),
        ("deflate", "libz"),
        ("br", "brotli"),
        ("zstd", "zstd"),
    ] {
        if !features.contains(feature) {
            stampede_testkit::skip_or_fail(
                &format!("this curl has no {feature}, so /{route} was not checked with it"),
                "install a curl built with it (apt-get install -y curl)",
            );
            continue;
        }
        let decoded = curl(
            &program,
            &["--compressed", &format!("{base}/{route}/10000")],
        );
        assert_eq!(decoded, plain, "/{route}/10000 decoded by curl");
        let raw = curl(&program, &[&format!("{base}/{route}/10000")]);
        assert!(raw.len() < 2000 && raw != plain, "/{route} is sent encoded");
    }
}

#[test]
fn serve_compress_answers_curl_compressed_with_a_framed_encoded_page() {
    let program = stampede_testkit::require_tool!("curl");
    let target = spawn_target(TargetConfig {
        compress: true,
        ..one_thread()
    });
    let url = format!("http://{}/1k.html", target.local_addr());
    let plain = curl(&program, &[&url]);
    assert_eq!(plain.len(), 1024);
    let decoded = curl(&program, &["--compressed", &url]);
    assert_eq!(decoded, plain);
    let head = String::from_utf8_lossy(&curl(
        &program,
        &[
            "-H",
            "Accept-Encoding: gzip",
            "-D",
            "-",
            "-o",
            "/dev/null",
            &url,
        ],
    ))
    .to_lowercase();
    assert!(head.contains("content-encoding: gzip\r\n"), "{head}");
    assert!(head.contains("vary: accept-encoding\r\n"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("a Content-Length in {head}"));
    assert!(length < 1024 / 2, "{length}");
    // Asked for nothing this server encodes: the page as it is.
    let identity = curl(
        &program,
        &["-H", "Accept-Encoding: identity", "-D", "-", &url],
    );
    assert!(!String::from_utf8_lossy(&identity)
        .to_lowercase()
        .contains("content-encoding"));
    // Over HTTP/2 (h2c) too.
    let h2 = curl(&program, &["--http2-prior-knowledge", "--compressed", &url]);
    assert_eq!(h2, plain);
}
