#!/usr/bin/env bash
# What the open model's pacing window (`--pace-window`) buys the client at
# 20,000 requests/s, against wrk2 (issue 33): client CPU per request, the
# rate held, and the latency it reports. A window of 0 wakes once per
# request; a window W wakes once per W and sends the requests intended in
# it, each at most W late, counted from its intended instant. A window
# written W:batch adds --batch-reads: answers are read once per W too.
#
# Method: `stampede serve -t 1` pinned to core 0; each client pinned to
# core 1 with one thread and at most 100 connections, keep-alive:
# `stampede run -t 1 -c 100 -r 20000 -d D --pace-window W` for each window,
# and `wrk2 -t1 -c100 -d D -R20000 --latency`, interleaved in each round.
# CPU = user + sys of the client (wait4 rusage through /usr/bin/time), per
# completed request; wake-ups = its voluntary context switches (%w) and
# syscalls = perf's raw_syscalls:sys_enter count, both per completed request
# (they do not depend on how busy the host is, CPU time does); rate held =
# completed / (20,000 × D); latency p50/p99 from each tool's own report
# (stampede's --json, wrk2's --latency text).
# Medians over the rounds. The load average is recorded before each run:
# the host may be shared.
# Usage
#   bench/pace-window.sh --wrk2 PATH [--windows "0 50us 200us 1ms 500us:batch"] [--rate N]
#                        [--stampede BIN] [--rounds N] [--duration S] [--out PATH]
# (--stampede defaults to target/release/stampede; wrk2 is built by
# /work/shared/peers/build-wrk2.sh or from giltene/wrk2.) Everything is
# bounded (each run lasts --duration, 5 s) and sends only to 127.0.0.1; the
# target is stopped on exit. Writes bench/results/DATE-pace-window.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=pace-window
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults DURATION=5
WRK2=""
WINDOWS="0 50us 200us 1ms"
RATE=20000
own_option() {
    case "$1" in
        --wrk2) WRK2=${2-}; BENCH_TOOK=2 ;;
        --windows) WINDOWS=${2-}; BENCH_TOOK=2 ;;
        --rate) RATE=${2-}; BENCH_TOOK=2 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
bench_options own_option "$@"
[ -x "$WRK2" ] || die "--wrk2 PATH is required (an executable wrk2)"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive whole number, got $ROUNDS"
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "--duration takes whole seconds, got $DURATION"
[[ $RATE =~ ^[1-9][0-9]*$ ]] || die "--rate takes a positive whole number, got $RATE"
bench_start pace-window
missing=()
command -v jq >/dev/null || missing+=(jq)
[ -x /usr/bin/time ] || missing+=(time)
command -v taskset >/dev/null || missing+=(util-linux)
command -v perf >/dev/null || missing+=(linux-perf)
bench_install "${missing[@]}"
perf stat -e raw_syscalls:sys_enter -x, true >/dev/null 2>&1 \
    || die "perf cannot read the raw_syscalls tracepoint (run as root)"
# The client under perf's syscall count and wait4's rusage.
counted() {
    /usr/bin/time -f "%U %S %w" -o "$TMP/time" perf stat -e raw_syscalls:sys_enter -x, -o "$TMP/perf" \
        -- taskset -c 1 "$@"
}
bench_workspace

PORT=$(free_port)
taskset -c 0 "$STAMPEDE_BIN" serve -p "$PORT" -t 1 > "$TMP/serve.log" 2>&1 &
SERVE=$!
trap 'kill "$SERVE" 2>/dev/null; bench_cleanup' EXIT
for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done
URL="http://127.0.0.1:$PORT/"
read -r -a VARIANTS <<< "$WINDOWS wrk2"

# A wrk2 --latency line ("50.000%  1.23ms") in µs.
wrk2_pct_us() {
    awk -v p="$2" '$1==p { v=$2; u=v; sub(/[0-9.]+/,"",u); sub(/[a-z]+$/,"",v);
         m = (u=="us")?1:(u=="ms")?1000:(u=="s")?1000000:(u=="m")?60000000:1; printf "%.0f", v*m; exit }' "$1"
}

