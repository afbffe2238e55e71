//! The built-in target through its library API: routes and their counts, bad input, TLS, HTTP/2
//! and Unix sockets, start and graceful stop. (emfile.rs is its own binary: it lowers the
//! process's descriptor limit, which would starve the tests running beside it.)

mod bad_input;
mod common;
mod event_streams;
mod lifecycle;
mod route_counts;
mod routes;
mod tls_h2_unix;
