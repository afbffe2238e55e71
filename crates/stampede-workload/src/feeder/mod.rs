//! Feeders (`--feed FILE[:circular|random|unique]`, `feed = [...]`): rows
//! loaded once, shared read-only between workers ([`Arc`]), handed out one
//! per iteration by a per-worker [`FeedCursor`].

mod load;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A bad feeder file: `file:line: reason` (line 0 when no line applies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {reason}", if *line > 0 { format!(":{line}") } else { String::new() })]
pub struct FeederError {
    /// The file, as named.
    pub file: String,
    /// The line, from 1; 0 when no line applies.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl FeederError {
    fn new(file: &str, line: usize, reason: String) -> FeederError {
        FeederError {
            file: file.to_string(),
            line,
            reason,
        }
    }
}

/// How rows are handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedMode {
    /// Row after row, starting over at the end.
    #[default]
    Circular,
    /// A uniformly random row each time.
    Random,
    /// Each row at most once across the run (agent I of N takes rows
    /// i ≡ I mod N); then [`Exhausted`].
    Unique,
    /// Each row once, in order, worker w of W taking rows w, w + W, … as
    /// its pacer takes instants w, w + W, … and the engine a listed mix
    /// order's entries (`stampede replay`: row k is the log's line k,
    /// whatever the threads). Built by a program, not a `--feed` mode.
    Listed,
}

impl FeedMode {
    /// Parses `circular`, `random` or `unique`.
    pub fn parse(text: &str) -> Option<FeedMode> {
        match text {
            "circular" => Some(FeedMode::Circular),
            "random" => Some(FeedMode::Random),
            "unique" => Some(FeedMode::Unique),
            _ => None,
        }
    }

    /// The mode's name (`circular`, `random`, `unique`).
    pub fn as_str(self) -> &'static str {
        match self {
            FeedMode::Circular => "circular",
            FeedMode::Random => "random",
            FeedMode::Unique => "unique",
            FeedMode::Listed => "listed",
        }
    }
}

/// A `--feed` argument: the file, its mode and the CSV delimiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedSpec {
    /// The CSV or JSON Lines file.
    pub path: PathBuf,
    /// How rows are handed out.
    pub mode: FeedMode,
    /// The CSV field delimiter (`,` by default).
    pub delimiter: u8,
}

impl FeedSpec {
    /// Parses `FILE[:circular|random|unique]`; a colon followed by anything
    /// else stays part of the file name.
    pub fn parse(text: &str) -> Result<FeedSpec, FeederError> {
        if text.is_empty() {
            return Err(FeederError::new(
                "--feed",
                0,
                "expected FILE[:circular|random|unique]".into(),
            ));
        }
        let (path, mode) = match text.rsplit_once(':') {
            Some((path, mode)) if !path.is_empty() && FeedMode::parse(mode).is_some() => {
                (path, FeedMode::parse(mode).unwrap_or_default())
            }
            _ => (text, FeedMode::Circular),
        };
        Ok(FeedSpec {
            path: PathBuf::from(path),
            mode,
            delimiter: b',',
        })
    }

    /// Loads the file (relative paths against `base`, the scenario file's directory).
    pub fn load(&self, base: Option<&Path>) -> Result<Feeder, FeederError> {
        let path = match base {
            Some(base) if self.path.is_relative() => base.join(&self.path),
            _ => self.path.clone(),
        };
        Ok(Feeder::new(load::load(&path, self.delimiter)?, self.mode))
    }
}

/// The rows of a feeder file, column names first.
#[derive(Debug, PartialEq, Eq)]
pub struct FeedData {
    source: String,
    columns: Vec<String>,
    /// Row r, column c at r * columns.len() + c.
    fields: Vec<Box<[u8]>>,
}

impl FeedData {
    fn new(
        source: &str,
        columns: Vec<String>,
        fields: Vec<Box<[u8]>>,
    ) -> Result<FeedData, FeederError> {
        if fields.is_empty() {
            return Err(FeederError::new(
                source,
                0,
                "no data rows after the header".into(),
            ));
        }
        if let Some(duplicate) = columns
            .iter()
            .enumerate()
            .find(|(i, c)| columns[..*i].contains(c))
        {
            return Err(FeederError::new(
                source,
                1,
                format!("column {} appears twice", duplicate.1),
            ));
        }
        Ok(FeedData {
            source: source.to_string(),
            columns,
            fields,
        })
    }

    /// Parses CSV text (for tests and in-memory data); `name` is used in errors.
    pub fn from_csv(name: &str, text: &[u8], delimiter: u8) -> Result<FeedData, FeederError> {
        load::parse_csv(name, text, delimiter)
    }

    /// Parses CSV rows with no header line into `columns` (further fields
    /// of a row are ignored); `first_line` numbers `text`'s first line in
    /// errors.
    pub fn from_headerless_csv(
        name: &str,
        columns: Vec<String>,
        text: &[u8],
        delimiter: u8,
        first_line: usize,
    ) -> Result<FeedData, FeederError> {
        load::parse_headerless_csv(name, columns, text, delimiter, first_line)
    }

