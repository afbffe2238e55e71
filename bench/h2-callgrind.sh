#!/usr/bin/env bash
# Instructions per request of HTTP/2 clients over h2c, whole client under
# load (syscall wrappers, event loop, timing and recording included):
# stampede --io epoll (the stampede-h2 codec), stampede --io tokio (the `h2`
# crate) and h2load (nghttp2). Instruction counts do not depend on the
# host's load, so this holds on a busy machine where CPU times do not.
#
# Method
#   - a private nginx (bench/lib.sh: 1 worker on core 0) with an h2c port;
#   - each client on core 1 under `valgrind --tool=callgrind` (user-space
#     instructions of every thread), 10 connections x 10 streams, one thread,
#     for N1 and for N2 requests (-n); per request = the difference of the
#     totals / (N2 - N1), so the start, the connections' setup and the exit
#     are not in it;
#   - stampede: `run -t 1 -n N -c 10 --streams 10 --http2 --io IO -q`;
#     h2load: `h2load -t1 -c10 -m10 -n N`.
# Usage
#   bench/h2-callgrind.sh [--stampede PATH] [--n1 N] [--n2 N] [--out PATH]
#   (defaults: target/release/stampede, 2,000 and 12,000 requests; the
#   table goes to stdout, and to --out when given; callgrind files stay in
#   a temporary folder named at the end).
# Loopback only; every run is bounded by its request count; nginx is
# stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=h2-callgrind
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

N1=2000
N2=12000
bench_defaults
own_option() {
    case "$1" in
        --n1) N1=${2-}; BENCH_TOOK=2 ;;
        --n2) N2=${2-}; BENCH_TOOK=2 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
bench_options own_option "$@"
OUT_GIVEN=$OUT
bench_start h2-callgrind
command -v valgrind >/dev/null || die "needs valgrind (apt-get install valgrind)"
command -v h2load >/dev/null || die "needs h2load (apt-get install nghttp2-client)"
bench_workspace
KEEP=$(mktemp -d /tmp/h2-callgrind.XXXXXX)

PORT=$(free_port); H2C_PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)
    server {
        listen 127.0.0.1:$H2C_PORT http2 backlog=4096;
        root $TMP/www;
    }"
H2C_URL="http://127.0.0.1:$H2C_PORT/index.html"

client_args() {  # tool n
    case $1 in
        h2load) echo "h2load -t1 -c10 -m10 -n$2 $H2C_URL" ;;
        stampede-*) echo "$STAMPEDE_BIN run -t 1 -n $2 -c 10 --streams 10 --http2 --io ${1#stampede-} -q $H2C_URL" ;;
    esac
}
instructions() {  # tool n -> total instructions (every thread)
    local f="$KEEP/$1-$2"
    # shellcheck disable=SC2046
    taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="$f.cg" \
        $(client_args "$1" "$2") > "$f.stdout" 2> "$f.valgrind"
    awk '/Collected :/ {print $NF}' "$f.valgrind"
}

{
    echo "| client | instructions at $N1 | at $N2 | per request | vs h2load |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    base=""
    for tool in h2load stampede-epoll stampede-tokio; do
        before=$(server_count)
        i1=$(instructions "$tool" "$N1")
        i2=$(instructions "$tool" "$N2")
        counted=$(( $(server_count) - before - 1 ))
        [ "$counted" = $((N1 + N2)) ] || log "$tool: nginx counted $counted requests, not $((N1 + N2))"
        per=$(( (i2 - i1) / (N2 - N1) ))
        [ -n "$base" ] || base=$per
        awk -v t="$tool" -v a="$i1" -v b="$i2" -v p="$per" -v base="$base" \
            'BEGIN { printf "| %s | %d | %d | %d | %.2f× |\n", t, a, b, p, p / base }'
    done
    echo
    echo "Commands (each under \`taskset -c 1 valgrind --tool=callgrind\`, N = $N1 and $N2):"
    echo
    for tool in h2load stampede-epoll stampede-tokio; do
        echo "- \`$(client_args "$tool" N | sed "s#$STAMPEDE_BIN#stampede#; s#127.0.0.1:[0-9]*#ADDRESS#")\`"
    done
} > "$TMP/report.md"
cat "$TMP/report.md"
[ -z "$OUT_GIVEN" ] || cp "$TMP/report.md" "$OUT_GIVEN"
log "callgrind files: $KEEP"
