//! Judging a complete response (issue 18): the step's checks, then its
//! extractors into the user's store, each failure booked with a sampled
//! value; the verdict travels with the response's [`Outcome`](stampede_metrics::Outcome).

use super::session::{UserSession, WorkerWorkload};
use crate::http1::{Capture, MAX_CAPTURED_HEADERS};
use stampede_metrics::{Judged, Recorder};
use stampede_workload::{ResponseView, Verdict};
use std::ops::Range;
use std::time::Duration;

/// A header field of a kept head: name and value.
type Field<'a> = (&'a [u8], &'a [u8]);

/// What judging a response decided.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judgement {
    pub judged: Option<Judged>,
    /// An extractor found nothing: the user's iteration starts again.
    pub restart: bool,
}

impl UserSession {
    /// Judges the response to step `target` (status `status`, `elapsed`
    /// since its intended start) by what `capture` kept; failing values
    /// are sampled into `recorder`.
    pub fn judge(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        status: u16,
        elapsed: Duration,
        capture: Option<&Capture>,
        recorder: &mut Recorder,
    ) -> Judgement {
        let spec = &work.spec;
        let Some(step) = spec.steps.get(target) else {
            return Judgement {
                judged: None,
                restart: false,
            };
        };
        let count = step.checks.checks().len() + step.extracts.len();
        if count == 0 {
            return Judgement {
                judged: None,
                restart: false,
            };
        }
        let first = spec.first_check(target);
        let mut ranges: [(Range<usize>, Range<usize>); MAX_CAPTURED_HEADERS] =
            std::array::from_fn(|_| (0..0, 0..0));
        let empty: [(&[u8], &[u8]); 0] = [];
        let mut pairs: [(&[u8], &[u8]); MAX_CAPTURED_HEADERS] = [(&[], &[]); MAX_CAPTURED_HEADERS];
        let (headers, body): (&[Field<'_>], &[u8]) = match capture {
            Some(capture) => {
                let n = capture.header_ranges(&mut ranges);
                let head = capture.head_bytes();
                for (pair, (name, value)) in pairs.iter_mut().zip(&ranges[..n]) {
                    *pair = (&head[name.clone()], &head[value.clone()]);
                }
                (&pairs[..n], capture.body())
            }
            None => (&empty, &[]),
        };
        let view = ResponseView::new(status, headers, body, elapsed);
        let mut failed = 0u64;
        step.checks.evaluate(&view, |index, verdict| {
            if let Verdict::Fail(seen) = verdict {
                if index < 64 {
                    failed |= 1 << index;
                }
                recorder.sample_check(first + index, || seen.clone());
            }
        });
        let mut restart = false;
        let base = step.checks.checks().len();
        for (offset, extract) in step.extracts.iter().enumerate() {
            if let Err(missing) = extract.extract(&view, &mut self.store) {
                let index = base + offset;
                if index < 64 {
                    failed |= 1 << index;
                }
                recorder.sample_check(first + index, || missing.to_string());
                restart = true;
            }
        }
        Judgement {
            judged: Some(Judged {
                first: first as u16,
                count: count.min(u8::MAX as usize) as u8,
                failed,
            }),
            restart,
        }
    }
}
