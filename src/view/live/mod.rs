//! The live terminal view (ratatui): while a run goes, a full-screen view
//! redrawn five times a second from the same snapshot stream as every other
//! view. `q`, Esc or Ctrl-C stop the run early through the process stop
//! handle; the run then ends normally, so the summary is still printed.
//!
//! The engine calls [`LiveView`] on its aggregator thread; a separate UI
//! thread owns the terminal, reads keys and draws, so the view keeps
//! answering during warm-up (when no snapshots come) and drawing never
//! delays the aggregator by more than a short lock.

mod draw;
mod state;

// Entering and leaving the terminal is src/process/terminal.rs (the forced exit in
// interrupt.rs restores it too).
use crate::process::terminal;
use crate::view::RunView;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use stampede_engine::monitor::LiveFeed;
use stampede_engine::{Observer, StopHandle};
use stampede_metrics::Snapshot;
use stampede_plan::Plan;
use state::LiveState;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Time between frames.
const FRAME: Duration = Duration::from_millis(200);
/// How long the UI thread waits for a key before checking for a frame.
const KEY_POLL: Duration = Duration::from_millis(50);

/// The live view of one run.
pub struct LiveView {
    state: Arc<Mutex<LiveState>>,
    /// Where the process monitor publishes its latest samples.
    feed: Option<LiveFeed>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The state even if the UI thread panicked while holding it: the panic
/// hook has restored the terminal and the figures are still good to read.
fn lock(state: &Mutex<LiveState>) -> MutexGuard<'_, LiveState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl LiveView {
    /// Takes over the terminal and starts drawing.
    pub fn start(
        plan: &Plan,
        banner: &[String],
        feed: Option<LiveFeed>,
    ) -> anyhow::Result<LiveView> {
        let stop = crate::process::interrupt::stop_handle()?;
        let terminal = terminal::enter()?;
        let mut initial = LiveState::for_plan(plan);
        initial.banner = banner.to_vec();
        let state = Arc::new(Mutex::new(initial));
        let done = Arc::new(AtomicBool::new(false));
        let (ui_state, ui_done) = (state.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("stampede-live-view".into())
            .spawn(move || run_ui(terminal, &ui_state, &ui_done, &stop));
        let thread = match thread {
            Ok(thread) => thread,
            Err(error) => {
                terminal::restore();
                return Err(error.into());
            }
        };
        Ok(LiveView {
            state,
            feed,
            done,
            thread: Some(thread),
        })
    }
}

/// True for the keys that stop the run: q, Esc, and Ctrl-C (which arrives
/// as a key in raw mode rather than as SIGINT).
fn is_stop_key(code: KeyCode, modifiers: KeyModifiers) -> bool {
    match code {
        KeyCode::Char('q' | 'Q') | KeyCode::Esc => true,
        KeyCode::Char('c') => modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

/// The UI thread: draw a frame every [`FRAME`], answer keys in between,
/// give the terminal back when the run is over or the terminal fails.
fn run_ui(
    mut terminal: terminal::LiveTerminal,
    state: &Mutex<LiveState>,
    done: &AtomicBool,
    stop: &StopHandle,
) {
    let mut last_frame: Option<Instant> = None;
    while !done.load(Ordering::Acquire) {
        if last_frame.is_none_or(|at| at.elapsed() >= FRAME) {
            last_frame = Some(Instant::now());
            let drawn = {
                let state = lock(state);
                terminal.draw(|frame| draw::draw(frame, &state))
            };
            if drawn.is_err() {
                break;
            }
        }
        match event::poll(KEY_POLL) {
            Ok(true) => {
                if let Ok(Event::Key(key)) = event::read() {
                    if key.kind == KeyEventKind::Press && is_stop_key(key.code, key.modifiers) {
                        stop.stop();
                        lock(state).stopping = true;
                        // Show "stopping" at once rather than at the next frame.
                        last_frame = None;
                    }
                }
            }
            Ok(false) => {}
            Err(_) => break,
        }
    }
    terminal::restore();
}

impl Observer for LiveView {
    fn on_snapshot(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot) {
        let processes = self
            .feed
            .as_ref()
            .and_then(|feed| feed.lock().ok().map(|latest| latest.clone()));
        let mut state = lock(&self.state);
        state.update(elapsed, interval, total);
        if let Some(processes) = processes {
            state.processes = processes;
        }
    }

    fn on_worker_interval(&mut self, worker: usize, interval: &Snapshot, _last: bool) {
        lock(&self.state).update_worker(worker, interval);
    }
}

impl RunView for LiveView {
    fn finish(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
            // The UI thread restores on its way out; again here in case it
            // panicked before reaching that line.
            terminal::restore();
        }
    }
}

impl Drop for LiveView {
    /// An early return (an error) between start and finish still gives the
    /// terminal back.
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_keys() {
        assert!(is_stop_key(KeyCode::Char('q'), KeyModifiers::NONE));
        assert!(is_stop_key(KeyCode::Esc, KeyModifiers::NONE));
        assert!(is_stop_key(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert!(!is_stop_key(KeyCode::Char('c'), KeyModifiers::NONE));
        assert!(!is_stop_key(KeyCode::Enter, KeyModifiers::NONE));
    }
}
