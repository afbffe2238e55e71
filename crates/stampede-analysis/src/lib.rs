//! Pure analysis of stampede results: turns runs into answers. SLO gates
//! ([`parse_slo`], [`evaluate`]), sweep classification with capacity, knee and
//! verdict ([`analyze_sweep`]), the open-model rate search ([`RateSearch`]),
//! Gunther's Universal Scalability Law ([`UslFit`]) and A/B comparison
//! ([`compare`], [`compare_samples`]), and the mean of repeated rounds with its
//! confidence interval ([`Interval`], [`RepeatDocument`]), and experiments on
//! a server's configuration ([`ExperimentDocument`]: cost per request,
//! pairwise verdicts).
//!
//! No I/O, no runtime, no sockets: every function takes figures and returns
//! serde-serializable answers, so the binary prints or saves them as it likes.
//!
//! Modules: `slo` (conditions and their evaluation), `sweep` (step classes,
//! thresholds, capacity and knee; its children `verdict`, the sentences, and
//! `saturation`, server saturation and Little's law), `ceiling` (the
//! throughput plateau), `search` (the open-model rate search), `usl`,
//! `compare` with `difference` (A/B verdicts and intervals), `stability` and
//! `repeats` (intervals over rounds), `experiment` (variants of a server,
//! their cost per request and verdicts), `sweep_document` (the sweep's file,
//! typed), `result_file` (which of stampede's files a text is). See docs/architecture.md.

mod ceiling;
mod compare;
mod difference;
mod experiment;
mod repeats;
mod result_file;
mod search;
mod slo;
mod stability;
mod sweep;
mod sweep_document;
mod usl;

pub use ceiling::GoodputRange;
pub use compare::{
    compare, compare_samples, CompareDocument, CompareError, CompareOptions, Comparison,
    DiffInterval, Figure, Method, ProtocolFigures, Row, RunFigures, Sample, Verdict,
    COMPARE_SCHEMA,
};
pub use experiment::{
    pairwise_verdicts, Bottleneck, Estimate, Evidence, ExperimentDocument, ExperimentVerdict,
    Failure, KneeSummary, Metric as ExperimentMetric, ServerCost, ServerReading, StepSummary,
    SweepRound, SweptStep, ThreadShare, VariantResult, EXPERIMENT_SCHEMA,
};
pub use repeats::{summarize_rounds, RepeatDocument, REPEAT_SCHEMA};
pub use result_file::{ResultFile, UnreadableFile};
pub use search::{RateSearch, SearchNext};
pub use slo::{
    evaluate, parse_slo, Comparator, Condition, ConditionOutcome, Measure, Metric, SloError,
    StreamFigure, StreamPoint,
};
pub use stability::{parse_stable_target, Interval, StableTarget};
pub use sweep::saturation::{LittleCheck, ServerCpu};
pub use sweep::{
    analyze_sweep, Class, Load, LoadRange, Point, StepAnalysis, StepInput, SweepAnalysis,
    Thresholds, SWEEP_SCHEMA,
};
pub use sweep_document::{SweepDocument, SweepDocumentError};
pub use usl::{UslError, UslFit};
