//! Transaction Controller samples in the JTL, as JMeter 2.13 to 5.6 write
//! them (TransactionController, TransactionSampler): each pass of a virtual
//! user through a controller's samplers adds one sample labelled with the
//! controller's name, written after its last sampler's line, with
//! `Number of samples in transaction : N, number of failing samples : M`
//! as responseMessage, the samplers' bytes, latency and connect times
//! added up, success only if every sampler succeeded, and responseCode
//! `200` then (empty otherwise). It starts where JMeter's controller
//! starts it, before the timers of its first sampler: when the user's
//! previous sample ended (at the first sampler's start on a user's first
//! pass, whose pause before is not known). Its elapsed time is the
//! samplers' own times added up (the rest of the pass is IdleTime), or
//! with `includeTimers` the whole pass, pauses included.
//! With `generateParentSample` the transaction's sample replaces its
//! samplers' lines (a CSV JTL keeps no sub-results), its responseCode is
//! the first failing sampler's and its latency 0.
//!
//! A pass ends with the transaction's last sampler, or, when a sampler was
//! skipped (a Once Only sampler, a failure's `startnextloop`), with the
//! user's next sample outside it or back at its start; the run's end
//! closes every pass still open.

use crate::model::Transaction;
use std::collections::HashMap;

/// One sampler's sample, as its transaction adds it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child<'a> {
    pub start_ms: u64,
    pub elapsed_ms: u64,
    pub latency_ms: u64,
    pub connect_ms: u64,
    pub bytes: u64,
    pub sent_bytes: u64,
    pub success: bool,
    pub code: &'a str,
    pub thread: &'a str,
}

/// A finished pass: one transaction sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub label: String,
    pub start_ms: u64,
    /// When its last sampler ended: where its line goes in the JTL.
    pub end_ms: u64,
    pub elapsed_ms: u64,
    pub idle_ms: u64,
    pub latency_ms: u64,
    pub connect_ms: u64,
    pub bytes: u64,
    pub sent_bytes: u64,
    pub success: bool,
    pub code: String,
    pub message: String,
    pub thread: String,
}

/// A pass in progress.
#[derive(Debug)]
struct Open {
    transaction: usize,
    last_step: usize,
    start_ms: u64,
    end_ms: u64,
    own_ms: u64,
    latency_ms: u64,
    connect_ms: u64,
    bytes: u64,
    sent_bytes: u64,
    calls: u64,
    failing: u64,
    first_failing_code: Option<String>,
    thread: String,
    /// Inside a parent sample: no line of its own.
    silent: bool,
}

impl Open {
    fn new(transaction: usize, start_ms: u64, silent: bool) -> Open {
        Open {
            transaction,
            last_step: 0,
            start_ms,
            end_ms: start_ms,
            own_ms: 0,
            latency_ms: 0,
            connect_ms: 0,
            bytes: 0,
            sent_bytes: 0,
            calls: 0,
            failing: 0,
            first_failing_code: None,
            thread: String::new(),
            silent,
        }
    }

    fn add(&mut self, step: usize, child: &Child<'_>) {
        self.last_step = step;
        self.end_ms = self.end_ms.max(child.start_ms + child.elapsed_ms);
        self.own_ms += child.elapsed_ms;
        self.latency_ms += child.latency_ms;
        self.connect_ms += child.connect_ms;
        self.bytes += child.bytes;
        self.sent_bytes += child.sent_bytes;
        self.calls += 1;
        if !child.success {
            self.failing += 1;
            self.first_failing_code
                .get_or_insert_with(|| child.code.to_string());
        }
        if self.thread != child.thread {
            self.thread = child.thread.to_string();
        }
    }
}

/// What one sampler's sample did to its user's transactions.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Written before the sampler's line: the passes it ended, innermost first.
    pub before: Vec<Closed>,
    /// Whether the sampler's own line is written (not under a parent sample).
    pub write_child: bool,
    /// Written after it: the passes it completed, innermost first.
    pub after: Vec<Closed>,
}

/// A group's transactions and every user's open passes.
#[derive(Debug, Default)]
pub struct Transactions {
    transactions: Vec<Transaction>,
    /// Per step: its transactions' indexes, outermost first.
    of_step: Vec<Vec<usize>>,
    /// Per transaction: its last step.
    last_step: Vec<usize>,
    /// Per user: its open passes, outermost first (nested controllers).
    open: HashMap<u64, Vec<Open>>,
    /// Per user: when its last sample ended (epoch milliseconds).
    last_end: HashMap<u64, u64>,
}

