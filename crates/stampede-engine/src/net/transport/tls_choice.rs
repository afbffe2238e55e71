//! What a TLS client offers beyond rustls' defaults: the versions
//! (`--tls-min`/`--tls-max`), the cipher suites (`--ciphers`) and key
//! exchange groups (`--tls-groups`), as a ring `CryptoProvider` cut down to
//! them, and the client certificate (`--cert`/`--key`) read from PEM.

use crate::error::EngineError;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::SupportedProtocolVersion;
use stampede_plan::{ClientCert, TlsSpec, TlsVersion};

/// The versions between `--tls-min` and `--tls-max` (both by default).
pub(crate) fn protocol_versions(
    spec: &TlsSpec,
) -> Result<Vec<&'static SupportedProtocolVersion>, EngineError> {
    let min = spec.min_version.unwrap_or(TlsVersion::Tls12);
    let max = spec.max_version.unwrap_or(TlsVersion::Tls13);
    if min > max {
        return Err(EngineError::tls(format!(
            "--tls-min {} is above --tls-max {}",
            min.label(),
            max.label()
        )));
    }
    let mut versions = Vec::new();
    if min <= TlsVersion::Tls12 {
        versions.push(&rustls::version::TLS12);
    }
    if max >= TlsVersion::Tls13 {
        versions.push(&rustls::version::TLS13);
    }
    Ok(versions)
}

/// ring's provider with only the suites and groups asked for (all of them
/// when none are named), refusing names it does not have and a suite list
/// with nothing for the allowed versions.
pub(crate) fn crypto_provider(
    spec: &TlsSpec,
    versions: &[&'static SupportedProtocolVersion],
) -> Result<CryptoProvider, EngineError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if !spec.ciphers.is_empty() {
        let known: Vec<String> = provider
            .cipher_suites
            .iter()
            .map(|suite| format!("{:?}", suite.suite()))
            .collect();
        let mut chosen = Vec::new();
        for name in &spec.ciphers {
            let Some(index) = known
                .iter()
                .position(|k| k.eq_ignore_ascii_case(name.trim()))
            else {
                return Err(EngineError::tls(format!(
                    "--ciphers: unknown cipher suite '{name}' (known: {})",
                    known.join(", ")
                )));
            };
            chosen.push(provider.cipher_suites[index]);
        }
        if !chosen
            .iter()
            .any(|suite| versions.contains(&suite.version()))
        {
            return Err(EngineError::tls(format!(
                "--ciphers: none of {} is a suite for TLS {}",
                spec.ciphers.join(","),
                versions
                    .iter()
                    .map(|v| version_name(v))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )));
        }
        provider.cipher_suites = chosen;
    }
    if !spec.groups.is_empty() {
        let known: Vec<String> = provider
            .kx_groups
            .iter()
            .map(|group| format!("{:?}", group.name()))
            .collect();
        let mut chosen = Vec::new();
        for name in &spec.groups {
            let Some(index) = known
                .iter()
                .position(|k| k.eq_ignore_ascii_case(name.trim()))
            else {
                return Err(EngineError::tls(format!(
                    "--tls-groups: unknown key exchange group '{name}' (known: {})",
                    known.join(", ")
                )));
            };
            chosen.push(provider.kx_groups[index]);
        }
        provider.kx_groups = chosen;
    }
    Ok(provider)
}

/// `1.2` or `1.3`, as the options write it.
pub(crate) fn version_name(version: &SupportedProtocolVersion) -> &'static str {
    if version.version == rustls::ProtocolVersion::TLSv1_2 {
        "1.2"
    } else {
        "1.3"
    }
}

/// The client certificate chain and key, each file named when it cannot be
/// read or holds nothing usable.
pub(crate) fn client_material(
    client: &ClientCert,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), EngineError> {
    let read = |path: &std::path::Path, flag: &str| {
        std::fs::read(path)
            .map_err(|e| EngineError::tls_caused(format!("{flag} {}", path.display()), e))
    };
    let cert_bytes = read(&client.cert, "--cert")?;
    let chain = CertificateDer::pem_slice_iter(&cert_bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            EngineError::tls_caused(
                format!("--cert {}: not valid PEM", client.cert.display()),
                e,
            )
        })?;
    if chain.is_empty() {
        return Err(EngineError::tls(format!(
            "--cert {}: no CERTIFICATE in the file",
            client.cert.display()
        )));
    }
    let key_bytes = read(&client.key, "--key")?;
    let key = PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|e| {
        EngineError::tls_caused(
            format!(
                "--key {}: no private key (PKCS#8, RSA or EC) in the file",
                client.key.display()
            ),
            e,
        )
    })?;
    Ok((chain, key))
}
