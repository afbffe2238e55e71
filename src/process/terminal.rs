//! Taking over the terminal for the live view and giving it back: raw mode,
//! the alternate screen and a hidden cursor on entry; all undone on exit, on
//! every path — normal end, error, and panic (a hook installed once per
//! process restores the terminal before the panic message is printed), and a
//! forced exit (interrupt.rs). A leaf beside `view` rather than inside it, so
//! that the signal handling, which the live view uses, need not import the view.

use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::prelude::CrosstermBackend;
use ratatui::Terminal;
use std::io::{self, IsTerminal, Stdout};
use std::sync::Once;

pub type LiveTerminal = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal; safe to call any number of times, and when it was
/// never taken over (each step is a no-op then, apart from harmless codes).
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
}

/// Gives the terminal back (raw mode, alternate screen) when a forced exit
/// ends the process under a live view; no escape codes when stdout is not a
/// terminal (it may be carrying a `-` export).
pub fn restore_if_terminal() {
    if io::stdout().is_terminal() {
        restore();
    }
}

/// Installs, once per process, a panic hook that restores the terminal and
/// then reports the panic as the previous hook would. Process-wide by nature
/// (a panic hook), like the signal handler in interrupt.rs.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// Takes over the terminal; on failure anything half-done is undone.
pub fn enter() -> io::Result<LiveTerminal> {
    install_panic_hook();
    let entered = (|| {
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, Hide)?;
        let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        terminal.clear()?;
        Ok(terminal)
    })();
    if entered.is_err() {
        restore();
    }
    entered
}
