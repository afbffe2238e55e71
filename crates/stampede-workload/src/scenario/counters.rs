//! A group's `counter = [{ name = "n", start = 1, incr = 1, end = 999,
//! shared = false, width = 3, advance = "iteration" }]`: each one a
//! [`CounterSpec`] added to the group's scope, so its steps read it as
//! `{{n}}` (and advance a `"use"` one with `{{next n}}`).

use super::file::CounterToml;
use super::{Context, ScenarioError};
use crate::counter::{Advance, CounterSpec};
use crate::scope::Scope;

impl Context<'_> {
    pub(super) fn counters(
        &self,
        counters: &[CounterToml],
        scope: &mut Scope,
    ) -> Result<(), ScenarioError> {
        for counter in counters {
            let name = counter.name.get_ref();
            let here = |what: &str| format!("counter {name}: {what}");
            let width = match &counter.width {
                Some(w) => match usize::try_from(*w.get_ref()) {
                    Ok(width) if width <= 40 => width,
                    _ => return Err(self.at(w, here("width is a number of digits from 0 to 40"))),
                },
                None => 0,
            };
            let advance = match &counter.advance {
                None => Advance::Iteration,
                Some(a) => match a.get_ref().as_str() {
                    "iteration" => Advance::Iteration,
                    "use" => Advance::Use,
                    _ => return Err(self.at(a, here("advance is iteration or use"))),
                },
            };
            let spec = CounterSpec {
                name: name.clone(),
                start: counter.start.unwrap_or(0),
                incr: counter.incr.unwrap_or(1),
                end: counter.end.unwrap_or(i64::MAX),
                shared: counter.shared.unwrap_or(false),
                width,
                advance,
            };
            scope
                .add_counter(spec)
                .map_err(|e| self.at(&counter.name, here(&e.to_string())))?;
        }
        Ok(())
    }
}
