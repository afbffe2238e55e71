//! What a metric family is: its name, help, kind and labelled values. The
//! series list (metrics_series.rs) and the protocols' families
//! (metrics_protocols.rs) build them; the text formats and the remote-write
//! protobuf encode them.

/// A series' own labels (besides the run's: `run_id`, `agent`).
pub type Labels = Vec<(&'static str, String)>;

/// One metric family.
pub struct Family {
    /// The family name; a counter's samples are named `NAME_total`, a
    /// histogram's `NAME_bucket`, `NAME_sum` and `NAME_count`.
    pub name: &'static str,
    /// The `# HELP` text: what the family counts.
    pub help: &'static str,
    /// Its samples.
    pub values: Values,
}

/// A family's samples, by kind.
pub enum Values {
    /// A total since the run began, per label set.
    Counter(Vec<(Labels, u64)>),
    /// A value now, per label set.
    Gauge(Vec<(Labels, f64)>),
    /// One histogram without labels of its own.
    Histogram {
        /// The sum of the observed values.
        sum: f64,
        /// How many values were observed.
        count: u64,
        /// (upper bound, count) per bucket: per-bucket (not cumulative)
        /// counts, the last at +Inf.
        buckets: Vec<(f64, u64)>,
    },
}
