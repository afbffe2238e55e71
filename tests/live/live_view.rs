//! The live terminal view, driven in a real terminal (tmux): it draws,
//! updates, and `q` stops the run with the summary printed and status 130;
//! and without a terminal, no escape code reaches stdout or stderr.
//! The tmux tests are skipped, with a message, only when tmux is missing, and
//! fail then under STAMPEDE_REQUIRE_TOOLS=1 (.ci/run installs it and sets it).

use stampede_testkit::{binary, one_thread, spawn_target};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of our own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(command: &str) -> Option<Tmux> {
        Tmux::start_sized(command, 110, 34)
    }

    /// A session whose window is `columns` × `rows`.
    fn start_sized(command: &str, columns: u16, rows: u16) -> Option<Tmux> {
        // One tmux server per test: the tests of this file run in parallel.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("stampede-test-{}-{n}", std::process::id());
        let tmux = Tmux { socket };
        let (x, y) = (columns.to_string(), rows.to_string());
        let started = tmux
            .run(&[
                "new-session",
                "-d",
                "-s",
                "live",
                "-x",
                &x,
                "-y",
                &y,
                command,
            ])
            .ok()?;
        assert!(started.status.success(), "tmux: {started:?}");
        Some(tmux)
    }

    fn run(&self, args: &[&str]) -> std::io::Result<Output> {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
    }

    /// The visible screen and the scrollback above it.
    fn screen(&self) -> String {
        let output = self
            .run(&["capture-pane", "-p", "-S", "-300", "-t", "live"])
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The visible screen only.
    fn visible(&self) -> String {
        let output = self
            .run(&["capture-pane", "-p", "-t", "live"])
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen satisfies `ready`; panics with it otherwise.
    fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// The live view's "elapsed / planned" label, e.g. `3.4s / 60s`.
fn elapsed_label(screen: &str) -> Option<String> {
    screen
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(3)
        .find(|w| w[1] == "/" && w[2] == "60s" && w[0].ends_with('s'))
        .map(|w| w[0].to_string())
}

#[test]
fn the_live_view_draws_updates_and_q_stops_with_the_summary() {
    stampede_testkit::require_tool!("tmux");
    let target = spawn_target(one_thread());
    let command = format!(
        "{} http://{}/ -d 60s -c 4 -t 1; echo EXIT=$?; sleep 60",
        binary().display(),
        target.local_addr()
    );
    let tmux = Tmux::start(&command).expect("tmux starts");
    let first = tmux.wait_for("the live view to draw", |s| {
        s.contains("Throughput")
            && s.contains("Latency")
            && s.contains("req/s")
            && s.contains("200")
    });
    assert!(first.contains("q or Ctrl-C"), "the stop hint:\n{first}");
    let before = elapsed_label(&first).expect("an elapsed/planned label");
    let later = tmux.wait_for("the view to update", |s| {
        elapsed_label(s).is_some_and(|now| now != before)
    });
    assert!(later.contains("last second"), "{later}");
    // The process monitor's latest sample: stampede itself (the client).
    let monitored = tmux.wait_for("the monitored processes", |s| {
        s.contains("client stampede") && s.contains("CPU") && s.contains("RSS")
    });
    assert!(monitored.contains("pid"), "{monitored}");
    tmux.run(&["send-keys", "-t", "live", "q"]).unwrap();
    let after = tmux.wait_for("the summary after q", |s| s.contains("EXIT="));
    assert!(
        after.contains("EXIT=130"),
        "q stops like Ctrl-C: status 130\n{after}"
    );
    assert!(
        after.contains("Requests/sec"),
        "the summary is printed\n{after}"
    );
    assert!(
        after.contains("INTERRUPTED"),
        "the summary says it was stopped early\n{after}"
    );
    assert!(
        !after.contains("q or Ctrl-C"),
        "the live view is gone (alternate screen left)\n{after}"
    );
}

#[test]
fn without_a_terminal_no_escape_codes_are_printed() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    // stdout and stderr are pipes here: the plain progress path.
    let output = Command::new(binary())
        .args([&url, "-d", "1500ms", "-c", "2", "-t", "1"])
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains("Requests/sec"), "the summary: {stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "escape codes on stdout: {stdout:?}"
    );
    assert!(
        !stderr.contains('\x1b'),
        "escape codes on stderr: {stderr:?}"
    );
    assert!(!stderr.contains('\r'), "no in-place rewriting: {stderr:?}");
}

