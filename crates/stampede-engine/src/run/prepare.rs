//! The first step of a run (run/engine.rs `run_with`): what every worker
//! shares, made once before any starts. The event loop is settled, the
//! target resolved, the requests encoded for each protocol, the mix's
//! order drawn, the redirect rule and the rendezvous points built.

use crate::error::EngineError;
use crate::http1::{encode_request, encode_request_to};
use crate::net::transport::ConnectorSpec;
use crate::net::transport::{build_tls_client, Endpoint};
use crate::plan::h2_request::prepare as prepare_h2;
use crate::plan::h3_plan::H3Plan;
use crate::plan::worker_plan::H2Plan;
use crate::redirects::redirect::RedirectRule;
use crate::run::options::RunOptions;
use crate::workload::RendezvousPoints;
use stampede_plan::{weighted_order, EventLoop, IoBackend, LoadModel, Plan, Scheme};
use std::net::SocketAddr;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// What every worker of a run shares.
pub(crate) struct Prepared {
    /// The loop every worker runs (`--io`, settled against what the plan needs).
    pub event_loop: EventLoop,
    /// The seed of the run's randomness (`--seed`, or a fresh one).
    pub seed: u64,
    /// How to open connections to the target.
    pub connector: ConnectorSpec,
    /// The target's addresses as resolved.
    pub addrs: Vec<SocketAddr>,
    /// How long resolving took.
    pub dns: Duration,
    /// Dropped at the end of the run, which stops the re-resolving thread
    /// (`--dns-ttl`).
    pub _refreshing: Option<mpsc::Sender<()>>,
    /// The fixed request, encoded once.
    pub request: Arc<[u8]>,
    /// The mix's requests, encoded once, each with whether it is a HEAD.
    pub mix: Vec<(Arc<[u8]>, bool)>,
    /// The order the mix's requests go in (weighted, or a replay's list).
    pub mix_order: Arc<[u16]>,
    /// The requests in HTTP/2's form, over `--http2`.
    pub http2: Option<H2Plan>,
    /// The HTTP/3 part, over `--http3`.
    pub http3: Option<H3Plan>,
    /// A WebSocket run (`ws://`): the upgrade and the message.
    pub websocket: Option<Arc<crate::plan::ws_plan::WsConfig>>,
    /// The rule for following redirects, when any are followed.
    pub redirect: Option<RedirectRule>,
    /// The scenario's rendezvous points, when a step has one.
    pub rendezvous: Option<Arc<RendezvousPoints>>,
}

