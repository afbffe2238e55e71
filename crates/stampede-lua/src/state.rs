//! One Lua state as wrk makes each (`script_create`): the standard
//! libraries, the `wrk` table, `print` through Rust's stdout, and the
//! script file run once at its top level. The setup/done state and every
//! thread's state are made the same way.

use crate::wrk_table::{RequestDefaults, UrlParts};
use mlua::{Lua, LuaOptions, StdLib};
use std::fmt;

/// Why a script could not be loaded: one line naming the file (and, for a
/// Lua error, the line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The file could not be read.
    Read(String),
    /// The URL has no `scheme://host`.
    Url(String),
    /// A Lua syntax error: `file:line: message`.
    Syntax(String),
    /// The file's top-level code failed: `file:line: message`.
    Runtime(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read(m)
            | LoadError::Url(m)
            | LoadError::Syntax(m)
            | LoadError::Runtime(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LoadError {}

/// The message of a Lua error, with the script's frames of its traceback
/// when Lua gave one (traceback.rs).
pub(crate) fn describe(error: &mlua::Error) -> String {
    crate::traceback::tidy(&describe_raw(error))
}

fn describe_raw(error: &mlua::Error) -> String {
    match error {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::CallbackError { traceback, cause } => {
            format!("{}\n{traceback}", describe_raw(cause))
        }
        mlua::Error::WithContext { context, cause } => {
            format!("{context}: {}", describe_raw(cause))
        }
        other => other.to_string(),
    }
}

/// The first line of a Lua error (a syntax error's message is one line;
/// this drops a traceback).
pub(crate) fn first_line(error: &mlua::Error) -> String {
    describe(error)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// What every state is made from.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    /// The script's name in messages (its path as given).
    pub name: String,
    pub code: Vec<u8>,
    pub url: UrlParts,
    pub request: RequestDefaults,
}

/// Makes a state and runs the script's top level in it.
///
/// The safe standard libraries (all of wrk's but `debug` and `ffi`, which
/// mlua only opens in an unsafe state).
pub(crate) fn new_state(source: &Source) -> Result<Lua, LoadError> {
    let runtime =
        |e: mlua::Error| LoadError::Runtime(format!("{}: {}", source.name, first_line(&e)));
    let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::default()).map_err(runtime)?;
    crate::output::install(&lua).map_err(runtime)?;
    crate::wrk_table::install(&lua, &source.url, &source.request).map_err(runtime)?;
    let chunk = lua
        .load(&source.code[..])
        .set_name(format!("@{}", source.name));
    let function = chunk
        .into_function()
        .map_err(|e| LoadError::Syntax(first_line(&e)))?;
    function
        .call::<()>(())
        .map_err(|e| LoadError::Runtime(first_line(&e)))?;
    Ok(lua)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(code: &str) -> Source {
        Source {
            name: "bad.lua".into(),
            code: code.as_bytes().to_vec(),
            url: UrlParts::parse("http://127.0.0.1:8080/").unwrap(),
            request: RequestDefaults::default(),
        }
    }

    #[test]
    fn syntax_errors_name_file_and_line_in_one_line() {
        let err = new_state(&source("x = 1\nfunction f(\n")).unwrap_err();
        let LoadError::Syntax(message) = &err else {
            panic!("{err:?}")
        };
        assert!(message.starts_with("bad.lua:3:"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn top_level_errors_name_file_and_line() {
        let err = new_state(&source("\n\nlocal x = nil + 1")).unwrap_err();
        let LoadError::Runtime(message) = &err else {
            panic!("{err:?}")
        };
        assert!(
            message.starts_with("bad.lua:3: attempt to perform arithmetic"),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn the_file_sees_the_wrk_table() {
        let lua = new_state(&source("port = wrk.port")).unwrap();
        assert_eq!(lua.globals().get::<String>("port").unwrap(), "8080");
    }
}
