//! OpenSSL's names of the cipher suites rustls has, for the ab front-end:
//! `-Z` takes OpenSSL names (mapped to rustls suites), and ab's
//! `SSL/TLS Protocol:` line shows the negotiated suite the way OpenSSL
//! names it. One table for both directions.

/// `(OpenSSL name, rustls name)`.
pub const OPENSSL_CIPHERS: [(&str, &str); 9] = [
    ("TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
    ("TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS13_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// The OpenSSL name of a rustls suite (itself when unknown).
pub fn openssl_name(rustls_name: &str) -> &str {
    OPENSSL_CIPHERS
        .iter()
        .find(|(_, rustls)| *rustls == rustls_name)
        .map_or(rustls_name, |(openssl, _)| openssl)
}

/// The suite's cipher key bits, as ab prints them twice (`256,256`).
pub(super) fn key_bits(rustls_name: &str) -> u32 {
    if rustls_name.contains("AES_128") {
        128
    } else {
        256
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustls_names_read_as_openssl_writes_them() {
        assert_eq!(
            openssl_name("TLS13_AES_256_GCM_SHA384"),
            "TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(
            openssl_name("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            "ECDHE-RSA-AES128-GCM-SHA256"
        );
        assert_eq!(openssl_name("SOMETHING_NEW"), "SOMETHING_NEW");
        assert_eq!(key_bits("TLS13_AES_128_GCM_SHA256"), 128);
        assert_eq!(key_bits("TLS13_CHACHA20_POLY1305_SHA256"), 256);
    }
}
