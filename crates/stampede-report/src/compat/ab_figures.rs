//! The figures of ab's report, derived once from a stampede result for both
//! layouts (text in ab_text.rs, `-w` HTML in ab_html.rs), and the view
//! ab's options ask for. Milliseconds are rounded as ab rounds them.

use stampede_metrics::RunResult;

/// How the report looks, from ab's options.
#[derive(Debug, Clone, PartialEq)]
pub struct AbView {
    /// -k: print Keep-Alive requests.
    pub keepalive: bool,
    /// Not -d: print the percentage table.
    pub percentiles: bool,
    /// Not -S: print sd and median in Connection Times.
    pub confidence: bool,
    /// -v: 2 and above add status and error counts.
    pub verbosity: u32,
    /// -l: the document length is "Variable", whatever the lengths were
    /// (ab's `nolength` in output_results).
    pub variable_length: bool,
    /// -x: the attributes of each `<table>` under -w.
    pub table_attrs: String,
    /// -y: the attributes of each `<tr>` under -w.
    pub tr_attrs: String,
    /// -z: the attributes of each `<td>` and `<th>` under -w.
    pub td_attrs: String,
}

/// Microseconds to ab's milliseconds: ab rounds (`ap_round_ms`).
pub(super) fn ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// The figures ab derives, computed once for both layouts.
pub(super) struct Figures {
    /// ab's "Complete requests": every request that finished, failed or not.
    pub(super) done: u64,
    pub(super) failed: u64,
    /// Failed requests by ab's classes: connect, receive, length, exceptions.
    pub(super) failed_by_class: [u64; 4],
    pub(super) non_2xx: u64,
    pub(super) keepalive_requests: u64,
    pub(super) document_length: String,
    /// Complete responses per second (the result's `rps`).
    pub(super) rps: f64,
    pub(super) time_per_request_ms: f64,
    pub(super) time_per_request_all_ms: f64,
    pub(super) kbytes_per_s: f64,
    pub(super) body_sent: u64,
}

pub(super) fn figures(result: &RunResult, view: &AbView) -> Figures {
    let r = &result.requests;
    let error = |kind: &str| result.errors.get(kind).copied().unwrap_or(0);
    let connect = error("connect_refused") + error("connect_timeout");
    let receive = error("reset") + error("closed_early") + error("timeout");
    let non_2xx = result
        .status
        .iter()
        .filter(|(code, _)| !code.starts_with('2'))
        .map(|(_, n)| n)
        .sum();
    let document_length = if view.variable_length {
        "Variable".into()
    } else if r.completed > 0 && result.bytes.body.is_multiple_of(r.completed) {
        format!("{} bytes", result.bytes.body / r.completed)
    } else if r.completed > 0 {
        "Variable".into()
    } else {
        "0 bytes".into()
    };
    let per_response = |total_ms: f64| {
        if r.completed > 0 {
            total_ms / r.completed as f64
        } else {
            0.0
        }
    };
    let elapsed_ms = result.elapsed_s * 1000.0;
    Figures {
        done: r.completed + r.errors,
        failed: r.errors,
        failed_by_class: [
            connect,
            receive,
            0,
            r.errors.saturating_sub(connect + receive),
        ],
        non_2xx,
        // A reconnect is a connection the server closed after a response we
        // wanted to keep alive: that response was not a keep-alive one.
        keepalive_requests: r.completed.saturating_sub(result.connections.reconnects),
        document_length,
        rps: result.rps,
        time_per_request_ms: per_response(result.plan.connections as f64 * elapsed_ms),
        time_per_request_all_ms: per_response(elapsed_ms),
        kbytes_per_s: if result.elapsed_s > 0.0 {
            result.bytes.received as f64 / 1024.0 / result.elapsed_s
        } else {
            0.0
        },
        body_sent: result.plan.body_bytes as u64 * r.sent,
    }
}

/// ab's Connect row: the TCP connect, and over https the TLS handshake
/// with it (ab times both as one), from the per-connection sums the engine
/// keeps (`breakdown.connect_tls`), not a sum of two rows' figures.
pub(crate) fn ab_connect(b: &stampede_metrics::Breakdown) -> &stampede_metrics::TimingSummary {
    if b.connect_tls.count > 0 {
        &b.connect_tls
    } else {
        &b.connect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_round_like_ab() {
        assert_eq!(ms(0), 0);
        assert_eq!(ms(499), 0);
        assert_eq!(ms(500), 1);
        assert_eq!(ms(36_200), 36);
    }
}
