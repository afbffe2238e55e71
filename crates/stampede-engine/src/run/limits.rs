//! Process limits a load generator runs into: open files. Raising the soft
//! limit to the hard one at start means `-c 10000` works without `ulimit -n`.

/// Raises RLIMIT_NOFILE's soft limit to its hard limit, and when `wanted`
/// is above the hard limit, tries to raise that too (root may, up to
/// fs.nr_open; for others it is refused and the hard limit stays). Returns
/// the new soft limit.
pub fn raise_nofile_limit(wanted: u64) -> std::io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if wanted > limit.rlim_max {
            let wanted = wanted.min(nr_open());
            let raised = libc::rlimit {
                rlim_cur: wanted,
                rlim_max: wanted,
            };
            if wanted > limit.rlim_max && libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return Ok(wanted);
            }
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(limit.rlim_cur)
}

/// The kernel's ceiling for any process's open files (fs.nr_open).
fn nr_open() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(1 << 20)
}

/// File descriptors a plan needs beyond its connections: stdio, the runtime's
/// epoll and wake-up fds per worker, result files.
pub fn fds_needed(connections: usize, threads: usize) -> u64 {
    connections as u64 + 4 * threads as u64 + 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_never_lowers_the_limit() {
        let raised = raise_nofile_limit(64).unwrap();
        assert!(raised >= 64);
        assert_eq!(raise_nofile_limit(64).unwrap(), raised);
    }
}
