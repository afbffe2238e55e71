//! The one error type of plan building: each variant names what the user
//! typed, and [`Setting`] names the option an error is about without
//! knowing how a command line spells it. The caller that built the plan
//! names its own flags ([`PlanError::with_flags`]): `stampede run` says
//! `-c`, ab says `-c` for its concurrency and `-t` for its time limit.

use std::fmt;

/// An option of the plan, as an error names it. The flags in brackets
/// are `stampede run`'s; each front-end names its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// How many connections (`-c`).
    Connections,
    /// Requests per second of the open model (`-r`).
    Rate,
    /// Worker threads (`-t`).
    Threads,
    /// How long the run lasts (`-d`).
    Duration,
    /// How many requests in all (`-n`).
    Requests,
    /// The request and connect timeouts.
    Timeouts,
    /// Any TLS option (certificate checks, client certificate, versions, suites).
    Tls,
    /// Speaking HTTP/2 (`--http2`).
    Http2,
    /// HTTP/2 or HTTP/3 streams per connection (`--streams`).
    Streams,
    /// HTTP/1.1 requests in flight per connection (`--pipeline`).
    Pipeline,
    /// Speaking HTTP/1.0 (`--http1.0`).
    Http10,
    /// The HTTP proxy (`--proxy`).
    Proxy,
    /// A targets file of many requests (`--targets`).
    Targets,
    /// The event loop (`--io`).
    Io,
    /// Local addresses to connect from (`--source-addrs`).
    SourceAddrs,
    /// A load that changes in stages (`--stages`).
    Stages,
    /// A fixed address for a host name (`--resolve`).
    Resolve,
    /// The lowest or highest TLS version (`--tls-min`, `--tls-max`).
    TlsVersion,
    /// Following redirects (`--redirects`).
    Redirects,
    /// Requests before a connection is replaced (`--conn-max-requests`).
    ConnMaxRequests,
    /// Age at which a connection is replaced (`--conn-max-age`).
    ConnMaxAge,
    /// Which resolved address connections use (`--dns`).
    Dns,
    /// How often the name is resolved again (`--dns-ttl`).
    DnsTtl,
}

impl Setting {
    /// The setting in words, for a caller without a flag for it.
    pub(crate) fn plain_name(self) -> &'static str {
        match self {
            Setting::Connections => "connections",
            Setting::Rate => "rate",
            Setting::Threads => "threads",
            Setting::Duration => "duration",
            Setting::Requests => "requests",
            Setting::Timeouts => "timeouts",
            Setting::Tls => "TLS options",
            Setting::Http2 => "HTTP/2",
            Setting::Streams => "streams",
            Setting::Pipeline => "pipelining",
            Setting::Http10 => "HTTP/1.0",
            Setting::Proxy => "proxy",
            Setting::Targets => "a targets file",
            Setting::Io => "event loop",
            Setting::SourceAddrs => "source addresses",
            Setting::Stages => "stages",
            Setting::Resolve => "resolve",
            Setting::TlsVersion => "TLS version",
            Setting::Redirects => "following redirects",
            Setting::ConnMaxRequests => "requests per connection",
            Setting::ConnMaxAge => "connection age",
            Setting::Dns => "DNS mode",
            Setting::DnsTtl => "DNS re-resolve interval",
        }
    }
}

/// How a command line spells each setting (None: it has no flag for it).
pub type FlagNames<'a> = &'a dyn Fn(Setting) -> Option<&'static str>;

/// Why a plan could not be built from what the user gave.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A duration without a number or a known unit: the text given.
    Duration(String),
    /// A URL that cannot be read.
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A URL scheme other than http or https: the scheme given.
    Scheme(String),
    /// A header that is not `Name: value`: the text given.
    Header(String),
    /// A method that is not an HTTP token: the text given.
    Method(String),
    /// Connections, threads or requests of zero.
    AtLeastOne(Setting),
    /// A rate, duration or timeout of zero.
    AboveZero(Setting),
    /// A value of `setting` that cannot be read: `why`.
    Value {
        /// The setting the value was given for.
        setting: Setting,
        /// The value as given.
        text: String,
        /// Why it cannot be read.
        why: String,
    },
    /// TLS options for an `http://` target that follows no redirects.
    TlsNeedsHttps,
    /// HTTP/2 with pipelining, HTTP/1.0 or a proxy.
    Http2Conflict,
    /// HTTP/2 without keep-alive: its connections carry many streams.
    Http2NoKeepalive,
    /// `--io epoll|uring` asked for a run only the tokio loop can drive.
    ReactorCannotDrive {
        /// The event loop asked for (`epoll` or `uring`).
        io: &'static str,
        /// What the run uses that the loop cannot drive (e.g. `HTTP/2`).
        reason: &'static str,
    },
    /// Pipelining with a targets file (a batch repeats one request).
    PipelineWithTargets,
    /// Pipelining with a rate (the open model).
    PipelineNeedsClosedModel,
    /// Following redirects with pipelining.
    RedirectsConflict,
    /// A complete message, shown as is: a targets file's line and why, or a
    /// rule of HTTP/3, streams or connection lifetimes.
    Invalid(String),
}

