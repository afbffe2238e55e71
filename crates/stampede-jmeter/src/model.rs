//! The typed plan a .jmx maps to: thread groups of HTTP steps with every
//! inherited setting resolved (defaults, headers, assertions, timers), in
//! stampede's terms. emit.rs writes it as a scenario file.

use std::path::PathBuf;

/// A mapped test plan.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The TestPlan's testname.
    pub name: String,
    /// The thread groups, in file order.
    pub groups: Vec<Group>,
    /// `TestPlan.serialize_threadgroups`: within each phase (setUp, main,
    /// tearDown) a group starts when the one before it has ended, as
    /// StandardJMeterEngine.run waits (`group.waitThreadsStopped()`).
    pub serialize_groups: bool,
    /// Elements that could not be mapped, in file order.
    pub unsupported: Vec<Unsupported>,
    /// Remarks about mappings that are close but not exact (printed on stderr).
    pub notes: Vec<String>,
    /// The output files of the plan's own listeners (ResultCollector filenames).
    pub listener_files: Vec<String>,
}

/// An element stampede cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The element's `testname`.
    pub name: String,
    /// The element's `testclass` (`BeanShellPreProcessor`).
    pub class: String,
    /// The line of the .jmx where the element starts.
    pub line: u32,
    /// Why it is refused, and what that changes.
    pub why: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: '{}' ({}): {}",
            self.line, self.name, self.class, self.why
        )
    }
}

/// setUp, ordinary and tearDown thread groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A `SetupThreadGroup`: runs before the others.
    Setup,
    /// An ordinary `ThreadGroup`.
    Main,
    /// A `PostThreadGroup`: runs after the others.
    Teardown,
}

impl Phase {
    /// The scenario file's word for it (`setup`, `main`, `teardown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Main => "main",
            Phase::Teardown => "teardown",
        }
    }
}

/// `ThreadGroup.on_sample_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// `continue`: go on with the next sampler.
    Continue,
    /// `startnextloop`: start the thread's next iteration.
    NextIteration,
    /// `stopthread`: stop this thread.
    StopUser,
    /// `stoptest` or `stoptestnow`: stop the test.
    StopRun,
}

impl OnError {
    /// The scenario file's word for it (`continue`, `next_iteration`,
    /// `stop_user`, `stop_run`).
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Continue => "continue",
            OnError::NextIteration => "next_iteration",
            OnError::StopUser => "stop_user",
            OnError::StopRun => "stop_run",
        }
    }
}

/// How a group's iterations are started.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// `connections = threads`: each thread a virtual user (closed model).
    Threads,
    /// A Constant Throughput Timer: iterations per second (open model).
    Rate(f64),
    /// A Throughput Shaping Timer: iteration-rate stages (`0s:10,1m:100`).
    Stages(String),
}

/// A Synchronizing Timer's rendezvous before a step (sync_timer.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rendezvous {
    /// `groupSize`: threads released together; 0: every thread of the group.
    pub users: u32,
    /// `timeoutInMs` above 0: the waiting threads go after this long.
    pub timeout_ms: Option<u64>,
}

/// A pause: uniform in [min, max] milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pause {
    /// The shortest pause, in milliseconds.
    pub min_ms: u64,
    /// The longest pause, in milliseconds.
    pub max_ms: u64,
}

impl Pause {
    /// No pause at all.
    pub fn is_zero(&self) -> bool {
        self.max_ms == 0
    }

    /// As the scenario file writes it: `250ms` or `100ms..300ms`.
    pub fn text(&self) -> String {
        if self.min_ms == self.max_ms {
            format!("{}ms", self.min_ms)
        } else {
            format!("{}ms..{}ms", self.min_ms, self.max_ms)
        }
    }

    /// Both pauses one after the other, as timers in the same scope add up.
    pub fn plus(self, other: Pause) -> Pause {
        Pause {
            min_ms: self.min_ms + other.min_ms,
            max_ms: self.max_ms + other.max_ms,
        }
    }
}

/// A CSV Data Set Config.
#[derive(Debug, Clone, PartialEq)]
pub struct Feed {
    /// The resolved path (relative paths against the .jmx's directory).
    pub file: PathBuf,
    /// `variableNames`; None: the file's first line names the columns.
    pub columns: Option<Vec<String>>,
    /// `ignoreFirstLine` beside `variableNames`.
    pub skip_first_line: bool,
    /// circular (`recycle`) or unique (read once).
    pub mode: &'static str,
    /// `delimiter`: what separates the columns (`,` by default).
    pub delimiter: String,
}

