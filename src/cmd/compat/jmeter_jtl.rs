//! The `-l FILE` writer: a [`RequestSink`] on the engine's request-log
//! thread (bounded batches; when the disk falls behind, lines are dropped
//! and counted, the load is never slowed) that writes each sample as a JTL
//! CSV line in JMeter's default columns (stampede_jmeter::jtl).
//!
//! A sample names its step by the outcome's request index (`target`): the
//! scenario's steps in file order, group by group.

use stampede_engine::{LoggedRequest, RequestSink, RunClock};
use stampede_jmeter::jtl::{non_http, reason_phrase, write_header, write_sample, Sample};
use stampede_workload::Scenario;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// What a line says about the step that sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StepLabel {
    pub label: String,
    /// The group's name and number (from 1), for `threadName`.
    pub group: String,
    pub group_number: usize,
    pub url: String,
    /// The group's threads (grpThreads).
    pub group_threads: u32,
}

/// Every step of `scenario`, in the order of the outcomes' request index.
pub(super) fn step_labels(scenario: &Scenario) -> Vec<StepLabel> {
    let mut labels = Vec::new();
    for (index, group) in scenario.groups.iter().enumerate() {
        let threads = match group.load {
            stampede_workload::GroupLoad::Closed { connections } => connections,
            _ => 0,
        };
        for step in &group.steps {
            labels.push(StepLabel {
                label: step.name.clone(),
                group: group.name.clone(),
                group_number: index + 1,
                url: step.target.url.clone(),
                group_threads: threads,
            });
        }
    }
    labels
}

/// Writes JTL lines.
pub(super) struct JtlSink {
    labels: Vec<StepLabel>,
    all_threads: u32,
    out: BufWriter<File>,
}

impl JtlSink {
    /// Opens `path`: an existing non-empty file is appended to without a
    /// second header (as JMeter does), unless `force` empties it first.
    pub(super) fn open(path: &Path, force: bool, labels: Vec<StepLabel>) -> io::Result<JtlSink> {
        let append = !force && std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
        let file = if append {
            OpenOptions::new().append(true).open(path)?
        } else {
            File::create(path)?
        };
        let mut out = BufWriter::with_capacity(1 << 16, file);
        if !append {
            write_header(&mut out)?;
        }
        let all_threads = labels
            .iter()
            .map(|l| (l.group_number, l.group_threads))
            .collect::<std::collections::BTreeMap<_, _>>()
            .values()
            .sum();
        Ok(JtlSink {
            labels,
            all_threads,
            out,
        })
    }
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

impl RequestSink for JtlSink {
    fn write(&mut self, request: &LoggedRequest, clock: &RunClock) -> io::Result<()> {
        let o = &request.outcome;
        let fallback;
        let step = match self.labels.get(usize::from(o.target)) {
            Some(step) => step,
            None => {
                fallback = StepLabel {
                    label: format!("request {}", o.target),
                    group: "stampede".into(),
                    group_number: 1,
                    url: String::new(),
                    group_threads: 0,
                };
                &fallback
            }
        };
        let (code, message) = match o.result {
            Ok(status) => (status.to_string(), reason_phrase(status).to_string()),
            Err(kind) => non_http(kind.as_str()),
        };
        let thread = format!(
            "{} {}-{}",
            step.group,
            step.group_number,
            request.worker + 1
        );
        let started = clock.wall(o.intended);
        let sample = Sample {
            timestamp_ms: started
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| millis(since)),
            elapsed_ms: millis(o.done.saturating_duration_since(o.intended)),
            label: &step.label,
            response_code: &code,
            response_message: &message,
            thread_name: &thread,
            data_type: "text",
            success: matches!(o.result, Ok(status) if status < 400),
            failure_message: "",
            bytes: o.bytes_received,
            sent_bytes: 0,
            grp_threads: step.group_threads,
            all_threads: self.all_threads,
            url: &step.url,
            latency_ms: o.first_byte.map_or(0, |first| {
                millis(first.saturating_duration_since(o.intended))
            }),
            idle_ms: 0,
            connect_ms: request.connect.map_or(0, millis),
        };
        write_sample(&sample, &mut self.out)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
