//! The `-l FILE` writer: one [`RequestSink`] per thread group's run, each on
//! the engine's request-log thread (bounded batches; when the disk falls
//! behind, lines are dropped and counted, the load is never slowed), all
//! writing JTL CSV lines in JMeter's default columns (jtl.rs)
//! into one shared file, in the samples' completion order
//! (jtl_order.rs).
//!
//! A sample names its step by the outcome's request index (`target`, the
//! step's place in its group); a failed check names itself in
//! `failureMessage` from the outcome's `judged` bits. Transaction
//! Controllers add their own samples (transactions.rs).

use super::active::ActiveGroups;
use super::jtl_order::OrderedJtl;
use super::transactions::{Child, Closed, Transactions};
use crate::failure::{FailureText, Measured};
use crate::jtl::{non_http, reason_phrase, write_header, write_sample, Sample};
use crate::model::Group;
use stampede_engine::{LoggedRequest, RequestSink, RunClock, WorkloadSpec};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, UNIX_EPOCH};

/// The JTL file all groups write to.
pub type SharedJtl = Arc<Mutex<OrderedJtl>>;

/// Opens `path`: an existing non-empty file is appended to without a
/// second header (as JMeter does), unless `force` empties it first.
pub fn open_jtl(path: &Path, force: bool) -> io::Result<SharedJtl> {
    let append = !force && std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    let file = if append {
        OpenOptions::new().append(true).open(path)?
    } else {
        File::create(path)?
    };
    let mut out = OrderedJtl::new(BufWriter::with_capacity(1 << 16, file));
    if !append {
        let mut header = Vec::new();
        write_header(&mut header)?;
        out.write_now(&header)?;
    }
    Ok(Arc::new(Mutex::new(out)))
}

/// Writes every line still held back and flushes (every group has ended).
pub fn close_jtl(shared: &SharedJtl) -> io::Result<()> {
    shared
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain()
}

/// One step as its lines name it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StepLabel {
    label: String,
    /// The step's URL as written: a template's slots unrendered.
    url: String,
    /// `scheme://authority` of `url`, which a rendered request's target
    /// follows in the URL column.
    origin: String,
}

/// `scheme://authority` of a step's URL (`http://h:8080` of
/// `http://h:8080{{path}}`): up to its path, query or first slot.
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find(['/', '?', '{'])
        .map_or(url.len(), |i| after_scheme + i);
    &url[..end]
}

/// The URL column: what was sent, as JMeter's SampleResult.getUrlAsString
/// gives the URL after variable substitution; the step's own URL for a
/// request sent as written.
fn sent_url(step: &StepLabel, request: &LoggedRequest) -> String {
    match request.request_target.as_deref() {
        // Through a plain proxy the request line carries the absolute form.
        Some(target) if target.starts_with('/') => format!("{}{target}", step.origin),
        Some(target) => target.to_string(),
        None => step.url.clone(),
    }
}

/// What a group's lines say about it.
pub struct GroupLabels {
    /// `threadName`'s lead: the group's name and number (from 1).
    pub group: String,
    /// The group's number in the plan, from 1.
    pub number: usize,
    /// grpThreads (configured, not counted live).
    pub threads: u32,
    /// allThreads: the running groups' threads at a sample's time.
    pub active: ActiveGroups,
}

/// A group's sink.
pub struct JtlSink {
    shared: SharedJtl,
    group: GroupLabels,
    steps: Vec<StepLabel>,
    /// Every check's expression in the run's order (Judged indexes it).
    checks: Vec<String>,
    /// JMeter's failureMessage of each, where the plan's assertion gave one.
    failure_texts: Vec<Option<FailureText>>,
    transactions: Transactions,
    line: Vec<u8>,
}

