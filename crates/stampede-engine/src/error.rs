//! Failures of the engine itself (not of requests: those are counted as data).

/// Why a run could not start or continue.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot resolve host '{host}': {reason}")]
    Resolve { host: String, reason: String },
    #[error("cannot start worker {worker}: {source}")]
    Worker {
        worker: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("worker {0} stopped unexpectedly")]
    WorkerLost(usize),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("HTTP/2 request: {0}")]
    Http2(String),
    #[error("io_uring is unavailable here ({0}); use --io epoll or auto")]
    UringUnavailable(String),
    #[error("cannot start the request log writer: {0}")]
    RequestLog(#[source] std::io::Error),
}
