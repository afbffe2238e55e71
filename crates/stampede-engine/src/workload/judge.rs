//! Judging a complete response: the step's checks, then its
//! extractors into the user's store, each failure booked with a sampled
//! value; the verdict travels with the response's [`Outcome`](stampede_metrics::Outcome).

use super::session::{UserSession, WorkerWorkload};
use crate::http1::{Capture, MAX_CAPTURED_HEADERS};
use stampede_metrics::{Judged, Recorder};
use stampede_workload::{ListFields, ResponseView, Verdict};
use std::mem::MaybeUninit;
use std::time::Duration;

/// A header field of a kept head: name and value.
pub(crate) type Field<'a> = (&'a [u8], &'a [u8]);

/// A complete response's figures: status, the body's framed length and the
/// time from the request's intended start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answer {
    pub status: u16,
    pub body_bytes: u64,
    pub elapsed: Duration,
}

/// What judging a response decided.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judgement {
    pub judged: Option<Judged>,
    /// An extractor found nothing: the user's iteration starts again.
    pub restart: bool,
    /// The step failed: a failed status or a failed check, the classes the
    /// recorder counts as `failed_status` and `check_failed` (a group's
    /// `on_error` acts on it).
    pub failed: bool,
}

/// A kept head's header fields, listed for a reader that asks (a script's
/// `response()` reading its `headers`).
struct CapturedFields<'a>(&'a Capture);

impl ListFields for CapturedFields<'_> {
    fn list(&self, field: &mut dyn FnMut(&[u8], &[u8])) {
        let head = self.0.head_bytes();
        self.0
            .for_each_header(|name, value| field(&head[name], &head[value]));
    }

    fn count(&self) -> usize {
        // Lines less the status line and the blank one: a size hint.
        let lines = self.0.head_bytes().iter().filter(|&&b| b == b'\n').count();
        lines.saturating_sub(2)
    }
}

/// A failed status, as the recorder counts `failed_status`.
fn failed_status(status: u16) -> bool {
    status >= 400
}

impl UserSession {
    /// Judges the response to step `target` (status `status`, `elapsed`
    /// since its intended start) by what `capture` kept; failing values
    /// are sampled into `recorder`.
    pub(crate) fn judge(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        answer: Answer,
        capture: Option<&Capture>,
        recorder: &mut Recorder,
    ) -> Judgement {
        let spec = &work.spec;
        let count = spec
            .steps
            .get(target)
            .map_or(0, |s| s.checks.checks().len() + s.extracts.len());
        let script = work
            .script
            .as_ref()
            .filter(|_| work.script_reads_responses());
        let nothing = Judgement {
            judged: None,
            restart: false,
            failed: failed_status(answer.status),
        };
        if count == 0 && script.is_none() && !spec.cookie_jar {
            return nothing;
        }
        let body = capture.map_or(&[][..], Capture::body);
        let head = capture.map_or(&[][..], Capture::head_bytes);
        if head.is_empty() || !spec.keeps_headers() {
            // No check, extractor or cookie jar reads headers: no header
            // table is built for the view; a script's `response()` has
            // them listed only when it reads its `headers` argument.
            let listed = capture.filter(|_| !head.is_empty()).map(CapturedFields);
            let mut view = ResponseView::new(answer.status, &[], body, answer.elapsed)
                .with_body_size(answer.body_bytes);
            if let Some(listed) = &listed {
                view = view.with_listed_fields(listed);
            }
            return self.judge_view(work, target, count, &view, recorder);
        }
        // Left uninitialised: filling 100 fields before every response
        // cost more than the few a response has (a script reads each one).
        let mut pairs = [const { MaybeUninit::<Field<'_>>::uninit() }; MAX_CAPTURED_HEADERS];
        let mut n = 0;
        if let Some(capture) = capture {
            capture.for_each_header(|name, value| {
                pairs[n].write((&head[name], &head[value]));
                n += 1;
            });
        }
        // SAFETY: for_each_header gives at most MAX_CAPTURED_HEADERS fields
        // and the first `n` entries were each written just above.
        let fields = unsafe { std::slice::from_raw_parts(pairs.as_ptr().cast::<Field<'_>>(), n) };
        let view = ResponseView::new(answer.status, fields, body, answer.elapsed)
            .with_body_size(answer.body_bytes);
        self.judge_view(work, target, count, &view, recorder)
    }

    /// [`UserSession::judge`] for a response whose header fields and kept
    /// body are at hand as they are (HTTP/2: the `h2` crate's header map).
    pub(crate) fn judge_fields(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        answer: Answer,
        fields: &[Field<'_>],
        body: &[u8],
        recorder: &mut Recorder,
    ) -> Judgement {
        let count = work
            .spec
            .steps
            .get(target)
            .map_or(0, |s| s.checks.checks().len() + s.extracts.len());
        let view = ResponseView::new(answer.status, fields, body, answer.elapsed)
            .with_body_size(answer.body_bytes);
        self.judge_view(work, target, count, &view, recorder)
    }

    /// [`UserSession::judge`] for a WebSocket reply to step `target`: its
    /// payload is the body (status 101, the upgrade's; no header), so the
    /// step's checks and extractors read it as they read an HTTP body.
    pub(crate) fn judge_message(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        payload: &[u8],
        elapsed: Duration,
        recorder: &mut Recorder,
    ) -> Judgement {
        let count =
            (work.spec.steps.get(target)).map_or(0, |s| s.checks.checks().len() + s.extracts.len());
        let view =
            ResponseView::new(101, &[], payload, elapsed).with_body_size(payload.len() as u64);
        self.judge_view(work, target, count, &view, recorder)
    }

    /// [`UserSession::judge`] once the view is built: the cookie jar, the
    /// script's `response()`, then the step's checks and extractors.
    fn judge_view(
        &mut self,
        work: &WorkerWorkload,
        target: usize,
        count: usize,
        view: &ResponseView<'_>,
        recorder: &mut Recorder,
    ) -> Judgement {
        let spec = &work.spec;
        let nothing = Judgement {
            judged: None,
            restart: false,
            failed: failed_status(view.status),
        };
        let script = work
            .script
            .as_ref()
            .filter(|_| work.script_reads_responses());
        if spec.cookie_jar {
            for set_cookie in view.headers_named("set-cookie") {
                self.jar.absorb(set_cookie);
            }
        }
        if let Some(script) = script {
            // wrk's response(): an error there is the script's, not the
            // server's; it is reported once per class like any error.
            if let Err(error) = script.thread.borrow_mut().response(view) {
                recorder.record_error_sample(stampede_metrics::ErrorKind::Other, error.0);
            }
        }
        let Some(step) = spec.steps.get(target).filter(|_| count > 0) else {
            return nothing;
        };
        let first = spec.first_check(target);
        let mut failed = 0u64;
        step.checks.evaluate(view, |index, verdict| {
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
            if let Err(missing) = extract.extract(view, &mut self.store) {
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
            failed: failed != 0 || restart || nothing.failed,
        }
    }
}
