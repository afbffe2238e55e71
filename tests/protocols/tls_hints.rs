//! The TLS failures a new user meets first say what to do, on every event
//! loop (tls_errors.rs, http1/malformed.rs): an https URL against a
//! plain-HTTP port, an http URL against a TLS port, and a certificate signed
//! by no CA the client trusts (`stampede serve --tls`'s self-signed one,
//! without `--insecure`).

use stampede_testkit::{
    binary, event_loop_or_skip, one_thread, run_stampede, spawn_target, EVENT_LOOPS,
};

fn tls_sample(args: &[&str]) -> String {
    sample_of("tls", args)
}

fn sample_of(class: &str, args: &[&str]) -> String {
    let run = run_stampede(binary(), args);
    let samples = &run.result()["error_samples"][class];
    samples[0].as_str().unwrap_or_default().to_string()
}

#[test]
fn https_to_a_plain_port_says_use_http() {
    let target = spawn_target(one_thread());
    let url = format!("https://{}/", target.local_addr());
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let sample = tls_sample(&[&url, "-n", "2", "-c", "1", "-t", "1", "--io", io]);
        assert!(
            sample.contains("use an http:// (or ws://) URL"),
            "--io {io}: {sample}"
        );
    }
}

#[test]
fn an_untrusted_certificate_names_cacert_and_insecure() {
    let port = stampede_testkit::free_port();
    let server = std::process::Command::new(binary())
        .args([
            "serve",
            "--tls",
            "--threads",
            "1",
            "--port",
            &port.to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("stampede serve starts");
    let _server = KillOnDrop(server);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "serve did not listen");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let url = format!("https://localhost:{port}/");
    let plain = format!("http://127.0.0.1:{port}/");
    for io in EVENT_LOOPS {
        if !event_loop_or_skip(io) {
            continue;
        }
        let args = [plain.as_str(), "-n", "2", "-c", "1", "-t", "1", "--io", io];
        let sample = sample_of("malformed_response", &args);
        assert!(
            sample.contains("use an https:// URL"),
            "--io {io}: {sample}"
        );
        let sample = tls_sample(&[&url, "-n", "2", "-c", "1", "-t", "1", "--io", io]);
        assert!(
            sample.contains("--cacert") && sample.contains("--insecure"),
            "--io {io}: {sample}"
        );
    }
}

/// Stops the spawned server however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
