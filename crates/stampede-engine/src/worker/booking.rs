//! How a request's end is booked, one rule for every protocol and loop:
//! HTTP/1.1 on tokio (connection.rs) and on the reactors (exchange/ledger.rs),
//! HTTP/2 with fixed requests (h2_client.rs) and with a workload
//! (h2_workload.rs), HTTP/3 (h3_client.rs). Each builds the request's
//! [`Outcome`] and hands it here with what the `--log-requests` line needs;
//! the worker's recorder counts it, and the request log (when asked for)
//! writes its line, so the log holds one line per finished request whatever
//! the protocol. With the log off this is the recorder and one `Option` test.

use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use stampede_metrics::Outcome;

impl ConnectionContext {
    /// Books how a request ended: the worker's recorder, then its line in
    /// the request log, if there is one.
    #[inline]
    pub(crate) fn book(&self, outcome: &Outcome, facts: LogFacts<'_>) {
        self.state.end_request(outcome);
        if let Some(log) = &self.log {
            log.record(outcome, facts.connect, facts.user, facts.rendered);
        }
    }
}
