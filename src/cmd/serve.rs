//! `stampede serve`: the command-line face of the built-in target server
//! (stampede-target). Owns the flags, the start-up layout line, and SIGINT/SIGTERM
//! handling (graceful shutdown, exit 0). The server itself lives in the library.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use stampede_target::{parse_duration, AccessLogDest, Config, Server, TargetError};

/// Run the built-in target server: one worker per CPU, each with its own
/// SO_REUSEPORT listener and event loop. Built-in pages `/` and `/index.html`
/// (515 bytes) and `/1k.html` (1024 bytes), or files under `--root`; test routes
/// `/bytes/{n}`, `/chunked/{n}`, `/delay/{ms}`, `/cpu/{iterations}`,
/// `/status/{code}`, `/echo` and `/stats` (JSON counters) are always on.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  stampede serve                                  # 127.0.0.1:3000, one worker per CPU
  stampede serve --threads 4 --port 3000 --root ./www --access-log access.log
  stampede serve --bind 0.0.0.0 --port 8080 --idle-timeout 30s --max-connections 20000
  curl http://127.0.0.1:3000/stats")]
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
    /// Largest request body accepted, in bytes; larger gets 413.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub max_body: usize,
    /// Path prefix of the test routes (e.g. `/_stampede` → `/_stampede/bytes/100`).
    #[arg(long, default_value = "", value_name = "STR")]
    pub prefix: String,
    /// How long in-flight requests may take to finish after SIGINT/SIGTERM.
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DUR")]
    pub shutdown_grace: Duration,
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
            ..Config::default()
        };
        if let Some(t) = self.threads {
            c.threads = t;
        }
        c
    }
}

/// Runs the server until SIGINT/SIGTERM; returns the exit code (0, or 2 when it cannot start).
pub fn run(args: ServeArgs) -> anyhow::Result<i32> {
    let addr = SocketAddr::new(args.bind, args.port);
    let config = args.config();
    let handle = match Server::start(addr, config) {
        Ok(h) => h,
        Err(e @ (TargetError::Bind { .. } | TargetError::Config(_) | TargetError::Root { .. })) => {
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
    eprintln!(
        "stampede serve: listening on {}, {} worker{} (SO_REUSEPORT, one event loop each), {content}, {log}",
        handle.local_addr(),
        cfg.threads,
        if cfg.threads == 1 { "" } else { "s" },
    );
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
