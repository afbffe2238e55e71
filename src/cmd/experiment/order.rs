//! In which order the runs go: `interleaved` (A B C A B C …, so that a
//! noisy host's drift spreads over every variant), `grouped` (A A B B C C)
//! or `random` (each round a shuffle of the variants, from `--seed`).

/// `--order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderKind {
    Interleaved,
    Grouped,
    Random,
}

impl OrderKind {
    pub fn name(self) -> &'static str {
        match self {
            OrderKind::Interleaved => "interleaved",
            OrderKind::Grouped => "grouped",
            OrderKind::Random => "random",
        }
    }
}

/// The variant index of each run, in the order they run, with the round
/// each is of.
pub fn run_order(
    kind: OrderKind,
    variants: usize,
    rounds: usize,
    seed: u64,
) -> Vec<(usize, usize)> {
    match kind {
        OrderKind::Grouped => (0..variants)
            .flat_map(|v| (0..rounds).map(move |r| (v, r)))
            .collect(),
        OrderKind::Interleaved => (0..rounds)
            .flat_map(|r| (0..variants).map(move |v| (v, r)))
            .collect(),
        OrderKind::Random => {
            let mut state = seed;
            (0..rounds)
                .flat_map(|r| {
                    let mut round: Vec<usize> = (0..variants).collect();
                    // Fisher–Yates with splitmix64: the same seed, the same order.
                    for i in (1..round.len()).rev() {
                        let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
                        round.swap(i, j);
                    }
                    round.into_iter().map(move |v| (v, r)).collect::<Vec<_>>()
                })
                .collect()
        }
    }
}

/// splitmix64 (Steele, Lea, Flood 2014): a small seeded generator.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variants_only(order: Vec<(usize, usize)>) -> Vec<usize> {
        order.into_iter().map(|(v, _)| v).collect()
    }

    #[test]
    fn interleaved_and_grouped() {
        assert_eq!(
            variants_only(run_order(OrderKind::Interleaved, 3, 2, 0)),
            [0, 1, 2, 0, 1, 2]
        );
        assert_eq!(
            variants_only(run_order(OrderKind::Grouped, 3, 2, 0)),
            [0, 0, 1, 1, 2, 2]
        );
        assert_eq!(run_order(OrderKind::Grouped, 2, 2, 0)[1], (0, 1));
    }

    #[test]
    fn random_is_a_shuffle_per_round_repeatable_by_seed() {
        let a = run_order(OrderKind::Random, 4, 5, 7);
        assert_eq!(a, run_order(OrderKind::Random, 4, 5, 7));
        assert_ne!(
            variants_only(a.clone()),
            variants_only(run_order(OrderKind::Random, 4, 5, 8))
        );
        for round in a.chunks(4) {
            let mut seen: Vec<usize> = round.iter().map(|(v, _)| *v).collect();
            seen.sort();
            assert_eq!(seen, [0, 1, 2, 3]);
        }
    }
}
