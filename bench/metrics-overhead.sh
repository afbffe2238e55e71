#!/usr/bin/env bash
# What watching a run costs the client: CPU per request against nginx with
# and without `--metrics` and `--web`, side by side. Issue 21's goal: with
# both on, client CPU per request rises by at most 2% (ratio <= 1.02).
#
# Method (bench/lib.sh, as bench/client-vs-wrk.sh)
#   - a private nginx, 1 worker on core 0, 515-byte page, access_log off;
#   - stampede on core 1, one thread, 100 keep-alive connections, DURATION s;
#   - three variants, interleaved in every round:
#       plain     no --metrics, no --web
#       served    --metrics ADDR --web ADDR, nobody looking
#       watched   the same with a scrape of /metrics every second and the
#                 dashboard's event stream open (curl on core 0), so the
#                 page is rendered once a second in the client's process
#   - client CPU = user + sys (wait4 rusage through /usr/bin/time) of the
#     whole stampede process, all threads (the web and metrics threads too);
#     requests = what nginx counted (stub_status);
#   - medians over the rounds; ratio = median(variant) / median(plain).
#   - the noise guard of lib.sh: quiet waits, runs redone when other
#     processes used over 15% of a CPU, the "other CPU" column.
# Usage
#   bench/metrics-overhead.sh                 # 5 rounds x 10 s x 3 variants (~4 min)
#   bench/metrics-overhead.sh --rounds 3 --duration 5
#   --out PATH (default bench/results/DATE-metrics-overhead.md), --no-install,
#   --wait-quiet S (default 20), --wait-budget S, --stampede PATH,
#   --quick (1 round x 3 s, no waiting for quiet)
# Loopback only; every run is bounded by its duration; nginx stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=metrics-overhead
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
bench_defaults ROUNDS=5 WAIT_BUDGET=1200
bench_options "" "$@"
bench_start metrics-overhead
mapfile -t need_pkgs < <(bench_base_missing)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
bench_workspace
PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)"
METRICS_PORT=$(free_port)
WEB_PORT=$(free_port)

client_cmd() {
    local tool=$1 secs=$3 out=$4
    local base="$STAMPEDE_BIN run $URL -t 1 -c 100 -d ${secs}s -q --json $out.json"
    case $tool in
        plain) echo "$base" ;;
        served|watched)
            echo "$base --metrics 127.0.0.1:$METRICS_PORT --metrics-linger 0s --web 127.0.0.1:$WEB_PORT --web-linger 0s" ;;
    esac
}
# "watched": a scraper and an open dashboard stream, on core 0 with nginx,
# started in the background just before the run; both end with it (the
# scraper once the endpoint stops answering, the stream at its `done`).
pre_measure() {
    [ "$1" = watched ] || return 0
    local until=$((SECONDS + DURATION + 5)) out=$3
    (
        seen=0
        while [ $SECONDS -lt $until ]; do
            if taskset -c 0 curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" -o /dev/null; then seen=1
            elif [ "$seen" = 1 ]; then break; fi
            sleep 1
        done
    ) > /dev/null 2>&1 &
    (
        while [ $SECONDS -lt $until ]; do
            taskset -c 0 curl -sN --max-time $((DURATION + 5)) "http://127.0.0.1:$WEB_PORT/events" \
                -o "$out.events" && break
            sleep 0.1
        done
    ) > /dev/null 2>&1 &
}
tool_p50_us() { stampede_p50_us "$2"; }
tool_count() { stampede_count "$2"; }
tool_errors() { stampede_errors "$2"; }

ROWS="$TMP/rows.tsv"; : > "$ROWS"
VARIANTS=(plain served watched)
wait_quiet "$WAIT_QUIET"
taskset -c 1 "$STAMPEDE_BIN" run "$URL" -t 1 -c 100 -d 2s -q > /dev/null   # warm-up
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for tool in "${VARIANTS[@]}"; do
        run_one "$round" ka100 "$tool"
    done
done
updates=$(cat "$TMP"/r*-ka100-watched.events 2>/dev/null | grep -c '^event: update' || true)

{
    echo "# Client CPU per request with --metrics and --web ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per variant; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte page; stampede on core 1: \`-t 1 -c 100\`, keep-alive"
    echo "- µs/req = stampede's user+sys CPU (wait4 rusage, every thread) / requests counted by nginx"
    echo "- watched: a /metrics scrape every second and the dashboard's event stream open ($updates page updates rendered over all watched runs)"
    bench_stampede_version
    echo "- nginx: $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    bench_noise_lines
    echo
    echo "| variant | µs/req (user + sys) | vs plain | req/s | p50 latency |"
    echo "|---|---|---|---|---|"
    plain_us=$(col ka100 plain '1e6*($6+$7)/$4')
    for tool in "${VARIANTS[@]}"; do
        us=$(col ka100 "$tool" '1e6*($6+$7)/$4')
        usr=$(col ka100 "$tool" '1e6*$6/$4'); sys=$(col ka100 "$tool" '1e6*$7/$4')
        rps=$(col ka100 "$tool" '$4/$5')
        p50=$(col ka100 "$tool" '$8')
        awk -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v p="$plain_us" -v rps="$rps" -v l="$p50" \
            'BEGIN { printf "| %s | %.3f (%.3f + %.3f) | %.3f× | %.0f | %.0f µs |\n", t, us, u, s, us / p, rps, l }'
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
