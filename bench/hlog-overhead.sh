#!/usr/bin/env bash
# What writing an HdrHistogram interval log costs the client: CPU per
# request against nginx with and without `--hlog`, side by side. The goal:
# with the log on, client CPU per request rises by at most 1% (ratio <= 1.01).
#
# Method (bench/lib.sh, as bench/metrics-overhead.sh)
#   - a private nginx, 1 worker on core 0, 515-byte page, access_log off;
#   - stampede on core 1, one thread, 100 keep-alive connections, DURATION s;
#   - three variants, interleaved in every round:
#       plain      no --hlog
#       hlog-1s    --hlog FILE (the default interval, 1 s)
#       hlog-100ms --hlog FILE --hlog-interval 100ms
#   - client CPU = user + sys (wait4 rusage through /usr/bin/time) of the
#     whole stampede process, all threads (the aggregator writing the log
#     too); requests = what nginx counted (stub_status);
#   - the aggregator's CPU apart: the log is merged, encoded and written on
#     the process's main thread (the aggregator), so its run time from
#     /proc/PID/task/PID/schedstat (nanoseconds, not the ticks rusage
#     samples) shows the log's own cost without the TCP stack's noise; a
#     sampler (on core 0) reads it every 20 ms and keeps the last reading;
#   - medians over the rounds; ratio = median(variant) / median(plain).
#   - the noise guard of lib.sh: quiet waits, runs redone when other
#     processes used over 15% of a CPU, the "other CPU" column.
# Usage
#   bench/hlog-overhead.sh                 # 5 rounds x 10 s x 3 variants (~4 min)
#   bench/hlog-overhead.sh --rounds 3 --duration 5
#   --out PATH (default bench/results/DATE-hlog-overhead.md), --no-install,
#   --wait-quiet S (default 20), --wait-budget S, --stampede PATH,
#   --quick (1 round x 3 s, no waiting for quiet)
# Loopback only; every run is bounded by its duration; nginx stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=hlog-overhead
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
bench_defaults ROUNDS=5 WAIT_BUDGET=1200
bench_options "" "$@"
bench_start hlog-overhead
mapfile -t need_pkgs < <(bench_base_missing)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
bench_workspace
PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)"

client_cmd() {
    local tool=$1 secs=$3 out=$4
    local base="$STAMPEDE_BIN run $URL -t 1 -c 100 -d ${secs}s -q --json $out.json"
    case $tool in
        plain) echo "$base" ;;
        hlog-1s) echo "$base --hlog $out.hlog" ;;
        hlog-100ms) echo "$base --hlog $out.hlog --hlog-interval 100ms" ;;
    esac
}
# The aggregator's CPU: sampled until the process ends, the last reading kept.
pre_measure() {
    local out=$3
    (
        pid=""
        for _ in $(seq 200); do
            for p in $(pgrep -f -- "--json $out.json" || true); do
                [ "$(cat "/proc/$p/comm" 2>/dev/null)" = stampede ] && pid=$p
            done
            [ -n "$pid" ] && break
            sleep 0.01
        done
        [ -n "$pid" ] || exit 0
        while read -r ns _ < "/proc/$pid/task/$pid/schedstat"; do
            echo "$ns" > "$out.main"
            sleep 0.02
        done 2>/dev/null
    ) > /dev/null 2>&1 &
    taskset -p -c 0 $! > /dev/null
}
tool_extra() { sleep 0.05; awk '{printf "%.1f", $1 / 1e6}' "$3.main" 2>/dev/null || echo -; }
tool_p50_us() { stampede_p50_us "$2"; }
tool_count() { stampede_count "$2"; }
tool_errors() { stampede_errors "$2"; }

ROWS="$TMP/rows.tsv"; : > "$ROWS"
VARIANTS=(plain hlog-1s hlog-100ms)
wait_quiet "$WAIT_QUIET"
taskset -c 1 "$STAMPEDE_BIN" run "$URL" -t 1 -c 100 -d 2s -q > /dev/null   # warm-up
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for tool in "${VARIANTS[@]}"; do
        run_one "$round" ka100 "$tool"
    done
done
intervals=$(cat "$TMP"/r*-ka100-hlog-1s.hlog 2>/dev/null | grep -c '^Tag=latency,' || true)

{
    echo "# Client CPU per request with and without --hlog ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per variant; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte page; stampede on core 1: \`-t 1 -c 100\`, keep-alive"
    echo "- µs/req = stampede's user+sys CPU (wait4 rusage, every thread) / requests counted by nginx"
    echo "- hlog-1s wrote $intervals latency intervals over all its runs (a check that the log was written)"
    bench_stampede_version
    echo "- nginx: $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    bench_noise_lines
    echo
    echo "| variant | µs/req (user + sys) | vs plain | req/s | p50 latency | aggregator ms/run | aggregator ns/req | its extra vs plain, % of plain's µs/req |"
    echo "|---|---|---|---|---|---|---|---|"
    plain_agg_ns=$(col ka100 plain '1e9*$11/1e3/$4')
    plain_us=$(col ka100 plain '1e6*($6+$7)/$4')
    for tool in "${VARIANTS[@]}"; do
        us=$(col ka100 "$tool" '1e6*($6+$7)/$4')
        usr=$(col ka100 "$tool" '1e6*$6/$4'); sys=$(col ka100 "$tool" '1e6*$7/$4')
        rps=$(col ka100 "$tool" '$4/$5')
        p50=$(col ka100 "$tool" '$8')
        agg=$(col ka100 "$tool" '$11'); agg_ns=$(col ka100 "$tool" '1e9*$11/1e3/$4')
        awk -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v p="$plain_us" -v rps="$rps" -v l="$p50" \
            -v a="$agg" -v an="$agg_ns" -v pa="$plain_agg_ns" \
            'BEGIN { printf "| %s | %.3f (%.3f + %.3f) | %.3f× | %.0f | %.0f µs | %.1f | %.1f | %+.2f%% |\n",
                     t, us, u, s, us / p, rps, l, a, an, 100 * (an - pa) / (1000 * p) }'
    done
    echo
    echo "Commands (under \`taskset -c 1\`; URL = http://127.0.0.1:PORT/index.html):"
    echo
    for tool in "${VARIANTS[@]}"; do
        echo "- $tool: \`$(client_cmd "$tool" ka100 "$DURATION" out | sed "s#$STAMPEDE_BIN#stampede#; s#$TMP/[^ ]*#out#g; s#$URL#URL#")\`"
    done
    echo
    bench_rounds_details variant "stampede's count" 3
} > "$TMP/report.md"
bench_publish_report
