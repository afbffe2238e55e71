//! `--remote-write URL`: pushes the run's series (the same list `--metrics`
//! serves, metrics_series.rs) to a Prometheus remote-write 1.0 receiver
//! every second, for runs on machines nothing can scrape. This module reads
//! the URL and runs the pushing thread: the thread (remote_write_push.rs)
//! reads the [`Board`] the aggregator publishes to (the aggregator never
//! waits for it), queues and sends the readings; [`RemoteWriter::finish`]
//! pushes the final totals (waiting at most [`FINAL_WAIT`]) and prints one
//! line of what failed or was dropped (remote_write_tally.rs).

use crate::http_post::Endpoint;
use crate::metrics_feed::Board;
use crate::metrics_series::Labels;
use crate::remote_write_push::{Pusher, PUSH_EVERY};
use crate::remote_write_tally::Tally;
use anyhow::Context;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest the end of the run waits for the final push.
pub const FINAL_WAIT: Duration = Duration::from_secs(2);

/// Reads `--remote-write` before any load: an http or https URL with a
/// host, or one line naming the problem.
pub fn parse_url(text: &str) -> anyhow::Result<Endpoint> {
    let url = url::Url::parse(text)
        .map_err(|error| anyhow::anyhow!("--remote-write {text}: not a URL ({error})"))?;
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => {
            anyhow::bail!("--remote-write {text}: the scheme must be http or https, not {other}")
        }
    };
    let host = match url.host() {
        Some(url::Host::Ipv6(address)) => address.to_string(),
        Some(host) => host.to_string(),
        None => anyhow::bail!("--remote-write {text}: no host"),
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or(&host)),
        None => url.host_str().unwrap_or(&host).to_string(),
    };
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    Ok(Endpoint {
        authority,
        target,
        host,
        port,
        tls,
    })
}

/// The pushing thread, running.
pub struct RemoteWriter {
    /// Asks for the final push, to be done by the instant sent.
    finish: mpsc::Sender<Instant>,
    thread: JoinHandle<Tally>,
    url: String,
}

impl RemoteWriter {
    /// Checks `url` (None: no pushing) and starts the thread reading `board`.
    pub fn start(
        url: Option<&str>,
        run_labels: &Labels,
        board: &Board,
    ) -> anyhow::Result<Option<RemoteWriter>> {
        let Some(url) = url else { return Ok(None) };
        let endpoint = parse_url(url)?;
        let (finish, finished) = mpsc::channel();
        let pusher = Pusher::new(endpoint, board.clone(), run_labels.clone());
        let thread = std::thread::Builder::new()
            .name("stampede-remote-write".into())
            .spawn(move || pusher.run(&finished))
            .context("--remote-write: starting the push thread")?;
        eprintln!(
            "stampede: remote-write: pushing to {url} every {}s",
            PUSH_EVERY.as_secs()
        );
        Ok(Some(RemoteWriter {
            finish,
            thread,
            url: url.to_string(),
        }))
    }

    /// Pushes the board's final reading (what the result says) with what is
    /// still queued, waits at most [`FINAL_WAIT`] for it (a push under way
    /// counts against it), and prints one line: what was pushed, or what
    /// failed and was dropped.
    pub fn finish(self) {
        let _ = self.finish.send(Instant::now() + FINAL_WAIT);
        match self.thread.join() {
            Ok(tally) => eprintln!("stampede: {}", tally.line(&self.url)),
            Err(_) => eprintln!("stampede: remote-write: the push thread failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_with_one_line_for_each_problem() {
        let endpoint = parse_url("http://127.0.0.1:9090/api/v1/write?x=1").expect("valid");
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("127.0.0.1", 9090));
        assert_eq!(endpoint.target, "/api/v1/write?x=1");
        assert_eq!(endpoint.authority, "127.0.0.1:9090");
        let endpoint = parse_url("http://[::1]/write").expect("valid");
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 80));
        assert!(!endpoint.tls);
        let endpoint = parse_url("https://prometheus.example/api/v1/write").expect("valid");
        assert_eq!(endpoint.port, 443);
        assert!(endpoint.tls);
        for (bad, why) in [
            ("not a url", "not a URL"),
            ("ftp://127.0.0.1/", "must be http or https"),
        ] {
            let error = parse_url(bad).expect_err(bad).to_string();
            assert!(error.contains(why), "{error}");
            assert_eq!(error.lines().count(), 1, "{error}");
        }
    }
}
