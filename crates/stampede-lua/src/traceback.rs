//! A Lua error as the user reads it: the message, then the script's own
//! frames of the traceback, each indented two spaces under `stack
//! traceback:`. LuaJIT's traceback also lists C functions (`[C]: in
//! function 'error'`, the message handler's `[C]: in ?`), stampede's own
//! Lua (`stampede hooks`) and `(tail call)` markers: none of them is the
//! script's, so they are left out; with no frame left, no traceback.

/// The chunk names of stampede's own Lua (worker.rs), as frames show them.
const INTERNAL: [&str; 5] = [
    "stampede hooks",
    "stampede reads",
    "stampede thread",
    "wrk.format",
    "wrk.lookup",
];

/// `text` (a message, maybe followed by `stack traceback:` and frames)
/// with only the script's frames, indented consistently.
pub(crate) fn tidy(text: &str) -> String {
    let Some((message, frames)) = text.split_once("\nstack traceback:") else {
        return plain(text);
    };
    let message = plain(message);
    // An error from stampede's Rust code during the run is mlua's text
    // with its own traceback, and the message handler appends the whole
    // stack's after it: the last one is the complete one.
    let frames = frames
        .rsplit_once("stack traceback:")
        .map_or(frames, |(_, last)| last);
    let own: Vec<&str> = frames
        .lines()
        .map(str::trim)
        .filter(|frame| !frame.is_empty() && is_the_scripts(frame))
        .collect();
    if own.is_empty() {
        return message.to_string();
    }
    format!("{message}\nstack traceback:\n  {}", own.join("\n  "))
}

/// A message without what is not the script's: mlua's `runtime error: `
/// (an error from stampede's Rust code) and the position of stampede's own
/// Lua where an error's level lands there (`stampede hooks:11: ` when the
/// script tail-called the function that raised it).
fn plain(message: &str) -> String {
    let mut message = message.replace("runtime error: ", "");
    for name in INTERNAL {
        while let Some(at) = message.find(&format!("{name}:")) {
            let rest = &message[at + name.len() + 1..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || !rest[digits..].starts_with(": ") {
                break;
            }
            message.replace_range(at..at + name.len() + 1 + digits + 2, "");
        }
    }
    message
}

fn is_the_scripts(frame: &str) -> bool {
    !(frame.starts_with("[C]")
        || frame.starts_with("(tail call)")
        || frame.starts_with("[string \"stampede")
        // mlua's own Lua: the userdata `__newindex` that calls ours.
        || frame.starts_with("__mlua")
        || INTERNAL.iter().any(|name| frame.starts_with(name)))
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn only_the_scripts_frames_stay_indented_two_spaces() {
        let raw = "s.lua: request() failed: s.lua:2: boom\nstack traceback:\n\t[C]: in ?\n\t[C]: in function 'error'\n\ts.lua:2: in local 'build'\n\t(tail call): ?\n\tstampede hooks:11: in function <stampede hooks:7>\n\ts.lua:8: in function 'request'";
        assert_eq!(
            tidy(raw),
            "s.lua: request() failed: s.lua:2: boom\nstack traceback:\n  s.lua:2: in local 'build'\n  s.lua:8: in function 'request'"
        );
    }

    #[test]
    fn no_frame_of_the_script_no_traceback() {
        let raw = "s.lua: boom\nstack traceback:\n\t[C]: in ?\n\tstampede hooks:11: in function <stampede hooks:7>";
        assert_eq!(tidy(raw), "s.lua: boom");
        assert_eq!(tidy("plain"), "plain");
    }

    #[test]
    fn errors_from_rust_and_internal_positions_read_as_the_scripts() {
        let raw = "s.lua: request() failed: runtime error: cannot transfer 'function' to thread\nstack traceback:\n\t[C]: in ?\n\ts.lua:2: in function 'request'\nstack traceback:\n\t[C]: in ?\n\ts.lua:2: in function 'request'";
        assert_eq!(
            tidy(raw),
            "s.lua: request() failed: cannot transfer 'function' to thread\nstack traceback:\n  s.lua:2: in function 'request'"
        );
        assert_eq!(
            tidy("s.lua: request() failed: stampede hooks:11: wrk.format: headers must be a table, got number"),
            "s.lua: request() failed: wrk.format: headers must be a table, got number"
        );
        assert_eq!(tidy("stampede hooks: x"), "stampede hooks: x");
    }
}
