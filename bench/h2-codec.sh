#!/usr/bin/env bash
# Instructions per request of the HTTP/2 client side: stampede-h2 (the
# sans-I/O codec) against the `h2` crate's client (what the engine runs
# today), both on one connection to an in-memory server that answers every
# GET with canned frames (bench/h2-codec/src/main.rs, a package outside the workspace). No
# socket and no syscall: only the client's HTTP/2 work (plus tokio's for
# `h2`). Instruction counts do not depend on the machine's load.
#
# Method
#   - release build of bench/h2-codec (thin LTO, as the workspace's release);
#   - valgrind --tool=callgrind for N1 and N2 sequential requests; the
#     difference divided by N2 - N1 is the cost of one request (encode the
#     request, decode a 200 response with a 13-octet body), without the
#     connection's setup.
# Usage
#   bench/h2-codec.sh              # N1=1000, N2=11000
#   bench/h2-codec.sh 100 2100     # other counts
# Prints one line per client. Needs valgrind.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N1=${1:-1000}
N2=${2:-11000}
command -v valgrind >/dev/null || { echo "h2-codec: valgrind is not on PATH (apt-get install -y valgrind)" >&2; exit 2; }
cd "$ROOT"
cargo build --release -q --manifest-path bench/h2-codec/Cargo.toml --target-dir "$ROOT/target/h2-codec"
bin="$ROOT/target/h2-codec/release/h2-codec-cost"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

instructions() { # client count -> total instructions
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" "$1" "$2" >/dev/null 2>"$work/log"
  awk '/^summary:/ { print $2 }' "$work/cg.out"
}

for client in codec h2; do
  a=$(instructions "$client" "$N1")
  b=$(instructions "$client" "$N2")
  awk -v c="$client" -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" \
    'BEGIN { printf "%-6s %8.0f instructions per request (%d requests: %d, %d: %d)\n", c, (b - a) / (n2 - n1), n1, a, n2, b }'
done