impl Transactions {
    /// The steps' Transaction Controllers (outermost first), by step index.
    pub fn new(steps: &[Vec<Transaction>]) -> Transactions {
        let mut t = Transactions::default();
        for (i, chain) in steps.iter().enumerate() {
            let mut indexes = Vec::new();
            for tx in chain {
                let index = match t.transactions.iter().position(|known| known == tx) {
                    Some(known) => known,
                    None => {
                        t.transactions.push(tx.clone());
                        t.last_step.push(i);
                        t.transactions.len() - 1
                    }
                };
                t.last_step[index] = i;
                indexes.push(index);
            }
            t.of_step.push(indexes);
        }
        t
    }

    /// Whether any step is in a transaction (otherwise nothing is tracked).
    pub fn any(&self) -> bool {
        !self.transactions.is_empty()
    }

    /// User `user`'s sample of step `step`.
    pub fn sample(&mut self, user: u64, step: usize, child: &Child<'_>) -> Outcome {
        let chain = self.of_step.get(step).cloned().unwrap_or_default();
        let previous_end = self
            .last_end
            .insert(user, child.start_ms + child.elapsed_ms)
            .filter(|end| *end <= child.start_ms);
        let mut outcome = Outcome {
            write_child: chain.iter().all(|&t| !self.transactions[t].parent),
            ..Outcome::default()
        };
        let mut open = self.open.remove(&user).unwrap_or_default();
        // The passes this sample continues: the outermost ones still in
        // its chain, at a later step; the rest have ended.
        let kept = open
            .iter()
            .zip(&chain)
            .take_while(|(pass, &t)| pass.transaction == t && step > pass.last_step)
            .count();
        while open.len() > kept {
            if let Some(pass) = open.pop() {
                outcome.before.extend(self.close(pass));
            }
        }
        for &transaction in &chain[kept..] {
            let silent = open.iter().any(|o| self.transactions[o.transaction].parent);
            open.push(Open::new(
                transaction,
                previous_end.unwrap_or(child.start_ms),
                silent,
            ));
        }
        for pass in &mut open {
            pass.add(step, child);
        }
        while open
            .last()
            .is_some_and(|pass| self.last_step[pass.transaction] == step)
        {
            if let Some(pass) = open.pop() {
                outcome.after.extend(self.close(pass));
            }
        }
        if !open.is_empty() {
            self.open.insert(user, open);
        }
        outcome
    }

    /// The run is over: every pass still open, by user, innermost first.
    pub fn finish(&mut self) -> Vec<Closed> {
        let mut open: Vec<(u64, Vec<Open>)> = self.open.drain().collect();
        open.sort_by_key(|(user, _)| *user);
        open.into_iter()
            .flat_map(|(_, passes)| passes.into_iter().rev())
            .filter_map(|pass| self.close(pass))
            .collect()
    }

    /// The pass's sample (none inside a parent sample, whose CSV line
    /// keeps no sub-results).
    fn close(&self, open: Open) -> Option<Closed> {
        if open.silent {
            return None;
        }
        let transaction = &self.transactions[open.transaction];
        let span = open.end_ms.saturating_sub(open.start_ms);
        let (elapsed_ms, idle_ms) = match transaction.include_timers {
            true => (span, 0),
            false => (open.own_ms, span.saturating_sub(open.own_ms)),
        };
        let success = open.failing == 0;
        let code = match (success, transaction.parent) {
            (true, _) => "200".to_string(),
            (false, true) => open.first_failing_code.unwrap_or_default(),
            (false, false) => String::new(),
        };
        Some(Closed {
            label: transaction.name.clone(),
            start_ms: open.start_ms,
            end_ms: open.end_ms,
            elapsed_ms,
            idle_ms,
            latency_ms: if transaction.parent {
                0
            } else {
                open.latency_ms
            },
            connect_ms: open.connect_ms,
            bytes: open.bytes,
            sent_bytes: open.sent_bytes,
            success,
            code,
            message: format!(
                "Number of samples in transaction : {}, number of failing samples : {}",
                open.calls, open.failing
            ),
            thread: open.thread,
        })
    }
}

#[cfg(test)]
#[path = "transactions_tests.rs"]
mod tests;
