//! Walks the element tree into a [`Plan`], applying JMeter's scoping: a
//! config element, assertion, extractor or timer applies to every sampler
//! at its level and below; one under a sampler applies to that sampler.
//! Disabled elements are skipped with their subtrees; what cannot be mapped
//! is collected, not fatal (the caller refuses the run or skips it).

use crate::classify::{is_script, role, Role};
use crate::csv_feed::feed;
use crate::functions::{constant, element_name, Names};
use crate::model::{Pause, Plan, Step, Transaction, Unsupported};
use crate::rules::{assertion, extractor, pause, template};
use crate::sampler::http_step;
use crate::thread_group::{settings, GroupScope};
use crate::tree::{Element, Prop};
use crate::variables::{generated, Value};
use crate::{JmxError, MapError};
use std::path::Path;

/// What is in force at one level of the tree.
#[derive(Debug, Clone, Default)]
struct Scope<'e> {
    headers: Vec<&'e Element>,
    defaults: Vec<&'e Element>,
    assertions: Vec<&'e Element>,
    extractors: Vec<&'e Element>,
    timers: Vec<&'e Element>,
    feeds: Vec<&'e Element>,
    /// The DNS Cache Manager in force (dns.rs).
    dns: Option<&'e Element>,
    /// Counters and Random Variables (variables.rs).
    generated: Vec<&'e Element>,
    throughput: Option<&'e Element>,
    cookies: bool,
    transactions: Vec<Transaction>,
    once: bool,
}

struct Builder<'a> {
    names: Names,
    base: &'a Path,
    plan: Plan,
    /// Samplers left out of the group being walked (listed as unsupported).
    dropped: usize,
    /// The listeners met, as `'name' (class)`: named in one note.
    listeners: Vec<String>,
}

