//! The one rule for tests that need something from outside the workspace (curl,
//! Chromium, python3, tmux, ab, `ip netns`, Prometheus, kubernetes-validate, the
//! kernel's io_uring): when it is missing, the test skips with a notice that is
//! visible under `cargo test`, unless `STAMPEDE_REQUIRE_TOOLS=1` is set (.ci/run
//! sets it), in which case the test fails and says what to install. A test that
//! silently passes without its tool would hide a broken CI install.
//!
//! One exception, for what no install can add: io_uring, which a container's
//! seccomp filter may refuse (Docker's default does). There a test skips even
//! under `STAMPEDE_REQUIRE_TOOLS=1` only when `STAMPEDE_NO_IO_URING=1` says
//! that CI's own probe found none on this machine. Every skip also appends one
//! line to the file named by `STAMPEDE_SKIP_LOG`, when set, so that CI can say
//! at its end how many tests skipped a part.
//!
//! Owns the lookup and the skip-or-fail decision; not what the tests do with
//! the tool (event_loops.rs probes io_uring and asks this rule).

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;

/// The environment variable that turns a missing tool from a skip into a failure.
pub const REQUIRE_TOOLS: &str = "STAMPEDE_REQUIRE_TOOLS";

/// The environment variable naming a file that every skip appends one line
/// to (`<test binary> <test>: <what was missing>`); .ci/run counts them.
pub const SKIP_LOG: &str = "STAMPEDE_SKIP_LOG";

/// A tool the tests know: the names it goes by on PATH and how to get it.
struct Known {
    tool: &'static str,
    names: &'static [&'static str],
    install: &'static str,
}

const KNOWN: &[Known] = &[
    Known {
        tool: "curl",
        names: &["curl"],
        install: "apt-get install -y curl",
    },
    Known {
        tool: "chromium",
        names: &["chromium", "chromium-browser", "google-chrome", "chrome"],
        install: "apt-get install -y chromium",
    },
    Known {
        tool: "openssl",
        names: &["openssl"],
        install: "apt-get install -y openssl",
    },
    Known {
        tool: "nginx",
        names: &["nginx"],
        install: "apt-get install -y nginx",
    },
    Known {
        tool: "nghttpd",
        names: &["nghttpd"],
        install: "apt-get install -y nghttp2-server",
    },
    Known {
        tool: "tmux",
        names: &["tmux"],
        install: "apt-get install -y tmux",
    },
    Known {
        tool: "ip",
        names: &["ip"],
        install: "apt-get install -y iproute2",
    },
    Known {
        tool: "tc",
        names: &["tc"],
        install: "apt-get install -y iproute2",
    },
    Known {
        tool: "python3",
        names: &["python3"],
        install: "apt-get install -y python3",
    },
    Known {
        tool: "prometheus",
        names: &["prometheus"],
        install: "apt-get install -y prometheus",
    },
    Known {
        tool: "wrk",
        names: &["wrk"],
        install: "apt-get install -y wrk",
    },
    Known {
        tool: "ab",
        names: &["ab"],
        install: "apt-get install -y apache2-utils",
    },
    Known {
        tool: "timeout",
        names: &["timeout"],
        install: "apt-get install -y coreutils",
    },
    Known {
        tool: "setpriv",
        names: &["setpriv"],
        install: "apt-get install -y util-linux",
    },
    Known {
        tool: "kubernetes-validate",
        names: &["kubernetes-validate"],
        install: "pip install kubernetes-validate",
    },
];

/// True when `STAMPEDE_REQUIRE_TOOLS` asks for missing tools to fail the tests.
pub(crate) fn tools_required() -> bool {
    is_set(REQUIRE_TOOLS)
}

/// True when the environment variable `name` is set, neither empty nor `0`.
pub(crate) fn is_set(name: &str) -> bool {
    required(std::env::var_os(name).as_deref())
}

