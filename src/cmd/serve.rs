//! `stampede serve`: the command-line face of the built-in target server
//! (stampede-target). Owns the flags, the start-up lines (layout, TLS fingerprint,
//! Unix socket), `--metrics` (the counters for Prometheus: metrics_target.rs), and
//! SIGINT/SIGTERM handling (graceful shutdown, exit 0). The server itself lives in
//! the library.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use stampede_plan::TlsVersion;
use stampede_target::{
    parse_duration, AccessLogDest, CertSource, Config, Server, TargetError, TlsConfig,
};

/// Run the built-in target server: one worker per CPU, each with its own
/// SO_REUSEPORT listener and event loop. Built-in pages `/` and `/index.html`
/// (515 bytes) and `/1k.html` (1024 bytes), or files under `--root`; test routes
/// `/bytes/{n}`, `/chunked/{n}`, `/delay/{ms}`, `/cpu/{iterations}`, `/block/{ms}`,
/// `/status/{code}`, `/sse/{n}/{ms}`, `/stream/{n}/{ms}`, `/echo` and `/stats` (JSON counters) are always on, and so are
/// the WebSocket routes `/ws/echo` and `/ws/push/{n}/{ms}` and
/// `/gzip`, `/deflate`, `/br` and `/zstd` (4096 bytes, or `/gzip/{n}`, always encoded).
///
/// Speaks HTTP/1.1 and HTTP/2: h2c with prior knowledge on cleartext connections, and
/// with `--tls` (or `--cert`/`--key`) HTTPS with ALPN `h2` and `http/1.1`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  stampede serve                                  # 127.0.0.1:3000, one worker per CPU
  stampede serve --threads 4 --port 3000 --root ./www --access-log access.log
  stampede serve --bind 0.0.0.0 --port 8080 --idle-timeout 30s --max-connections 20000
  stampede serve --threads 1 --backlog 8           # a short accept queue, to overflow on purpose
  curl http://127.0.0.1:3000/stats
  curl --http2-prior-knowledge http://127.0.0.1:3000/   # h2c
  stampede serve --tls --port 8443 --write-cert ca.pem  # self-signed, HTTP/2 via ALPN
  stampede serve --tls --http3 --port 8443              # and HTTP/3 on udp 8443
  stampede run https://127.0.0.1:8443/ --http3 --insecure -c 10 --streams 10 -d 10s
  curl --cacert ca.pem https://localhost:8443/1k.html
  stampede serve --cert server.pem --key server.key --port 8443
  stampede serve --unix /tmp/stampede.sock          # also on a Unix socket
  curl --unix-socket /tmp/stampede.sock http://localhost/stats
  stampede serve --compress                         # gzip/br/zstd when Accept-Encoding asks
  curl --compressed http://127.0.0.1:3000/gzip/10000 | wc -c   # 10000
  stampede serve --metrics 127.0.0.1:9465           # Prometheus scrapes /metrics there
  curl http://127.0.0.1:9465/metrics")]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: IpAddr,
    /// Port to listen on (0 picks a free one).
    #[arg(long, short = 'p', default_value_t = 3000, value_name = "N")]
    pub port: u16,
    /// Worker threads, each with its own listener and event loop [default: number of CPUs].
    #[arg(long, short = 't', value_name = "N")]
    pub threads: Option<usize>,
    /// Serve files under this folder instead of the built-in pages.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Access log in Common Log Format: a file path, or `-` for standard output.
    #[arg(long, value_name = "PATH|-")]
    pub access_log: Option<String>,
    /// Close keep-alive connections idle this long (e.g. 500ms, 10s, 2m).
    #[arg(long, default_value = "60s", value_parser = parse_duration, value_name = "DUR")]
    pub idle_timeout: Duration,
    /// Max time to receive a request's headers (slowloris protection).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DUR")]
    pub header_timeout: Duration,
    /// Max time to receive a request body once its headers are in.
    #[arg(long, default_value = "30s", value_parser = parse_duration, value_name = "DUR")]
    pub body_timeout: Duration,
    /// Open connections allowed across all workers; past it a 503 and a close.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub max_connections: usize,
    /// Listen backlog of each listener: connections the kernel queues before
    /// accept (capped at net.core.somaxconn). A small one provokes accept-queue
    /// overflows on purpose (/proc/net/netstat ListenOverflows).
    #[arg(long, default_value_t = 4096, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub backlog: u32,
    /// Largest request body accepted, in bytes; larger gets 413.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub max_body: usize,
    /// Path prefix of the test routes (e.g. `/_stampede` → `/_stampede/bytes/100`).
    #[arg(long, default_value = "", value_name = "STR")]
    pub prefix: String,
    /// How long in-flight requests may take to finish after SIGINT/SIGTERM.
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DUR")]
    pub shutdown_grace: Duration,
    /// Serve HTTPS with a self-signed certificate generated at start (for localhost,
    /// 127.0.0.1 and ::1); its SHA-256 fingerprint is printed. ALPN offers h2 and http/1.1.
    #[arg(long)]
    pub tls: bool,
    /// Serve HTTPS with this PEM certificate chain (needs --key; implies --tls).
    #[arg(long, value_name = "PEM", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "PEM", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Write the certificate in use (PEM) to this file, for clients' --cacert
    /// (without --cert/--key it implies --tls).
    #[arg(long, value_name = "PATH")]
    pub write_cert: Option<PathBuf>,
    /// Ask TLS clients for a certificate signed by a CA in this PEM file (mTLS;
    /// implies --tls)
    #[arg(long, value_name = "PEM")]
    pub client_ca: Option<PathBuf>,
    /// With --client-ca: require a client certificate, or only request one
    #[arg(long, value_name = "request|require", default_value = "require", value_parser = ["request", "require"], requires = "client_ca")]
    pub client_auth: String,
    /// Lowest TLS version accepted (1.2 or 1.3)
    #[arg(long, value_name = "1.2|1.3", value_parser = parse_tls_version)]
    pub tls_min: Option<TlsVersion>,
    /// Highest TLS version accepted (1.2 or 1.3)
    #[arg(long, value_name = "1.2|1.3", value_parser = parse_tls_version)]
    pub tls_max: Option<TlsVersion>,
    /// Also listen on this Unix domain socket (a stale socket file is replaced; the
    /// file is removed at shutdown).
    #[arg(long, value_name = "PATH")]
    pub unix: Option<PathBuf>,
    /// Do not detect the HTTP/2 prior-knowledge preface (h2c) on cleartext connections.
    #[arg(long)]
    pub no_h2c: bool,
    /// Also serve HTTP/3 over QUIC on the same port number over UDP (implies --tls);
    /// TCP responses advertise it with Alt-Svc.
    #[arg(long)]
    pub http3: bool,
    /// Encode every compressible response (text, JSON, JavaScript, XML, SVG; at
    /// least 20 bytes; not streamed) in the coding the request's Accept-Encoding
    /// asks for (zstd, br, gzip or deflate), with Vary: Accept-Encoding
    #[arg(long)]
    pub compress: bool,
    /// Serve the target's counters (responses by status, connections, bytes) in the
    /// Prometheus/OpenMetrics text format at http://ADDR/metrics, e.g. 127.0.0.1:9465
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
}

