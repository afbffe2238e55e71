//! TLS for tests' own servers: a rustls server config with a fresh
//! self-signed certificate for `localhost` and 127.0.0.1, made once per
//! call, and the certificate as PEM for clients that must trust it.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use std::sync::Arc;

/// A server config for `localhost` with a self-signed certificate (clients
/// need `--insecure`), on ring's provider and the default protocol versions.
pub fn self_signed_server_config() -> Arc<ServerConfig> {
    self_signed_server_config_and_pem().0
}

/// The same, with the certificate as PEM (for a client's trusted roots,
/// e.g. `SSL_CERT_FILE`); it names `localhost` and `127.0.0.1`.
pub fn self_signed_server_config_and_pem() -> (Arc<ServerConfig>, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
            .expect("rcgen makes a self-signed certificate");
    let pem = certified.cert.pem();
    let cert = CertificateDer::from(certified.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("the certificate and key match");
    (Arc::new(config), pem)
}
