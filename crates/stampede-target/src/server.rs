//! Starting and stopping the server: validating the config, building the TLS
//! configuration, binding one SO_REUSEPORT listener per worker (port 0 allowed: the
//! first picks the port, the rest join it) and the optional Unix socket, spawning the
//! worker threads, and the handle that reads stats and shuts down (removing the Unix
//! socket file).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::sync::watch;

use crate::accesslog::Sink;
use crate::stats::{Registry, StatsSnapshot};
use crate::tls::TlsSetup;
use crate::unix::{SocketFile, UnixSocket};
use crate::worker::{self, Setup};
use crate::{AccessLogDest, Config, TargetError};

/// The target server. See [`Server::start`].
pub struct Server;

/// A running server. Dropping it stops the workers without waiting; call
/// [`ServerHandle::shutdown`] to stop gracefully and wait.
pub struct ServerHandle {
    addr: SocketAddr,
    registry: Arc<Registry>,
    stop: watch::Sender<bool>,
    threads: Vec<JoinHandle<std::io::Result<()>>>,
    config: Arc<Config>,
    tls: Option<TlsSetup>,
    unix: Option<SocketFile>,
}

impl Server {
    /// Binds `config.threads` listeners on `addr` (and `config.unix_socket`, shared by
    /// all workers) and starts one worker thread per listener, each with its own event
    /// loop. With `config.tls` the certificate is made or read (and written) first.
    /// Returns once all are listening.
    pub fn start(addr: SocketAddr, config: Config) -> Result<ServerHandle, TargetError> {
        let config = validate(config)?;
        let root = match &config.root {
            Some(r) => Some(
                std::fs::canonicalize(r)
                    .and_then(|p| {
                        if p.is_dir() {
                            Ok(p)
                        } else {
                            Err(std::io::Error::new(
                                std::io::ErrorKind::InvalidInput,
                                "not a directory",
                            ))
                        }
                    })
                    .map_err(|source| TargetError::Root {
                        path: r.clone(),
                        source,
                    })?,
            ),
            None => None,
        };
        let log_sink = match &config.access_log {
            None => None,
            Some(AccessLogDest::Stdout) => Some(Sink::Stdout),
            Some(AccessLogDest::File(p)) => {
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|source| TargetError::AccessLog {
                        path: p.display().to_string(),
                        source,
                    })?;
                Some(Sink::File(Arc::new(f)))
            }
        };
        let tls = config.tls.as_ref().map(crate::tls::setup).transpose()?;
        let listeners = bind_all(addr, config.threads, backlog(&config))?;
        let local = listeners[0]
            .local_addr()
            .map_err(|source| TargetError::Bind { addr, source })?;
        // HTTP/3: the same port number over UDP, one socket per worker.
        let quic = match &tls {
            Some(t) if config.http3 => Some(crate::http3::server_config(&t.acceptor, &config)?),
            _ => None,
        };
        let mut udp = match &quic {
            Some(_) => crate::http3::bind_all(local, config.threads)?,
            None => Vec::new(),
        }
        .into_iter();
        let alt_svc = crate::http3::alt_svc(quic.as_ref().map(|_| local.port()));
        let unix = config
            .unix_socket
            .as_deref()
            .map(|p| UnixSocket::bind(p, backlog(&config)))
            .transpose()?;
        let unix_file = unix.as_ref().map(UnixSocket::file);
        let config = Arc::new(config);
        let registry = Arc::new(Registry::new(config.threads));
        let (stop, stop_rx) = watch::channel(false);
        let mut threads = Vec::with_capacity(config.threads);
        for (idx, listener) in listeners.into_iter().enumerate() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(TargetError::Worker)?;
            let unix_dup = match &unix {
                Some(u) => Some(u.listener.try_clone().map_err(|source| TargetError::Unix {
                    path: u.path.clone(),
                    source,
                })?),
                None => None,
            };
            let setup = Setup {
                idx,
                listener,
                unix: unix_dup,
                tls: tls.as_ref().map(|t| t.acceptor.clone()),
                cfg: config.clone(),
                registry: registry.clone(),
                log_sink: log_sink.clone(),
                root: root.clone(),
                stop: stop_rx.clone(),
                quic: quic
                    .as_ref()
                    .and_then(|config| Some((udp.next()?, config.clone()))),
                alt_svc: alt_svc.clone(),
            };
            let t = std::thread::Builder::new()
                .name(format!("stampede-target-{idx}"))
                .spawn(move || worker::run(setup, rt))
                .map_err(TargetError::Worker)?;
            threads.push(t);
        }
        Ok(ServerHandle {
            addr: local,
            registry,
            stop,
            threads,
            config,
            tls,
            unix: unix_file,
        })
    }
}