impl JtlSink {
    /// `labels` are the samplers' testnames (repeats kept, as JMeter
    /// labels them), `urls` the steps' URLs, `failures` their assertions'
    /// failureMessage texts (one per check), all by request index.
    pub fn new(
        shared: SharedJtl,
        group: GroupLabels,
        workload: Option<&WorkloadSpec>,
        names: Vec<String>,
        urls: Vec<String>,
        failures: &[Vec<FailureText>],
    ) -> JtlSink {
        let checks = workload.map_or_else(Vec::new, |spec| {
            spec.check_names().into_iter().map(|c| c.check).collect()
        });
        // In check_names' order: each step's checks, then its extracts.
        let failure_texts = workload.map_or_else(Vec::new, |spec| {
            spec.steps
                .iter()
                .enumerate()
                .flat_map(|(i, step)| {
                    let texts = failures.get(i).map_or(&[][..], Vec::as_slice);
                    let checks = step.checks.checks().len();
                    (0..checks + step.extracts.len()).map(move |c| match c < checks {
                        true => texts.get(c).cloned(),
                        false => None,
                    })
                })
                .collect()
        });
        let steps = urls
            .into_iter()
            .enumerate()
            .map(|(i, url)| StepLabel {
                label: names
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("request {i}")),
                origin: origin_of(&url).to_string(),
                url,
            })
            .collect();
        JtlSink {
            shared,
            group,
            steps,
            checks,
            failure_texts,
            transactions: Transactions::default(),
            line: Vec::with_capacity(512),
        }
    }

    /// The sink of `group`'s run, plan group `index` (from 0): its samplers'
    /// testnames, assertions' failureMessage texts and Transaction
    /// Controllers by step; `urls` the steps' URLs as the run's plan has
    /// them.
    pub fn for_group(
        shared: SharedJtl,
        group: &Group,
        index: usize,
        active: ActiveGroups,
        workload: Option<&WorkloadSpec>,
        urls: Vec<String>,
    ) -> JtlSink {
        let labels = GroupLabels {
            group: group.name.clone(),
            number: index + 1,
            threads: group.threads,
            active,
        };
        let names = group.steps.iter().map(|s| s.name.clone()).collect();
        let transactions: Vec<_> = group.steps.iter().map(|s| s.transactions.clone()).collect();
        let failures: Vec<_> = group.steps.iter().map(|s| s.failures.clone()).collect();
        JtlSink::new(shared, labels, workload, names, urls, &failures)
            .with_transactions(Transactions::new(&transactions))
    }

    /// The steps' Transaction Controllers, by request index.
    pub fn with_transactions(mut self, transactions: Transactions) -> JtlSink {
        self.transactions = transactions;
        self
    }
}

/// A transaction's sample, appended to `line`.
fn transaction_line(group: &GroupLabels, closed: &Closed, line: &mut Vec<u8>) -> io::Result<()> {
    let sample = Sample {
        timestamp_ms: closed.start_ms,
        elapsed_ms: closed.elapsed_ms,
        label: &closed.label,
        response_code: &closed.code,
        response_message: &closed.message,
        thread_name: &closed.thread,
        data_type: "",
        success: closed.success,
        failure_message: "",
        bytes: closed.bytes,
        sent_bytes: closed.sent_bytes,
        grp_threads: group.threads,
        all_threads: group.active.at(group.number - 1, closed.start_ms),
        url: "",
        latency_ms: closed.latency_ms,
        idle_ms: closed.idle_ms,
        connect_ms: closed.connect_ms,
    };
    write_sample(&sample, line)
}

