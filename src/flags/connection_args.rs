//! Command-line options for the life of a connection and the addresses it
//! goes to: `--conn-max-requests`, `--conn-max-age`, `--dns`, `--dns-ttl`
//! (part of the transport options; `--resolve` stays with them). Values are
//! read as text and parsed here, so a bad one is the usual one-line error.

use anyhow::Context;
use stampede_plan::{parse_duration, ConnLifetime, DnsMode, DnsPolicy};

#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConnectionArgs {
    /// Close each connection after N responses and open a new one (a planned
    /// reconnect, not an error; as load balancers retire connections)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::flags::count_arg::count_u64)]
    pub conn_max_requests: Option<u64>,
    /// Close each connection once it is this old (after its response in
    /// flight) and open a new one, e.g. 30s
    #[arg(long, value_name = "DUR")]
    pub conn_max_age: Option<String>,
    /// Which of the host's addresses new connections go to: first (every
    /// connection to the first address), round-robin or random (spread over all)
    #[arg(long, value_name = "first|round-robin|random")]
    pub dns: Option<String>,
    /// Resolve the host again this often during the run: new connections use
    /// the new addresses, open ones stay, e.g. 30s [default: once]
    #[arg(long, value_name = "DUR")]
    pub dns_ttl: Option<String>,
}

impl ConnectionArgs {
    /// When connections are retired.
    pub fn lifetime(&self) -> anyhow::Result<ConnLifetime> {
        Ok(ConnLifetime {
            max_requests: self.conn_max_requests,
            max_age: self
                .conn_max_age
                .as_deref()
                .map(parse_duration)
                .transpose()
                .context("--conn-max-age")?,
        })
    }

    /// How the host's addresses are chosen and refreshed.
    pub fn dns(&self) -> anyhow::Result<DnsPolicy> {
        Ok(DnsPolicy {
            mode: self
                .dns
                .as_deref()
                .map(DnsMode::parse)
                .transpose()?
                .unwrap_or_default(),
            ttl: self
                .dns_ttl
                .as_deref()
                .map(parse_duration)
                .transpose()
                .context("--dns-ttl")?,
        })
    }
}
