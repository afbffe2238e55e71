//! TLS for the target: the certificate (self-signed at start with rcgen for
//! localhost, 127.0.0.1 and ::1, or read from PEM files), the rustls server
//! configuration (ALPN `h2` then `http/1.1`, session tickets and a session cache so
//! that clients can measure resumed handshakes), its SHA-256 fingerprint, and the
//! handshake of one connection before it is handed to HTTP/2 or HTTP/1.1.
//! It does not speak HTTP (see `conn`, `http2`).

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use rustls::server::ServerSessionMemoryCache;
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::context::Worker;
use crate::transport::{OpenGuard, Peer, Transport};
use crate::{CertSource, TargetError, TlsConfig};

/// Names the generated certificate is valid for.
const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// TLS 1.2 sessions remembered for resumption (TLS 1.3 uses stateless tickets).
const SESSION_CACHE: usize = 64 * 1024;

/// What the server keeps of its TLS configuration.
pub(crate) struct TlsSetup {
    pub acceptor: TlsAcceptor,
    /// The certificate chain in PEM (what a client passes to `--cacert`).
    pub cert_pem: String,
    /// SHA-256 of the leaf certificate (DER), as `AB:CD:...`.
    pub fingerprint: String,
}

/// Builds the certificate and the rustls configuration, and writes the certificate
/// where `write_cert` asks.
pub(crate) fn setup(cfg: &TlsConfig) -> Result<TlsSetup, TargetError> {
    let (chain, key, cert_pem) = match &cfg.cert {
        CertSource::SelfSigned => self_signed()?,
        CertSource::Files { cert, key } => from_files(cert, key)?,
    };
    let fingerprint = fingerprint(&chain[0]);
    let config = server_config(cfg, chain, key)?;
    if let Some(path) = &cfg.write_cert {
        std::fs::write(path, &cert_pem).map_err(|source| TargetError::WriteCert {
            path: path.clone(),
            source,
        })?;
    }
    Ok(TlsSetup {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        cert_pem,
        fingerprint,
    })
}

type Material = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>, String);

fn self_signed() -> Result<Material, TargetError> {
    let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|s| s.to_string()).collect();
    let ck = rcgen::generate_simple_self_signed(names)
        .map_err(|e| TargetError::Tls(format!("generating a self-signed certificate: {e}")))?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    Ok((vec![ck.cert.der().clone()], key, ck.cert.pem()))
}

fn from_files(cert: &Path, key: &Path) -> Result<Material, TargetError> {
    let bad = |what: &'static str, path: &Path, reason: String| TargetError::Certificate {
        what,
        path: path.to_path_buf(),
        reason,
    };
    let cert_bytes = std::fs::read(cert).map_err(|e| bad("certificate", cert, e.to_string()))?;
    let chain = CertificateDer::pem_slice_iter(&cert_bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad("certificate", cert, format!("not valid PEM: {e}")))?;
    if chain.is_empty() {
        return Err(bad(
            "certificate",
            cert,
            "no CERTIFICATE block in the file".into(),
        ));
    }
    let key_bytes = std::fs::read(key).map_err(|e| bad("key", key, e.to_string()))?;
    let private = PrivateKeyDer::from_pem_slice(&key_bytes)
        .map_err(|e| bad("key", key, format!("no usable private key: {e}")))?;
    let pem = String::from_utf8_lossy(&cert_bytes).into_owned();
    Ok((chain, private, pem))
}

fn server_config(
    cfg: &TlsConfig,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ServerConfig, TargetError> {
    let err = |e: rustls::Error| TargetError::Tls(e.to_string());
    // The provider is named, not taken from the process default: another crate of the
    // workspace enabling aws-lc-rs must not make the default ambiguous.
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut versions = Vec::new();
    if cfg.tls12 {
        versions.push(&rustls::version::TLS12);
    }
    if cfg.tls13 {
        versions.push(&rustls::version::TLS13);
    }
    if versions.is_empty() {
        return Err(TargetError::Config(
            "--tls-min is above --tls-max: no TLS version left".into(),
        ));
    }
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(err)?;
    let builder = match &cfg.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => builder.with_client_cert_verifier(client_verifier(cfg, path, provider)?),
    };
    let mut config = builder.with_single_cert(chain, key).map_err(err)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE);
    config.ticketer = rustls::crypto::ring::Ticketer::new().map_err(err)?;
    Ok(config)
}

