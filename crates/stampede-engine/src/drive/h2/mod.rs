//! HTTP/2 on tokio (the `h2` crate): a slot's streams in the closed model
//! (h2_client.rs), stream slots in the open model (h2_open.rs) sharing a
//! connection cell (h2_cell.rs), each connection opened one way
//! (h2_handshake.rs), each stream
//! a virtual user under a workload (h2_workload.rs, its exchange
//! h2_kept.rs; in the open model h2_open_workload.rs), redirects followed on
//! the same connection or, to another origin, on a stream's side
//! connection (h2_redirects.rs, h2_side.rs, what both ask of a hop:
//! h2_hop.rs), the one way all send a request
//! (h2_exchange.rs), a request watched as a stream of events with `--sse`
//! (h2_stream.rs, its watch h2_watch.rs), and what all see of a connection's end
//! (h2_conn_end.rs).

pub(crate) mod h2_cell;
pub(crate) mod h2_client;
pub(crate) mod h2_conn_end;
pub(crate) mod h2_exchange;
pub(crate) mod h2_handshake;
pub(crate) mod h2_hop;
pub(crate) mod h2_kept;
pub(crate) mod h2_open;
pub(crate) mod h2_open_workload;
pub(crate) mod h2_redirects;
pub(crate) mod h2_side;
pub(crate) mod h2_stream;
pub(crate) mod h2_watch;
pub(crate) mod h2_workload;
