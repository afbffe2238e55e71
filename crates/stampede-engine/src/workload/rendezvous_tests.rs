//! The rendezvous point against JMeter's SyncTimer
//! (src/components/src/main/java/org/apache/jmeter/timers/SyncTimer.java,
//! `delay()`): `groupSize` arrivals release all of them and the barrier is
//! reset for the next batch; a timeout releases whoever waits; the end of
//! the run releases the waiting threads.

use super::*;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Polls `future` once: its output if it is ready.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Option<F::Output> {
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    }
}

/// How long a test waits for a release that should come (it fails, not hangs).
const BOUND: Duration = Duration::from_secs(5);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
}

#[test]
fn the_group_size_th_arrival_releases_every_waiting_user_and_the_next_batch_starts_afresh() {
    let _rt = runtime().enter();
    let point = Rendezvous::new(3, None, 10);
    let mut first = pin!(point.wait());
    let mut second = pin!(point.wait());
    assert_eq!(poll_once(first.as_mut()), None, "1 of 3: waits");
    assert_eq!(poll_once(second.as_mut()), None, "2 of 3: waits");
    assert_eq!(poll_once(first.as_mut()), None, "still 2 of 3");
    let third = poll_once(pin!(point.wait()).as_mut());
    assert_eq!(
        third,
        Some(Ticket { batch: Some(0) }),
        "3 of 3 goes at once"
    );
    assert_eq!(poll_once(first.as_mut()), Some(Ticket { batch: Some(0) }));
    assert_eq!(poll_once(second.as_mut()), Some(Ticket { batch: Some(0) }));
    // Reset, as the CyclicBarrier after a release: the next user waits.
    let mut next = pin!(point.wait());
    assert_eq!(
        poll_once(next.as_mut()),
        None,
        "the next batch gathers anew"
    );
    for ticket in [third.unwrap(), Ticket { batch: Some(0) }] {
        point.sent(ticket, Instant::now());
    }
    point.sent(Ticket { batch: Some(0) }, Instant::now());
    let figures = point.report();
    assert_eq!((figures.batches, figures.timed_out), (1, 0));
}

#[test]
fn users_on_other_threads_are_released_together() {
    let point = Arc::new(Rendezvous::new(4, None, 4));
    let started = Instant::now();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let point = point.clone();
            std::thread::spawn(move || {
                // Arrivals 20 ms apart, as a ramp-up would have them.
                std::thread::sleep(Duration::from_millis(20 * i));
                let released =
                    runtime().block_on(async { tokio::time::timeout(BOUND, point.wait()).await });
                released.expect("released within the bound");
                started.elapsed()
            })
        })
        .collect();
    let released: Vec<Duration> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for at in &released {
        assert!(
            *at >= Duration::from_millis(60),
            "released at {at:?}: before the last arrival"
        );
    }
    let spread =
        released.iter().max().unwrap().as_secs_f64() - released.iter().min().unwrap().as_secs_f64();
    assert!(spread < 0.05, "released over {spread} s, not together");
}

#[test]
fn the_timeout_from_the_first_arrival_releases_fewer_than_the_group_size() {
    let rt = runtime();
    let point = Rendezvous::new(5, Some(Duration::from_millis(60)), 10);
    let started = Instant::now();
    let both = async { tokio::join!(point.wait(), point.wait()) };
    let (a, b) = rt
        .block_on(async { tokio::time::timeout(BOUND, both).await })
        .expect("released within the bound");
    let waited = started.elapsed();
    assert_eq!(
        (a, b),
        (Ticket { batch: Some(0) }, Ticket { batch: Some(0) })
    );
    assert!(
        waited >= Duration::from_millis(60),
        "released after {waited:?}"
    );
    assert!(waited < Duration::from_secs(2), "released after {waited:?}");
    point.sent(a, Instant::now());
    point.sent(b, Instant::now());
    let figures = point.report();
    assert_eq!((figures.batches, figures.timed_out), (1, 1));
}

#[test]
fn the_end_of_the_run_releases_the_waiting_and_lets_later_users_through() {
    let _rt = runtime().enter();
    let point = Rendezvous::new(5, None, 5);
    let mut waiting = pin!(point.wait());
    assert_eq!(poll_once(waiting.as_mut()), None);
    point.close();
    assert_eq!(poll_once(waiting.as_mut()), Some(Ticket { batch: None }));
    let later = poll_once(pin!(point.wait()).as_mut());
    assert_eq!(
        later,
        Some(Ticket { batch: None }),
        "no wait after the close"
    );
}

#[test]
fn users_gone_for_good_release_a_batch_the_rest_cannot_fill() {
    let _rt = runtime().enter();
    let point = Arc::new(Rendezvous::new(3, None, 3));
    let mut a = pin!(point.wait());
    let mut b = pin!(point.wait());
    assert_eq!(poll_once(a.as_mut()), None);
    assert_eq!(poll_once(b.as_mut()), None);
    let mut gone = Party::new(Arc::from(vec![point.clone()]));
    gone.leave();
    assert_eq!(poll_once(a.as_mut()), Some(Ticket { batch: Some(0) }));
    assert_eq!(poll_once(b.as_mut()), Some(Ticket { batch: Some(0) }));
    drop(gone);
    let mut c = pin!(point.wait());
    assert_eq!(
        poll_once(c.as_mut()),
        None,
        "a party leaves once: 1 of 2 left waits"
    );
}

#[test]
fn a_batch_released_as_the_run_ends_and_never_sent_is_not_counted() {
    let _rt = runtime().enter();
    let point = Arc::new(Rendezvous::new(2, None, 2));
    let mut waiting = pin!(point.wait());
    assert_eq!(poll_once(waiting.as_mut()), None);
    // The other user's worker ended: it leaves, the waiting one is let go
    // and stopped before sending.
    Party::new(Arc::from(vec![point.clone()])).leave();
    assert_eq!(poll_once(waiting.as_mut()), Some(Ticket { batch: Some(0) }));
    assert_eq!(point.report().batches, 0);
}

#[test]
fn a_dropped_wait_leaves_its_batch() {
    let _rt = runtime().enter();
    let point = Rendezvous::new(2, None, 4);
    {
        let mut dropped = pin!(point.wait());
        assert_eq!(poll_once(dropped.as_mut()), None);
    }
    let mut alone = pin!(point.wait());
    assert_eq!(
        poll_once(alone.as_mut()),
        None,
        "the dropped user is not counted"
    );
    assert_eq!(point.report().batches, 0);
}

#[test]
fn each_batch_reports_the_spread_of_its_sends() {
    let _rt = runtime().enter();
    let point = Rendezvous::new(2, None, 2);
    let mut a = pin!(point.wait());
    assert_eq!(poll_once(a.as_mut()), None);
    let b = poll_once(pin!(point.wait()).as_mut()).unwrap();
    let a = poll_once(a.as_mut()).unwrap();
    let t = Instant::now();
    point.sent(a, t + Duration::from_millis(3));
    assert!(point.report().spreads.is_empty() || point.report().spreads == [Duration::ZERO]);
    point.sent(b, t);
    assert_eq!(point.report().spreads, [Duration::from_millis(3)]);
    // A send after the close is in no batch.
    point.close();
    point.sent(Ticket { batch: None }, t);
    assert_eq!(point.report().spreads.len(), 1);
}
