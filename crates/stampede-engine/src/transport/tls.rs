//! The TLS client configuration, built once per run: system roots or
//! `--cacert`, `--insecure` (no verification), ALPN, session resumption
//! (or not, to measure full handshakes), a client certificate (mTLS), and
//! the versions, cipher suites and key exchange groups offered.

use super::tls_choice::{client_material, crypto_provider, protocol_versions};
use crate::EngineError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use stampede_metrics::NegotiatedTls;
use stampede_plan::TlsSpec;
use std::sync::{Arc, OnceLock};

/// A ready TLS client: shared configuration (and session cache) plus the
/// server name to send.
#[derive(Debug, Clone)]
pub(crate) struct TlsClient {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    /// What the run's first completed handshake negotiated.
    pub negotiated: HandshakeReport,
}

/// Where the first connection to finish its handshake writes what it
/// negotiated (version, suite, ALPN), once per run: the later ones find it
/// set and return after one atomic load.
#[derive(Debug, Clone, Default)]
pub(crate) struct HandshakeReport(Arc<OnceLock<NegotiatedTls>>);

impl HandshakeReport {
    /// Records `connection`'s settled parameters if its handshake is over
    /// and nothing was recorded yet.
    pub(crate) fn note(&self, connection: &rustls::CommonState) {
        if connection.is_handshaking() || self.0.get().is_some() {
            return;
        }
        let (Some(version), Some(suite)) = (
            connection.protocol_version(),
            connection.negotiated_cipher_suite(),
        ) else {
            return;
        };
        let _ = self.0.set(NegotiatedTls {
            // `TLSv1.3`, as OpenSSL and nginx's $ssl_protocol write it.
            version: format!("{version:?}").replace('_', "."),
            cipher: format!("{:?}", suite.suite()),
            alpn: connection
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
        });
    }

    /// What was recorded, if a handshake completed.
    pub(crate) fn get(&self) -> Option<NegotiatedTls> {
        self.0.get().cloned()
    }
}

/// Builds the client for `host` (the URL's host unless `--sni` says otherwise).
pub(crate) fn build_tls_client(
    spec: &TlsSpec,
    host: &str,
    http2: bool,
) -> Result<TlsClient, EngineError> {
    let versions = protocol_versions(spec)?;
    let provider = Arc::new(crypto_provider(spec, &versions)?);
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| EngineError::tls_caused("the TLS versions asked for", e))?;
    let builder = if spec.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
    } else {
        builder.with_root_certificates(root_store(spec)?)
    };
    let mut config = match &spec.client_cert {
        None => builder.with_no_client_auth(),
        Some(client) => {
            let (chain, key) = client_material(client)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                let given = format!(
                    "--cert {} / --key {}",
                    client.cert.display(),
                    client.key.display()
                );
                match own_certificate_problem(&e) {
                    Some(why) => EngineError::tls(format!("{given}: {why}")),
                    None => EngineError::tls_caused(given, e),
                }
            })?
        }
    };
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    if !spec.resume {
        config.resumption = Resumption::disabled();
    }
    let name = spec.sni.clone().unwrap_or_else(|| host.to_string());
    let server_name = ServerName::try_from(name.clone()).map_err(|e| {
        EngineError::tls_caused(format!("'{name}' is not a valid TLS server name"), e)
    })?;
    Ok(TlsClient {
        config: Arc::new(config),
        server_name,
        negotiated: HandshakeReport::default(),
    })
}

fn root_store(spec: &TlsSpec) -> Result<RootCertStore, EngineError> {
    let mut roots = RootCertStore::empty();
    match &spec.ca_file {
        Some(path) => {
            let refused = |e: rustls::pki_types::pem::Error| {
                EngineError::tls_caused(format!("--cacert {}", path.display()), e)
            };
            for certificate in CertificateDer::pem_file_iter(path).map_err(refused)? {
                roots.add(certificate.map_err(refused)?).map_err(|e| {
                    EngineError::tls_caused(format!("--cacert {}", path.display()), e)
                })?;
            }
            if roots.is_empty() {
                return Err(EngineError::tls(format!(
                    "--cacert {}: no certificate in the file",
                    path.display()
                )));
            }
        }
        None => {
            let loaded = rustls_native_certs::load_native_certs();
            for certificate in loaded.certs {
                let _ = roots.add(certificate);
            }
            if roots.is_empty() {
                return Err(EngineError::tls(
                    "no system root certificates found; give --cacert PEM or --insecure",
                ));
            }
        }
    }
    Ok(roots)
}

/// `--insecure`: accepts any certificate, but still checks handshake
/// signatures so that the handshake costs what a real one does.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// What is wrong with the client's own certificate, in the user's terms,
/// where rustls' wording would mislead: it reports a certificate it cannot
/// read as an "invalid peer certificate", though the peer is not involved.
fn own_certificate_problem(error: &rustls::Error) -> Option<&'static str> {
    let rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other)) = error else {
        return None;
    };
    format!("{other:?}")
        .contains("UnsupportedCertVersion")
        .then_some(
        "the certificate is X.509 version 1 (what `openssl x509 -req` makes without extensions); \
         rustls reads version 3 only: sign it again with `-extfile` (e.g. \
         `basicConstraints=CA:FALSE`) or `-copy_extensions copy`",
    )
}
