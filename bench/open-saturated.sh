#!/usr/bin/env bash
# What the open model costs the client when the server cannot keep up
# (issue 17): every connection is busy and the arrivals queue. A client that
# wakes once per arrival just to queue it burns a core on a stalled server;
# one that waits for a free connection does not. Compares two stampede
# binaries (e.g. before and after a change) on each event loop.
#
# Method: `stampede serve` (1 thread, the new binary) pinned to core 0; each
# client pinned to core 1 with one thread: `stampede run -t 1 -c 10 -r 20000
# -d 3s` against /delay/10 (10 connections × 100 answers/s = 1,000/s served
# of 20,000/s intended); CPU = user + sys (wait4 rusage through
# /usr/bin/time), voluntary context switches (%w) = the client's wake-ups;
# binaries and loops interleaved in each round; medians. The requests sent,
# those never sent and the p99 lag come from each run's --json, to show both
# binaries kept the same schedule.
# Usage
#   bench/open-saturated.sh --base /path/to/old/stampede [--stampede NEW] [--rounds N] [--out PATH]
# (--stampede defaults to target/release/stampede, built when missing; the
# shared options of bench/lib.sh apply, --duration is the run's length.)
# Everything is bounded: each run lasts --duration (3 s), only 127.0.0.1 is
# used, the target is stopped by a trap on exit. Writes
# bench/results/DATE-open-saturated.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=open-saturated
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults DURATION=3
BASE=""
own_option() {
    case "$1" in
        --base) BASE=${2-}; BENCH_TOOK=2 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
bench_options own_option "$@"
[ -n "$BASE" ] || die "--base PATH is required (the binary to compare against)"
[ -x "$BASE" ] || die "--base: not an executable: $BASE"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive whole number, got $ROUNDS"
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "--duration takes whole seconds, got $DURATION"
bench_start open-saturated
missing=()
command -v jq >/dev/null || missing+=(jq)
[ -x /usr/bin/time ] || missing+=(time)
command -v taskset >/dev/null || missing+=(util-linux)
bench_install "${missing[@]}"
bench_workspace
cp "$BASE" "$TMP/base"
cp "$STAMPEDE_BIN" "$TMP/new"

PORT=$(free_port)
taskset -c 0 "$TMP/new" serve -p "$PORT" -t 1 > "$TMP/serve.log" 2>&1 &
SERVE=$!
trap 'kill "$SERVE" 2>/dev/null; bench_cleanup' EXIT
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
URL="http://127.0.0.1:$PORT/delay/10"
LOOPS=(tokio uring epoll)

# One row per run: round, binary, STAMPEDE_IO, sent, user s, sys s, wake-ups,
# not sent, p99 lag µs, plan.io (col in bench/lib.sh reads $2, $3 and $4 so).
ROWS="$TMP/rows.tsv"; : > "$ROWS"
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for bin in base new; do
        for io in "${LOOPS[@]}"; do
            STAMPEDE_IO=$io /usr/bin/time -f "%U %S %w" -o "$TMP/time" \
                taskset -c 1 "$TMP/$bin" run -t 1 -c 10 -r 20000 -d "${DURATION}s" -q --json "$TMP/out.json" "$URL" \
                > /dev/null 2>&1 || true
            read -r user sys wakes < <(tail -1 "$TMP/time")
            read -r loop sent not_sent lag < <(jq -r '[.plan.io, .requests.sent, .schedule.not_sent, .schedule.lag_p99_us] | @tsv' "$TMP/out.json")
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$bin" "$io" "$sent" "$user" "$sys" "$wakes" "$not_sent" "$lag" "$loop" >> "$ROWS"
            log "round $round $bin $io ($loop): cpu ${user}+${sys} s, $wakes wakes, $sent sent"
        done
    done
done

{
    echo "# The open model at a server that cannot keep up: client CPU and wake-ups ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of $DURATION s per binary and event loop; medians"
    echo "- target: \`stampede serve -t 1\` on core 0; client on core 1: \`STAMPEDE_IO=LOOP stampede run -t 1 -c 10 -r 20000 -d ${DURATION}s URL/delay/10\` (about 1,000/s can be served)"
    echo "- base: $(sha256sum "$BASE" | cut -c1-12) ($BASE); new: $(sha256sum "$STAMPEDE_BIN" | cut -c1-12) ($STAMPEDE_SRC)"
    echo
    echo "| loop | binary | CPU s (user + sys) | µs per request sent | wake-ups (voluntary ctx switches) | sent | not sent | p99 lag ms |"
    echo "|---|---|---|---|---|---|---|---|"
    for io in "${LOOPS[@]}"; do
        for bin in base new; do
            awk -v io="$io" -v b="$bin" -v u="$(col "$bin" "$io" '$5')" -v s="$(col "$bin" "$io" '$6')" \
                -v w="$(col "$bin" "$io" '$7')" -v n="$(col "$bin" "$io" '$4')" -v ns="$(col "$bin" "$io" '$8')" -v l="$(col "$bin" "$io" '$9')" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.0f | %.0f | %.0f | %.0f | %.0f |\n", io, b, u + s, u, s, 1e6 * (u + s) / n, w, n, ns, l / 1000 }'
        done
    done
    echo
    echo "<details><summary>Every run</summary>"
    echo
    echo "| round | binary | STAMPEDE_IO | sent | user s | sys s | wake-ups | not sent | p99 lag µs | plan.io |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v OFS=' | ' '{ $1 = $1; print "| " $0 " |" }' "$ROWS"
    echo
    echo "</details>"
} > "$TMP/report.md"
bench_publish_report
