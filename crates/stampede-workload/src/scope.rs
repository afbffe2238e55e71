//! The names a template may use: the built-ins, `--var` constants, feeder
//! columns, extracted values and counters, each bound to where its value
//! comes from.

use crate::counter::{Counter, CounterSpec};
use crate::template_error::TemplateError;
use std::sync::Arc;

/// Built-in variable names, in the order error messages list them.
pub const BUILTINS: &[&str] = &[
    "seq",
    "conn",
    "iter",
    "worker",
    "agent",
    "uuid",
    "rand_int",
    "rand_str",
    "now_ms",
    "now_iso",
    "thread_num",
    "env.NAME",
];

/// Where a named variable's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A `--var NAME=VALUE` constant: folded into the literal pieces at compile time.
    Const(Box<[u8]>),
    /// Column `column` of the row feeder `feeder` handed out for this iteration.
    Feed {
        /// The feeder's index, in flag (or `feed`) order.
        feeder: usize,
        /// The column's index in the feeder's rows.
        column: usize,
    },
    /// Slot `slot` of the virtual user's [`VarStore`](crate::VarStore) (an extracted value).
    Extract {
        /// The store's slot.
        slot: usize,
    },
    /// A group's counter: `{{NAME}}` reads the user's last value (its
    /// [`VarStore`](crate::VarStore) slot), `{{next NAME}}` advances it.
    Counter(Arc<Counter>),
}

/// The named variables visible to a template, in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    names: Vec<(String, Binding)>,
    extract_slots: usize,
    /// Per-user counters so far (each has a next value in every user's store).
    per_user_counters: usize,
}

impl Scope {
    /// A scope with only the built-in names.
    pub fn new() -> Scope {
        Scope::default()
    }

    fn add(&mut self, name: &str, binding: Binding) -> Result<(), TemplateError> {
        if is_builtin(name) {
            return Err(TemplateError::Shadows(name.to_string()));
        }
        if !is_name(name) {
            return Err(TemplateError::BadName(name.to_string()));
        }
        if self.lookup(name).is_some() {
            return Err(TemplateError::Duplicate(name.to_string()));
        }
        self.names.push((name.to_string(), binding));
        Ok(())
    }

    /// Adds a `--var NAME=VALUE` constant.
    pub fn add_const(&mut self, name: &str, value: &str) -> Result<(), TemplateError> {
        self.add(name, Binding::Const(value.as_bytes().into()))
    }

    /// Adds every column of feeder number `feeder` (its index in the
    /// iteration's row list) by its header name.
    pub fn add_feed_columns(
        &mut self,
        feeder: usize,
        columns: &[String],
    ) -> Result<(), TemplateError> {
        for (column, name) in columns.iter().enumerate() {
            self.add(name, Binding::Feed { feeder, column })?;
        }
        Ok(())
    }

    /// Adds an extracted value and returns its slot in the [`VarStore`](crate::VarStore).
    /// Extracting the same name again (a later step refreshing a token) reuses the slot.
    pub fn add_extract(&mut self, name: &str) -> Result<usize, TemplateError> {
        if let Some(Binding::Extract { slot }) = self.lookup(name) {
            return Ok(*slot);
        }
        let slot = self.extract_slots;
        self.add(name, Binding::Extract { slot })?;
        self.extract_slots += 1;
        Ok(slot)
    }

    /// Adds a counter; its value takes a [`VarStore`](crate::VarStore) slot.
    pub fn add_counter(&mut self, spec: CounterSpec) -> Result<Arc<Counter>, TemplateError> {
        let (slot, state) = (self.extract_slots, self.per_user_counters);
        let name = spec.name.clone();
        let counter = Arc::new(Counter::new(spec, slot, state));
        self.add(&name, Binding::Counter(Arc::clone(&counter)))?;
        self.extract_slots += 1;
        self.per_user_counters += usize::from(!counter.spec.shared);
        Ok(counter)
    }

    /// The counters, in the order added.
    pub fn counters(&self) -> impl Iterator<Item = &Arc<Counter>> {
        self.names.iter().filter_map(|(_, b)| match b {
            Binding::Counter(counter) => Some(counter),
            _ => None,
        })
    }

    /// How many extract slots a virtual user's store needs.
    pub fn extract_slots(&self) -> usize {
        self.extract_slots
    }

    /// Where `name`'s value comes from; `None` for a name not in scope.
    pub(crate) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.names.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    /// "seq, conn, …, user, pass": the built-ins then the caller's names.
    pub fn known(&self) -> String {
        let mut known: Vec<&str> = BUILTINS.to_vec();
        known.extend(self.names.iter().map(|(n, _)| n.as_str()));
        known.join(", ")
    }
}

fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name) || name.starts_with("env.")
}

/// Variable names: letters, digits, `_`, `-` and `.` (CSV headers such as `user-id`).
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_builtins_then_names() {
        let mut scope = Scope::new();
        scope.add_const("user", "ann").unwrap();
        scope.add_feed_columns(0, &["pass".to_string()]).unwrap();
        assert!(scope.known().starts_with("seq, conn, iter"));
        assert!(scope.known().ends_with("env.NAME, user, pass"));
    }

    #[test]
    fn refuses_shadowing_and_duplicates() {
        let mut scope = Scope::new();
        assert!(scope.add_const("seq", "1").is_err());
        assert!(scope.add_const("env.HOME", "1").is_err());
        scope.add_const("a", "1").unwrap();
        assert!(scope.add_feed_columns(0, &["a".to_string()]).is_err());
        assert!(scope.add_const("has space", "1").is_err());
    }

    #[test]
    fn extract_slots_are_reused_by_name() {
        let mut scope = Scope::new();
        assert_eq!(scope.add_extract("token").unwrap(), 0);
        assert_eq!(scope.add_extract("id").unwrap(), 1);
        assert_eq!(scope.add_extract("token").unwrap(), 0);
        assert_eq!(scope.extract_slots(), 2);
    }
}