fn validate(mut c: Config) -> Result<Config, TargetError> {
    if c.threads == 0 || c.threads > 1024 {
        return Err(TargetError::Config(format!(
            "threads must be 1..=1024, got {}",
            c.threads
        )));
    }
    if c.backlog == 0 {
        return Err(TargetError::Config("backlog must be at least 1".into()));
    }
    if c.max_connections == 0 {
        return Err(TargetError::Config(
            "max_connections must be at least 1".into(),
        ));
    }
    if c.http3 && c.tls.is_none() {
        return Err(TargetError::Config(
            "HTTP/3 needs TLS: QUIC is always encrypted (add --tls, or --cert and --key)".into(),
        ));
    }
    let p = c.route_prefix.trim_end_matches('/');
    if !p.is_empty() && !p.starts_with('/') {
        c.route_prefix = format!("/{p}");
    } else {
        c.route_prefix = p.to_string();
    }
    if c.route_prefix.contains(['?', '#', ' ']) {
        return Err(TargetError::Config(format!(
            "route prefix {:?} must be a plain path",
            c.route_prefix
        )));
    }
    Ok(c)
}

/// The listen backlog as `listen(2)` takes it; the kernel caps it at
/// net.core.somaxconn, so a larger value than an `i32` holds is that cap too.
fn backlog(config: &Config) -> i32 {
    i32::try_from(config.backlog).unwrap_or(i32::MAX)
}

fn listener(addr: SocketAddr, backlog: i32) -> std::io::Result<std::net::TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    s.listen(backlog)?;
    Ok(s.into())
}

/// Binds `n` listeners sharing one port. A fixed port is first probed without
/// SO_REUSEPORT, so that another server holding it (even with SO_REUSEPORT) is a bind
/// failure instead of silently sharing its traffic with us.
fn bind_all(
    addr: SocketAddr,
    n: usize,
    backlog: i32,
) -> Result<Vec<std::net::TcpListener>, TargetError> {
    let err = |source| TargetError::Bind { addr, source };
    if addr.port() != 0 {
        let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(err)?;
        probe.set_reuse_address(true).map_err(err)?;
        probe.bind(&addr.into()).map_err(err)?;
    }
    let first = listener(addr, backlog).map_err(err)?;
    let actual = first.local_addr().map_err(err)?;
    let mut all = vec![first];
    for _ in 1..n {
        all.push(listener(actual, backlog).map_err(err)?);
    }
    Ok(all)
}

impl ServerHandle {
    /// The bound address (with the real port when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Counters so far, summed over workers.
    pub fn stats(&self) -> StatsSnapshot {
        self.registry.snapshot()
    }

    /// A handle that reads the counters from another thread (an exporter).
    pub fn stats_reader(&self) -> crate::metrics::StatsReader {
        crate::metrics::StatsReader::new(self.registry.clone())
    }

    /// The configuration in force (after validation).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// With TLS: the SHA-256 fingerprint of the certificate, as `AB:CD:...`.
    pub fn tls_fingerprint(&self) -> Option<&str> {
        self.tls.as_ref().map(|t| t.fingerprint.as_str())
    }

    /// With TLS: the certificate chain in PEM (trust it with a client's `--cacert`).
    pub fn tls_cert_pem(&self) -> Option<&str> {
        self.tls.as_ref().map(|t| t.cert_pem.as_str())
    }

    /// With TLS: what the certificate is (`self-signed certificate for ...` or its file).
    pub fn tls_description(&self) -> Option<String> {
        self.config.tls.as_ref().map(crate::tls::describe)
    }

    /// The Unix socket being served, if any.
    pub fn unix_path(&self) -> Option<&Path> {
        self.unix.as_ref().map(SocketFile::path)
    }

    /// Graceful stop: every worker stops accepting, closes idle connections, lets
    /// in-flight requests finish within `shutdown_grace`, flushes its access log and
    /// exits. Returns the final counters.
    pub fn shutdown(mut self) -> Result<StatsSnapshot, TargetError> {
        let _ = self.stop.send(true);
        let mut result = Ok(());
        for (i, t) in std::mem::take(&mut self.threads).into_iter().enumerate() {
            match t.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = Err(TargetError::Worker(e)),
                Err(_) => result = Err(TargetError::WorkerPanic(i)),
            }
        }
        if let Some(u) = self.unix.take() {
            u.remove();
        }
        result.map(|()| self.registry.snapshot())
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(u) = self.unix.take() {
            u.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;
    use std::time::Duration;

    /// Nobody accepts: the kernel completes backlog + 1 handshakes (Linux's
    /// `sk_acceptq_is_full` is `>`, not `>=`), then drops further SYNs.
    #[test]
    fn the_backlog_bounds_the_accept_queue() {
        let l = listener("127.0.0.1:0".parse().unwrap(), 2).unwrap();
        let addr = l.local_addr().unwrap();
        let mut held = Vec::new();
        for _ in 0..6 {
            if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
                held.push(s);
            }
        }
        assert_eq!(held.len(), 3, "a backlog of 2 queues 3 connections");
    }

    #[test]
    fn a_zero_backlog_is_refused() {
        let c = Config {
            backlog: 0,
            ..Config::default()
        };
        let e = validate(c).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("backlog must be at least 1"), "{e}");
    }
}
