//! The TLS options through the binary: client certificates (mTLS) against
//! the built-in target with `--client-ca` and against nginx with
//! `ssl_verify_client on` (its log names the certificate's subject), TLS
//! versions and cipher suites (the negotiated ones in the result), every
//! bad-input line, and ab's `-E`, `-f`, `-Z`. Each on epoll, io_uring and tokio.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, run_on_loop, run_stampede, spawn_target, RawServer, TargetConfig, EVENT_LOOPS,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CLIENT_CN: &str = "stampede-test-client";

/// A CA, a client certificate it signed (and its key), a server certificate
/// for localhost it signed, in `dir`.
struct Pki {
    ca: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    /// Client certificate and key in one file (ab's -E).
    client_both: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    /// A key that is not the client certificate's.
    other_key: PathBuf,
}

fn pki(name: &str) -> Pki {
    let dir = stampede_testkit::temp_dir(name);
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "stampede test CA");
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);

    let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    client_params
        .distinguished_name
        .push(DnType::CommonName, CLIENT_CN);
    client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_key = KeyPair::generate().unwrap();
    let client_cert = client_params.signed_by(&client_key, &issuer).unwrap();

    let mut server_params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_key = KeyPair::generate().unwrap();
    let server_cert = server_params.signed_by(&server_key, &issuer).unwrap();

    let write = |file: &str, text: String| {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        path
    };
    Pki {
        ca: write("ca.pem", ca_cert.pem()),
        client_cert: write("client.pem", client_cert.pem()),
        client_key: write("client.key", client_key.serialize_pem()),
        client_both: write(
            "client-both.pem",
            format!("{}{}", client_cert.pem(), client_key.serialize_pem()),
        ),
        server_cert: write("server.pem", server_cert.pem()),
        server_key: write("server.key", server_key.serialize_pem()),
        other_key: write("other.key", KeyPair::generate().unwrap().serialize_pem()),
    }
}