impl ServeArgs {
    fn config(&self) -> Config {
        let mut c = Config {
            root: self.root.clone(),
            access_log: self.access_log.as_deref().map(|p| match p {
                "-" => AccessLogDest::Stdout,
                path => AccessLogDest::File(PathBuf::from(path)),
            }),
            idle_timeout: self.idle_timeout,
            header_timeout: self.header_timeout,
            body_timeout: self.body_timeout,
            max_connections: self.max_connections,
            max_body: self.max_body,
            route_prefix: self.prefix.clone(),
            shutdown_grace: self.shutdown_grace,
            tls: self.tls_config(),
            unix_socket: self.unix.clone(),
            h2c: !self.no_h2c,
            http3: self.http3,
            compress: self.compress,
            count_routes: self.metrics.is_some(),
            backlog: self.backlog,
            ..Config::default()
        };
        if let Some(t) = self.threads {
            c.threads = t;
        }
        c
    }

    fn tls_config(&self) -> Option<TlsConfig> {
        let cert = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => CertSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            },
            _ if self.tls
                || self.http3
                || self.write_cert.is_some()
                || self.client_ca.is_some()
                || self.tls_min.is_some()
                || self.tls_max.is_some() =>
            {
                CertSource::SelfSigned
            }
            _ => return None,
        };
        let min = self.tls_min.unwrap_or(TlsVersion::Tls12);
        let max = self.tls_max.unwrap_or(TlsVersion::Tls13);
        Some(TlsConfig {
            write_cert: self.write_cert.clone(),
            client_ca: self.client_ca.clone(),
            client_auth_required: self.client_auth == "require",
            tls12: min <= TlsVersion::Tls12 && max >= TlsVersion::Tls12,
            tls13: min <= TlsVersion::Tls13 && max >= TlsVersion::Tls13,
            ..TlsConfig::new(cert)
        })
    }
}

