#!/usr/bin/env bash
# What the open model costs the client when the server cannot keep up
# (issue 17): every connection is busy and the arrivals queue. A client that
# wakes once per arrival just to queue it burns a core on a stalled server;
# one that waits for a free connection does not. Compares two stampede
# binaries (e.g. before and after a change) on each event loop.
#
# Method: `stampede serve` (1 thread) pinned to core 0; each client pinned to
# core 1 with one thread: `stampede run -t 1 -c 10 -r 20000 -d 3s` against
# /delay/10 (10 connections × 100 answers/s = 1,000/s served of 20,000/s
# intended); CPU = user + sys (wait4 rusage through /usr/bin/time), voluntary
# context switches (%w) = the client's wake-ups; binaries and loops
# interleaved in each round; medians. The requests sent, those never sent
# and the p99 lag come from each run's --json, to show both binaries kept the
# same schedule.
# Usage
#   bench/open-saturated.sh --base /path/to/old/stampede [--new PATH] [--rounds N]
# Everything is bounded: each run lasts 3 s, only 127.0.0.1 is used, the
# target is stopped by a trap on exit. Writes bench/results/DATE-open-saturated.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NEW="$ROOT/target/release/stampede"
BASE=""
ROUNDS=3
while [ $# -gt 0 ]; do
    case $1 in
        --base) BASE=${2-}; shift 2 ;;
        --new) NEW=${2-}; shift 2 ;;
        --rounds) ROUNDS=${2-}; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "open-saturated.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$BASE" ] || { echo "open-saturated.sh: --base PATH is required (the binary to compare against)" >&2; exit 2; }
for bin in "$BASE" "$NEW"; do
    [ -x "$bin" ] || { echo "open-saturated.sh: not an executable: $bin" >&2; exit 2; }
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "open-saturated.sh: --rounds takes a positive whole number" >&2; exit 2; }
for tool in jq taskset /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "open-saturated.sh: $tool is missing" >&2; exit 2; }
done

TMP=$(mktemp -d)
cp "$BASE" "$TMP/base"; cp "$NEW" "$TMP/new"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c 0 "$TMP/new" serve -p "$PORT" -t 1 > "$TMP/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
URL="http://127.0.0.1:$PORT/delay/10"
LOOPS=(tokio uring epoll)

ROWS="$TMP/rows.tsv"; : > "$ROWS"
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for bin in base new; do
        for io in "${LOOPS[@]}"; do
            STAMPEDE_IO=$io /usr/bin/time -f "%U %S %w" -o "$TMP/time" \
                taskset -c 1 "$TMP/$bin" run -t 1 -c 10 -r 20000 -d 3s -q --json "$TMP/out.json" "$URL" \
                > /dev/null 2>&1 || true
            read -r user sys wakes < <(tail -1 "$TMP/time")
            read -r loop sent not_sent lag < <(jq -r '[.plan.io, .requests.sent, .schedule.not_sent, .schedule.lag_p99_us] | @tsv' "$TMP/out.json")
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$bin" "$io" "$loop" "$user" "$sys" "$wakes" "$sent" "$not_sent" "$lag" >> "$ROWS"
            echo "[open-saturated] round $round $bin $io ($loop): cpu ${user}+${sys} s, $wakes wakes, $sent sent" >&2
        done
    done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -F'\t' -v b="$1" -v io="$2" "\$2 == b && \$3 == io { print $3 }" "$ROWS" | median; }
DATE=$(date -u +%F)
OUT="$ROOT/bench/results/$DATE-open-saturated.md"
{
    echo "# The open model at a server that cannot keep up: client CPU and wake-ups ($DATE)"
    echo
    echo "- machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r)"
    echo "- started $START; $ROUNDS interleaved round(s) of 3 s per binary and event loop; medians"
    echo "- target: \`stampede serve -t 1\` on core 0; client on core 1: \`STAMPEDE_IO=LOOP stampede run -t 1 -c 10 -r 20000 -d 3s URL/delay/10\` (about 1,000/s can be served)"
    echo "- base: $(sha256sum "$BASE" | cut -c1-12) ($BASE); new: $(sha256sum "$NEW" | cut -c1-12) ($NEW)"
    echo
    echo "| loop | binary | CPU s (user + sys) | µs per request sent | wake-ups (voluntary ctx switches) | sent | not sent | p99 lag ms |"
    echo "|---|---|---|---|---|---|---|---|"
    for io in "${LOOPS[@]}"; do
        for bin in base new; do
            awk -v io="$io" -v b="$bin" -v u="$(col "$bin" "$io" '$5')" -v s="$(col "$bin" "$io" '$6')" \
                -v w="$(col "$bin" "$io" '$7')" -v n="$(col "$bin" "$io" '$8')" -v ns="$(col "$bin" "$io" '$9')" -v l="$(col "$bin" "$io" '$10')" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.0f | %.0f | %.0f | %.0f | %.0f |\n", io, b, u + s, u, s, 1e6 * (u + s) / n, w, n, ns, l / 1000 }'
        done
    done
    echo
    echo "<details><summary>Every run</summary>"
    echo
    echo "| round | binary | STAMPEDE_IO | plan.io | user s | sys s | wake-ups | sent | not sent | p99 lag µs |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s |\n", $1 " | " $2 " | " $3 " | " $4 " | " $5 " | " $6 " | " $7 " | " $8 " | " $9 " | " $10 }' "$ROWS"
    echo
    echo "</details>"
} > "$OUT"
cat "$OUT"
echo "[open-saturated] wrote $OUT" >&2