/// Prepares what the workers of `plan` share; `groups`: each scenario
/// group's load model (one entry without groups).
pub(crate) fn prepare(
    plan: &Plan,
    options: &RunOptions,
    groups: &[&LoadModel],
) -> Result<Prepared, EngineError> {
    let event_loop = settle_event_loop(plan)?;
    let seed = options.seed.unwrap_or_else(|| {
        use std::hash::{BuildHasher, Hasher};
        // std's hasher keys are random per process and per call: a fresh seed
        // without another dependency.
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    });
    let resolve_start = Instant::now();
    let (connector, addrs) = connector_spec(plan)?;
    let dns = resolve_start.elapsed();
    let refreshing = match &connector.addresses {
        Some(book) => book.refresh(plan)?,
        None => None,
    };
    let request: Arc<[u8]> = encode_request(plan).into();
    let mix: Vec<(Arc<[u8]>, bool)> = plan
        .mix
        .iter()
        .map(|entry| {
            let bytes = encode_request_to(plan, &entry.target, &entry.request);
            (Arc::from(bytes), entry.request.method == "HEAD")
        })
        .collect();
    let http2 = if plan.transport.http2 {
        let requests = if plan.mix.is_empty() {
            vec![prepare_h2(&plan.target, &plan.request)?]
        } else {
            plan.mix
                .iter()
                .map(|entry| prepare_h2(&entry.target, &entry.request))
                .collect::<Result<_, _>>()?
        };
        Some(H2Plan {
            requests,
            streams: plan.transport.streams.max(1),
        })
    } else {
        None
    };
    let http3 = crate::plan::h3_plan::build(plan, &connector)?;
    let websocket = (plan.transport.websocket.as_ref()).map(|spec| {
        Arc::new(crate::plan::ws_plan::WsConfig::new(
            &plan.target.path_and_query,
            &plan.target.authority,
            &plan.request.headers,
            spec,
        ))
    });
    let weights: Vec<u32> = plan.mix.iter().map(|entry| entry.weight).collect();
    let listed = options
        .workload
        .as_ref()
        .and_then(|w| w.mix_sequence.clone());
    let mix_order: Arc<[u16]> = match listed {
        Some(sequence) if !weights.is_empty() => sequence,
        _ if weights.is_empty() => Arc::from(Vec::new()),
        _ => weighted_order(&weights).into(),
    };
    let rendezvous = options
        .workload
        .as_deref()
        .and_then(|w| {
            // Over HTTP/2 each stream of a connection is a user of its own.
            let per_connection = match plan.transport.http2 {
                true => plan.transport.streams.max(1),
                false => 1,
            };
            RendezvousPoints::of(w, |g| group_users(groups, g) * per_connection)
        })
        .map(Arc::new);
    let event_loop = match event_loop {
        EventLoop::Tokio => event_loop,
        _ if rendezvous.is_none() => event_loop,
        // Only tokio's tasks can wait at a rendezvous (a reactor's slots
        // have no waker another worker could call): auto takes it.
        _ if plan.transport.io == IoBackend::Auto => EventLoop::Tokio,
        _ => {
            return Err(EngineError::RendezvousNeedsTokio(
                plan.transport.io.as_str(),
            ))
        }
    };
    if plan.transport.http2 && plan.transport.stream.watch && options.workload.is_some() {
        return Err(EngineError::Http2WorkloadStream);
    }
    // The reactors' HTTP/2 sends fixed requests: auto leaves a workload's
    // to tokio, an explicit `--io epoll` or `uring` is refused.
    let event_loop = match event_loop {
        EventLoop::Epoll | EventLoop::Uring
            if plan.transport.http2 && options.workload.is_some() =>
        {
            match plan.transport.io {
                IoBackend::Auto => EventLoop::Tokio,
                io => return Err(EngineError::Http2WorkloadNeedsTokio(io.as_str())),
            }
        }
        other => other,
    };
    // A step's follow_redirects = true follows even without --redirects,
    // as far as JMeter and browsers do (20 hops).
    let step_follows =
        (options.workload.as_deref()).is_some_and(crate::workload::some_step_follows);
    let max_hops = match plan.transport.redirects {
        0 if step_follows => 20,
        n => n,
    };
    let redirect = (max_hops > 0).then(|| redirect_rule(plan, max_hops));
    Ok(Prepared {
        event_loop,
        seed,
        connector,
        addrs,
        dns,
        _refreshing: refreshing,
        request,
        mix,
        mix_order,
        http2,
        http3,
        websocket,
        redirect,
        rendezvous,
    })
}

/// The users group `g` starts with, by its load: a closed group's
/// connections (an open group has no users to gather).
fn group_users(groups: &[&LoadModel], g: usize) -> usize {
    match groups.get(g).or(groups.first()) {
        Some(LoadModel::Closed { connections }) => connections.peak().round().max(0.0) as usize,
        _ => 0,
    }
}

