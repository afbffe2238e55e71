#!/usr/bin/env bash
# Measurement overhead at low load: p50 latency at one connection, stampede
# next to wrk, against the built-in target. Issue 11: stampede's p50 within 10%
# of wrk's (the engine must not inflate what it records).
#
# Method: `stampede serve --threads 1` on core 0; each client on core 1 with one
# thread and one keep-alive connection for DURATION; rounds interleaved (wrk,
# stampede, wrk, ...); p50 from wrk --latency and from stampede's result file
# (latency_us.p50); ratio = median(stampede p50) / median(wrk p50).
# Usage
#   bench/latency-c1.sh                   # 5 rounds x 5 s
#   bench/latency-c1.sh --rounds 3 --duration 3
#   bench/latency-c1.sh --io uring        # stampede's event loop (default: auto)
# Writes bench/results/DATE-latency-c1.md (or --out PATH). Loopback only; every
# run is bounded by its duration.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=5
DURATION=5
OUT=""
IO=auto
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --out) OUT=$2; shift ;;
        --io) IO=$2; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "latency-c1: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
command -v wrk >/dev/null || { echo "latency-c1: needs wrk (apt-get install wrk)" >&2; exit 2; }
command -v jq >/dev/null || { echo "latency-c1: needs jq (apt-get install jq)" >&2; exit 2; }
STAMPEDE=${STAMPEDE:-$ROOT/target/release/stampede}
[ -x "$STAMPEDE" ] || (cd "$ROOT" && cargo build --release --quiet)
DATE=$(date -u +%Y-%m-%d)
OUT=${OUT:-$ROOT/bench/results/$DATE-latency-c1.md}
TMP=$(mktemp -d)
BIN=$TMP/stampede
cp "$STAMPEDE" "$BIN"
PORT=18500
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
taskset -c 0 "$BIN" serve --port $PORT --threads 1 >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
URL="http://127.0.0.1:$PORT/"
for _ in $(seq 50); do curl -fsS "$URL" -o /dev/null 2>/dev/null && break; sleep 0.1; done

# wrk prints "50%  123.45us" (or ms); convert to microseconds.
wrk_p50() {
    awk '$1 == "50%" { v = $2; u = 1;
        if (v ~ /us$/) { sub(/us$/, "", v) } else if (v ~ /ms$/) { sub(/ms$/, "", v); u = 1000 } else if (v ~ /s$/) { sub(/s$/, "", v); u = 1e6 }
        printf "%.1f\n", v * u }' "$1"
}
ROWS=$TMP/rows
: > "$ROWS"
for round in $(seq "$ROUNDS"); do
    taskset -c 1 wrk -t1 -c1 -d"${DURATION}s" --latency "$URL" > "$TMP/wrk.out"
    w=$(wrk_p50 "$TMP/wrk.out")
    taskset -c 1 "$BIN" "$URL" -t 1 -c 1 -d "${DURATION}s" -q --io "$IO" --json "$TMP/s.json" > /dev/null
    s=$(jq '.latency_us.p50' "$TMP/s.json")
    echo "$round $w $s" >> "$ROWS"
    echo "[latency-c1] round $round: wrk p50 ${w} us, stampede p50 ${s} us" >&2
done
median() { sort -n | awk '{a[NR] = $1} END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mw=$(awk '{print $2}' "$ROWS" | median)
ms=$(awk '{print $3}' "$ROWS" | median)
{
    echo "# p50 latency at one connection: stampede vs wrk ($DATE)"
    echo
    echo "- machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), kernel $(uname -r)"
    echo "- target: \`stampede serve --threads 1\` on core 0; clients on core 1, 1 thread, 1 connection, ${DURATION} s, $ROUNDS interleaved rounds"
    echo "- stampede $("$BIN" --version | awk '{print $2}') ($(git -C "$ROOT" rev-parse --short HEAD), --io $IO); $(wrk --version 2>&1 | head -1 | awk '{print $1, $2}')"
    echo
    echo "| round | wrk p50 µs | stampede p50 µs | ratio |"
    echo "|---|---|---|---|"
    awk '{printf "| %d | %.1f | %.1f | %.2f |\n", $1, $2, $3, $3 / $2}' "$ROWS"
    echo
    echo "Median p50: wrk $mw µs, stampede $ms µs: ratio **$(awk -v a="$ms" -v b="$mw" 'BEGIN {printf "%.2f", a / b}')** (goal: within 10%)."
} > "$OUT"
cat "$OUT"
