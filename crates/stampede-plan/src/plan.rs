//! The [`Plan`]: everything a run needs to know before the first byte is sent.

use crate::header::is_token;
use crate::{Header, LoadModel, PlanError, Schedule, Scheme, Setting, Target, TransportSpec};
use std::time::Duration;

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCondition {
    /// Run until this much time has passed; requests in flight then are `unfinished`.
    Duration(Duration),
    /// Send exactly this many requests in total, then wait for all of them (ab's `-n`).
    /// The optional duration is an upper bound on the whole run.
    Requests {
        /// How many requests in all.
        count: u64,
        /// The longest the whole run may take, if bounded.
        limit: Option<Duration>,
    },
}

/// The request every connection sends (one template per plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    /// The HTTP method, a token (`GET`, `POST`).
    pub method: String,
    /// Headers given by the user, in order; they replace defaults of the same name.
    pub headers: Vec<Header>,
    /// The request body; empty for none.
    pub body: Vec<u8>,
    /// Speak HTTP/1.0 (webbench's and ab's default) instead of HTTP/1.1.
    pub http10: bool,
}

/// One request of a mix (`--targets`), with its share of the sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MixEntry {
    /// Where the request goes.
    pub target: Target,
    /// The request sent there.
    pub request: RequestSpec,
    /// Its share of the sends, relative to the other entries' weights.
    pub weight: u32,
}

/// A validated description of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The URL under test.
    pub target: Target,
    /// The request every connection sends.
    pub request: RequestSpec,
    /// How much load, and how it changes over time.
    pub model: LoadModel,
    /// Worker threads, each owning an even share of the connections and rate.
    pub threads: usize,
    /// When the run ends.
    pub stop: StopCondition,
    /// Load applied before measuring, not recorded.
    pub warmup: Option<Duration>,
    /// Local addresses to spread connections over (`--source-addrs`), so more
    /// than one local port range is available; empty means the kernel's choice.
    pub source_addrs: Vec<std::net::IpAddr>,
    /// TCP or Unix socket, TLS, proxy, pipelining.
    pub transport: TransportSpec,
    /// Several requests with their own statistics (`--targets`); empty: the
    /// single `target` + `request`. When set, the first entry is also
    /// `target` + `request`, and all share its origin.
    pub mix: Vec<MixEntry>,
    /// Reuse connections; `false` opens a new connection for every request.
    pub keepalive: bool,
    /// Time allowed to open a connection (with the TLS handshake, if any).
    pub connect_timeout: Duration,
    /// Time allowed from sending a request to its complete response.
    pub timeout: Duration,
}

impl Plan {
    /// The most connections the run may open at once.
    pub fn connections(&self) -> usize {
        self.model.max_connections()
    }