/// Set and neither empty nor `0` means required.
fn required(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// The path of `tool` (one of `KNOWN`'s: curl, chromium, openssl, nginx, tmux, …)
/// on PATH. When it is not there: panics under `STAMPEDE_REQUIRE_TOOLS=1`,
/// otherwise prints a skip notice and returns `None` (the caller returns).
pub fn tool_or_skip(tool: &str) -> Option<PathBuf> {
    let known = KNOWN
        .iter()
        .find(|k| k.tool == tool)
        .unwrap_or_else(|| panic!("testkit knows no tool {tool:?}: add it to tools::KNOWN"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = find_in(known.names, &path);
    if found.is_none() {
        skip_or_fail(
            &format!("{tool} is not on PATH"),
            &format!("install it: {}", known.install),
        );
    }
    found
}

/// The same rule for a requirement that is not a program on PATH (root, a
/// feature of a tool, an IPv6 loopback): panics under
/// `STAMPEDE_REQUIRE_TOOLS=1`, otherwise prints `SKIPPED <test>: <missing>`
/// and returns, and the caller skips.
pub fn skip_or_fail(missing: &str, remedy: &str) {
    skip_or_fail_unless_declared(missing, remedy, None);
}

/// The rule itself. `declared_absent` names the environment variable by which
/// CI says that this machine lacks the thing (`STAMPEDE_NO_IO_URING`): when it
/// is set, a missing thing skips even under `STAMPEDE_REQUIRE_TOOLS=1`.
pub(crate) fn skip_or_fail_unless_declared(
    missing: &str,
    remedy: &str,
    declared_absent: Option<&str>,
) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let declared = declared_absent.filter(|name| is_set(name));
    if tools_required() && declared.is_none() {
        let excuse = declared_absent
            .map(|name| format!(" (or set {name}=1 where this machine has none)"))
            .unwrap_or_default();
        panic!("{test}: {missing} and {REQUIRE_TOOLS}=1 requires it; {remedy}{excuse}");
    }
    // Straight to the stderr handle, not eprintln!: libtest captures the
    // print macros of a passing test, and a skip nobody sees is the problem
    // this module exists to solve.
    let because = match declared {
        Some(name) => format!("{name}=1 says this machine has none"),
        None => format!("{remedy} (or set {REQUIRE_TOOLS}=1 to make this a failure)"),
    };
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {missing}; {because}");
    log_skip(&test, missing);
}

/// Appends `<test binary> <test>: <missing>` to the file named by
/// `STAMPEDE_SKIP_LOG`, if any. One short `O_APPEND` write per line, so the
/// lines of test binaries running at once do not interleave.
fn log_skip(test: &str, missing: &str) {
    let Some(file) = std::env::var_os(SKIP_LOG).filter(|f| !f.is_empty()) else {
        return;
    };
    let line = format!("{} {test}: {missing}\n", test_binary());
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut log| log.write_all(line.as_bytes()));
    if let Err(error) = written {
        panic!("{SKIP_LOG}={}: {error}", file.to_string_lossy());
    }
}

/// The test binary's name without Cargo's hash (`run_counts`, not
/// `run_counts-0123abcd`).
fn test_binary() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let stem = exe.file_stem().unwrap_or_default().to_string_lossy();
    without_hash(&stem).to_string()
}

/// `run_counts-0123456789abcdef` → `run_counts`: Cargo's tail is 16 hex
/// digits; a name without one stays as it is.
fn without_hash(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    }
}

/// The first of `names` that is an executable file in one of `path`'s directories.
fn find_in(names: &[&str], path: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Returns from the calling test (skips it) when `tool` is missing, or fails
/// it under `STAMPEDE_REQUIRE_TOOLS=1`; evaluates to the tool's path.
///
/// ```no_run
/// let curl = stampede_testkit::require_tool!("curl");
/// std::process::Command::new(curl).arg("--version").status().unwrap();
/// ```
#[macro_export]
macro_rules! require_tool {
    ($tool:expr) => {
        match $crate::tool_or_skip($tool) {
            Some(path) => path,
            None => return,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_set_non_zero_value_requires() {
        assert!(!required(None));
        assert!(!required(Some(OsStr::new(""))));
        assert!(!required(Some(OsStr::new("0"))));
        assert!(required(Some(OsStr::new("1"))));
        assert!(required(Some(OsStr::new("yes"))));
    }

    #[test]
    fn finds_executables_only_in_path_order() {
        let dir = crate::temp_dir("tools-path");
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        // Not executable: not a tool.
        std::fs::write(a.join("chromium"), "").unwrap();
        std::fs::write(b.join("chromium"), "").unwrap();
        std::fs::set_permissions(b.join("chromium"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(find_in(&["chromium"], &path), Some(b.join("chromium")));
        assert_eq!(find_in(&["curl"], &path), None);
        assert_eq!(find_in(&["curl"], OsStr::new("")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_skip_log_names_the_test_binary_without_its_hash() {
        assert_eq!(without_hash("run_counts-0123456789abcdef"), "run_counts");
        assert_eq!(without_hash("a-b-00000000ffffffff"), "a-b");
        assert_eq!(without_hash("stampede_testkit"), "stampede_testkit");
        assert_eq!(without_hash("dead-beef"), "dead-beef");
        assert_eq!(without_hash("odd-"), "odd-");
    }

    #[test]
    fn every_known_tool_says_how_to_install_it() {
        for known in KNOWN {
            assert!(!known.names.is_empty() && !known.install.is_empty());
        }
    }
}
