//! Protocols and transports: HTTP/2, HTTP/3, TLS, compression, redirects, name resolution, Unix
//! sockets and proxies, WebSocket (the target's routes and the client), and the built-in target
//! seen by curl.
//!
//! One test binary per theme (fewer executables to link); each module is one
//! subject, named by what it tests.

mod compression;
mod compression_curl;
mod compression_errors;
mod compression_nginx;
mod dns;
mod dns_netns;
mod dns_random_seed;
mod h2_reactor;
mod h2_reactor_open;
mod h2_stream_limit;
mod h2_timeouts;
mod h3_client_cert;
mod http3_bad_input;
mod http3_client;
mod http3_compare;
mod http3_target_aioquic;
mod protocols;
mod redirect_limit_keepalive;
mod redirect_origins;
mod redirect_origins_h2;
mod redirect_origins_nginx;
mod redirect_to;
mod redirect_unfollowable_scheme;
mod redirects;
mod sse;
mod sse_h2;
mod sse_reconnect;
mod sse_starlette;
mod target_curl;
mod tls_hints;
mod tls_options;
mod tls_reactors;
mod tls_v1_client_cert;
mod websocket;
mod websocket_client;
mod websocket_epoll;
mod websocket_extensions;
mod websocket_faults;
mod websocket_loops;
mod websocket_rate;
mod websocket_uring;
mod websocket_workload;
