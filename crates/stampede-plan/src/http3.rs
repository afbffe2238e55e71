//! What an HTTP/3 run (`--http3`) may be combined with: QUIC runs over UDP
//! and is always encrypted, so it needs an https:// URL and no Unix socket,
//! proxy, pipelining or HTTP/1.0; it is HTTP/2's sibling, so not both. The
//! closed and the open model both work, `--streams` requests in flight on
//! each QUIC connection. `--0rtt` belongs to HTTP/3 alone.

use crate::{Plan, PlanError, Scheme};

/// Refuses what HTTP/3 cannot do, in one line each; settles `--streams`.
pub(crate) fn check(plan: &mut Plan) -> Result<(), PlanError> {
    let transport = &mut plan.transport;
    if !transport.http3 {
        if transport.zero_rtt {
            return Err(invalid("--0rtt needs --http3 (0-RTT is QUIC's)"));
        }
        return Ok(());
    }
    transport.streams = transport.streams.max(1);
    if transport.http2 {
        return Err(invalid("--http3 and --http2 cannot be combined: pick one"));
    }
    if plan.target.scheme != Scheme::Https {
        return Err(invalid(
            "--http3 needs an https:// URL: QUIC is always encrypted",
        ));
    }
    if transport.unix_socket.is_some() {
        return Err(invalid(
            "--http3 cannot be combined with --unix-socket: QUIC runs over UDP",
        ));
    }
    if transport.pipeline > 1 {
        return Err(invalid(
            "--http3 cannot be combined with --pipeline: use --streams N for requests in flight per connection",
        ));
    }
    if transport.proxy.is_some() || plan.request.http10 {
        return Err(invalid(
            "--http3 cannot be combined with --proxy or --http1.0",
        ));
    }
    let tls_12_only = transport
        .tls
        .as_ref()
        .is_some_and(|t| t.max_version == Some(crate::TlsVersion::Tls12));
    if tls_12_only {
        return Err(invalid(
            "--http3 needs TLS 1.3 (QUIC has no TLS 1.2): drop --tls-max 1.2",
        ));
    }
    if transport.redirects > 0 {
        return Err(invalid(
            "--redirects follows HTTP/1.1 requests one at a time: drop --http3",
        ));
    }
    if !plan.keepalive && transport.streams > 1 {
        return Err(invalid(
            "--http3 --no-keepalive opens a QUIC connection per request: it needs --streams 1",
        ));
    }
    Ok(())
}

fn invalid(why: &str) -> PlanError {
    PlanError::Invalid(why.into())
}

#[cfg(test)]
mod tests {
    use crate::{LoadModel, Plan, Schedule, Target, TransportSpec};
    use std::time::Duration;

    fn plan(url: &str) -> Plan {
        Plan {
            model: LoadModel::Closed {
                connections: Schedule::constant(2.0, Duration::from_secs(1)),
            },
            transport: TransportSpec {
                http3: true,
                ..TransportSpec::default()
            },
            ..Plan::minimal(Target::parse(url).unwrap())
        }
    }

    fn refusal(mut plan: Plan) -> String {
        plan.validate().unwrap_err().to_string()
    }

    #[test]
    fn what_quic_cannot_carry_is_refused_in_one_line() {
        assert!(refusal(plan("http://127.0.0.1:1/")).contains("https://"));
        let mut unix = plan("https://127.0.0.1:1/");
        unix.transport.unix_socket = Some("/tmp/s".into());
        assert!(refusal(unix).contains("--unix-socket"));
        let mut pipelined = plan("https://127.0.0.1:1/");
        pipelined.transport.pipeline = 4;
        assert!(refusal(pipelined).contains("--pipeline"));
        let mut both = plan("https://127.0.0.1:1/");
        both.transport.http2 = true;
        assert!(refusal(both).contains("--http2"));
        let mut early = plan("https://127.0.0.1:1/");
        early.transport.http3 = false;
        early.transport.zero_rtt = true;
        assert!(refusal(early).contains("--0rtt"));
    }

    #[test]
    fn the_open_model_and_https_are_fine() {
        let mut open = plan("https://127.0.0.1:1/");
        open.model = LoadModel::Rate {
            per_s: Schedule::constant(100.0, Duration::from_secs(1)),
            max_connections: 2,
            arrival: crate::Arrival::Uniform,
            pace_window: Duration::ZERO,
            batch_reads: false,
        };
        open.validate().unwrap();
        assert_eq!(open.transport.streams, 1);
        assert_eq!(open.event_loop(), crate::EventLoop::Tokio);
    }
}