/// The built-in target over TLS with the test CA's server certificate.
fn tls_target(pki: &Pki, tweak: impl FnOnce(&mut TlsConfig)) -> stampede_testkit::ServerHandle {
    let mut tls = TlsConfig::new(CertSource::Files {
        cert: pki.server_cert.clone(),
        key: pki.server_key.clone(),
    });
    tweak(&mut tls);
    spawn_target(TargetConfig {
        threads: 1,
        tls: Some(tls),
        ..TargetConfig::default()
    })
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_client_certificate_passes_the_targets_client_ca_and_its_absence_is_a_tls_error() {
    let pki = pki("mtls-target");
    let target = tls_target(&pki, |tls| tls.client_ca = Some(pki.ca.clone()));
    let url = format!(
        "https://localhost:{}/index.html",
        target.local_addr().port()
    );
    for io in EVENT_LOOPS {
        let with_cert = [
            url.as_str(),
            "--cacert",
            s(&pki.ca),
            "--cert",
            s(&pki.client_cert),
            "--key",
            s(&pki.client_key),
            "-n",
            "40",
            "-c",
            "2",
            "-t",
            "1",
        ];
        let Some(run) = run_on_loop(io, &with_cert) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        assert_eq!(run.count("/requests/success"), 40, "--io {io}");
        let tls = &run.result()["plan"]["tls"];
        assert_eq!(tls["alpn"], "http/1.1", "--io {io}: {tls}");
        assert!(tls["version"].as_str().unwrap().starts_with("TLSv1."));

        let without_cert = [
            url.as_str(),
            "--cacert",
            s(&pki.ca),
            "-n",
            "4",
            "-c",
            "1",
            "-t",
            "1",
        ];
        let run = run_on_loop(io, &without_cert).unwrap();
        assert_eq!(run.count("/requests/success"), 0, "--io {io}");
        let errors = &run.result()["errors"];
        assert!(
            errors["tls"].as_u64().unwrap_or(0) > 0,
            "--io {io}: {errors}"
        );
        // The reactors sample the alert as the reason; tokio's HTTP/1.1
        // path counts the class only.
        if io != "tokio" {
            let reasons = run.result()["error_samples"]["tls"].to_string();
            assert!(
                reasons.contains("CertificateRequired"),
                "--io {io}: {reasons}"
            );
        }
    }
}

#[test]
fn over_http2_a_missing_client_certificate_is_a_tls_error_too() {
    let pki = pki("mtls-h2");
    let target = tls_target(&pki, |tls| tls.client_ca = Some(pki.ca.clone()));
    let url = format!(
        "https://localhost:{}/index.html",
        target.local_addr().port()
    );
    let args = [
        url.as_str(),
        "--http2",
        "--cacert",
        s(&pki.ca),
        "-d",
        "1s",
        "-c",
        "1",
        "-t",
        "1",
    ];
    let run = run_on_loop("auto", &args).expect("the default loop runs");
    assert_eq!(run.count("/requests/success"), 0, "{}", run.stderr());
    let errors = &run.result()["errors"];
    assert!(errors["tls"].as_u64().unwrap_or(0) > 0, "{errors}");
    assert_eq!(errors["other"].as_u64().unwrap_or(0), 0, "{errors}");
}

#[test]
fn serve_client_auth_request_lets_clients_without_a_certificate_in() {
    let pki = pki("mtls-request");
    let port = stampede_testkit::free_port();
    let mut serve = std::process::Command::new(binary())
        .args(["serve", "--port", &port.to_string(), "--threads", "1"])
        .args(["--cert", s(&pki.server_cert), "--key", s(&pki.server_key)])
        .args(["--client-ca", s(&pki.ca), "--client-auth", "request"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port);
    let url = format!("https://localhost:{port}/index.html");
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--cacert",
            s(&pki.ca),
            "-n",
            "5",
            "-c",
            "1",
            "--io",
            "tokio",
        ],
    );
    let with_cert = run_stampede(
        binary(),
        &[
            &url,
            "--cacert",
            s(&pki.ca),
            "--cert",
            s(&pki.client_cert),
            "--key",
            s(&pki.client_key),
            "-n",
            "5",
            "-c",
            "1",
            "--io",
            "epoll",
        ],
    );
    let _ = serve.kill();
    let _ = serve.wait();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/success"), 5);
    assert_eq!(with_cert.code(), Some(0), "{}", with_cert.stderr());
    assert_eq!(with_cert.count("/requests/success"), 5);
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn nginx_verifies_the_client_certificate_and_logs_its_subject() {
    let nginx = stampede_testkit::require_tool!("nginx");
    let pki = pki("mtls-nginx");
    let dir = pki.ca.parent().unwrap().to_path_buf();
    let port = stampede_testkit::free_port();
    let log = dir.join("access.log");
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
           fastcgi_temp_path {dir}/fastcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n\
           log_format mtls '$ssl_client_verify|$ssl_client_s_dn|$ssl_protocol';\n\
           server {{\n    listen 127.0.0.1:{port} ssl;\n    server_name localhost;\n\
             ssl_certificate {cert};\n    ssl_certificate_key {key};\n\
             ssl_client_certificate {ca};\n    ssl_verify_client on;\n\
             ssl_protocols TLSv1.2 TLSv1.3;\n    access_log {log} mtls;\n\
             location / {{ return 200 'ok'; }}\n  }}\n}}\n",
        dir = dir.display(),
        cert = pki.server_cert.display(),
        key = pki.server_key.display(),
        ca = pki.ca.display(),
        log = log.display(),
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let mut server = std::process::Command::new(nginx)
        .args(["-p", s(&dir), "-c", s(&conf_path)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port);
    let url = format!("https://localhost:{port}/");
    let mut expected_lines = 0;
    let mut outcomes = Vec::new();
    for io in EVENT_LOOPS {
        let Some(run) = run_on_loop(
            io,
            &[
                &url,
                "--cacert",
                s(&pki.ca),
                "--cert",
                s(&pki.client_cert),
                "--key",
                s(&pki.client_key),
                "-n",
                "6",
                "-c",
                "2",
                "-t",
                "1",
            ],
        ) else {
            continue;
        };
        expected_lines += 6;
        outcomes.push((io, run.code(), run.count("/requests/success"), run.stderr()));
    }
    // nginx answers 400 ("No required SSL certificate was sent") without one.
    let without = run_stampede(
        binary(),
        &[
            &url,
            "--cacert",
            s(&pki.ca),
            "-n",
            "2",
            "-c",
            "1",
            "--io",
            "tokio",
        ],
    );
    // The log is written per request; give the worker a moment before stopping.
    std::thread::sleep(Duration::from_millis(300));
    // SIGTERM: the master stops its worker too (SIGKILL would orphan it).
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let _ = server.wait();
    for (io, code, success, stderr) in outcomes {
        assert_eq!(code, Some(0), "--io {io}: {stderr}");
        assert_eq!(success, 6, "--io {io}");
    }
    assert_eq!(
        without.count("/requests/success"),
        0,
        "{}",
        without.stderr()
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let verified: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("SUCCESS|") && line.contains(&format!("CN={CLIENT_CN}")))
        .collect();
    assert_eq!(verified.len(), expected_lines, "nginx log:\n{text}");
}

