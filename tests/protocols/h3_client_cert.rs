//! Over HTTP/3 a server that refuses a missing client
//! certificate closes each QUIC connection with a CRYPTO_ERROR; every
//! request that fails for it is the `tls` class, whether the close reached
//! it during the handshake, as the HTTP/3 session began or on a stream.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, run_stampede, self_signed_server_config_and_pem, spawn_target, temp_dir, TargetConfig,
};

#[test]
fn a_missing_client_certificate_over_http3_is_always_tls() {
    let dir = temp_dir("h3-client-ca");
    // Any CA will do: the client sends no certificate at all.
    let (_, pem) = self_signed_server_config_and_pem();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, pem).expect("the CA file is written");
    let mut tls = TlsConfig::new(CertSource::SelfSigned);
    tls.client_ca = Some(ca);
    let target = spawn_target(TargetConfig {
        threads: 1,
        http3: true,
        tls: Some(tls),
        ..TargetConfig::default()
    });
    let url = format!("https://127.0.0.1:{}/", target.local_addr().port());
    for shape in [
        &["-n", "20", "-c", "2"][..],
        &["-n", "40", "-c", "4"],
        &["-n", "20", "-c", "2", "--streams", "4"],
    ] {
        let mut args = vec![url.as_str(), "--http3", "--insecure", "-t", "1"];
        args.extend(shape);
        let run = run_stampede(binary(), &args);
        let at = format!("{shape:?}: {}", run.result());
        let errors = run.result()["errors"].as_object().expect("errors");
        let total = run.count("/requests/sent");
        assert!(total > 0, "{at}");
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["tls"], "{at}");
        assert_eq!(run.count("/errors/tls"), total, "{at}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
