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
        return text.to_string();
    };
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
}
