#!/usr/bin/env bash
# Coverage-guided fuzzing of the two parsers that face untrusted bytes:
#   response — the client's response parser and body framer (stampede-engine)
#   request  — the built-in target's request parser and chunked decoder (stampede-target)
#   h2_client — the HTTP/2 client codec fed server bytes (stampede-h2; its corpus is
#               replayed by `cargo test -p stampede-h2 fuzzing::`)
# Needs a nightly toolchain and cargo-fuzz; without them it says so and exits 0
# (the corpus is still replayed by `cargo test --test reliability fuzz_replay::` on stable).
# Usage: bench/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! rustup toolchain list 2>/dev/null | grep -q nightly; then
  echo "fuzz: skipped: no nightly toolchain (cargo fuzz needs one); corpus replay runs in cargo test"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
# New inputs go to a scratch corpus (the first directory libFuzzer is given);
# the committed seeds in fuzz/corpus are only read. Keep an interesting find
# by copying it into fuzz/corpus/TARGET, where the stable replay test sees it.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in response request h2_client; do
  echo "fuzz: $target for ${seconds}s"
  mkdir -p "$scratch/$target"
  # -max_total_time bounds the run.
  (cd fuzz && cargo +nightly fuzz run "$target" "$scratch/$target" "corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048)
done
