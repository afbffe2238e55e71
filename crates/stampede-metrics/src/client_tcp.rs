//! What the client's own TCP sockets to the target saw during a load
//! (`stampede experiment`): their smoothed RTT and the segments
//! they retransmitted, from the kernel's `struct tcp_info` (sock_diag).
//! The engine's monitor samples them from outside the load's threads; the
//! figures are over sockets, each socket's latest reading.

use serde::{Deserialize, Serialize};

/// The client's sockets during one load (or the mean of several: every
/// figure is a float for that).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientTcp {
    /// The most sockets open to the target in one sample (`-c` under
    /// keep-alive).
    pub sockets: f64,
    /// Distinct sockets seen over the load (more than `sockets` when
    /// connections were closed and opened again).
    pub sockets_seen: f64,
    /// Samples taken (a socket that lived between two was not seen).
    pub samples: f64,
    /// The sockets' smoothed RTT (`tcpi_rtt`), median over sockets, µs.
    pub rtt_us_median: f64,
    /// The sockets' smoothed RTT, 99th percentile over sockets, µs.
    pub rtt_us_p99: f64,
    /// The sockets' RTT variation (`tcpi_rttvar`), median over sockets, µs.
    pub rttvar_us_median: f64,
    /// Segments the sockets retransmitted during the load (`tcpi_total_retrans`,
    /// less what each had retransmitted when the load began).
    pub retransmits: f64,
}

impl ClientTcp {
    /// The mean of several loads' figures.
    pub fn mean(all: &[ClientTcp]) -> Option<ClientTcp> {
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let mean = |f: fn(&ClientTcp) -> f64| all.iter().map(f).sum::<f64>() / n;
        Some(ClientTcp {
            sockets: mean(|c| c.sockets),
            sockets_seen: mean(|c| c.sockets_seen),
            samples: mean(|c| c.samples),
            rtt_us_median: mean(|c| c.rtt_us_median),
            rtt_us_p99: mean(|c| c.rtt_us_p99),
            rttvar_us_median: mean(|c| c.rttvar_us_median),
            retransmits: mean(|c| c.retransmits),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_nothing_is_none_and_of_two_is_halfway() {
        assert_eq!(ClientTcp::mean(&[]), None);
        let a = ClientTcp {
            sockets: 4.0,
            rtt_us_p99: 100.0,
            retransmits: 0.0,
            ..ClientTcp::default()
        };
        let b = ClientTcp {
            sockets: 4.0,
            rtt_us_p99: 300.0,
            retransmits: 3.0,
            ..ClientTcp::default()
        };
        let m = ClientTcp::mean(&[a, b]).unwrap();
        assert_eq!((m.sockets, m.rtt_us_p99, m.retransmits), (4.0, 200.0, 1.5));
    }
}
