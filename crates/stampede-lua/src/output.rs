//! `print` and `io.write` through Rust's stdout. Lua's own write to C's
//! stdio buffer, which is flushed at exit when stdout is a pipe: what a
//! script prints would then come after stampede's report instead of where
//! wrk shows it (before the summary, `done`'s output after it). When stdout
//! carries a machine-readable result (JSON to `-`), they go to stderr. A
//! closed stdout is no script error: what is printed into it is dropped.

use mlua::{Lua, MultiValue, Value};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when stdout is taken by a result: scripts print to stderr.
static TO_STDERR: AtomicBool = AtomicBool::new(false);

/// Sends what scripts print to stderr (`true`) or stdout (`false`, the default).
pub fn print_to_stderr(on: bool) {
    TO_STDERR.store(on, Ordering::Relaxed);
}

/// Replaces the global `print` and `io.write` of `lua`.
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let print = lua.create_function(|lua, values: MultiValue| {
        let mut line = Vec::new();
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                line.push(b'\t');
            }
            line.extend_from_slice(&to_text(lua, value)?);
        }
        line.push(b'\n');
        write_out(&line)
    })?;
    lua.globals().set("print", print)?;
    let io: Option<mlua::Table> = lua.globals().get("io")?;
    if let Some(io) = io {
        let write = lua.create_function(|lua, values: MultiValue| {
            let mut bytes = Vec::new();
            for value in values {
                match &value {
                    Value::String(_) | Value::Integer(_) | Value::Number(_) => {
                        bytes.extend_from_slice(&to_text(lua, value)?)
                    }
                    other => {
                        return Err(mlua::Error::runtime(format!(
                            "bad argument to 'write' (string expected, got {})",
                            other.type_name()
                        )))
                    }
                }
            }
            write_out(&bytes)?;
            // io.write returns the file, so calls chain: io.write(a):write(b).
            let io: mlua::Table = lua.globals().get("io")?;
            io.get::<Value>("stdout")
        })?;
        io.set("write", write)?;
    }
    Ok(())
}

fn to_text(lua: &Lua, value: Value) -> mlua::Result<Vec<u8>> {
    if let Value::String(s) = &value {
        return Ok(s.as_bytes().to_vec());
    }
    let tostring: mlua::Function = lua.globals().get("tostring")?;
    let s: mlua::String = tostring.call(value)?;
    Ok(s.as_bytes().to_vec())
}

fn write_out(bytes: &[u8]) -> mlua::Result<()> {
    let written = if TO_STDERR.load(Ordering::Relaxed) {
        std::io::stderr().lock().write_all(bytes)
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush())
    };
    match written {
        // A closed stdout (`| head -1`): what the script prints is dropped,
        // as wrk's printf into a closed pipe is; the run goes on, and the
        // report's own write meets the closed pipe and exits quietly
        // (src/process/exit.rs), as without a script.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written.map_err(mlua::Error::external),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_and_write_accept_what_lua_accepts() {
        let lua = Lua::new();
        install(&lua).unwrap();
        lua.load(r#"print("a", 1, nil, true) io.write("x", 2, "\n"):write("")"#)
            .exec()
            .unwrap();
        let err = lua.load("io.write({})").exec().unwrap_err().to_string();
        assert!(err.contains("string expected, got table"), "{err}");
    }
}