impl JtlSink {
    /// `failureMessage`: the first failed check's, as JMeter writes the
    /// first failed assertion's message, in JMeter's words where the plan's
    /// assertion gave them (`sample` fills them in).
    fn failures(&self, request: &LoggedRequest, sample: &Measured<'_>) -> String {
        let Some(judged) = request.outcome.judged.filter(|j| j.any_failed()) else {
            return String::new();
        };
        let first = usize::from(judged.first);
        let Some(index) = (0..usize::from(judged.count).min(64))
            .find(|i| judged.failed & (1 << i) != 0)
            .map(|i| first + i)
        else {
            return String::new();
        };
        match (self.failure_texts.get(index), self.checks.get(index)) {
            (Some(Some(text)), _) => text.render(sample),
            (_, Some(check)) => format!("check failed: {check}"),
            _ => String::new(),
        }
    }
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

impl RequestSink for JtlSink {
    fn write(&mut self, request: &LoggedRequest, clock: &RunClock) -> io::Result<()> {
        let o = &request.outcome;
        let unknown = StepLabel {
            label: format!("request {}", o.target),
            url: String::new(),
            origin: String::new(),
        };
        let step = self.steps.get(usize::from(o.target)).unwrap_or(&unknown);
        let (code, message) = match o.result {
            Ok(status) => (status.to_string(), reason_phrase(status).to_string()),
            Err(kind) => non_http(kind.as_str()),
        };
        // JMeter's sample runs from the actual send (its connect first,
        // when it opened one) to the last byte: a timer's wait, or an
        // open-model arrival's wait for a free thread, is not in it.
        // (stampede's own latency counts from `intended`.)
        let started = request
            .connect
            .and_then(|connect| o.sent.checked_sub(connect))
            .unwrap_or(o.sent)
            .max(o.intended);
        let elapsed_ms = millis(o.done.saturating_duration_since(started));
        let measured = Measured {
            code: &code,
            elapsed_ms,
            body_bytes: o.body_bytes,
        };
        let failure = self.failures(request, &measured);
        let url = sent_url(step, request);
        let thread = format!(
            "{} {}-{}",
            self.group.group,
            self.group.number,
            // JMeter numbers a group's threads from 1: the virtual user.
            request.user + 1
        );
        let sample = Sample {
            timestamp_ms: clock
                .wall(started)
                .duration_since(UNIX_EPOCH)
                .map_or(0, millis),
            elapsed_ms,
            label: &step.label,
            response_code: &code,
            response_message: &message,
            thread_name: &thread,
            data_type: "text",
            success: matches!(o.result, Ok(status) if status < 400) && failure.is_empty(),
            failure_message: &failure,
            bytes: o.bytes_received,
            sent_bytes: 0,
            grp_threads: self.group.threads,
            all_threads: 0,
            url: &url,
            latency_ms: o
                .first_byte
                .map_or(0, |first| millis(first.saturating_duration_since(started))),
            idle_ms: 0,
            connect_ms: request.connect.map_or(0, millis),
        };
        let sample = Sample {
            all_threads: self
                .group
                .active
                .at(self.group.number - 1, sample.timestamp_ms),
            ..sample
        };
        let end_ms = sample.timestamp_ms + sample.elapsed_ms;
        let mut out = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        self.line.clear();
        if !self.transactions.any() {
            write_sample(&sample, &mut self.line)?;
            out.push(end_ms, &self.line)?;
        } else {
            let child = Child {
                start_ms: sample.timestamp_ms,
                elapsed_ms: sample.elapsed_ms,
                latency_ms: sample.latency_ms,
                connect_ms: sample.connect_ms,
                bytes: sample.bytes,
                sent_bytes: sample.sent_bytes,
                success: sample.success,
                code: &code,
                thread: &thread,
            };
            let done = self
                .transactions
                .sample(request.user, usize::from(o.target), &child);
            // A transaction's line follows its last sampler's (same end,
            // later arrival), as JMeter writes it.
            for closed in &done.before {
                transaction_line(&self.group, closed, &mut self.line)?;
                out.push(closed.end_ms, &self.line)?;
                self.line.clear();
            }
            if done.write_child {
                write_sample(&sample, &mut self.line)?;
                out.push(end_ms, &self.line)?;
                self.line.clear();
            }
            for closed in &done.after {
                transaction_line(&self.group, closed, &mut self.line)?;
                out.push(closed.end_ms, &self.line)?;
                self.line.clear();
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let mut out = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        for closed in self.transactions.finish() {
            self.line.clear();
            transaction_line(&self.group, &closed, &mut self.line)?;
            out.push(closed.end_ms, &self.line)?;
        }
        out.release_due()?;
        out.flush()
    }
}

#[cfg(test)]
#[path = "jtl_sink_tests.rs"]
mod tests;