/// One thread group.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The thread group's testname.
    pub name: String,
    /// When it runs: setUp, main or tearDown.
    pub phase: Phase,
    /// `ThreadGroup.num_threads`: the virtual users.
    pub threads: u32,
    /// How its iterations are started.
    pub load: Load,
    /// `ThreadGroup.ramp_time`: seconds until every thread has started.
    pub ramp_up_s: u64,
    /// Loop count per thread; None: forever (until the duration ends).
    pub iterations: Option<u64>,
    /// Under a throughput timer (the open model): threads × loops
    /// iterations in all, paced by the timer; None: no count.
    pub total_iterations: Option<u64>,
    /// The scheduler's duration.
    pub duration_s: Option<u64>,
    /// The scheduler's start delay.
    pub delay_s: Option<u64>,
    /// `ThreadGroup.on_sample_error`: what a failed sample does.
    pub on_error: OnError,
    /// A Cookie Manager is in scope: each user keeps its cookies.
    pub cookies: bool,
    /// The CSV Data Set Configs in scope, in file order.
    pub feeds: Vec<Feed>,
    /// The timers every step has (written once for the group).
    pub think: Option<Pause>,
    /// The HTTP samplers, in the order a thread runs them.
    pub steps: Vec<Step>,
    /// A DNS Cache Manager's static hosts: `stampede run --resolve` values.
    pub resolve: Vec<String>,
    /// Counters (Counter config elements, `${__counter}`s): `counter = [...]`.
    pub counters: Vec<stampede_workload::CounterSpec>,
}

/// One HTTP sampler, everything it inherits resolved.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Step {
    /// The sampler's testname: the JTL label.
    pub name: String,
    /// `HTTPSampler.method` (`GET`, `POST`).
    pub method: String,
    /// The URL as stampede template text.
    pub url: String,
    /// Name and value of each header: the sampler's own (`Connection`,
    /// `Content-Type`), then the Header Managers' in scope, a later one
    /// replacing an earlier one of the same name.
    pub headers: Vec<(String, String)>,
    /// The body as stampede template text: the raw body, the encoded form
    /// or the multipart parts; None when it sends none.
    pub body: Option<String>,
    /// A multipart/form-data body: its Content-Type (with the boundary)
    /// replaces a Header Manager's, as JMeter's does.
    pub multipart: bool,
    /// Check expressions (`status == 200`).
    pub checks: Vec<String>,
    /// What JMeter writes in failureMessage when each check fails.
    pub failures: Vec<crate::failure::FailureText>,
    /// Extracts: variable name, source (`json($.token)`).
    pub extracts: Vec<(String, String)>,
    /// The timers in this step's scope, when they differ from the group's.
    pub think: Option<Pause>,
    /// A Synchronizing Timer in the step's scope.
    pub rendezvous: Option<Rendezvous>,
    /// The enclosing Transaction Controllers, outermost first.
    pub transactions: Vec<Transaction>,
    /// Inside a Once Only Controller: the first iteration only.
    pub once: bool,
    /// `HTTPSampler.follow_redirects` or `HTTPSampler.auto_redirects`.
    pub follow_redirects: bool,
    /// `HTTPSampler.use_keepalive`: the connection stays open.
    pub keep_alive: bool,
    /// `HTTPSampler.connect_timeout`, in ms; None when unset or 0.
    pub connect_timeout_ms: Option<u64>,
    /// `HTTPSampler.response_timeout`, in ms; None when unset or 0.
    pub response_timeout_ms: Option<u64>,
}

/// A Transaction Controller: the JTL gains one sample per pass through it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Transaction {
    /// Its testname: the transaction sample's label.
    pub name: String,
    /// `TransactionController.parent` (generate parent sample): the
    /// transaction's sample replaces its samplers' in the JTL.
    pub parent: bool,
    /// `TransactionController.includeTimers`: its elapsed time counts the
    /// pauses between its samplers.
    pub include_timers: bool,
    /// Its line in the .jmx: two controllers of one name stay two.
    pub line: u32,
}