#[test]
fn tls_versions_and_cipher_suites_are_offered_as_asked_and_reported() {
    let pki = pki("tls-versions");
    let target = tls_target(&pki, |tls| tls.tls13 = false);
    let url = format!(
        "https://localhost:{}/index.html",
        target.local_addr().port()
    );
    for io in EVENT_LOOPS {
        let base = [
            url.as_str(),
            "--cacert",
            s(&pki.ca),
            "-n",
            "6",
            "-c",
            "2",
            "-t",
            "1",
        ];
        let mut too_new = base.to_vec();
        too_new.extend(["--tls-min", "1.3"]);
        let Some(run) = run_on_loop(io, &too_new) else {
            continue;
        };
        assert_ne!(run.code(), Some(0), "--io {io}");
        assert_eq!(run.count("/requests/success"), 0, "--io {io}");
        assert!(
            run.result()["errors"]["tls"].as_u64().unwrap_or(0) > 0,
            "--io {io}"
        );

        let mut tls12 = base.to_vec();
        tls12.extend(["--tls-max", "1.2"]);
        let run = run_on_loop(io, &tls12).unwrap();
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        let tls = &run.result()["plan"]["tls"];
        assert_eq!(tls["version"], "TLSv1.2", "--io {io}: {tls}");
        assert!(
            tls["cipher"]
                .as_str()
                .unwrap()
                .starts_with("TLS_ECDHE_ECDSA_WITH_"),
            "{tls}"
        );

        let mut one_suite = base.to_vec();
        one_suite.extend([
            "--ciphers",
            "TLS13_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "--tls-groups",
            "secp384r1",
        ]);
        let run = run_on_loop(io, &one_suite).unwrap();
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        let tls = &run.result()["plan"]["tls"];
        assert_eq!(
            tls["cipher"], "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "{tls}"
        );
    }
    // TLS 1.3 both sides: the summary's header names what was negotiated.
    let target13 = tls_target(&pki, |_| {});
    let url13 = format!(
        "https://localhost:{}/index.html",
        target13.local_addr().port()
    );
    let out = std::process::Command::new(binary())
        .args([
            &url13,
            "--cacert",
            s(&pki.ca),
            "-n",
            "3",
            "-c",
            "1",
            "--tls-min",
            "1.3",
        ])
        .args(["--ciphers", "TLS13_CHACHA20_POLY1305_SHA256"])
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("TLSv1.3 TLS13_CHACHA20_POLY1305_SHA256 (http/1.1)"),
        "{summary}"
    );
}

/// Runs the binary with `args` against a server that counts connections, and
/// checks for one line naming `expect`, exit 2, and no connection made.
fn refused(args: &[&str], expect: &str) {
    let server = RawServer::start(|_stream| {});
    let url = format!("https://localhost:{}/", server.addr().port());
    let mut all = vec!["run", url.as_str(), "-n", "1", "-c", "1"];
    all.extend(args);
    let out = std::process::Command::new(binary())
        .args(&all)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(expect), "{args:?}: {stderr}");
    assert_eq!(server.accepted(), 0, "{args:?}: a connection was made");
}

