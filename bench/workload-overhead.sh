#!/usr/bin/env bash
# Client CPU per request of issue 18's workloads against the fixed request,
# side by side on the same nginx (issue 18's Performance goals):
#   fixed          the pre-encoded request (the baseline of every ratio)
#   seq-feed       '{{seq}}' in the query plus one feeder column in a header
#   check-status   --check 'status == 200'
#   check-body     --check 'body contains "..."' on the 515-byte page
# in the closed model (100 connections) and the open model (-r 20000).
#
# Method: as bench/engine-vs-peers.sh (helpers in bench/lib.sh): a private
# nginx (1 worker on core 0), clients on core 1 with one thread, client CPU =
# user + sys (wait4 rusage), requests counted by nginx's stub_status, rounds
# interleaved, medians; ratio = median(variant) / median(fixed) of the same model.
# Usage
#   bench/workload-overhead.sh                 # 3 rounds x 10 s
#   bench/workload-overhead.sh --quick         # 1 round x 3 s
#   bench/workload-overhead.sh --rounds 5 --duration 8
#   bench/workload-overhead.sh --baseline /path/to/older/stampede   # adds fixed-base:
#       the fixed request on an older build, for the no-regression goal (<= 1.02x)
# Options: --rounds N, --duration S, --out PATH, --no-install, --wait-quiet S,
#   --wait-budget S, --stampede PATH (default target/release/stampede),
#   --baseline PATH (an older stampede binary; its fixed request is a variant).
# Everything is bounded: each run has a duration, only 127.0.0.1 is used, nginx
# is stopped by a trap on exit. Writes bench/results/DATE-workload.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=workload-overhead
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults
WITH_SYSCALLS=0
BASELINE=""
# This script's own options (the shared ones are bench/lib.sh's bench_options).
own_option() {
    case "$1" in
        --baseline) BASELINE=${2-}; BENCH_TOOK=2 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
bench_options own_option "$@"
bench_start workload

mapfile -t need_pkgs < <(bench_base_missing)
command -v wrk >/dev/null || need_pkgs+=(wrk)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
bench_workspace
BASE_BIN=""
if [ -n "$BASELINE" ]; then
    [ -x "$BASELINE" ] || die "no executable stampede at $BASELINE (--baseline)"
    cp "$BASELINE" "$TMP/stampede-base"
    BASE_BIN="$TMP/stampede-base"
fi

PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)"
printf 'user\n' > "$TMP/users.csv"
for i in $(seq 1000); do printf 'user%04d\n' "$i" >> "$TMP/users.csv"; done
# A phrase near the end of the page: the body check reads all of it.
NEEDLE=$(tail -c 40 "$TMP/www/index.html" | tr -d '\n"\\' | tail -c 12)

SCS=(closed100 open20k)
TOOLS="fixed seq-feed check-status check-body"
[ -n "$BASE_BIN" ] && TOOLS="fixed fixed-base seq-feed check-status check-body"
scenario_title() { case $1 in closed100) echo "closed model, 100 conns" ;; open20k) echo "open model -r 20000, 100 conns" ;; esac; }

client_cmd() {
    local tool=$1 sc=$2 secs=$3 out=$4
    local st="$STAMPEDE_BIN run -t 1 -d ${secs}s -q --json $out.json -c 100"
    [ "$sc" = open20k ] && st="$st -r 20000"
    case $tool in
        fixed) echo "$st $URL" ;;
        fixed-base) echo "${st/#$STAMPEDE_BIN/$BASE_BIN} $URL" ;;
        seq-feed) echo "$st --feed $TMP/users.csv -H 'X-User: {{user}}' '$URL?k={{seq}}'" ;;
        check-status) echo "$st --check 'status == 200' $URL" ;;
        check-body) echo "$st --check 'body contains \"$NEEDLE\"' $URL" ;;
    esac
}
display_cmd() { client_cmd "$@" | sed "s#$TMP/stampede-base#stampede-base#; s#$STAMPEDE_BIN#stampede#; s#$TMP/[^ ]*#FILE#g; s#127.0.0.1:[0-9]*#ADDRESS#"; }
tool_p50_us() { stampede_p50_us "$2"; }
tool_count() { stampede_count "$2"; }
tool_errors() {
    stampede_errors "$2"
    jq -r 'if (.requests.check_failed // 0) > 0 then "check_failed \(.requests.check_failed)" else empty end' "$2.json" 2>/dev/null || true
}
tool_extra() { jq -r '"io \(.plan.io // "?")"' "$3.json" 2>/dev/null || echo -; }

ROWS="$TMP/rows.tsv"; : > "$ROWS"
SYSROWS="$TMP/sys.tsv"; : > "$SYSROWS"
wait_quiet "$WAIT_QUIET"
taskset -c 1 wrk -t1 -c100 -d2s "$URL" > /dev/null
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in $TOOLS; do run_one "$round" "$sc" "$tool"; done
    done
done

{
    echo "# Client CPU per request of templates, feeders and checks vs the fixed request ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per variant and model; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte index.html; stampede on core 1, one thread"
    echo "- µs/req = client user+sys CPU (wait4 rusage) / requests counted by nginx (stub_status)"
    bench_stampede_version
    [ -z "$BASE_BIN" ] || echo "- fixed-base: \`$("$BASE_BIN" --version 2>/dev/null | head -1)\` from $BASELINE"
    bench_noise_lines
    echo
    echo "| model | variant | µs/req (user + sys) | vs fixed | req/s | p50 latency | notes |"
    echo "|---|---|---|---|---|---|---|"
    bench_variant_rows fixed all
    echo
    echo "Commands (each under \`taskset -c 1\`; ADDRESS = 127.0.0.1 and nginx's port):"
    echo
    for sc in "${SCS[@]}"; do
        for tool in $TOOLS; do echo "- $sc $tool: \`$(display_cmd "$tool" "$sc" "$DURATION" x)\`"; done
    done
    echo
    bench_rounds_details
} > "$TMP/report.md"
bench_publish_report
