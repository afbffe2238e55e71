//! What a run's remote-write pushes came to: pushes accepted, failures by
//! kind (with the first message a receiver gave), samples dropped, and the
//! one line printed at the end.

use crate::http_post::PostError;
use std::collections::BTreeMap;

/// What the pushes came to.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) pushed: u64,
    /// Failed pushes by kind, with the first message a receiver gave.
    pub(crate) failed: BTreeMap<String, (u64, String)>,
    pub(crate) dropped_samples: u64,
}

impl Tally {
    pub(crate) fn failure(&mut self, error: &PostError) {
        let message = match error {
            PostError::Status { message, .. } => message.clone(),
            PostError::Transport(_) => String::new(),
        };
        self.failed.entry(error.kind()).or_insert((0, message)).0 += 1;
    }

    pub(crate) fn line(&self, url: &str) -> String {
        let failed: u64 = self.failed.values().map(|(n, _)| n).sum();
        if failed == 0 && self.dropped_samples == 0 {
            return format!(
                "remote-write: {} pushes to {url}, all accepted",
                self.pushed
            );
        }
        let kind = |(kind, (_, message)): (&String, &(u64, String))| {
            if message.is_empty() {
                kind.clone()
            } else {
                format!("{kind}: {message}")
            }
        };
        let kinds = if self.failed.len() == 1 {
            self.failed.iter().map(kind).collect::<Vec<_>>().join("")
        } else {
            self.failed
                .iter()
                .map(|entry| format!("{} {}", (entry.1).0, kind(entry)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let failed = if failed == 0 {
            "no pushes failed".to_string()
        } else {
            format!("{failed} pushes failed ({kinds})")
        };
        format!(
            "remote-write: {failed}, {} samples dropped ({} pushes accepted)",
            self.dropped_samples, self.pushed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_line_names_each_kind_once() {
        let mut tally = Tally::default();
        for _ in 0..3 {
            tally.failure(&PostError::Transport("connection refused".into()));
        }
        assert_eq!(
            tally.line("http://x/"),
            "remote-write: 3 pushes failed (connection refused), 0 samples dropped (0 pushes accepted)"
        );
        tally.failure(&PostError::Status {
            code: 400,
            message: "out of order sample".into(),
        });
        tally.dropped_samples = 5;
        assert_eq!(
            tally.line("http://x/"),
            "remote-write: 4 pushes failed (1 HTTP 400: out of order sample, 3 connection refused), 5 samples dropped (0 pushes accepted)"
        );
        assert_eq!(
            Tally {
                pushed: 2,
                ..Tally::default()
            }
            .line("http://x/"),
            "remote-write: 2 pushes to http://x/, all accepted"
        );
    }
}