/// Maps the parsed elements; `props` are the `-J`/`-q` properties and
/// `base` the .jmx file's directory.
pub(crate) fn build(top: &[Element], names: Names, base: &Path) -> Result<Plan, JmxError> {
    let test_plan = top
        .iter()
        .find(|e| e.class == "TestPlan")
        .ok_or_else(|| JmxError::new("not a JMeter test plan: no TestPlan element"))?;
    let mut builder = Builder {
        names,
        base,
        plan: Plan {
            name: test_plan.name.clone(),
            ..Plan::default()
        },
        dropped: 0,
        listeners: Vec::new(),
    };
    // Script elements first: what they set (a token, a property) has no
    // value in the mapped plan, so a missing value found later is theirs
    // to explain, and the user is not first asked for it.
    scripts(&test_plan.children, &mut builder.plan.unsupported);
    let scripts = builder.plan.unsupported.clone();
    builder.walk(test_plan).map_err(|error| match scripts.is_empty() {
        true => error,
        false => JmxError::new(format!(
            "{} script element(s) cannot be mapped, listed first: {}; stampede runs no script, so what they set has no value here; then: {error}",
            scripts.len(),
            scripts
                .iter()
                .map(|u| format!("line {}: '{}' ({})", u.line, u.name, u.class))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    })?;
    if !builder.listeners.is_empty() {
        let note = format!(
            "listeners ignored (they send no request; -l and the report are stampede's own results): {}",
            builder.listeners.join(", ")
        );
        builder.plan.notes.push(note);
    }
    Ok(builder.plan)
}

/// Every enabled script element under `elements`, in file order.
fn scripts(elements: &[Element], out: &mut Vec<Unsupported>) {
    for e in elements.iter().filter(|e| e.enabled) {
        if is_script(e) {
            out.push(Unsupported {
                name: e.name.clone(),
                class: e.class.clone(),
                line: e.line,
                why: "a script element: stampede runs no BeanShell, JSR223 or BSF code, so what it sets (variables, properties, headers) has no value".into(),
            });
        }
        scripts(&e.children, out);
    }
}

impl<'e> Builder<'_> {
    /// The test plan's variables, then its thread groups.
    fn walk(&mut self, test_plan: &'e Element) -> Result<(), JmxError> {
        if let Some(vars) = test_plan.element("TestPlan.user_defined_variables") {
            self.variables(vars)?;
        }
        self.variables_below(&test_plan.children)?;
        self.plan.serialize_groups =
            test_plan.flag("TestPlan.serialize_threadgroups") == Some(true);
        let mut scope = Scope::default();
        self.collect(&test_plan.children, &mut scope, true);
        for child in test_plan.children.iter().filter(|e| e.enabled) {
            match role(child) {
                Role::ThreadGroup => self.group(child, scope.clone())?,
                Role::Sampler | Role::Controller => {
                    self.unsupported(child, "a sampler or controller outside a thread group")
                }
                Role::Unknown => self.unsupported(child, "no stampede equivalent"),
                _ => {}
            }
        }
        Ok(())
    }

    /// Lists `e` once (a Loop Controller walks its children again; script
    /// elements are listed first, by `scripts`).
    fn unsupported(&mut self, e: &Element, why: impl Into<String>) {
        let listed = (self.plan.unsupported.iter())
            .any(|u| u.line == e.line && u.class == e.class && u.name == e.name);
        if listed || is_script(e) {
            return;
        }
        self.plan.unsupported.push(Unsupported {
            name: e.name.clone(),
            class: e.class.clone(),
            line: e.line,
            why: why.into(),
        });
    }

    /// Records a mapping failure: unsupported is collected, bad input stops.
    fn failed(&mut self, e: &Element, error: MapError) -> Result<(), JmxError> {
        match error {
            MapError::Unsupported(why) => {
                self.unsupported(e, why);
                Ok(())
            }
            MapError::Bad(message) => Err(JmxError::new(message)),
        }
    }

    /// User Defined Variables: evaluated once, in order, as constants.
    fn variables(&mut self, arguments: &Element) -> Result<(), JmxError> {
        for (_, prop) in arguments.list("Arguments.arguments") {
            let Prop::Element(arg) = prop else { continue };
            let Some(name) = arg.text("Argument.name") else {
                continue;
            };
            let raw = arg.text("Argument.value").unwrap_or("");
            match constant(raw, &self.names, "a user-defined variable") {
                Ok(value) => {
                    self.names.constants.insert(name.trim().to_string(), value);
                }
                Err(e) => self.failed(arguments, e.into())?,
            }
        }
        Ok(())
    }

    /// Every enabled Arguments config element, as JMeter reads them all at start.
    fn variables_below(&mut self, elements: &[Element]) -> Result<(), JmxError> {
        for e in elements.iter().filter(|e| e.enabled) {
            if e.class == "Arguments" {
                self.variables(e)?;
            }
            self.variables_below(&e.children)?;
        }
        Ok(())
    }

    /// Adds the scoped elements among `children` to `scope`; notes listeners.
    fn collect(&mut self, children: &'e [Element], scope: &mut Scope<'e>, group_level: bool) {
        for child in children.iter().filter(|e| e.enabled) {
            match (role(child), child.class.as_str()) {
                (Role::Config, "HeaderManager") => scope.headers.push(child),
                (Role::Config, "CookieManager") => scope.cookies = true,
                (Role::Config, "CSVDataSet") => scope.feeds.push(child),
                (Role::Config, "CounterConfig" | "RandomVariableConfig") if group_level => {
                    scope.generated.push(child)
                }
                (Role::Config, "CounterConfig" | "RandomVariableConfig") => self.unsupported(
                    child,
                    "a Counter or Random Variable under a controller or sampler counts that controller's loops; it is mapped at thread-group or test-plan level only",
                ),
                (Role::Config, "DNSCacheManager") => scope.dns = Some(child),
                (Role::Config, "CacheManager") | (Role::Ignored, _) => {
                    self.note(crate::ignored::note(child))
                }
                (Role::Config, "ConfigTestElement") => scope.defaults.push(child),
                (Role::Assertion, _) => scope.assertions.push(child),
                (Role::Extractor, _) => scope.extractors.push(child),
                (Role::Timer, _) => scope.timers.push(child),
                (Role::Throughput, _) if group_level => scope.throughput = Some(child),
                (Role::Throughput, _) => self.unsupported(
                    child,
                    "a throughput timer is mapped at thread-group level only",
                ),
                (Role::Listener, _) => {
                    if let Some(file) = child.text("filename") {
                        self.plan.listener_files.push(file.to_string());
                    }
                    let listener = child.describe();
                    if !self.listeners.contains(&listener) {
                        self.listeners.push(listener);
                    }
                }
                _ => {}
            }
        }
    }

    /// A note, once (a Loop Controller walks its children again).
    fn note(&mut self, note: String) {
        if !self.plan.notes.contains(&note) {
            self.plan.notes.push(note);
        }
    }

    fn group(&mut self, e: &'e Element, mut scope: Scope<'e>) -> Result<(), JmxError> {
        self.collect(&e.children, &mut scope, true);
        // Feeder columns and extracted names are the group's run-time variables.
        let mut names = self.names.clone();
        let mut feeds = Vec::new();
        for csv in &scope.feeds {
            match feed(csv, &names, self.base) {
                Ok(feed) => feeds.push(feed),
                Err(error) => self.failed(csv, error)?,
            }
        }
        names.runtime = feeds.iter().flat_map(|f| f.1.iter().cloned()).collect();
        extracted_names(&e.children, &scope.extractors, &mut names.runtime);
        // This group's counters, apart from any other group's.
        names.counters = Default::default();
        for config in &scope.generated {
            let mut notes = Vec::new();
            let value = generated(config, &names, &mut notes);
            notes.into_iter().for_each(|note| self.note(note));
            match value {
                Ok((name, Value::Fixed(value))) => {
                    names.constants.insert(name, value);
                }
                Ok((name, Value::Slot(slot))) => {
                    names.slots.insert(name, slot);
                }
                Ok((name, Value::Counter(_))) if names.runtime.contains(&name) => self.unsupported(
                    config,
                    format!("the variable {name} is also set by a CSV column, an extractor or another Counter; one variable holds one value here"),
                ),
                Ok((name, Value::Counter(spec))) => {
                    names.runtime.push(name);
                    names.counters.borrow_mut().specs.push(spec);
                }
                Err(error) => self.failed(config, error)?,
            }
        }
        counters_stored_into(e, &scope, &mut names);
        self.dropped = 0;
        let counters = names.counters.clone();
        let saved = std::mem::replace(&mut self.names, names);
        let mut steps = Vec::new();
        let walked = self.level(&e.children, &scope, &mut steps, false);
        let group_scope = GroupScope {
            throughput: scope.throughput,
            cookies: scope.cookies,
            dropped: self.dropped,
        };
        let settings = match walked {
            Ok(()) => settings(
                e,
                &self.names,
                &mut self.plan.notes,
                group_scope,
                steps,
                feeds,
            ),
            Err(error) => {
                self.names = saved;
                return Err(error);
            }
        };
        self.names = saved;
        match settings {
            Ok(Some(mut group)) => {
                group.counters = counters.take().specs;
                if let Some(dns) = scope.dns {
                    match crate::dns::resolve(dns, &group.steps) {
                        Ok((resolve, note)) => {
                            group.resolve = resolve;
                            self.note(note);
                        }
                        Err(why) => self.unsupported(dns, why),
                    }
                }
                self.plan.groups.push(group)
            }
            Ok(None) => {}
            Err(error) => self.failed(e, error)?,
        }
        Ok(())
    }

    /// The samplers and controllers among `children`, in order.
    fn level(
        &mut self,
        children: &'e [Element],
        outer: &Scope<'e>,
        steps: &mut Vec<Step>,
        collect: bool,
    ) -> Result<(), JmxError> {
        let mut scope = outer.clone();
        if collect {
            self.collect(children, &mut scope, false);
        }
        for child in children.iter().filter(|e| e.enabled) {
            match role(child) {
                Role::Sampler => match self.sampler(child, &scope) {
                    Ok(step) => steps.push(step),
                    Err(error) => {
                        self.dropped += 1;
                        self.failed(child, error)?
                    }
                },
                Role::Controller => self.controller(child, &scope, steps)?,
                Role::ThreadGroup => self.unsupported(child, "a thread group inside another"),
                Role::Unknown => self.unsupported(child, "no stampede equivalent"),
                _ => {}
            }
        }
        Ok(())
    }

    fn controller(
        &mut self,
        e: &'e Element,
        outer: &Scope<'e>,
        steps: &mut Vec<Step>,
    ) -> Result<(), JmxError> {
        let mut scope = outer.clone();
        match e.class.as_str() {
            "TransactionController" => scope.transactions.push(Transaction {
                name: element_name(&e.name, &self.names),
                parent: e.flag("TransactionController.parent").unwrap_or(false),
                include_timers: e
                    .flag("TransactionController.includeTimers")
                    .unwrap_or(true),
                line: e.line,
            }),
            "OnceOnlyController" => scope.once = true,
            "LoopController" => {
                let raw = e.text("LoopController.loops").unwrap_or("1");
                let times = match constant(raw, &self.names, "LoopController.loops") {
                    Ok(value) => value.trim().parse::<u64>().ok().filter(|n| *n <= 1000),
                    Err(error) => return self.failed(e, error.into()),
                };
                let Some(times) = times else {
                    self.unsupported(
                        e,
                        format!("loop count '{raw}' is not mapped (0 to 1000 times)"),
                    );
                    return Ok(());
                };
                // Each pass after the first walks the same elements:
                // their `${__counter}`s keep the first pass's counters.
                let book = self.names.counters.clone();
                let from = book.borrow().mark();
                let mut to = None;
                for _ in 0..times {
                    if let Some(to) = to {
                        book.borrow_mut().repeat(from, to);
                    }
                    self.level(&e.children, &scope, steps, true)?;
                    to.get_or_insert(book.borrow().mark());
                }
                return Ok(());
            }
            "IfController" => {
                let raw = e.text("IfController.condition").unwrap_or("");
                match constant(raw, &self.names, "the condition").map(|c| c.trim().to_string()) {
                    Ok(c) if c.eq_ignore_ascii_case("true") => {}
                    Ok(c) if c.eq_ignore_ascii_case("false") => return Ok(()),
                    _ => {
                        self.unsupported(
                            e,
                            format!("condition '{raw}' is evaluated per request; only true or false are mapped"),
                        );
                        return Ok(());
                    }
                }
            }
            _ => {}
        }
        self.level(&e.children, &scope, steps, true)
    }

    fn sampler(&mut self, e: &'e Element, outer: &Scope<'e>) -> Result<Step, MapError> {
        let mut scope = outer.clone();
        self.collect(&e.children, &mut scope, false);
        for child in e.children.iter().filter(|c| c.enabled) {
            if matches!(
                role(child),
                Role::Unknown | Role::Sampler | Role::Controller
            ) {
                self.unsupported(child, "no stampede equivalent under a sampler");
            }
        }
        let names = &self.names;
        let mut step = http_step(e, &scope.defaults, names, &mut self.plan.notes)?;
        step.name = element_name(&step.name, names);
        let mut headers: Vec<(String, String)> = std::mem::take(&mut step.headers);
        for manager in &scope.headers {
            for (place, (_, prop)) in manager.list("HeaderManager.headers").iter().enumerate() {
                let Prop::Element(header) = prop else {
                    continue;
                };
                let Some(name) = header.text("Header.name") else {
                    continue;
                };
                if step.multipart && name.trim().eq_ignore_ascii_case("content-type") {
                    continue;
                }
                // One function per value in JMeter, whatever sampler sends it.
                names.counters.borrow_mut().enter_site(manager.line, place);
                let value = template(header.text("Header.value").unwrap_or(""), names);
                names.counters.borrow_mut().leave_site();
                let value = value?;
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name.trim()));
                headers.push((name.trim().to_string(), value));
            }
        }
        step.headers = headers;
        // An assertion stampede cannot check is listed itself, not its
        // samplers: with --skip-unsupported they run without that check.
        let mut skipped = Vec::new();
        for a in &scope.assertions {
            match assertion(a, names) {
                Ok(checks) => {
                    for (check, failure) in checks {
                        step.checks.push(check);
                        step.failures.push(failure);
                    }
                }
                Err(MapError::Unsupported(why)) => skipped.push((*a, why)),
                Err(bad) => return Err(bad),
            }
        }
        for x in &scope.extractors {
            step.extracts
                .extend(extractor(x, names).map_err(|e| named(x, e))?);
        }
        let mut think = Pause::default();
        let mut syncs = scope.timers.iter().filter(|t| t.class == "SyncTimer");
        // Beside a throughput timer the timer is what cannot be mapped, not
        // its group: it is listed itself, and --skip-unsupported runs the
        // samplers without it.
        let mut beside_throughput = None;
        if let Some(sync) = syncs.next() {
            match scope.throughput {
                Some(_) => beside_throughput = Some(sync),
                None => step.rendezvous = crate::sync_timer::rendezvous(sync, names)?,
            }
        }
        for t in &scope.timers {
            if t.class == "SyncTimer" {
                continue;
            }
            think = think.plus(pause(t, names, &mut self.plan.notes).map_err(|e| named(t, e))?);
        }
        step.think = (!think.is_zero()).then_some(think);
        step.transactions = scope.transactions.clone();
        step.once = scope.once;
        if let Some(sync) = beside_throughput {
            self.unsupported(
                sync,
                "a Synchronizing Timer with a throughput timer: the throughput timer's open model starts iterations on its own schedule, with no threads to gather; --skip-unsupported sends its samplers' requests without the rendezvous",
            );
        }
        for extra in syncs {
            self.unsupported(
                extra,
                "a second Synchronizing Timer in one sampler's scope: stampede gathers each step once",
            );
        }
        for (a, why) in skipped {
            self.unsupported(
                a,
                format!("{why}; --skip-unsupported runs the samplers in its scope without this assertion (a response it would fail counts as a success)"),
            );
        }
        Ok(step)
    }
}