impl PlanError {
    /// The message with each setting named by `flags` where it has a flag
    /// ("connections must be at least 1 (-c)"), in words otherwise.
    pub fn with_flags(&self, flags: FlagNames) -> String {
        // "connections (-c)" or "connections"; "-c" or "connections".
        let both = |s: Setting| match flags(s) {
            Some(flag) => format!("{} ({flag})", s.plain_name()),
            None => s.plain_name().to_string(),
        };
        let either = |s: Setting| flags(s).unwrap_or(s.plain_name()).to_string();
        let a_rate = flags(Setting::Rate).unwrap_or("a rate");
        let suffix = |s: Setting| flags(s).map(|f| format!(" ({f})")).unwrap_or_default();
        match self {
            PlanError::Duration(text) => format!(
                "invalid duration '{text}': expected a number with a unit, e.g. 500ms, 10s, 2m, 1h"
            ),
            PlanError::Url { url, reason } => format!("invalid URL '{url}': {reason}"),
            PlanError::Scheme(scheme) => {
                format!("unsupported scheme '{scheme}' (supported: http, https)")
            }
            PlanError::Header(text) => format!("invalid header '{text}': expected 'Name: value'"),
            PlanError::Method(text) => {
                format!("invalid method '{text}': expected an HTTP token such as GET or POST")
            }
            PlanError::AtLeastOne(s) => {
                format!("{} must be at least 1{}", s.plain_name(), suffix(*s))
            }
            PlanError::AboveZero(s) => {
                format!("{} must be above zero{}", s.plain_name(), suffix(*s))
            }
            PlanError::Value { setting, text, why } => {
                format!("invalid {} '{text}': {why}", either(*setting))
            }
            PlanError::TlsNeedsHttps => format!("{} need an https:// URL", both(Setting::Tls)),
            PlanError::Http2Conflict => format!(
                "{} cannot be combined with {}, {} or {}",
                either(Setting::Http2),
                either(Setting::Pipeline),
                either(Setting::Http10),
                either(Setting::Proxy)
            ),
            PlanError::Http2NoKeepalive => format!(
                "{} keeps its connections open for many streams: drop --no-keepalive \
                 (a new connection per request: --conn-max-requests 1)",
                either(Setting::Http2)
            ),
            PlanError::ReactorCannotDrive { io, reason } => match flags(Setting::Io) {
                Some(flag) => format!(
                    "{flag} {io} drives HTTP/1.1 (plain, TLS or a Unix socket); this run uses {reason}, which {io} does not drive (use {flag} auto or tokio)"
                ),
                None => format!(
                    "the {io} event loop drives HTTP/1.1 (plain, TLS or a Unix socket); this run uses {reason}, which {io} does not drive (use auto or tokio)"
                ),
            },
            PlanError::PipelineWithTargets => format!(
                "{} and {} cannot be combined: a pipelined batch repeats one request",
                either(Setting::Pipeline),
                either(Setting::Targets)
            ),
            PlanError::PipelineNeedsClosedModel => format!(
                "{} works with the closed model ({}), not with {a_rate}: the open model sends each request at its own instant",
                either(Setting::Pipeline),
                either(Setting::Connections),
            ),
            PlanError::RedirectsConflict => format!(
                "{} follows one request at a time: drop {}",
                either(Setting::Redirects),
                either(Setting::Pipeline)
            ),
            PlanError::Invalid(text) => text.clone(),
        }
    }
}

/// In words, without flags (a caller with flags uses [`PlanError::with_flags`]).
impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.with_flags(&|_| None))
    }
}

impl std::error::Error for PlanError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_flags(setting: Setting) -> Option<&'static str> {
        match setting {
            Setting::Connections => Some("-c"),
            Setting::Rate => Some("-r"),
            Setting::Io => Some("--io"),
            _ => None,
        }
    }

    #[test]
    fn flags_come_from_the_caller() {
        let error = PlanError::AtLeastOne(Setting::Connections);
        assert_eq!(error.to_string(), "connections must be at least 1");
        assert_eq!(
            error.with_flags(&run_flags),
            "connections must be at least 1 (-c)"
        );
        let error = PlanError::PipelineNeedsClosedModel;
        assert_eq!(
            error.to_string(),
            "pipelining works with the closed model (connections), not with a rate: \
             the open model sends each request at its own instant"
        );
        assert_eq!(
            error.with_flags(&run_flags),
            "pipelining works with the closed model (-c), not with -r: \
             the open model sends each request at its own instant"
        );
        let error = PlanError::ReactorCannotDrive {
            io: "uring",
            reason: "HTTP/2",
        };
        assert!(error
            .with_flags(&run_flags)
            .starts_with("--io uring drives HTTP/1.1 (plain, TLS or a Unix socket); this run uses HTTP/2, which uring does not drive"));
        assert!(!error.to_string().contains("--"));
    }
}