    /// Rows a program built in memory (`stampede replay`'s): each row's
    /// fields in `columns`' order; `name` is used in errors.
    pub fn from_rows(
        name: &str,
        columns: Vec<String>,
        rows: impl IntoIterator<Item = Vec<Box<[u8]>>>,
    ) -> Result<FeedData, FeederError> {
        let mut fields = Vec::new();
        for (index, row) in rows.into_iter().enumerate() {
            if row.len() != columns.len() {
                let reason = format!(
                    "row has {} fields, columns names {}",
                    row.len(),
                    columns.len()
                );
                return Err(FeederError::new(name, index + 1, reason));
            }
            fields.extend(row);
        }
        FeedData::new(name, columns, fields)
    }

    /// Parses JSON Lines text; `name` is used in errors.
    pub fn from_json_lines(name: &str, text: &[u8]) -> Result<FeedData, FeederError> {
        load::parse_json_lines(name, text)
    }

    /// The file (or name) the rows came from, as errors name it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The column names, in file order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// How many data rows.
    pub fn rows(&self) -> usize {
        self.fields.len() / self.columns.len()
    }

    /// Row `index`'s fields, in column order.
    pub fn row(&self, index: usize) -> &[Box<[u8]>] {
        let width = self.columns.len();
        &self.fields[index * width..(index + 1) * width]
    }
}

/// A `unique` feeder ran out of rows: the user that needed one stops, and
/// the run ends once every user has, with `stop_reason: "feed_exhausted"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the feeder's rows are used up")]
pub struct Exhausted;

/// A loaded feeder, shared by all workers of an agent.
#[derive(Debug)]
pub struct Feeder {
    data: Arc<FeedData>,
    mode: FeedMode,
    /// `unique`: the next share of this agent's rows, claimed by all workers.
    claimed: AtomicUsize,
}

impl Feeder {
    /// A feeder handing out `data`'s rows by `mode`.
    pub fn new(data: FeedData, mode: FeedMode) -> Feeder {
        Feeder {
            data: Arc::new(data),
            mode,
            claimed: AtomicUsize::new(0),
        }
    }

    /// Every `unique` row is free again (a new round of `--repeat`).
    pub fn rewind(&self) {
        self.claimed.store(0, Ordering::Relaxed);
    }

    /// The rows.
    pub fn data(&self) -> &FeedData {
        &self.data
    }

    /// How rows are handed out.
    pub fn mode(&self) -> FeedMode {
        self.mode
    }

    /// True once a `unique` feeder has handed out every row of agent
    /// `agent` of `agents`: the next claim finds none ([`Exhausted`]).
    /// Read from the claims counter, so it holds for every worker at once.
    pub fn is_exhausted(&self, agent: usize, agents: usize) -> bool {
        self.mode == FeedMode::Unique
            && self
                .claimed
                .load(Ordering::Relaxed)
                .checked_mul(agents.max(1))
                .and_then(|i| i.checked_add(agent))
                .is_none_or(|i| i >= self.data.rows())
    }

    /// The cursor of worker `worker` of `workers`, in agent `agent` of `agents`.
    pub fn cursor(
        self: &Arc<Self>,
        worker: usize,
        workers: usize,
        agent: usize,
        agents: usize,
        seed: u64,
    ) -> FeedCursor {
        let rows = self.data.rows();
        let (next, stride) = match self.mode {
            FeedMode::Listed => (worker, workers.max(1)),
            // Circular workers start spread over the file, so the first
            // requests of a run do not all carry row 0.
            _ => (worker * rows / workers.max(1), 1),
        };
        FeedCursor {
            feeder: Arc::clone(self),
            next,
            stride,
            agent,
            agents: agents.max(1),
            rng: fastrand::Rng::with_seed(seed),
        }
    }
}

/// One worker's view of a feeder.
#[derive(Debug)]
pub struct FeedCursor {
    feeder: Arc<Feeder>,
    next: usize,
    /// `listed`: the workers that share the rows.
    stride: usize,
    agent: usize,
    agents: usize,
    rng: fastrand::Rng,
}

impl FeedCursor {
    /// The row for the next iteration. `unique` claims from a counter shared
    /// by the agent's workers, so shares are disjoint and every row of the
    /// agent (i ≡ agent mod agents) is used once before [`Exhausted`].
    pub fn next_row(&mut self) -> Result<&[Box<[u8]>], Exhausted> {
        let index = self.next_index()?;
        Ok(self.feeder.data.row(index))
    }

    /// As [`next_row`](Self::next_row), the row's index in
    /// [`FeedData::row`] (for a virtual user that keeps its iteration's rows).
    pub fn next_index(&mut self) -> Result<usize, Exhausted> {
        let rows = self.feeder.data.rows();
        let index = match self.feeder.mode {
            FeedMode::Circular => {
                let index = self.next % rows;
                self.next = index + 1;
                index
            }
            FeedMode::Random => self.rng.usize(..rows),
            FeedMode::Unique => {
                let share = self.feeder.claimed.fetch_add(1, Ordering::Relaxed);
                share
                    .checked_mul(self.agents)
                    .and_then(|i| i.checked_add(self.agent))
                    .filter(|&i| i < rows)
                    .ok_or(Exhausted)?
            }
            FeedMode::Listed => {
                let share = self.next;
                self.next = share.saturating_add(self.stride);
                share
                    .checked_mul(self.agents)
                    .and_then(|i| i.checked_add(self.agent))
                    .filter(|&i| i < rows)
                    .ok_or(Exhausted)?
            }
        };
        Ok(index)
    }

    /// The feeder this cursor reads.
    pub fn feeder(&self) -> &Arc<Feeder> {
        &self.feeder
    }
}

#[cfg(test)]
mod tests;
