//! The TLS client configuration, built once per run: system roots or
//! `--cacert`, `--insecure` (no verification), ALPN, session resumption
//! (or not, to measure full handshakes), a client certificate (mTLS), and
//! the versions, cipher suites and key exchange groups offered.

use super::tls_choice::{client_material, crypto_provider, protocol_versions};
use crate::error::EngineError;
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
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider.clone())))
    } else {
        builder.with_root_certificates(root_store(spec)?)
    };
    let mut config = match &spec.client_cert {
        None => builder.with_no_client_auth(),
        Some(client) => {
            let (chain, key) = client_material(client)?;
            let given = || {
                format!(
                    "--cert {} / --key {}",
                    client.cert.display(),
                    client.key.display()
                )
            };
            match builder
                .clone()
                .with_client_auth_cert(chain.clone(), key.clone_key())
            {
                Ok(config) => config,
                Err(e) if is_version_1(&e) => {
                    let resolver = version_1_client_cert(&provider, chain, key)
                        .map_err(|why| EngineError::tls(format!("{}: {why}", given())))?;
                    builder.with_client_cert_resolver(resolver)
                }
                Err(e) => return Err(EngineError::tls_caused(given(), e)),
            }
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

/// rustls refused the client's own certificate as X.509 version 1 (what
/// `openssl x509 -req` makes without extensions): only its check that the
/// key is the certificate's parses it (webpki reads version 3 only).
fn is_version_1(error: &rustls::Error) -> bool {
    let rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other)) = error else {
        return false;
    };
    format!("{other:?}").contains("UnsupportedCertVersion")
}

/// A version 1 client certificate, sent as it is, as curl and ab send it:
/// a TLS client never verifies its own certificate, the server does (nginx
/// accepts version 1). The key is still checked to be the certificate's:
/// its SubjectPublicKeyInfo, DER, appears in the certificate as it is.
fn version_1_client_cert(
    provider: &rustls::crypto::CryptoProvider,
    chain: Vec<CertificateDer<'static>>,
    key: rustls::pki_types::PrivateKeyDer<'static>,
) -> Result<Arc<dyn rustls::client::ResolvesClientCert>, String> {
    let signing = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| format!("the key cannot sign: {e}"))?;
    let spki = signing
        .public_key()
        .ok_or("the key's public part is unknown")?;
    let end_entity = chain.first().ok_or("no certificate")?;
    let matches = end_entity
        .as_ref()
        .windows(spki.as_ref().len())
        .any(|w| w == spki.as_ref());
    if !matches {
        return Err("the key is not the certificate's (its public key differs)".into());
    }
    let certified = rustls::sign::CertifiedKey::new(chain, signing);
    Ok(Arc::new(rustls::sign::SingleCertAndKey::from(certified)))
}
