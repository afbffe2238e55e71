//! What a run asks of its connections beyond reaching the target: how long
//! each lives (`--conn-max-requests`, `--conn-max-age`, as load balancers
//! and proxies retire connections) and which of a name's addresses each goes
//! to (`--dns`, `--dns-ttl`). Plain values and their checks, no I/O: the
//! engine applies them (conn_lifetime.rs, dns.rs).

use crate::{Plan, PlanError, Setting};
use std::time::Duration;

/// When a connection is retired and replaced: a planned reconnect, never
/// an error. Both limits may be set; the first reached ends the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnLifetime {
    /// Close after this many responses (`--conn-max-requests N`).
    pub max_requests: Option<u64>,
    /// Close once the connection is this old (`--conn-max-age DUR`):
    /// checked after each response and before an idle connection is reused.
    pub max_age: Option<Duration>,
}

impl ConnLifetime {
    /// True when connections are retired at all.
    pub fn is_limited(&self) -> bool {
        self.max_requests.is_some() || self.max_age.is_some()
    }
}

/// Which of a name's addresses a new connection goes to (`--dns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DnsMode {
    /// The first address the resolver (or `--resolve`) names, for every
    /// connection (as before `--dns` existed, and as wrk does).
    #[default]
    First,
    /// Each new connection takes the next address, in turn.
    RoundRobin,
    /// Each new connection takes an address at random.
    Random,
}

impl DnsMode {
    /// Parses `first`, `round-robin` (also `rr`) or `random`.
    pub fn parse(text: &str) -> Result<DnsMode, PlanError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "first" => Ok(DnsMode::First),
            "round-robin" | "roundrobin" | "rr" => Ok(DnsMode::RoundRobin),
            "random" => Ok(DnsMode::Random),
            _ => Err(PlanError::Value {
                setting: Setting::Dns,
                text: text.to_string(),
                why: "expected first, round-robin or random".into(),
            }),
        }
    }

    /// The name recorded in results (`dns.mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            DnsMode::First => "first",
            DnsMode::RoundRobin => "round-robin",
            DnsMode::Random => "random",
        }
    }
}

/// How the target's name becomes addresses during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DnsPolicy {
    /// Which of the name's addresses each new connection goes to (`--dns`).
    pub mode: DnsMode,
    /// Resolve the name again this often (`--dns-ttl DUR`): new connections
    /// use the new addresses, open ones stay where they are. `None`: once.
    pub ttl: Option<Duration>,
}

impl DnsPolicy {
    /// True when the run does anything but connect to the first address.
    pub fn is_set(&self) -> bool {
        self.mode != DnsMode::First || self.ttl.is_some()
    }
}

/// Refuses what connection lifetimes and DNS choices cannot mean, in one
/// line each; returns what the user should know.
pub(crate) fn check(plan: &Plan) -> Result<Vec<String>, PlanError> {
    let transport = &plan.transport;
    let lifetime = transport.lifetime;
    let mut notices = Vec::new();
    if lifetime.max_requests == Some(0) {
        return Err(PlanError::AtLeastOne(Setting::ConnMaxRequests));
    }
    if lifetime.max_age.is_some_and(|age| age.is_zero()) {
        return Err(PlanError::AboveZero(Setting::ConnMaxAge));
    }
    if lifetime.is_limited() && transport.http3 {
        return Err(PlanError::Invalid(
            "--conn-max-requests and --conn-max-age do not apply to --http3 yet".into(),
        ));
    }
    if lifetime.is_limited() && !plan.keepalive {
        notices.push(
            "--conn-max-requests and --conn-max-age change nothing with --no-keepalive: \
             every connection carries one request"
                .into(),
        );
    }
    if transport.dns.ttl.is_some_and(|ttl| ttl.is_zero()) {
        return Err(PlanError::AboveZero(Setting::DnsTtl));
    }
    if transport.dns.is_set() && transport.http3 {
        return Err(PlanError::Invalid(
            "--dns and --dns-ttl do not apply to --http3 yet".into(),
        ));
    }
    if transport.dns.is_set() && transport.unix_socket.is_some() {
        notices.push("--dns and --dns-ttl change nothing with --unix-socket".into());
    }
    if transport.dns.is_set() && transport.proxy.is_some() {
        notices.push(
            "--dns and --dns-ttl change nothing with --proxy: the proxy resolves the name".into(),
        );
    }
    Ok(notices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_modes_parse_and_name_themselves() {
        for mode in [DnsMode::First, DnsMode::RoundRobin, DnsMode::Random] {
            assert_eq!(DnsMode::parse(mode.as_str()).unwrap(), mode);
        }
        assert_eq!(DnsMode::parse("RR").unwrap(), DnsMode::RoundRobin);
        let error = DnsMode::parse("nearest").unwrap_err().to_string();
        assert!(error.contains("'nearest'"), "{error}");
        assert!(error.contains("first, round-robin or random"), "{error}");
    }

    #[test]
    fn a_lifetime_is_limited_by_either_bound() {
        assert!(!ConnLifetime::default().is_limited());
        let by_count = ConnLifetime {
            max_requests: Some(5),
            max_age: None,
        };
        assert!(by_count.is_limited());
        let by_age = ConnLifetime {
            max_requests: None,
            max_age: Some(Duration::from_secs(1)),
        };
        assert!(by_age.is_limited());
    }
}
