//! stampede-target: the built-in HTTP target server behind `stampede serve`.
//!
//! Owns the server (reactor per core: N OS threads, each with its own SO_REUSEPORT
//! listener and its own tokio current-thread loop), HTTP/1.1 (hand-written on
//! httparse), HTTP/2 (ALPN `h2` and h2c prior knowledge, on the `h2` crate), TLS
//! (rustls, a self-signed certificate generated at start or PEM files), an optional
//! Unix socket, the test routes, the built-in pages, static files, the access log and
//! the exact response counters that load tests compare against. It deliberately
//! depends on no client crate of the workspace, so that client and server bugs cannot
//! cancel each other out.
//!
//! Modules: `server` (start, workers, shutdown), `worker` (one worker's
//! accept loop, tick and drain, and where a connection is dispatched),
//! `context` (the per-worker state all its connections share), `transport`
//! (streams, the open-connection guard, the lingering close), `conn`
//! (HTTP/1.1), `http2`, `http3` (QUIC on the TCP port's number, with
//! `Config::http3`), `tls`, `unix`, `request` and `body` (parsing),
//! `response`, `routes` and `reply` (the test routes and what they leave to
//! stream), `websocket` (the `/ws` handshake), `ws_route` (what an upgraded
//! connection does) and `ws_session` (the upgraded connection, on
//! stampede-websocket's codec), `compress` (`/gzip` and its siblings, `Config::compress`), `files` (static files), `pages`, `clock`, `accesslog`, `stats`,
//! `metrics` (the counters for an exporter), `duration`, `fuzzing` (entry
//! points for the fuzz targets).
//!
//! ```
//! use stampede_target::{Config, Server};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config { threads: 2, ..Config::default() };
//! let handle = Server::start("127.0.0.1:0".parse()?, config)?;
//! println!("listening on {}", handle.local_addr());
//! let stats = handle.shutdown()?;
//! assert_eq!(stats.requests_total, 0);
//! # Ok(())
//! # }
//! ```

mod accesslog;
mod body;
mod clock;
mod compress;
mod conn;
mod context;
mod duration;
mod event_stream;
mod files;
#[doc(hidden)]
pub mod fuzzing;
mod http2;
mod http3;
mod metrics;
mod pages;
mod pieces;
mod redirect_to;
mod reply;
mod request;
mod response;
mod route_label;
mod routes;
mod server;
mod session_routes;
mod stats;
mod tls;
mod transport;
mod unix;
mod websocket;
mod worker;
mod ws_route;
mod ws_session;

use std::path::PathBuf;
use std::time::Duration;

pub use duration::{parse_duration, DurationError};
pub use metrics::StatsReader;
pub use server::{Server, ServerHandle};
pub use stats::StatsSnapshot;

/// Where the access log (Common Log Format) goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessLogDest {
    /// Appended to this file (created if missing).
    File(PathBuf),
    /// Written to standard output.
    Stdout,
}

/// TLS on the listeners (every connection, TCP or Unix, starts with a handshake).
/// ALPN offers `h2` then `http/1.1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// Where the certificate and key come from.
    pub cert: CertSource,
    /// Also write the certificate (PEM) here, for clients' `--cacert`.
    pub write_cert: Option<PathBuf>,
    /// Ask clients for a certificate signed by a CA in this PEM file (mTLS).
    pub client_ca: Option<PathBuf>,
    /// With `client_ca`: refuse clients without a certificate (else only ask).
    pub client_auth_required: bool,
    /// Accept TLS 1.2 (`--tls-min 1.3` turns it off).
    pub tls12: bool,
    /// Accept TLS 1.3 (`--tls-max 1.2` turns it off).
    pub tls13: bool,
}

impl TlsConfig {
    /// `cert`, everything else as without options: no client certificates,
    /// TLS 1.2 and 1.3.
    pub fn new(cert: CertSource) -> TlsConfig {
        TlsConfig {
            cert,
            write_cert: None,
            client_ca: None,
            client_auth_required: true,
            tls12: true,
            tls13: true,
        }
    }
}

/// The server's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertSource {
    /// Generated at start, self-signed, for `localhost`, `127.0.0.1` and `::1`.
    SelfSigned,
    /// A PEM certificate chain and its PEM private key (PKCS#8, PKCS#1 or SEC1).
    Files {
        /// Certificate chain, leaf first.
        cert: PathBuf,
        /// Private key of the leaf.
        key: PathBuf,
    },
}

