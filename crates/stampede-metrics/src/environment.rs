//! The machine a result was measured on: enough to audit a number later
//! (which kernel, how many CPUs, which limits). Read once per run from /proc.

use serde::{Deserialize, Serialize};

/// Facts about the load-generating machine. Unknown values are empty / zero.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// The host name (`/proc/sys/kernel/hostname`).
    pub hostname: String,
    /// The operating system, as Rust names it (`linux`).
    pub os: String,
    /// The kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
    /// The CPU's model name.
    pub cpu_model: String,
    /// CPUs available to this process.
    pub cpus: usize,
    /// Soft limit on open files, after stampede raised it.
    pub rlimit_nofile: u64,
    /// Hard limit on open files.
    pub rlimit_nofile_max: u64,
    /// Local port range for outgoing connections, e.g. "32768 60999".
    pub ip_local_port_range: String,
    /// The listen backlog cap (`net.core.somaxconn`).
    pub somaxconn: String,
    /// Reuse of TIME-WAIT ports for new connections (`net.ipv4.tcp_tw_reuse`).
    pub tcp_tw_reuse: String,
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        })
        .unwrap_or_default()
}

fn nofile_limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own and reads nothing else.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    if rc == 0 {
        (limit.rlim_cur, limit.rlim_max)
    } else {
        (0, 0)
    }
}

impl Environment {
    /// Reads the current machine's facts.
    pub fn capture() -> Environment {
        let (rlimit_nofile, rlimit_nofile_max) = nofile_limits();
        Environment {
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            os: std::env::consts::OS.to_string(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            cpu_model: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rlimit_nofile,
            rlimit_nofile_max,
            ip_local_port_range: read_trimmed("/proc/sys/net/ipv4/ip_local_port_range"),
            somaxconn: read_trimmed("/proc/sys/net/core/somaxconn"),
            tcp_tw_reuse: read_trimmed("/proc/sys/net/ipv4/tcp_tw_reuse"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_this_machine() {
        let env = Environment::capture();
        assert!(env.cpus >= 1);
        assert_eq!(env.os, std::env::consts::OS);
        if cfg!(target_os = "linux") {
            assert!(!env.kernel.is_empty());
            assert!(env.rlimit_nofile > 0);
        }
    }
}
