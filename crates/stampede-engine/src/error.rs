//! Failures of the engine itself (not of requests: those are counted as data).
//!
//! Each variant either shows its cause in its message or hands it out as
//! `source()`, never both: the binary prints the chain joined by `: ` on one
//! line, so a cause in both places would be printed twice.

/// A library's error kept as the cause of an [`EngineError`].
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a run could not start or continue.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The target's host name did not resolve.
    #[error("cannot resolve host '{host}': {reason}")]
    Resolve {
        /// The name asked for.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// A worker thread or its runtime could not be started.
    #[error("cannot start worker {worker}")]
    Worker {
        /// The worker's index.
        worker: usize,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A worker ended before the run did (its thread panicked or exited).
    #[error("worker {0} stopped unexpectedly")]
    WorkerLost(usize),
    /// The TLS client could not be set up: `context` names the option or
    /// file at fault, `source` is what rustls or the file system said.
    #[error("TLS: {context}")]
    Tls {
        /// The option or file at fault.
        context: String,
        /// What rustls or the file system said, if anything.
        #[source]
        source: Option<Cause>,
    },
    /// A request has no HTTP/2 (or HTTP/3) form: `context` names the part,
    /// `source` is the `http` crate's refusal.
    #[error("HTTP/2 request: {context}")]
    Http2 {
        /// The part of the request at fault.
        context: String,
        /// The `http` crate's refusal, if any.
        #[source]
        source: Option<Cause>,
    },
    /// `--io uring` where the kernel (or a sandbox) refuses io_uring.
    #[error("io_uring is unavailable here ({0}); use --io epoll or auto")]
    UringUnavailable(String),
    /// `--io epoll` or `--io uring` with a step's rendezvous, which only
    /// the tokio event loop can hold and release.
    #[error("--io {0}: a scenario step's rendezvous runs on the tokio event loop (use --io tokio or auto)")]
    RendezvousNeedsTokio(&'static str),
    /// `--http2 --io epoll` (or `uring`) with a workload (templates,
    /// feeders, checks, a scenario, a script): the reactors' HTTP/2 sends
    /// fixed requests only.
    #[error("--io {0} drives HTTP/2 with fixed requests only; a workload (templates, feeders, checks, scenarios, scripts) over HTTP/2 runs on tokio (use --io tokio or auto)")]
    Http2WorkloadNeedsTokio(&'static str),
    /// `--sse --http2` with a workload: HTTP/2 watches the streams of
    /// fixed requests only (drive/h2/h2_stream.rs).
    #[error("--sse over HTTP/2 watches fixed requests only; a workload's (templates, feeders, checks, scenarios, scripts) streams are watched over HTTP/1.1")]
    Http2WorkloadStream,
    /// `--log-requests`: its writer thread could not be started.
    #[error("cannot start the request log writer")]
    RequestLog(#[source] std::io::Error),
}

impl EngineError {
    /// A TLS refusal stampede itself makes (options that contradict each other).
    pub(crate) fn tls(context: impl Into<String>) -> Self {
        EngineError::Tls {
            context: context.into(),
            source: None,
        }
    }

    /// A TLS failure caused by a library's or the file system's error.
    pub(crate) fn tls_caused(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        EngineError::Tls {
            context: context.into(),
            source: Some(Box::new(source)),
        }
    }

    /// A request the `http` crate refuses in its HTTP/2 form.
    pub(crate) fn http2_caused(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        EngineError::Http2 {
            context: context.into(),
            source: Some(Box::new(source)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EngineError;
    use std::error::Error;

    /// The line the binary prints: the error and its causes joined by `: `.
    fn chain_line(error: &dyn Error) -> String {
        let mut parts = vec![error.to_string()];
        let mut cause = error.source();
        while let Some(next) = cause {
            parts.push(next.to_string());
            cause = next.source();
        }
        parts.join(": ")
    }

    #[test]
    fn a_tls_failure_keeps_its_cause_and_says_it_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = EngineError::tls_caused("--cacert /x/ca.pem", io);
        let cause = error.source().expect("the cause is kept");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert_eq!(chain_line(&error), "TLS: --cacert /x/ca.pem: no such file");
    }

    #[test]
    fn an_http2_refusal_keeps_the_http_crates_error() {
        let refusal = http::HeaderName::from_bytes(b"bad name").unwrap_err();
        let error = EngineError::http2_caused("header 'bad name'", refusal);
        assert!(error
            .source()
            .and_then(|c| c.downcast_ref::<http::header::InvalidHeaderName>())
            .is_some());
        let line = chain_line(&error);
        assert!(
            line.starts_with("HTTP/2 request: header 'bad name': "),
            "{line}"
        );
        assert_eq!(
            line.matches("invalid HTTP header name").count(),
            1,
            "{line}"
        );
    }

    #[test]
    fn a_worker_and_the_request_log_say_their_cause_once() {
        let io = || std::io::Error::other("out of threads");
        let worker = EngineError::Worker {
            worker: 3,
            source: io(),
        };
        assert_eq!(chain_line(&worker), "cannot start worker 3: out of threads");
        let log = EngineError::RequestLog(io());
        assert_eq!(
            chain_line(&log),
            "cannot start the request log writer: out of threads"
        );
    }

    #[test]
    fn a_refusal_of_stampedes_own_has_no_cause() {
        let error = EngineError::tls("--tls-min 1.3 is above --tls-max 1.2");
        assert!(error.source().is_none());
        assert_eq!(
            chain_line(&error),
            "TLS: --tls-min 1.3 is above --tls-max 1.2"
        );
    }
}