/// Server configuration. `Config::default()` is what `stampede serve` uses without flags.
#[derive(Debug, Clone)]
pub struct Config {
    /// Worker threads, each with its own listener and event loop (TKeed's `thread_num`).
    pub threads: usize,
    /// Serve files under this folder instead of the built-in pages.
    pub root: Option<PathBuf>,
    /// Access log destination; `None` disables logging.
    pub access_log: Option<AccessLogDest>,
    /// Close a keep-alive connection idle this long.
    pub idle_timeout: Duration,
    /// Max time from the first byte of a request to the end of its headers (slowloris).
    pub header_timeout: Duration,
    /// Max time to receive a request body once its headers are in.
    pub body_timeout: Duration,
    /// Open connections across all workers; past it new ones get a 503 and are closed.
    pub max_connections: usize,
    /// Largest request body accepted (bytes); larger gets 413.
    pub max_body: usize,
    /// Prefix of the test routes (`""` or e.g. `"/_stampede"`).
    pub route_prefix: String,
    /// How long in-flight requests may take to finish after shutdown begins.
    pub shutdown_grace: Duration,
    /// Files up to this size are cached in memory (per worker) and revalidated at most once a second.
    pub file_cache_max: u64,
    /// Serve TLS (HTTPS, and HTTP/2 through ALPN) instead of cleartext.
    pub tls: Option<TlsConfig>,
    /// Also listen on this Unix domain socket (same routes, same counters).
    pub unix_socket: Option<PathBuf>,
    /// Detect the HTTP/2 prior-knowledge preface on cleartext connections (h2c).
    pub h2c: bool,
    /// Also serve HTTP/3 over QUIC on the same port number over UDP (needs
    /// `tls`); TCP responses then advertise it with `Alt-Svc`.
    pub http3: bool,
    /// Encode every compressible response whose request's `Accept-Encoding`
    /// asks for gzip, deflate, br or zstd (`serve --compress`; compress.rs).
    pub compress: bool,
    /// Count responses by route as well as by status (`serve --metrics`:
    /// the `route` label); off, a request costs nothing for it.
    pub count_routes: bool,
    /// Listen backlog of each listener (`serve --backlog`; the kernel caps it at
    /// net.core.somaxconn). A small one lets a test overflow the accept queue.
    pub backlog: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            root: None,
            access_log: None,
            idle_timeout: Duration::from_secs(60),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 100_000,
            max_body: 1 << 20,
            route_prefix: String::new(),
            shutdown_grace: Duration::from_secs(5),
            file_cache_max: 1 << 20,
            tls: None,
            unix_socket: None,
            h2c: true,
            http3: false,
            compress: false,
            count_routes: false,
            backlog: 4096,
        }
    }
}

/// Errors of the target server (start-up and shutdown; request errors are HTTP responses).
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The address could not be bound (in use, no permission, not local...).
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// Address asked for.
        addr: std::net::SocketAddr,
        /// OS error.
        source: std::io::Error,
    },
    /// The configuration is not usable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// `--root` is missing or not a folder.
    #[error("root {path}: {source}")]
    Root {
        /// Folder asked for.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// The access log could not be opened or written.
    #[error("access log {path}: {source}")]
    AccessLog {
        /// File asked for (`-` for stdout).
        path: String,
        /// OS error.
        source: std::io::Error,
    },
    /// A certificate or key file is missing or unusable.
    #[error("TLS {what} {path}: {reason}")]
    Certificate {
        /// `certificate` or `key`.
        what: &'static str,
        /// File asked for.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// The TLS configuration could not be built (e.g. the key does not match the certificate).
    #[error("TLS: {0}")]
    Tls(String),
    /// The certificate could not be written where `write_cert` asked.
    #[error("writing the certificate to {path}: {source}")]
    WriteCert {
        /// File asked for.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
    /// The Unix socket could not be bound.
    #[error("unix socket {path}: {source}")]
    Unix {
        /// Socket path asked for.
        path: PathBuf,
        /// OS error, or why an existing file was left alone.
        source: std::io::Error,
    },
    /// A worker thread or its runtime could not be started.
    #[error("worker: {0}")]
    Worker(std::io::Error),
    /// A worker thread panicked.
    #[error("worker thread {0} panicked")]
    WorkerPanic(usize),
}
