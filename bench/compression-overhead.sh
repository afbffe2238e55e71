#!/usr/bin/env bash
# Client CPU per request of issue 23's compression options against nginx with
# `gzip on` (issue 23's goal: `--compressed` without `--decode` unchanged):
#   header       -H 'Accept-Encoding: gzip, br, zstd' by hand: the same bytes on
#                the wire with no compression feature at work (the baseline)
#   compressed   --compressed (the header added by stampede; nothing decoded)
#   decode       --decode (every body gunzipped: for information, it costs CPU)
#   plain        no Accept-Encoding: nginx sends the page uncompressed (for
#                information: more bytes through the kernel per request)
# on a 16 KiB text page, closed model, 100 connections.
#
# Method: as bench/workload-overhead.sh (helpers in bench/lib.sh): a private
# nginx (1 worker on core 0, gzip on, level 1), clients on core 1 with one
# thread, client CPU = user + sys (wait4 rusage), requests counted by nginx's
# stub_status, rounds interleaved, medians; ratio = median(variant) /
# median(header).
# Usage
#   bench/compression-overhead.sh                 # 3 rounds x 10 s
#   bench/compression-overhead.sh --quick         # 1 round x 3 s (checks that it runs)
#   bench/compression-overhead.sh --rounds 5 --duration 8
# Options: --rounds N, --duration S, --out PATH, --no-install, --wait-quiet S,
#   --wait-budget S, --stampede PATH (default target/release/stampede).
# Everything is bounded: each run has a duration, only 127.0.0.1 is used, nginx
# is stopped by a trap on exit. Writes bench/results/DATE-compression.md
# (--quick: a temporary file unless --out is given).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=compression-overhead
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

ROUNDS=3
DURATION=10
WAIT_QUIET=20
WAIT_BUDGET=600
PRE_RUN_QUIET=4
MAX_OTHER_CPU=15
RETRIES=2
INSTALL=1
QUICK=0
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) ROUNDS=1; DURATION=3; WAIT_QUIET=0; PRE_RUN_QUIET=0; RETRIES=0; QUICK=1 ;;
        --rounds) ROUNDS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --wait-quiet) WAIT_QUIET=$2; shift ;;
        --wait-budget) WAIT_BUDGET=$2; shift ;;
        --out) OUT=$2; shift ;;
        --no-install) INSTALL=0 ;;
        --stampede) STAMPEDE=$2; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
[ "$(nproc)" -ge 2 ] || die "needs at least 2 CPUs (server on 0, client on 1)"
DATE=$(date +%F)

mapfile -t need_pkgs < <(bench_base_missing)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
STAMPEDE_SRC=${STAMPEDE:-$ROOT/target/release/stampede}
bench_workspace
if [ -z "$OUT" ]; then
    if [ "$QUICK" = 1 ]; then OUT="$TMP/report-kept.md"; else OUT="$ROOT/bench/results/$DATE-compression.md"; fi
fi

PORT=$(free_port)
bench_nginx_start "$(bench_plain_server | sed 's#^    server {#    gzip on; gzip_comp_level 1; gzip_min_length 20; gzip_vary on;\n    server {#')"
PAGE_LEN=16384
awk -v n="$PAGE_LEN" 'BEGIN { s = ""; i = 0; while (length(s) < n) { s = s "<p>row " i " of the stampede compression benchmark page</p>\n"; i++ } printf "%s", substr(s, 1, n) }' > "$TMP/www/page.html"
URL="http://127.0.0.1:$PORT/page.html"
encoding=$(curl -fsS -H 'Accept-Encoding: gzip' -D - -o /dev/null "$URL" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-encoding" {print $2}')
[ "$encoding" = gzip ] || die "nginx did not gzip $URL (Content-Encoding: '${encoding:-none}')"
WIRE=$(curl -fsS -H 'Accept-Encoding: gzip' "$URL" | wc -c)
log "page.html: $PAGE_LEN bytes, $WIRE gzipped on the wire"

SCS=(closed100)
TOOLS="header compressed decode plain"
scenario_title() { echo "closed model, 100 conns"; }

client_cmd() {
    local tool=$1 secs=$3 out=$4
    local st="$STAMPEDE_BIN run -t 1 -d ${secs}s -q --json $out.json -c 100"
    case $tool in
        header) echo "$st -H 'Accept-Encoding: gzip, br, zstd' $URL" ;;
        compressed) echo "$st --compressed $URL" ;;
        decode) echo "$st --decode $URL" ;;
        plain) echo "$st $URL" ;;
    esac
}
display_cmd() { client_cmd "$@" | sed "s#$STAMPEDE_BIN#stampede#; s#$TMP/[^ ]*#FILE#g; s#127.0.0.1:[0-9]*#ADDRESS#"; }
tool_p50_us() { stampede_p50_us "$2"; }
tool_count() { stampede_count "$2"; }
tool_errors() { stampede_errors "$2"; }
tool_extra() {
    jq -r '"io \(.plan.io // "?"), body \((.bytes.body / ([.requests.completed, 1] | max)) | floor) B/resp" + (if .compression.decoded_bytes then ", decoded \((.compression.decoded_bytes / ([.requests.completed, 1] | max)) | floor) B/resp" else "" end)' "$3.json" 2>/dev/null || echo -
}

ROWS="$TMP/rows.tsv"; : > "$ROWS"
wait_quiet "$WAIT_QUIET"
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in $TOOLS; do run_one "$round" "$sc" "$tool"; done
    done
done

{
    echo "# Client CPU per request of --compressed and --decode against nginx with gzip on ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per variant; medians shown"
    echo "- nginx: 1 worker on core 0, gzip on (level 1), a $PAGE_LEN-byte text page ($WIRE bytes gzipped); stampede on core 1, one thread"
    echo "- µs/req = client user+sys CPU (wait4 rusage) / requests counted by nginx (stub_status)"
    bench_stampede_version
    bench_noise_lines
    echo
    echo "| model | variant | µs/req (user + sys) | vs header | req/s | p50 latency | notes |"
    echo "|---|---|---|---|---|---|---|"
    bench_variant_rows header last
    echo
    echo "Commands (each under \`taskset -c 1\`; ADDRESS = 127.0.0.1 and nginx's port):"
    echo
    for sc in "${SCS[@]}"; do
        for tool in $TOOLS; do echo "- $tool: \`$(display_cmd "$tool" "$sc" "$DURATION" x)\`"; done
    done
    echo
    bench_rounds_details
} > "$TMP/report.md"
bench_publish_report
