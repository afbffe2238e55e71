//! Splitting a whole number of things (connections, requests, requests per
//! second) into shares for workers or agents: one rule, used by the engine's
//! workers, the closed model's connection schedule and `--agent I/N`, so that
//! shares always add up to the total and never round up.

/// Share `index` (from 0) of `total` split into `parts`: shares differ by at
/// most one, the remainder going one each to the first shares, so they sum
/// exactly to `total` (101 over 2 is 51 + 50). `parts` of 0 counts as 1.
pub fn share_of(total: u64, index: usize, parts: usize) -> u64 {
    let parts = parts.max(1) as u64;
    let index = index as u64;
    total / parts + u64::from(index < total % parts)
}

/// Every share of `total` split into `parts`, in order (see [`share_of`]).
pub fn shares(total: u64, parts: usize) -> impl Iterator<Item = u64> {
    (0..parts.max(1)).map(move |index| share_of(total, index, parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_differ_by_at_most_one_and_sum_exactly() {
        assert_eq!(shares(101, 2).collect::<Vec<_>>(), vec![51, 50]);
        assert_eq!(shares(10, 3).collect::<Vec<_>>(), vec![4, 3, 3]);
        assert_eq!(shares(2, 4).collect::<Vec<_>>(), vec![1, 1, 0, 0]);
        for total in 0..50u64 {
            for parts in 1..9 {
                let all: Vec<u64> = shares(total, parts).collect();
                assert_eq!(all.iter().sum::<u64>(), total, "{total} over {parts}");
                let (min, max) = (all.iter().min().unwrap(), all.iter().max().unwrap());
                assert!(max - min <= 1, "{total} over {parts}: {all:?}");
            }
        }
        assert_eq!(share_of(7, 0, 0), 7);
    }
}
