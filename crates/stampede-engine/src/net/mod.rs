//! Reaching the target: the addresses a name gives (dns.rs), the local
//! addresses connections leave from, TCP, Unix socket, proxy, TLS and QUIC
//! (transport/). Also what a failure on the way counts as: I/O error
//! classes (outcome_class.rs) and TLS hints for the user (tls_errors.rs).

pub(crate) mod dns;
pub(crate) mod outcome_class;
pub(crate) mod source_addrs;
pub(crate) mod tls_errors;
pub(crate) mod transport;
