//! An X.509 version 1 client certificate (what
//! `openssl x509 -req` makes without `-extfile`) is presented as curl and ab
//! present it: a TLS client does not verify its own certificate, and nginx
//! with `ssl_verify_client on` accepts it (its log shows the subject). A key
//! that does not match the certificate is still refused before connecting.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{free_port, require_tool, run_clean, stampede, temp_dir, text};
use std::path::Path;
use std::process::Command;

fn openssl(program: &Path, dir: &Path, args: &[&str]) {
    let status = Command::new(program)
        .current_dir(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl runs");
    assert!(status.success(), "openssl {args:?}");
}

#[test]
fn a_version_1_client_certificate_is_presented_and_nginx_accepts_it() {
    let nginx = require_tool!("nginx");
    let openssl_program = require_tool!("openssl");
    let dir = temp_dir("v1-cert");
    let o = |args: &[&str]| openssl(&openssl_program, &dir, args);
    let rsa = ["-newkey", "rsa:2048", "-nodes", "-days", "2"];
    o(&[
        &["req", "-x509"][..],
        &rsa,
        &[
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=trial-ca",
        ],
    ]
    .concat());
    o(&[
        &["req", "-x509"][..],
        &rsa,
        &[
            "-keyout",
            "srv.key",
            "-out",
            "srv.pem",
            "-subj",
            "/CN=localhost",
        ],
    ]
    .concat());
    o(&[
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "cli.key",
        "-out",
        "cli.csr",
        "-subj",
        "/CN=v1-client",
    ]);
    // No -extfile: a version 1 certificate.
    o(&[
        "x509",
        "-req",
        "-in",
        "cli.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        "cli.pem",
    ]);
    let shown = Command::new(&openssl_program)
        .current_dir(&dir)
        .args(["x509", "-in", "cli.pem", "-noout", "-text"])
        .output()
        .expect("openssl shows the certificate");
    assert!(text(&shown.stdout).contains("Version: 1 (0x0)"), "not v1");

    let port = free_port();
    let extra = format!(
        "ssl_certificate {d}/srv.pem; ssl_certificate_key {d}/srv.key; \
         ssl_client_certificate {d}/ca.pem; ssl_verify_client on;",
        d = dir.display()
    );
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{port} ssl")],
        log_format: "$ssl_client_verify $ssl_client_s_dn",
        http_extra: &extra,
        netns: None,
    };
    let addr = format!("127.0.0.1:{port}");
    let server = Nginx::start(&nginx, &dir, &setup, || listening(&addr));
    let url = format!("https://127.0.0.1:{port}/");
    let cert = dir.join("cli.pem");
    let key = dir.join("cli.key");
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    for io in ["epoll", "tokio"] {
        let run = run_clean(&[
            &url,
            "--insecure",
            "--cert",
            cert,
            "--key",
            key,
            "-n",
            "4",
            "-c",
            "1",
            "-t",
            "1",
            "--io",
            io,
        ]);
        assert_eq!(
            run.count("/requests/success"),
            4,
            "--io {io}: {}",
            run.result()
        );
        let lines = server.take_lines();
        assert_eq!(lines.len(), 4, "{lines:?}");
        for line in lines {
            assert_eq!(line[0], "SUCCESS", "{line:?}");
            assert!(line[1].contains("CN=v1-client"), "{line:?}");
        }
    }
    // A key that is not the certificate's: still one line, exit 2.
    let out = stampede(&[
        "run",
        &url,
        "--insecure",
        "--cert",
        cert,
        "--key",
        dir.join("srv.key").to_str().unwrap(),
        "-n",
        "1",
        "-c",
        "1",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}
