//! What a run is given besides its plan ([`RunOptions`]: the request
//! log, the snapshot interval, the workload, the interval log) and what it
//! hands back ([`Finished`]). A leaf of run/: its steps all read these.

use crate::run::watchdog::Abandoned;
use crate::worker::request_log::{RequestLogOptions, RequestLogReport};
use stampede_metrics::Recording;
use std::sync::Arc;
use std::time::Duration;

/// What a run may do besides measuring.
#[derive(Default)]
pub struct RunOptions {
    /// Log every (or every Nth) request through a bounded buffer.
    pub request_log: Option<RequestLogOptions>,
    /// How often each worker hands its interval to the observer (None: the
    /// default [`crate::plan::worker_plan::SNAPSHOT_INTERVAL`]). It should divide one second, as the
    /// per-second series groups intervals by the second they start in; wrk's
    /// front-end asks for 100 ms to sample each thread's rate as wrk does.
    pub snapshot_interval: Option<Duration>,
    /// Where the workers and the aggregating thread enrol, so that the
    /// monitor counts the load generator's CPU and nothing else.
    pub client_threads: crate::monitor::ClientThreads,
    /// The seed of Poisson arrivals (`--seed`); None: a new one each run,
    /// so that repeated runs sample different arrivals. The recording says
    /// which was used.
    pub seed: Option<u64>,
    /// Templated requests, feeders, checks, extractors and scenario steps;
    /// `None`: every request is the plan's fixed bytes.
    pub workload: Option<Arc<crate::workload::WorkloadSpec>>,
    /// `--hlog`: the run in fixed intervals, each merged across workers
    /// and handed on as soon as complete.
    pub intervals: Option<IntervalLog>,
}

/// Where a run's fixed intervals go and how long each is.
pub struct IntervalLog {
    /// Each interval's length; the workers' snapshot interval is made to
    /// divide it ([`stampede_metrics::snapshot_interval_for`]).
    pub length: Duration,
    /// Where each interval's histograms go.
    pub sink: Box<dyn stampede_metrics::IntervalSink>,
}

/// A finished run: the recording and what the request log did.
#[derive(Debug)]
pub struct Finished {
    /// The measured window's counters, histograms and time series.
    pub recording: Recording,
    /// What `--log-requests` did, when it was asked for.
    pub request_log: Option<RequestLogReport>,
    /// The target's addresses and the connections each got, when it had
    /// several or `--dns`/`--dns-ttl` was given (the result's `dns`).
    pub dns: Option<stampede_metrics::DnsUse>,
    /// The workers given up on because they never reported after the
    /// run's end (watchdog.rs): their figures stop at their last snapshot.
    pub abandoned: Vec<Abandoned>,
    /// The scenario groups (their names, or numbers from 1) whose unique
    /// feeder ran out of rows and stopped their users.
    pub feed_ran_out: Vec<String>,
    /// Each scenario step's rendezvous: its batches and their spread.
    pub rendezvous: Vec<stampede_metrics::RendezvousResult>,
}