    /// What keeps the reactors (epoll, io_uring) from driving this run, if
    /// anything: they speak HTTP/1.1 (TCP or Unix, plain or TLS), one
    /// request (or one `--pipeline` batch) per connection at a time, in the
    /// closed and the open model; both also speak HTTP/2 (h2c, or h2 over
    /// TLS) with fixed requests, in both models, epoll under `--io epoll`
    /// and `auto`, io_uring under `--io uring` (tokio takes the rest).
    /// A proxy's CONNECT tunnel is the tokio path's. WebSocket (`ws://`,
    /// `wss://`) runs on both.
    pub fn reactor_limitation(&self) -> Option<&'static str> {
        if self.uses_tls() && self.transport.proxy.is_some() {
            Some("TLS through a proxy (CONNECT)")
        } else if self.transport.http2 {
            match self.transport.io {
                // `auto` too: the epoll slot's codec costs about half the
                // `h2` crate's instructions per request and less CPU in
                // every case measured (bench/results/2026-12-04-h2-reactor.md).
                crate::IoBackend::Epoll | crate::IoBackend::Auto | crate::IoBackend::Uring => {
                    self.reactor_h2_limitation()
                }
                _ => Some("HTTP/2"),
            }
        } else if self.transport.http3 {
            Some("HTTP/3")
        } else if self
            .transport
            .websocket
            .as_ref()
            .is_some_and(|ws| ws.scenario)
        {
            Some("WebSocket scenario steps (think times and closes between steps)")
        } else if self.transport.stream.reconnect {
            Some("--sse-reconnect")
        } else {
            None
        }
    }

    /// What keeps the reactors' HTTP/2 (the stampede-h2 codec, asked for
    /// with `--io epoll` or `uring`) from this run, if anything: they drive
    /// h2c (prior knowledge) and h2 over TLS with fixed requests, in the
    /// closed and the open model.
    fn reactor_h2_limitation(&self) -> Option<&'static str> {
        /// The reason, with what the reactors do drive over HTTP/2.
        macro_rules! beyond_epoll {
            ($what:literal) => {
                concat!(
                    $what,
                    " (epoll and io_uring drive HTTP/2, h2c or over TLS, with fixed requests)"
                )
            };
        }
        let lifetime = &self.transport.lifetime;
        if self.transport.redirects > 0 {
            Some(beyond_epoll!("HTTP/2 with redirects"))
        } else if self.transport.compression.decode || self.transport.stream.watch {
            Some(beyond_epoll!("HTTP/2 with decoded or watched bodies"))
        } else if lifetime.max_requests.is_some() || lifetime.max_age.is_some() {
            Some(beyond_epoll!("HTTP/2 with a connection lifetime"))
        } else {
            None
        }
    }

    fn uses_tls(&self) -> bool {
        self.target.scheme == Scheme::Https
    }

    /// The event loop `--io` asks for, where the run allows it; tokio where a
    /// reactor cannot drive it. `auto` reads as epoll here: the engine takes
    /// io_uring instead where the kernel offers it (not for WebSocket, whose
    /// `auto` is epoll: it costs less CPU per message than tokio, over
    /// `ws://` and `wss://`, bench/results/2026-12-04-websocket-vs-http.md).
    pub fn event_loop(&self) -> crate::EventLoop {
        use crate::{EventLoop, IoBackend};
        match (self.transport.io, self.reactor_limitation()) {
            (IoBackend::Tokio, _) | (_, Some(_)) => EventLoop::Tokio,
            (IoBackend::Uring, None) => EventLoop::Uring,
            (IoBackend::Auto | IoBackend::Epoll, None) => EventLoop::Epoll,
        }
    }

    /// Checks the plan and adjusts what must be adjusted; returns the notices
    /// the user should see (e.g. connections capped at the request count).
    pub fn validate(&mut self) -> Result<Vec<String>, PlanError> {
        let mut notices = Vec::new();
        if !is_token(&self.request.method) {
            return Err(PlanError::Method(self.request.method.clone()));
        }
        if self.connections() == 0 {
            return Err(PlanError::AtLeastOne(Setting::Connections));
        }
        if let LoadModel::Rate { per_s, .. } = &self.model {
            if per_s.peak() <= 0.0 {
                return Err(PlanError::AboveZero(Setting::Rate));
            }
        }
        if self.threads == 0 {
            return Err(PlanError::AtLeastOne(Setting::Threads));
        }
        match self.stop {
            StopCondition::Duration(d) if d.is_zero() => {
                return Err(PlanError::AboveZero(Setting::Duration))
            }
            StopCondition::Requests { count: 0, .. } => {
                return Err(PlanError::AtLeastOne(Setting::Requests))
            }
            StopCondition::Requests { count, .. } if (self.connections() as u64) > count => {
                notices.push(format!(
                    "connections capped at {count}: {count} requests in all are fewer than {} connections",
                    self.connections()
                ));
                match &mut self.model {
                    LoadModel::Closed { connections } => {
                        *connections = Schedule {
                            start: connections.start.min(count as f64),
                            stages: connections
                                .stages
                                .iter()
                                .map(|s| crate::Stage {
                                    duration: s.duration,
                                    target: s.target.min(count as f64),
                                })
                                .collect(),
                        }
                    }
                    LoadModel::Rate {
                        max_connections, ..
                    } => *max_connections = count as usize,
                }
            }
            _ => {}
        }
        if self.connect_timeout.is_zero() || self.timeout.is_zero() {
            return Err(PlanError::AboveZero(Setting::Timeouts));
        }
        // WebSocket first: its refusals name the flag to drop, where the
        // others would point an upgrade towards https:// or HTTP/2.
        crate::websocket_spec::check(self)?;
        crate::http3::check(self)?;
        crate::stream_spec::check(self)?;
        if let Some(at_most) = self.transport.stream.for_at_most {
            // A stream still open then ends, as a success (the engine's books).
            self.timeout = at_most;
        }
        notices.extend(crate::connection_policy::check(self)?);
        if self.target.scheme == Scheme::Https && self.transport.tls.is_none() {
            self.transport.tls = Some(crate::TlsSpec::default());
        }
        // An http run's TLS options are for the https origins its
        // redirects lead to; without --redirects they would do nothing.
        let for_hops = self.transport.redirects > 0;
        if self.target.scheme == Scheme::Http && self.transport.tls.is_some() && !for_hops {
            return Err(PlanError::TlsNeedsHttps);
        }
        if self.transport.pipeline == 0 {
            self.transport.pipeline = 1;
        }
        if self.transport.http2 {
            self.transport.streams = self.transport.streams.max(1);
            if self.transport.pipeline > 1 || self.request.http10 || self.transport.proxy.is_some()
            {
                return Err(PlanError::Http2Conflict);
            }
            if !self.keepalive {
                return Err(PlanError::Http2NoKeepalive);
            }
        }
        if matches!(
            self.transport.io,
            crate::IoBackend::Epoll | crate::IoBackend::Uring
        ) {
            if let Some(reason) = self.reactor_limitation() {
                return Err(PlanError::ReactorCannotDrive {
                    io: self.transport.io.as_str(),
                    reason,
                });
            }
        }
        if self.transport.redirects > 0 && self.transport.pipeline > 1 {
            return Err(PlanError::RedirectsConflict);
        }
        if self.transport.pipeline > 1 && !self.mix.is_empty() {
            return Err(PlanError::PipelineWithTargets);
        }
        for entry in &self.mix {
            if !is_token(&entry.request.method) {
                return Err(PlanError::Method(entry.request.method.clone()));
            }
        }
        if self.transport.pipeline > 1 && !matches!(self.model, LoadModel::Closed { .. }) {
            return Err(PlanError::PipelineNeedsClosedModel);
        }
        if self.threads > self.connections() {
            self.threads = self.connections();
        }
        Ok(notices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            target: Target::parse("http://127.0.0.1:3000/").unwrap(),
            request: RequestSpec {
                method: "GET".into(),
                headers: vec![],
                body: vec![],
                http10: false,
            },
            model: LoadModel::Closed {
                connections: Schedule::constant(50.0, Duration::from_secs(10)),
            },
            threads: 2,
            stop: StopCondition::Duration(Duration::from_secs(10)),
            warmup: None,
            source_addrs: Vec::new(),
            transport: TransportSpec::default(),
            mix: Vec::new(),
            keepalive: true,
            connect_timeout: Duration::from_secs(3),
            timeout: Duration::from_secs(10),
        }
    }

    #[test]
    fn http2_runs_on_the_reactors_when_asked_and_with_fixed_requests() {
        use crate::{EventLoop, IoBackend};
        let h2 = |io: IoBackend| {
            let mut p = plan();
            p.transport.http2 = true;
            p.transport.io = io;
            p
        };
        // auto and epoll take it in both models, uring when asked; tokio
        // when asked.
        assert_eq!(h2(IoBackend::Auto).event_loop(), EventLoop::Epoll);
        assert_eq!(h2(IoBackend::Tokio).event_loop(), EventLoop::Tokio);
        let mut epoll = h2(IoBackend::Epoll);
        assert!(epoll.validate().is_ok());
        assert_eq!(epoll.event_loop(), EventLoop::Epoll);
        let mut uring = h2(IoBackend::Uring);
        assert!(uring.validate().is_ok());
        assert_eq!(uring.event_loop(), EventLoop::Uring);
        let mut tls = h2(IoBackend::Epoll);
        tls.target = Target::parse("https://127.0.0.1:3000/").unwrap();
        assert!(tls.validate().is_ok(), "h2 over TLS, ALPN h2");
        assert_eq!(tls.event_loop(), EventLoop::Epoll);
        let mut paced = h2(IoBackend::Epoll);
        paced.model = LoadModel::Rate {
            per_s: Schedule::constant(10.0, Duration::from_secs(1)),
            max_connections: 5,
            arrival: crate::Arrival::Uniform,
            pace_window: Duration::ZERO,
            batch_reads: false,
        };
        assert!(paced.validate().is_ok(), "the open model");
        assert_eq!(paced.event_loop(), EventLoop::Epoll);
        let mut hops = h2(IoBackend::Epoll);
        hops.transport.redirects = 3;
        let mut retired = h2(IoBackend::Epoll);
        retired.transport.lifetime.max_requests = Some(5);
        for (what, mut p) in [("redirects", hops), ("a connection lifetime", retired)] {
            match p.validate() {
                Err(PlanError::ReactorCannotDrive {
                    io: "epoll",
                    reason,
                }) => {
                    assert!(reason.contains(what), "{what}: {reason}")
                }
                other => panic!("{what}: {other:?}"),
            }
            // What epoll does not drive, auto leaves to tokio.
            p.transport.io = IoBackend::Auto;
            assert!(p.validate().is_ok(), "{what}");
            assert_eq!(p.event_loop(), EventLoop::Tokio, "{what}");
        }
    }

    #[test]
    fn caps_connections_at_the_request_count() {
        let mut p = plan();
        p.stop = StopCondition::Requests {
            count: 10,
            limit: None,
        };
        let notices = p.validate().unwrap();
        assert_eq!(p.connections(), 10);
        assert_eq!(notices.len(), 1);
    }

    #[test]
    fn rejects_zero_connections_and_bad_methods() {
        let mut p = plan();
        p.model = LoadModel::Closed {
            connections: Schedule::constant(0.0, Duration::from_secs(1)),
        };
        assert!(p.validate().is_err());
        let mut p = plan();
        p.request.method = "GE T".into();
        assert!(matches!(p.validate(), Err(PlanError::Method(_))));
    }

    #[test]
    fn never_more_threads_than_connections() {
        let mut p = plan();
        p.model = LoadModel::Closed {
            connections: Schedule::constant(1.0, Duration::from_secs(1)),
        };
        p.validate().unwrap();
        assert_eq!(p.threads, 1);
    }
}