#[test]
fn a_sweep_shows_its_step_and_the_finished_steps() {
    stampede_testkit::require_tool!("tmux");
    let target = spawn_target(one_thread());
    let command = format!(
        "{} sweep http://{}/ -c 1,2 --step 2s --warmup 200ms -t 1; echo EXIT=$?; sleep 60",
        binary().display(),
        target.local_addr()
    );
    let tmux = Tmux::start(&command).expect("tmux starts");
    let second = tmux.wait_for("the second step with the first one done", |s| {
        s.contains("sweep step 2/2") && s.contains("done") && s.contains("Throughput")
    });
    assert!(second.contains("1 connection"), "{second}");
    let after = tmux.wait_for("the sweep's verdict", |s| s.contains("EXIT="));
    assert!(after.contains("EXIT=0"), "{after}");
}

/// The text inside each bordered panel on a line: the pieces between two
/// `│`, where a cut word would run into the right border.
fn panel_cells(line: &str) -> Vec<&str> {
    let pieces: Vec<&str> = line.split('│').collect();
    if pieces.len() < 3 {
        return Vec::new();
    }
    // Between `│a│` borders; `││` (two panels side by side) gives an empty
    // piece, which is no cell.
    pieces[1..pieces.len() - 1]
        .iter()
        .copied()
        .filter(|cell| !cell.is_empty())
        .collect()
}

/// The figure after `label` on the screen, e.g. "67,295" for "now".
fn figure_after<'a>(screen: &'a str, label: &str) -> Option<&'a str> {
    screen.lines().find_map(|line| {
        let cell = panel_cells(line)
            .into_iter()
            .find(|cell| cell.starts_with(label))?;
        cell[label.len()..].split_whitespace().next()
    })
}

#[test]
fn at_80_by_24_nothing_is_cut_the_chart_has_a_time_axis_and_rates_are_whole() {
    stampede_testkit::require_tool!("tmux");
    let target = spawn_target(one_thread());
    let command = format!(
        "{} http://{}/ -d 60s -c 50 -t 1; echo EXIT=$?; sleep 60",
        binary().display(),
        target.local_addr()
    );
    let tmux = Tmux::start_sized(&command, 80, 24).expect("tmux starts");
    // Two whole seconds: the chart has bars and "now" has a rate.
    tmux.wait_for("two seconds of the run", |s| {
        elapsed_label(s)
            .is_some_and(|e| e.trim_end_matches('s').parse::<f64>().unwrap_or(0.0) >= 2.5)
    });
    let screen = tmux.visible();
    assert_eq!(screen.lines().count(), 24, "{screen}");
    for line in screen.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line}");
        for cell in panel_cells(line) {
            // A word cut by the panel's edge touches the border; every
            // figure, heading and label leaves a space there (bars and the
            // progress blocks may fill a line).
            let last = cell.chars().last().expect("non-empty cell");
            assert!(
                last == ' ' || "▁▂▃▄▅▆▇█░".contains(last),
                "text runs into the border (cut?) in {cell:?}:\n{screen}"
            );
        }
    }
    for whole in [
        "in flight",
        "status ≥ 400",
        "errors",
        "connections",
        "q or Ctrl-C: stop early",
    ] {
        assert!(screen.contains(whole), "{whole:?} missing:\n{screen}");
    }
    // The progress label stands beside the bar, not on it.
    let label = elapsed_label(&screen).expect("elapsed / planned");
    let bar_line = screen
        .lines()
        .find(|l| l.contains(&format!("{label} / 60s")))
        .expect("the progress line");
    assert!(
        bar_line.contains(&format!("░ {label} / 60s "))
            || bar_line.contains(&format!("█ {label} / 60s ")),
        "the label sits after the bar with a space: {bar_line}"
    );
    // The chart's time axis: seconds of the run under the bars.
    let axis = screen
        .lines()
        .find(|l| l.starts_with("│0s "))
        .unwrap_or_else(|| panic!("no time axis starting at 0s:\n{screen}"));
    assert!(axis.contains("10s") && axis.contains("20s"), "{axis}");
    // Rates are whole requests per second: "12,345 req/s", no ".00".
    for label in ["now", "average"] {
        let rate = figure_after(&screen, label).unwrap_or_else(|| panic!("{label}:\n{screen}"));
        assert!(
            !rate.is_empty() && rate.chars().all(|c| c.is_ascii_digit() || c == ','),
            "{label} rate {rate:?} is not a whole number:\n{screen}"
        );
    }
    assert!(!screen.contains(".00 req/s"), "{screen}");
    tmux.run(&["send-keys", "-t", "live", "q"]).unwrap();
    let after = tmux.wait_for("the exit", |s| s.contains("EXIT="));
    assert!(after.contains("EXIT=130"), "{after}");
}
