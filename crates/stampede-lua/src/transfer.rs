//! Values that cross from one Lua state to another (`thread:get`,
//! `thread:set`): booleans, nil, numbers, strings and tables of those, as
//! wrk allows. A value is copied out into Rust, then built again in the
//! other state, so the two states are never borrowed at once.

use mlua::{Lua, Value};

/// Deepest table nesting copied; deeper (or a table that holds itself)
/// is an error rather than a stack overflow.
const MAX_DEPTH: usize = 64;

/// A Lua value detached from its state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Transfer {
    Nil,
    Boolean(bool),
    Integer(i64),
    Number(f64),
    String(Vec<u8>),
    Table(Vec<(Transfer, Transfer)>),
}

impl Transfer {
    /// Copies `value` out of its state; functions, userdata, threads are
    /// refused as wrk refuses them.
    pub(crate) fn from_lua(value: &Value) -> mlua::Result<Transfer> {
        Self::copy(value, 0)
    }

    fn copy(value: &Value, depth: usize) -> mlua::Result<Transfer> {
        Ok(match value {
            Value::Nil => Transfer::Nil,
            Value::Boolean(b) => Transfer::Boolean(*b),
            Value::Integer(i) => Transfer::Integer(*i),
            Value::Number(n) => Transfer::Number(*n),
            Value::String(s) => Transfer::String(s.as_bytes().to_vec()),
            Value::Table(table) => {
                if depth >= MAX_DEPTH {
                    return Err(mlua::Error::runtime(format!(
                        "cannot transfer a table nested deeper than {MAX_DEPTH} (does it hold itself?)"
                    )));
                }
                let mut entries = Vec::new();
                for pair in table.pairs::<Value, Value>() {
                    let (key, value) = pair?;
                    entries.push((Self::copy(&key, depth + 1)?, Self::copy(&value, depth + 1)?));
                }
                Transfer::Table(entries)
            }
            other => {
                return Err(mlua::Error::runtime(format!(
                    "cannot transfer '{}' to thread",
                    other.type_name()
                )))
            }
        })
    }

    /// Builds the value in `lua`.
    pub(crate) fn into_lua(self, lua: &Lua) -> mlua::Result<Value> {
        Ok(match self {
            Transfer::Nil => Value::Nil,
            Transfer::Boolean(b) => Value::Boolean(b),
            Transfer::Integer(i) => Value::Integer(i),
            Transfer::Number(n) => Value::Number(n),
            Transfer::String(bytes) => Value::String(lua.create_string(bytes)?),
            Transfer::Table(entries) => {
                let table = lua.create_table_with_capacity(0, entries.len())?;
                for (key, value) in entries {
                    table.raw_set(key.into_lua(lua)?, value.into_lua(lua)?)?;
                }
                Value::Table(table)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_tables_cross_between_states() {
        let (from, to) = (Lua::new(), Lua::new());
        let value: Value = from
            .load(r#"return { 1, "two", flag = true, inner = { x = 1.5, [3] = "c" } }"#)
            .eval()
            .unwrap();
        let copied = Transfer::from_lua(&value).unwrap().into_lua(&to).unwrap();
        to.globals().set("v", copied).unwrap();
        let check: bool = to
            .load(r#"return v[1] == 1 and v[2] == "two" and v.flag and v.inner.x == 1.5 and v.inner[3] == "c""#)
            .eval()
            .unwrap();
        assert!(check);
    }

    #[test]
    fn functions_and_cycles_are_refused() {
        let lua = Lua::new();
        let function: Value = lua.load("return print").eval().unwrap();
        let err = Transfer::from_lua(&function).unwrap_err().to_string();
        assert!(
            err.contains("cannot transfer 'function' to thread"),
            "{err}"
        );
        let cycle: Value = lua.load("local t = {} t.self = t return t").eval().unwrap();
        let err = Transfer::from_lua(&cycle).unwrap_err().to_string();
        assert!(err.contains("nested deeper"), "{err}");
    }
}