/// An assertion's or extractor's failure, named after it (the sampler is
/// the element listed).
fn named(e: &Element, error: MapError) -> MapError {
    match error {
        MapError::Unsupported(why) => MapError::Unsupported(format!("{} {why}", e.describe())),
        bad => bad,
    }
}

/// The reference names of every extractor in a group's subtree.
fn extracted_names(children: &[Element], outer: &[&Element], out: &mut Vec<String>) {
    let mut add = |e: &Element| {
        for prop in [
            "JSONPostProcessor.referenceNames",
            "RegexExtractor.refname",
            "BoundaryExtractor.refname",
            "HtmlExtractor.refname",
            "VAR",
        ] {
            if let Some(names) = e.text(prop) {
                out.extend(names.split(';').map(|n| n.trim().to_string()));
            }
        }
    };
    outer.iter().for_each(|e| add(e));
    fn walk(children: &[Element], add: &mut dyn FnMut(&Element)) {
        for child in children.iter().filter(|e| e.enabled) {
            if role(child) == Role::Extractor {
                add(child);
            }
            walk(&child.children, add);
        }
    }
    walk(children, &mut add);
}

/// The variables a `${__counter(X,NAME)}` stores into, in the group's
/// subtree or the test-plan-level config in its scope: declared as that
/// counter before anything is translated, so a `${NAME}` met before the
/// function reads the counter's last value (empty before its first use).
fn counters_stored_into(group: &Element, scope: &Scope<'_>, names: &mut Names) {
    let mut found = Vec::new();
    let mut add = |text: &str| found.extend(crate::counter_book::counter_variables(text));
    texts(group, &mut add);
    for e in scope.headers.iter().chain(&scope.defaults) {
        texts(e, &mut add);
    }
    for (name, per_thread) in found {
        let taken = names.runtime.contains(&name) || names.constants.contains_key(&name);
        if !taken && stampede_workload::scope::is_name(&name) {
            let shared = !per_thread.eq_ignore_ascii_case("true");
            let spec = crate::counter_book::use_counter(&name, shared);
            names.counters.borrow_mut().specs.push(spec);
            names.runtime.push(name);
        }
    }
}

/// Every text property of `e`, its nested elements and enabled children.
fn texts(e: &Element, add: &mut dyn FnMut(&str)) {
    fn prop(p: &Prop, add: &mut dyn FnMut(&str)) {
        match p {
            Prop::Text(text) => add(text),
            Prop::Element(e) => texts(e, add),
            Prop::List(list) => list.iter().for_each(|(_, p)| prop(p, add)),
        }
    }
    e.props.iter().for_each(|(_, p)| prop(p, add));
    for child in e.children.iter().filter(|c| c.enabled) {
        texts(child, add);
    }
}
