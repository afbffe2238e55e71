//! The counters of one thread group while it is mapped: its Counter
//! config elements' and its `${__counter}`s', as the group's `counter =
//! [...]` will declare them. A Loop Controller's children are mapped once
//! per loop; their `${__counter}`s are one function each in JMeter, so a
//! repeated pass hands out the counters the first pass made
//! ([`CounterBook::repeat`]). A Header Manager's value is translated for
//! every sampler in its scope; it is one function in JMeter too, so its
//! counters are found again by where they are written ([`CounterBook::enter_site`]).

use stampede_workload::{Advance, CounterSpec};
use std::collections::{HashMap, VecDeque};

/// The group's counters, and the `${__counter}` names handed out so far.
#[derive(Debug, Default)]
pub struct CounterBook {
    pub specs: Vec<CounterSpec>,
    /// Every anonymous counter's name handed out, in order (repeats too).
    handed: Vec<String>,
    /// The names a repeated pass hands out again, next first.
    replay: VecDeque<String>,
    /// The config element text being translated: its element's line, its
    /// place in the element, and the `${__counter}`s met in it so far.
    site: Option<(u32, usize, usize)>,
    /// The counters of config element texts, by line, place and order.
    sited: HashMap<(u32, usize, usize), String>,
}

impl CounterBook {
    /// Where the walk is in the names handed out (see [`repeat`](Self::repeat)).
    pub fn mark(&self) -> usize {
        self.handed.len()
    }

    /// The next pass walks again what was walked between `from` and `to`:
    /// it hands out the same names. Inside a pass that already replays (a
    /// loop in a loop), the names to come are already queued.
    pub fn repeat(&mut self, from: usize, to: usize) {
        if self.replay.is_empty() {
            self.replay.extend(self.handed[from..to].iter().cloned());
        }
    }

    /// What is translated next is text `place` of the config element on
    /// `line`, until [`leave_site`](Self::leave_site).
    pub fn enter_site(&mut self, line: u32, place: usize) {
        self.site = Some((line, place, 0));
    }

    pub fn leave_site(&mut self) {
        self.site = None;
    }

    /// A counter of its own for one `${__counter}` without a variable: the
    /// one made for the same place before, in a config element's text.
    fn anonymous(&mut self, shared: bool) -> String {
        if let Some((line, place, order)) = self.site.as_mut() {
            let key = (*line, *place, *order);
            *order += 1;
            if let Some(name) = self.sited.get(&key) {
                return name.clone();
            }
            let name = self.create(shared);
            self.sited.insert(key, name.clone());
            return name;
        }
        let name = match self.replay.pop_front() {
            Some(name) => name,
            None => self.create(shared),
        };
        self.handed.push(name.clone());
        name
    }

    fn create(&mut self, shared: bool) -> String {
        let name = format!("__counter_{}", self.specs.len() + 1);
        self.specs.push(use_counter(&name, shared));
        name
    }
}

/// IterationCounter.execute: each evaluation adds 1 to the count and gives
/// it (so from 1), per thread when the first argument is `true`
/// (Boolean.parseBoolean: any case, not trimmed), else over all threads;
/// a second argument names a variable that keeps the value. Each
/// `${__counter}` is its own function instance in JMeter: here each one
/// translated gets a counter of its own (`__counter_N`), advanced at each
/// `{{next}}` rendered (a Loop Controller's repeated pass reuses them); one
/// storing into a variable is the counter of that
/// name (build.rs declares it before the walk, so `${name}` before it reads
/// it), shared by the occurrences that store there.
pub(crate) fn counter(
    per_thread: &str,
    variable: &str,
    counters: &std::cell::RefCell<CounterBook>,
) -> Result<String, String> {
    let shared = !per_thread.eq_ignore_ascii_case("true");
    let variable = variable.trim();
    let mut book = counters.borrow_mut();
    if variable.is_empty() {
        return Ok(book.anonymous(shared));
    }
    if !stampede_workload::scope::is_name(variable) {
        return Err(format!(
            "the variable name '{variable}' is not a stampede variable name (letters, digits, _, - and .)"
        ));
    }
    match book.specs.iter().find(|c| c.name == variable) {
        Some(c) if c.advance == Advance::Use && c.shared == shared => Ok(variable.to_string()),
        Some(_) => Err(format!(
            "the variable {variable} is also set by a Counter or by a __counter of the other kind (per thread and shared); one variable holds one count here"
        )),
        None => Err(format!(
            "the variable {variable} is set elsewhere in the plan (a CSV column, an extractor or a variable); one variable holds one value here"
        )),
    }
}

/// A `${__counter}`'s count: from 1 by 1, advanced at each use.
pub(crate) fn use_counter(name: &str, shared: bool) -> CounterSpec {
    CounterSpec {
        shared,
        advance: Advance::Use,
        ..CounterSpec::new(name, 1)
    }
}

/// The variables `${__counter(X,NAME)}` stores into anywhere in `text`,
/// with the function's first argument: build.rs declares them before the
/// group's elements are translated.
pub(crate) fn counter_variables(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${__counter(") {
        let after = &rest[at + 2..];
        let Some(end) = crate::call_syntax::closing(after) else {
            break;
        };
        let inner = &after[..end];
        let call = &inner["__counter(".len()..];
        let args = crate::call_syntax::split_args(call.strip_suffix(')').unwrap_or(call));
        if let Some(name) = args.get(1).map(|n| n.trim()).filter(|n| !n.is_empty()) {
            found.push((name.to_string(), args[0].clone()));
        }
        rest = &after[end + 1..];
    }
    found
}