/// Verifies client certificates against the CAs in `path` (`--client-ca`).
fn client_verifier(
    cfg: &TlsConfig,
    path: &Path,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, TargetError> {
    let bad = |reason: String| TargetError::Certificate {
        what: "client CA",
        path: path.to_path_buf(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&bytes) {
        let cert = cert.map_err(|e| bad(format!("not valid PEM: {e}")))?;
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("no CERTIFICATE block in the file".into()));
    }
    let builder =
        rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
    let builder = if cfg.client_auth_required {
        builder
    } else {
        builder.allow_unauthenticated()
    };
    builder.build().map_err(|e| bad(e.to_string()))
}

/// `AB:CD:...` (the form `openssl x509 -fingerprint -sha256` prints).
pub(crate) fn fingerprint(cert: &CertificateDer) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, cert.as_ref());
    let hex: Vec<String> = d.as_ref().iter().map(|b| format!("{b:02X}")).collect();
    hex.join(":")
}

/// Handshakes (bounded by the header timeout, abandoned at shutdown), then serves
/// HTTP/2 if ALPN chose `h2`, else HTTP/1.1 (sniffing h2c prior knowledge only when
/// the client offered no ALPN at all).
pub(crate) async fn serve<S: Transport>(
    acceptor: TlsAcceptor,
    stream: S,
    peer: Peer,
    w: Rc<Worker>,
    guard: OpenGuard,
) {
    let stop = w.stop_notify.notified();
    let handshake = tokio::time::timeout(w.cfg.header_timeout, acceptor.accept(stream));
    let tls = tokio::select! {
        r = handshake => match r {
            Ok(Ok(tls)) => tls,
            _ => {
                w.stats().tls_failure();
                return;
            }
        },
        _ = stop => return,
    };
    w.stats().tls_handshake();
    let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    match alpn.as_deref() {
        Some(b"h2") => Box::pin(crate::http2::serve(tls, peer, w, guard)).await,
        Some(_) => crate::conn::serve(tls, peer, w, guard, false).await,
        None => {
            let sniff = w.cfg.h2c;
            crate::conn::serve(tls, peer, w, guard, sniff).await
        }
    }
}

/// The paths a [`TlsConfig`] reads, for messages.
pub(crate) fn describe(cfg: &TlsConfig) -> String {
    match &cfg.cert {
        CertSource::SelfSigned => format!(
            "self-signed certificate for {}",
            SELF_SIGNED_NAMES.join(", ")
        ),
        CertSource::Files { cert, .. } => format!("certificate {}", cert.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_and_bad_files() {
        let dir = std::env::temp_dir().join(format!("stampede-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pem_path = dir.join("cert.pem");
        let s = setup(&TlsConfig {
            cert: CertSource::SelfSigned,
            write_cert: Some(pem_path.clone()),
            ..TlsConfig::new(CertSource::SelfSigned)
        })
        .unwrap();
        assert_eq!(s.fingerprint.len(), 32 * 3 - 1);
        let written = std::fs::read_to_string(&pem_path).unwrap();
        assert!(written.starts_with("-----BEGIN CERTIFICATE-----"));
        let missing = setup(&TlsConfig {
            cert: CertSource::Files {
                cert: dir.join("nope.pem"),
                key: dir.join("nope.key"),
            },
            write_cert: None,
            ..TlsConfig::new(CertSource::SelfSigned)
        });
        let msg = missing.err().unwrap().to_string();
        assert!(
            msg.contains("nope.pem") && msg.contains("No such file"),
            "{msg}"
        );
        // A certificate without its key is refused with the key file named.
        let no_key = setup(&TlsConfig {
            cert: CertSource::Files {
                cert: pem_path.clone(),
                key: pem_path.clone(),
            },
            write_cert: None,
            ..TlsConfig::new(CertSource::SelfSigned)
        });
        let msg = no_key.err().unwrap().to_string();
        assert!(msg.starts_with("TLS key"), "{msg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
