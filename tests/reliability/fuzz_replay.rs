//! The fuzz targets' invariants on stable Rust: every file of the corpus in
//! fuzz/corpus, then deterministic mutations of it (byte flips, truncations,
//! splices, random bytes). bench/fuzz.sh runs the real coverage-guided fuzzers
//! (cargo fuzz, nightly) for a bounded time.

use std::path::Path;

fn corpus(name: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name);
    let mut inputs: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 5, "corpus {name} is too small");
    inputs
}

/// A small deterministic generator (xorshift): the same inputs every run.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn mutate(&mut self, seeds: &[Vec<u8>]) -> Vec<u8> {
        let mut data = seeds[self.below(seeds.len())].clone();
        for _ in 0..=self.below(4) {
            match self.below(5) {
                0 if !data.is_empty() => {
                    let at = self.below(data.len());
                    data[at] = self.next() as u8;
                }
                1 => data.truncate(self.below(data.len() + 1)),
                2 => {
                    let other = &seeds[self.below(seeds.len())];
                    let at = self.below(data.len() + 1);
                    let from = self.below(other.len() + 1);
                    data.splice(at..at, other[from..].iter().copied());
                }
                3 => {
                    let at = self.below(data.len() + 1);
                    let special = [
                        b"\r\n".as_slice(),
                        b"0\r\n",
                        b":",
                        b" ",
                        b"chunked",
                        b"\0",
                        b"ffffffff",
                    ];
                    let insert = special[self.below(special.len())];
                    data.splice(at..at, insert.iter().copied());
                }
                _ => data.extend((0..self.below(16)).map(|_| self.next() as u8)),
            }
        }
        data
    }
}

#[test]
fn response_parser_corpus_and_mutations() {
    let seeds = corpus("response");
    for input in &seeds {
        stampede_engine::http1::check_response_parser(input);
    }
    let mut mutator = Mutator(0x5eed_0001);
    for _ in 0..20_000 {
        stampede_engine::http1::check_response_parser(&mutator.mutate(&seeds));
    }
}

#[test]
fn request_parser_corpus_and_mutations() {
    let seeds = corpus("request");
    for input in &seeds {
        stampede_target::fuzzing::check_request_parser(input);
    }
    let mut mutator = Mutator(0x5eed_0002);
    for _ in 0..20_000 {
        stampede_target::fuzzing::check_request_parser(&mutator.mutate(&seeds));
    }
}