/// Runs the server until SIGINT/SIGTERM; returns the exit code (0, or 2 when it cannot start).
pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    // Room for --max-connections open sockets, so that a large test does not
    // meet EMFILE first (the soft limit is often 1024). Best effort: a lower
    // limit still works, with the server's EMFILE back-off.
    let _ = stampede_engine::raise_nofile_limit(args.max_connections as u64 + 64);
    let addr = SocketAddr::new(args.bind, args.port);
    // Bound before the server starts: a bad address is the only line.
    let metrics = match args.metrics.as_deref() {
        Some(text) => {
            match stampede_exporters::web_http::bind("--metrics", text, "127.0.0.1:9465") {
                Ok(listener) => Some(listener),
                Err(error) => {
                    eprintln!("stampede serve: error: {error}");
                    return Ok(2);
                }
            }
        }
        None => None,
    };
    let config = args.config();
    let handle = match Server::start(addr, config) {
        Ok(h) => h,
        Err(
            e @ (TargetError::Bind { .. }
            | TargetError::Config(_)
            | TargetError::Root { .. }
            | TargetError::Certificate { .. }
            | TargetError::Tls(_)
            | TargetError::WriteCert { .. }
            | TargetError::Unix { .. }),
        ) => {
            eprintln!("stampede serve: error: {e}");
            return Ok(2);
        }
        Err(e) => return Err(e).context("starting the target server"),
    };
    let cfg = handle.config();
    let content = match &cfg.root {
        Some(r) => format!("files under {}", r.display()),
        None => "built-in pages".to_string(),
    };
    let log = match &cfg.access_log {
        None => "access log off".to_string(),
        Some(AccessLogDest::Stdout) => "access log to stdout".to_string(),
        Some(AccessLogDest::File(p)) => format!("access log to {}", p.display()),
    };
    let scheme = if cfg.tls.is_some() { "https" } else { "http" };
    eprintln!(
        "stampede serve: listening on {scheme}://{}, {} worker{} (SO_REUSEPORT, one event loop each), {content}, {log}",
        handle.local_addr(),
        cfg.threads,
        if cfg.threads == 1 { "" } else { "s" },
    );
    if let (Some(what), Some(fp)) = (handle.tls_description(), handle.tls_fingerprint()) {
        let written = match cfg.tls.as_ref().and_then(|t| t.write_cert.as_ref()) {
            Some(p) => format!(", written to {}", p.display()),
            None => String::new(),
        };
        eprintln!(
            "stampede serve: TLS with {what}{written}; ALPN h2, http/1.1; SHA-256 fingerprint {fp}"
        );
        if cfg.http3 {
            eprintln!(
                "stampede serve: HTTP/3 over QUIC on udp {} (ALPN h3, 0-RTT on; Alt-Svc on TCP)",
                handle.local_addr()
            );
        }
    } else if cfg.h2c {
        eprintln!("stampede serve: HTTP/1.1 and h2c (HTTP/2 prior knowledge)");
    }
    if let Some(p) = handle.unix_path() {
        eprintln!(
            "stampede serve: also listening on unix:{} (all workers accept from it)",
            p.display()
        );
    }
    if let Some(listener) = metrics {
        let reader = handle.stats_reader();
        let source = Box::new(move || {
            stampede_exporters::metrics_target::target_families(&reader.snapshot())
        });
        let address = stampede_exporters::metrics_endpoint::serve_families(
            "--metrics",
            listener,
            Vec::new(),
            source,
        )?;
        eprintln!("stampede serve: metrics at http://{address}/metrics");
    }
    wait_for_signal().context("installing the SIGINT/SIGTERM handler")?;
    eprintln!("stampede serve: shutting down (finishing in-flight requests)");
    let stats = handle.shutdown().context("stopping the target server")?;
    eprintln!(
        "stampede serve: stopped after {:.1} s: {} requests, {} connections",
        stats.uptime_s, stats.requests_total, stats.connections_accepted
    );
    Ok(0)
}

/// Blocks until SIGINT or SIGTERM arrives.
fn wait_for_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    rt.block_on(async {
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        Ok(())
    })
}

fn parse_tls_version(text: &str) -> Result<TlsVersion, String> {
    TlsVersion::parse(text).map_err(|e| e.to_string())
}