#[test]
fn bad_tls_options_are_one_line_exit_2_before_any_request() {
    let pki = pki("tls-bad");
    let missing = pki.ca.with_file_name("missing.pem");
    let (cert, key, other, ca) = (
        s(&pki.client_cert),
        s(&pki.client_key),
        s(&pki.other_key),
        s(&pki.ca),
    );
    refused(&["--cert", cert, "--key", other], "--cert");
    refused(&["--cert", cert, "--key", other], "KeyMismatch");
    refused(&["--cert", s(&missing), "--key", key], "missing.pem");
    refused(&["--cert", cert, "--key", s(&missing)], "missing.pem");
    refused(&["--cert", key, "--key", key], "no CERTIFICATE");
    refused(&["--cert", cert, "--key", ca], "no private key");
    refused(&["--cert", cert], "--cert needs --key");
    refused(&["--key", key], "--key needs --cert");
    refused(
        &["--ciphers", "TLS_RSA_WITH_RC4"],
        "unknown cipher suite 'TLS_RSA_WITH_RC4'",
    );
    refused(&["--ciphers", "NOPE"], "TLS13_AES_128_GCM_SHA256");
    refused(
        &["--tls-groups", "ffdhe2048x"],
        "unknown key exchange group 'ffdhe2048x'",
    );
    refused(
        &["--tls-min", "1.3", "--tls-max", "1.2"],
        "--tls-min 1.3 is above --tls-max 1.2",
    );
    refused(
        &["--tls-max", "1.2", "--ciphers", "TLS13_AES_128_GCM_SHA256"],
        "is a suite for TLS 1.2",
    );
    // clap refuses versions rustls does not have (its usual error and hint).
    let out = std::process::Command::new(binary())
        .args(["run", "https://localhost:1/", "--tls-min", "1.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rustls speaks only 1.2 and 1.3"));
}

#[test]
fn ab_maps_e_f_and_z() {
    let pki = pki("tls-ab");
    let target = tls_target(&pki, |tls| tls.client_ca = Some(pki.ca.clone()));
    let url = format!(
        "https://localhost:{}/index.html",
        target.local_addr().port()
    );
    let dir = pki.ca.parent().unwrap();
    let json = dir.join("ab.json");
    let out = std::process::Command::new(binary())
        .args([
            "ab",
            "-n",
            "8",
            "-c",
            "2",
            "-E",
            s(&pki.client_both),
            "-f",
            "TLS1.2",
        ])
        .args([
            "-Z",
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "--stampede-json",
            s(&json),
            &url,
        ])
        .output()
        .unwrap();
    stampede_testkit::assert_succeeded(&out);
    let result = stampede_testkit::read_json(&json);
    assert_eq!(result["requests"]["success"], 8, "{result}");
    assert_eq!(result["plan"]["tls"]["version"], "TLSv1.2");
    assert_eq!(
        result["plan"]["tls"]["cipher"],
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
    );
    // ab's own line for it, with OpenSSL's name of the suite.
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("SSL/TLS Protocol:       TLSv1.2,ECDHE-ECDSA-AES128-GCM-SHA256,128,128"),
        "{report}"
    );
    for (flag, value, expect) in [
        ("-f", "TLS1", "ab -f TLS1: not supported"),
        ("-f", "SSL3", "ab -f SSL3: not supported"),
        ("-f", "TLS1.1", "ab -f TLS1.1: not supported"),
        ("-Z", "RC4-MD5", "ab -Z RC4-MD5: not supported"),
    ] {
        let out = std::process::Command::new(binary())
            .args(["ab", "-n", "1", flag, value, &url])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expect), "{stderr}");
    }
}

#[test]
fn an_x509_version_1_client_certificate_is_not_refused_before_connecting() {
    // `openssl x509 -req` without extensions makes version 1 certificates,
    // as many tutorials do; a client sends its own as it is (curl, ab), so
    // the run goes on to connect (nothing listens on port 1). nginx taking
    // one is tests/protocols/tls_v1_client_cert.rs.
    let openssl = stampede_testkit::require_tool!("openssl");
    let pki = pki("mtls-v1");
    let dir = pki.ca.parent().unwrap().to_path_buf();
    let csr = dir.join("v1.csr");
    let v1 = dir.join("v1.pem");
    let made = std::process::Command::new(&openssl)
        .args(["req", "-new", "-key", s(&pki.client_key), "-subj", "/CN=v1"])
        .args(["-out", s(&csr)])
        .status()
        .unwrap()
        .success()
        && std::process::Command::new(&openssl)
            .args([
                "x509",
                "-req",
                "-in",
                s(&csr),
                "-signkey",
                s(&pki.client_key),
            ])
            .args(["-days", "2", "-out", s(&v1)])
            .status()
            .unwrap()
            .success();
    assert!(made, "openssl made a version 1 certificate");
    let out = std::process::Command::new(binary())
        .args([
            "run",
            "https://localhost:1/",
            "--insecure",
            "-n",
            "1",
            "-c",
            "1",
        ])
        .args(["--cert", s(&v1), "--key", s(&pki.client_key)])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("X.509 version 1"), "{stderr}");
    assert!(!stderr.contains("TLS: --cert"), "{stderr}");
    assert!(stderr.contains("no connection could be opened"), "{stderr}");
}
