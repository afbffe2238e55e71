//! `stampede serve --metrics ADDR`: the built-in target's own counters
//! (responses by status, and by route and status, connections, bytes
//! written, TLS, HTTP/2, HTTP/3 and WebSocket messages) as metric families, served at
//! `/metrics` by the same endpoint and encoder as `run --metrics`
//! (metrics_endpoint.rs), so the server side appears on the same
//! dashboard. Read from the target's exact counters at each scrape
//! (stampede_target::StatsReader); the only work added per request is the
//! route's counter, and only when `--metrics` is given.

use crate::metrics_series::{Family, Values};
use stampede_target::StatsSnapshot;

/// The target's families, as of `stats`.
pub fn target_families(stats: &StatsSnapshot) -> Vec<Family> {
    let none = Vec::new;
    let mut families = vec![Family {
        name: "stampede_target_requests",
        help: "Responses the target produced, by status code",
        values: Values::Counter(
            stats
                .requests_by_status
                .iter()
                .map(|(code, n)| (vec![("code", code.to_string())], *n))
                .collect(),
        ),
    }];
    if !stats.requests_by_route.is_empty() {
        families.push(Family {
            name: "stampede_target_route_requests",
            help: "Responses the target produced, by route (a test route by its name, `files`, `other`) and status code",
            values: Values::Counter(
                stats
                    .requests_by_route
                    .iter()
                    .flat_map(|(route, codes)| {
                        codes.iter().map(move |(code, n)| {
                            (
                                vec![("route", route.to_string()), ("code", code.to_string())],
                                *n,
                            )
                        })
                    })
                    .collect(),
            ),
        });
    }
    let counters = [
        (
            "stampede_target_connections_accepted",
            "Connections accepted and served",
            stats.connections_accepted,
        ),
        (
            "stampede_target_connections_refused",
            "Connections refused with 503 over --max-connections",
            stats.connections_refused,
        ),
        (
            "stampede_target_bytes_sent",
            "HTTP bytes written (before TLS)",
            stats.bytes_out,
        ),
        (
            "stampede_target_tls_handshakes",
            "TLS handshakes completed",
            stats.tls_handshakes,
        ),
        (
            "stampede_target_tls_handshake_failures",
            "TLS handshakes that failed or timed out",
            stats.tls_handshake_failures,
        ),
        (
            "stampede_target_h2_connections",
            "Connections that spoke HTTP/2",
            stats.h2_connections,
        ),
        (
            "stampede_target_h2_streams",
            "HTTP/2 streams accepted",
            stats.h2_streams_total,
        ),
        (
            "stampede_target_h3_connections",
            "QUIC connections that spoke HTTP/3",
            stats.h3_connections,
        ),
        (
            "stampede_target_h3_streams",
            "HTTP/3 request streams accepted",
            stats.h3_streams_total,
        ),
        (
            "stampede_target_ws_connections",
            "WebSocket connections upgraded (/ws/echo, /ws/push)",
            stats.ws_sessions,
        ),
        (
            "stampede_target_ws_messages_received",
            "WebSocket text and binary messages received (a fragmented one once)",
            stats.ws_messages_in,
        ),
        (
            "stampede_target_ws_messages_sent",
            "WebSocket text and binary messages sent (echoes and pushes)",
            stats.ws_messages_out,
        ),
    ];
    families.extend(counters.into_iter().map(|(name, help, value)| Family {
        name,
        help,
        values: Values::Counter(vec![(none(), value)]),
    }));
    let gauges = [
        (
            "stampede_target_connections_open",
            "Connections open now",
            stats.connections_open as f64,
        ),
        (
            "stampede_target_uptime_seconds",
            "Seconds since the target started",
            stats.uptime_s,
        ),
        (
            "stampede_target_workers",
            "Worker threads",
            stats.workers as f64,
        ),
    ];
    families.extend(gauges.into_iter().map(|(name, help, value)| Family {
        name,
        help,
        values: Values::Gauge(vec![(none(), value)]),
    }));
    families
}