/// How connections reach the target: the Unix socket, the proxy or the
/// target's resolved addresses (all of them: the result names them, and
/// `--dns` spreads connections over them), the CONNECT tunnel and the TLS client.
fn connector_spec(plan: &Plan) -> Result<(ConnectorSpec, Vec<SocketAddr>), EngineError> {
    let transport = &plan.transport;
    let mut addrs = Vec::new();
    let endpoint = match (&transport.unix_socket, &transport.proxy) {
        (Some(path), _) => Endpoint::Unix(path.clone()),
        (None, Some(proxy)) => {
            Endpoint::Tcp(crate::net::dns::resolve_host(&proxy.host, proxy.port)?[0])
        }
        (None, None) => {
            addrs = crate::net::dns::resolve_all(plan)?;
            Endpoint::Tcp(addrs[0])
        }
    };
    let dns = transport.dns;
    let addresses = (!addrs.is_empty() && dns.is_set())
        .then(|| crate::net::dns::AddressBook::new(dns.mode, dns.ttl, &addrs));
    let tunnel_to = match (&transport.proxy, plan.target.scheme) {
        (Some(_), Scheme::Https) => Some(format!(
            "{}:{}",
            bracketed(&plan.target.host),
            plan.target.port
        )),
        _ => None,
    };
    // An http run's TLS options are for its redirects' https origins only.
    // They are built here all the same, and dropped: a bad --cacert is one
    // line before the run, not a failure on every hop to such an origin.
    let tls = transport
        .tls
        .as_ref()
        .map(|spec| build_tls_client(spec, &plan.target.host, transport.http2))
        .transpose()?
        .filter(|_| plan.target.scheme == Scheme::Https);
    let spec = ConnectorSpec {
        endpoint,
        addresses,
        source_addrs: plan.source_addrs.clone(),
        tls,
        tunnel_to,
        connect_timeout: plan.connect_timeout,
        require_h2: transport.http2,
    };
    Ok((spec, addrs))
}

/// How `--redirects` follows: the run's origin, the limit, and how other
/// origins are reached (straight to them, as the run reaches its own, over
/// HTTP/2 when the run is: not through a proxy or a Unix socket, which
/// reach one origin only).
fn redirect_rule(plan: &Plan, max_hops: u32) -> crate::redirects::redirect::RedirectRule {
    let transport = &plan.transport;
    let https = plan.target.scheme == Scheme::Https;
    let home = crate::redirects::redirect_origin::Origin {
        https,
        host: bracketed(&plan.target.host.to_ascii_lowercase()),
        port: plan.target.port,
    };
    let direct = transport.unix_socket.is_none() && transport.proxy.is_none();
    let foreign = direct.then(|| crate::redirects::redirect_origin::ForeignRules {
        resolve: transport.resolve.clone(),
        tls: transport.tls.clone(),
        connect_timeout: plan.connect_timeout,
        http2: transport.http2,
    });
    crate::redirects::redirect::RedirectRule {
        max_hops,
        home,
        foreign,
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// The event loop the run gets: what `--io` and the run allow
/// ([`Plan::event_loop`]), with `auto` taking io_uring where the kernel offers
/// it. Measured against epoll (docs/performance.md), the io_uring reactor
/// uses 0.86× wrk's CPU per request with a new connection per request
/// against epoll's 0.94×, and is level or slightly ahead with keep-alive;
/// epoll remains where io_uring is missing or refused (containers often
/// filter it). An explicit `--io uring` without io_uring is an error.
fn settle_event_loop(plan: &Plan) -> Result<EventLoop, EngineError> {
    let event_loop = plan.event_loop();
    let auto = plan.transport.io == IoBackend::Auto;
    match event_loop {
        EventLoop::Uring => match crate::drive::reactor::uring_unavailable() {
            Some(reason) => Err(EngineError::UringUnavailable(reason)),
            None => Ok(EventLoop::Uring),
        },
        // WebSocket's `auto` is epoll, the loop measured for it (plan.rs);
        // so is HTTP/2's, until io_uring's is measured better.
        EventLoop::Epoll
            if auto
                && plan.transport.websocket.is_none()
                && !plan.transport.http2
                && crate::drive::reactor::uring_unavailable().is_none() =>
        {
            Ok(EventLoop::Uring)
        }
        other => Ok(other),
    }
}