# One row per run: round, variant, completed, user s, sys s, p50 µs, p99 µs,
# load average, wake-ups, syscalls.
ROWS="$TMP/rows.tsv"; : > "$ROWS"
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for variant in "${VARIANTS[@]}"; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        if [ "$variant" = wrk2 ]; then
            counted "$WRK2" -t1 -c100 -d"${DURATION}s" \
                -R"$RATE" --latency "$URL" > "$TMP/wrk2.out" 2>&1 || true
            done_n=$(awk '/requests in/ {print $1}' "$TMP/wrk2.out")
            p50=$(wrk2_pct_us "$TMP/wrk2.out" 50.000%)
            p99=$(wrk2_pct_us "$TMP/wrk2.out" 99.000%)
        else
            # "500us:batch" is --pace-window 500us --batch-reads.
            batch=()
            [ "${variant#*:}" = batch ] && batch=(--batch-reads)
            counted "$STAMPEDE_BIN" run -t 1 -c 100 \
                -r "$RATE" -d "${DURATION}s" --pace-window "${variant%%:*}" "${batch[@]}" \
                -q --json "$TMP/out.json" "$URL" > /dev/null 2>&1 || true
            read -r done_n p50 p99 < <(jq -r '[.requests.completed, .latency_us.p50, .latency_us.p99] | @tsv' "$TMP/out.json")
        fi
        read -r user sys wakes < <(tail -1 "$TMP/time")
        calls=$(awk -F, '/raw_syscalls/ {print $1}' "$TMP/perf")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$variant" "$done_n" "$user" "$sys" "$p50" "$p99" "$load" "$wakes" "$calls" >> "$ROWS"
        log "round $round $variant: $done_n done, cpu ${user}+${sys} s, $wakes wakes, $calls syscalls, p50 $p50 us, p99 $p99 us, load $load"
    done
done

# The median over the rounds of EXPR (awk, over $3 completed $4 user $5 sys
# $6 p50 $7 p99 $8 load $9 wake-ups $10 syscalls) for VARIANT.
med() { awk -F'\t' -v v="$1" '$2==v && $3>0 {print '"$2"'}' "$ROWS" | median; }
WRK2_US=$(med wrk2 '1e6 * ($4 + $5) / $3')
{
    echo "# The pacing window at $RATE requests/s: client CPU, rate held and latency against wrk2 ($DATE)"
    echo
    bench_machine_lines
    bench_stampede_version
    echo "- wrk2: $WRK2"
    echo "- started $START; $ROUNDS interleaved round(s) of $DURATION s per variant; medians; load average (1 min) before the runs: $(awk -F'\t' '{print $8}' "$ROWS" | median) (median), $(awk -F'\t' '{print $8}' "$ROWS" | sort -g | head -1)–$(awk -F'\t' '{print $8}' "$ROWS" | sort -g | tail -1)"
    echo "- target: \`stampede serve -t 1\` on core 0; clients on core 1: \`stampede run -t 1 -c 100 -r $RATE -d ${DURATION}s --pace-window W\`, \`wrk2 -t1 -c100 -d${DURATION}s -R$RATE --latency\`"
    echo
    echo "| client | CPU µs per request | × wrk2 | wake-ups per request | syscalls per request | rate held | latency p50 µs | p99 µs |"
    echo "|---|---|---|---|---|---|---|---|"
    for variant in "${VARIANTS[@]}"; do
        label="stampede --pace-window ${variant%%:*}"
        [ "${variant#*:}" = batch ] && label="$label --batch-reads"
        [ "$variant" = wrk2 ] && label="wrk2 (1 ms batches)"
        us=$(med "$variant" '1e6 * ($4 + $5) / $3')
        held=$(med "$variant" "100 * \$3 / ($RATE * $DURATION)")
        awk -v l="$label" -v us="$us" -v w="$WRK2_US" -v h="$held" -v p50="$(med "$variant" '$6')" -v p99="$(med "$variant" '$7')" \
            -v wk="$(med "$variant" '$9 / $3')" -v sc="$(med "$variant" '$10 / $3')" \
            'BEGIN { printf "| %s | %.1f | %.2f× | %.2f | %.2f | %.2f%% | %.0f | %.0f |\n", l, us, us / w, wk, sc, h, p50, p99 }'
    done
    echo
    echo "<details><summary>Every run</summary>"
    echo
    echo "| round | variant | completed | user s | sys s | p50 µs | p99 µs | load average | wake-ups | syscalls |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v OFS=' | ' '{ $1 = $1; print "| " $0 " |" }' "$ROWS"
    echo
    echo "</details>"
} > "$TMP/report.md"
bench_publish_report
