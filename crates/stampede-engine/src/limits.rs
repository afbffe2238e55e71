//! Process limits a load generator runs into: open files. Raising the soft
//! limit to the hard one at start means `-c 10000` works without `ulimit -n`.

/// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the new soft limit.
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
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
        let raised = raise_nofile_limit().unwrap();
        assert!(raised >= 64);
        assert_eq!(raise_nofile_limit().unwrap(), raised);
    }
}
