//! Small user-facing defects a new user's trial found (D15), each checked
//! where the user sees it: the front-ends' closing line, TLS failures'
//! class and reason, flags quoted in messages, `compare`'s warnings, and
//! refusing flags that cannot work together.

use stampede_testkit::{
    binary, free_port, one_thread, run_stampede, self_signed_server_config_and_pem, spawn_target,
    stampede, temp_dir, text, ServeProcess,
};

/// A run whose only requests were still in flight at its end has no
/// errors to list: the closing line shows no empty `(errors: )`.
#[test]
fn a_run_without_errors_lists_none() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/delay/3000", target.local_addr());
    let out = stampede(&[
        "wrk",
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1",
        "--timeout",
        "10",
        &url,
    ]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(shown.contains("no complete responses; "), "{shown}");
    assert!(!shown.contains("(errors: )"), "{shown}");
}

/// ab `-f TLS1.3` against a server that offers only TLS 1.2: a TLS
/// failure (the `tls` class) that names the protocol version, not ab's
/// connect error.
#[test]
fn a_tls_version_the_server_lacks_is_a_tls_failure() {
    let serve = ServeProcess::start(&["--tls", "--tls-max", "1.2"]);
    let url = format!("https://127.0.0.1:{}/", serve.port);
    let out = stampede(&["ab", "-n", "3", "-f", "TLS1.3", &url]);
    let shown = text(&out.stderr);
    assert!(shown.contains("SSL handshake failed"), "{shown}");
    assert!(shown.contains("protocol version"), "{shown}");
    assert!(!shown.contains("apr_socket_connect"), "{shown}");
    assert!(shown.contains("errors: tls 3"), "{shown}");
}

/// ab `-Z` with an OpenSSL cipher list: the message quotes the whole list
/// (`!` and all), then names the part that has no rustls suite.
#[test]
fn a_refused_cipher_list_is_quoted_whole() {
    let out = stampede(&[
        "ab",
        "-n",
        "1",
        "-Z",
        "ECDHE+AESGCM:!aNULL",
        "https://127.0.0.1:1/",
    ]);
    let shown = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("-Z 'ECDHE+AESGCM:!aNULL'"), "{shown}");
    assert!(
        shown.contains("no rustls suite for ECDHE+AESGCM"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 1, "{shown}");
}

/// The HTTP/3 UDP offload note is shown once in a run's output (the
/// summary), and kept in the result.
#[test]
fn the_udp_offload_note_is_shown_once() {
    let serve = ServeProcess::start(&["--tls", "--http3"]);
    let url = format!("https://127.0.0.1:{}/", serve.port);
    let out = stampede(&["run", "--http3", "--insecure", "-n", "5", "-c", "1", &url]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(shown.matches("UDP offload").count(), 1, "{shown}");
}

/// `--metrics` and `--web` on one address: refused up front in one line
/// (not "address already in use" about an address stampede itself holds).
#[test]
fn metrics_and_web_on_one_address_are_refused() {
    let address = format!("127.0.0.1:{}", free_port());
    let out = stampede(&[
        "run",
        "http://127.0.0.1:1/",
        "-n",
        "1",
        "--metrics",
        &address,
        "--web",
        &address,
    ]);
    let shown = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert_eq!(
        shown.trim(),
        "stampede: error: --metrics and --web need different addresses",
        "{shown}"
    );
}

/// A server that refuses the TLS handshake (it requires a client
/// certificate, and under TLS 1.3 says so after the client's side of the
/// handshake completed) is backed off from as a failed connect is, on the
/// reactors and on tokio: a handful of attempts in 2 s, not hundreds.
#[test]
fn a_refused_handshake_is_backed_off() {
    let dir = temp_dir("refused-handshake");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, self_signed_server_config_and_pem().1).unwrap();
    let serve = ServeProcess::start(&["--client-ca", ca.to_str().unwrap()]);
    let url = format!("https://127.0.0.1:{}/", serve.port);
    for io in ["epoll", "tokio"] {
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--insecure",
                "-c",
                "1",
                "-t",
                "1",
                "-d",
                "2s",
                "--io",
                io,
            ],
        );
        let attempts = run.count("/connections/attempts");
        let tls = run.count("/errors/tls");
        assert!(tls > 0, "--io {io}: {}", run.result()["errors"]);
        // 10 ms doubling to 1 s: about 9 attempts in 2 s; without the
        // backoff a loopback handshake is retried hundreds of times.
        assert!(attempts <= 30, "--io {io}: {attempts} attempts in 2 s");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
