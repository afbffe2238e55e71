//! HTTP/3 on tokio (quinn + h3): a QUIC connection slot (h3_conn.rs), its
//! streams in the closed model (h3_client.rs) and the open model
//! (h3_open.rs), and what a QUIC or HTTP/3 failure counts as (h3_errors.rs).

pub(crate) mod h3_client;
pub(crate) mod h3_conn;
pub(crate) mod h3_errors;
pub(crate) mod h3_open;
