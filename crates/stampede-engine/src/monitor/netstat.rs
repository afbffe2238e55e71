//! The kernel's accept-queue counters, from /proc/net/netstat (TcpExt
//! `ListenOverflows`, `ListenDrops`): machine-wide (this network namespace),
//! cumulative. Read around a load, their difference says whether a server's
//! listen backlog overflowed.

/// `ListenOverflows` and `ListenDrops` of TcpExt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListenQueue {
    /// Connections refused because an accept queue was full.
    pub overflows: u64,
    /// Connections dropped at listen for any reason (overflows included).
    pub drops: u64,
}

/// Reads them; `None` where /proc/net/netstat is missing or unreadable.
pub fn read_listen_queue() -> Option<ListenQueue> {
    parse(&std::fs::read_to_string("/proc/net/netstat").ok()?)
}

/// /proc/net/netstat holds pairs of lines: `TcpExt: NAME…` then
/// `TcpExt: VALUE…` in the same order.
fn parse(text: &str) -> Option<ListenQueue> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let value = |name: &str| -> Option<u64> {
        let i = names.iter().position(|n| *n == name)?;
        values.get(i)?.parse().ok()
    };
    Some(ListenQueue {
        overflows: value("ListenOverflows")?,
        drops: value("ListenDrops")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_counters_by_name() {
        let text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPHPHits\n\
                    TcpExt: 0 12345 12346 7\n\
                    IpExt: InNoRoutes\nIpExt: 0\n";
        assert_eq!(
            parse(text),
            Some(ListenQueue {
                overflows: 12345,
                drops: 12346
            })
        );
        assert_eq!(parse("IpExt: A\nIpExt: 1\n"), None);
        assert!(
            read_listen_queue().is_some(),
            "this Linux has /proc/net/netstat"
        );
    }
}
