#!/usr/bin/env bash
# What a WebSocket message costs the client, against a keep-alive HTTP/1.1
# request and against Python's `websockets`: client CPU per message (per
# request) against `stampede serve` on the same core. The goal (issue 38's
# performance section): a WebSocket echo loop over the reactor costs no more
# CPU per message than a keep-alive HTTP/1.1 request (ws-epoll <= http-epoll),
# and at least 2x less than the Python client (ws-epoll <= python / 2).
# The same figures choose `--io auto` for ws:// and wss:// (the cheaper of
# epoll and tokio per message: plan.rs's event_loop).
#
# Method (bench/lib.sh's runs, medians and noise guard)
#   - `stampede serve --threads 1` pinned to core 0 (its /ws/echo and its
#     page /), counting what it served on /stats; a second one with --tls
#     (self-signed) for the wss:// rows, also on core 0, idle meanwhile;
#   - each client on core 1, 10 connections, DURATION s, in every round:
#       ws-epoll    stampede run ws://…/ws/echo --io epoll -t 1 -c 10
#       ws-tokio    the same on --io tokio
#       http-epoll  stampede run http://…/ --io epoll -t 1 -c 10 (keep-alive)
#       wss-epoll   stampede run wss://…/ws/echo --io epoll --insecure …
#       wss-tokio   the same on --io tokio
#       ws-uring    (with --uring) ws://…/ws/echo --io uring
#       python      bench/ws-echo-client.py: `websockets` (asyncio), the
#                   same echo loop ("hello", its echo, the next)
#   - client CPU = user + sys of every thread (wait4 rusage through
#     /usr/bin/time: what /proc/PID/stat's utime + stime sum to at exit);
#     messages = what the server counted (/stats: responses + echoed
#     messages - upgrades);
#   - medians over the rounds; ratio = median(variant) / median(http-epoll).
# Usage (one benchmark on the host at a time: take its lock)
#   flock /work/bench.lock bash bench/websocket-vs-http.sh   # 5 rounds x 5 s x 6 variants (~6 min)
#   --rounds N, --duration S, --out PATH (default bench/results/DATE-websocket-vs-http.md),
#   --stampede PATH, --python PATH (a python3 with websockets; default
#   target/ci-python's, the main checkout's in a worktree), --no-wss (no wss:// rows),
#   --uring (a ws-uring row), --only LIST (the rows to run, e.g. ws-epoll,ws-uring), --wait-quiet S,
#   --wait-budget S, --quick
# Loopback only; every run is bounded by its duration; the server stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=websocket-vs-http
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
PYTHON=${PYTHON:-$ROOT/target/ci-python/bin/python3}
# A worktree's target has no venv of its own: the main checkout's, then.
[ -x "$PYTHON" ] || PYTHON="$(cd "$(git -C "$ROOT" rev-parse --git-common-dir)/.." && pwd)/target/ci-python/bin/python3"
own_option() {
    case "$1" in
        --python) PYTHON=${2-}; BENCH_TOOK=2 ;;
        --no-wss) WSS=0; BENCH_TOOK=1 ;;
        --uring) URING=1; BENCH_TOOK=1 ;;
        --only) ONLY=${2-}; BENCH_TOOK=2 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
WSS=1 URING=0 ONLY=""
bench_defaults ROUNDS=5 DURATION=5 INSTALL=0
bench_options own_option "$@"
bench_start websocket-vs-http
command -v jq >/dev/null || die "needs jq"
command -v curl >/dev/null || die "needs curl"
[ -x /usr/bin/time ] || die "needs /usr/bin/time"
bench_workspace
PORT=$(free_port)
PLAIN_STATUS="http://127.0.0.1:$PORT/stats"
STATUS_URL=$PLAIN_STATUS

# serve_on PORT LOG [--tls]: a `stampede serve` on core 0; its pid in SERVED.
serve_on() {
    local port=$1 log=$2 status
    shift 2
    taskset -c 0 "$STAMPEDE_BIN" serve --threads 1 --port "$port" "$@" > "$log" 2>&1 &
    SERVED=$!
    status="http://127.0.0.1:$port/stats"
    [ $# -eq 0 ] || status="https://127.0.0.1:$port/stats"
    for _ in $(seq 50); do curl -kfsS "$status" -o /dev/null 2>/dev/null && break; sleep 0.1; done
    curl -kfsS "$status" -o /dev/null || die "stampede serve $* did not come up: $(cat "$log")"
}
serve_on "$PORT" "$TMP/serve.log"
SERVE_PID=$SERVED
# lib.sh's guard reads the server's CPU from NGINX_WORKER, and stops NGINX_PID on exit.
NGINX_WORKER=$SERVE_PID
NGINX_PID=$SERVE_PID
log "stampede serve $SERVE_PID on 127.0.0.1:$PORT (core 0); clients on core 1"
TLS_PID=""
if [ "$WSS" = 1 ]; then
    TLS_PORT=$(free_port)
    serve_on "$TLS_PORT" "$TMP/serve-tls.log" --tls
    TLS_PID=$SERVED
    log "stampede serve --tls $TLS_PID on 127.0.0.1:$TLS_PORT (core 0)"
    trap 'kill "$TLS_PID" 2>/dev/null || true; bench_cleanup' EXIT
fi
# Each run counts on the server it loads (lib.sh's measure() reads
# STATUS_URL, and NGINX_WORKER for the noise guard).
pre_measure() {
    case $1 in
        wss-*) STATUS_URL="https://127.0.0.1:$TLS_PORT/stats"; NGINX_WORKER=$TLS_PID ;;
        *) STATUS_URL=$PLAIN_STATUS; NGINX_WORKER=$SERVE_PID ;;
    esac
}

# What the server served: responses and echoed messages, less the upgrades'
# 101s (lib.sh's measure() takes one off for the /stats request itself).
server_count() {
    curl -kfsS "$STATUS_URL" | jq '.requests_total + .ws_messages_out - .ws_sessions'
}

HAVE_PYTHON=1
"$PYTHON" -c 'import websockets.asyncio.client' 2>/dev/null || {
    log "$PYTHON cannot import websockets: no python row"
    HAVE_PYTHON=0
}

client_cmd() {
    local tool=$1 secs=$3 out=$4
    local ws="ws://127.0.0.1:$PORT/ws/echo" http="http://127.0.0.1:$PORT/"
    local wss="wss://127.0.0.1:${TLS_PORT:-0}/ws/echo --insecure"
    case $tool in
        ws-epoll) echo "$STAMPEDE_BIN run $ws --io epoll -t 1 -c 10 -d ${secs}s -q --json $out.json" ;;
        ws-uring) echo "$STAMPEDE_BIN run $ws --io uring -t 1 -c 10 -d ${secs}s -q --json $out.json" ;;
        ws-tokio) echo "$STAMPEDE_BIN run $ws --io tokio -t 1 -c 10 -d ${secs}s -q --json $out.json" ;;
        wss-epoll) echo "$STAMPEDE_BIN run $wss --io epoll -t 1 -c 10 -d ${secs}s -q --json $out.json" ;;
        wss-tokio) echo "$STAMPEDE_BIN run $wss --io tokio -t 1 -c 10 -d ${secs}s -q --json $out.json" ;;
        http-epoll) echo "$STAMPEDE_BIN run $http --io epoll -t 1 -c 10 -d ${secs}s -q --json $out.json" ;;
        python) echo "$PYTHON $ROOT/bench/ws-echo-client.py $ws 10 $secs" ;;
    esac
}
tool_p50_us() { [ "$1" = python ] && echo - || stampede_p50_us "$2"; }
tool_count() {
    if [ "$1" = python ]; then jq -r '.messages' "$2.stdout" 2>/dev/null || echo -
    else stampede_count "$2"; fi
}
tool_errors() { [ "$1" = python ] || stampede_errors "$2"; }

ROWS="$TMP/rows.tsv"; : > "$ROWS"
TOOLS="ws-epoll ws-tokio http-epoll"
[ "$HAVE_PYTHON" = 0 ] || TOOLS="$TOOLS python"
[ "$WSS" = 0 ] || TOOLS="$TOOLS wss-epoll wss-tokio"
[ "$URING" = 0 ] || TOOLS="$TOOLS ws-uring"
[ -z "$ONLY" ] || TOOLS=${ONLY//,/ }
wait_quiet "$WAIT_QUIET"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
taskset -c 1 "$STAMPEDE_BIN" run "ws://127.0.0.1:$PORT/ws/echo" --io epoll -t 1 -c 10 -d 2s -q > /dev/null   # warm-up
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for tool in $TOOLS; do
        run_one "$round" c10 "$tool"
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

{
    echo "# WebSocket messages against keep-alive HTTP/1.1 requests, client CPU ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per client; medians shown"
    echo "- load average (1, 5, 15 min) before the warm-up: $LOAD_BEFORE; after the last round: $LOAD_AFTER"
    echo "- server: \`stampede serve --threads 1\` on core 0 (its /ws/echo and its page /; the wss:// rows: a second one with \`--tls\`, also on core 0); clients on core 1, 10 connections each"
    echo "- µs/msg = the client's user+sys CPU (wait4 rusage, every thread) / messages (requests) the server counted on /stats"
    bench_stampede_version
    [ "$HAVE_PYTHON" = 0 ] || echo "- python: $("$PYTHON" --version 2>&1), websockets $("$PYTHON" -c 'import websockets; print(websockets.__version__)')"
    bench_noise_lines | sed 's/nginx worker/server/'
    echo
    echo "| client | µs/msg (user + sys) | vs http-epoll | msg/s | p50 latency |"
    echo "|---|---|---|---|---|"
    base=$(col c10 http-epoll '1e6*($6+$7)/$4')
    for tool in $TOOLS; do
        us=$(col c10 "$tool" '1e6*($6+$7)/$4')
        usr=$(col c10 "$tool" '1e6*$6/$4'); sys=$(col c10 "$tool" '1e6*$7/$4')
        rps=$(col c10 "$tool" '$4/$5')
        p50=$(awk -F'\t' -v t="$tool" '$3==t && $8 ~ /^[0-9.]+$/ {print $8}' "$ROWS" | median)
        case $p50 in nan|"") p50="-" ;; *) p50=$(awk -v p="$p50" 'BEGIN { printf "%.0f µs", p }') ;; esac
        awk -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v b="$base" -v rps="$rps" -v p="$p50" \
            'BEGIN { r = (b == "nan") ? "-" : sprintf("%.3f×", us / b)
                     printf "| %s | %.2f (%.2f + %.2f) | %s | %.0f | %s |\n", t, us, u, s, r, rps, p }'
    done
    echo
    # ratio A B: median µs/msg of row A over row B's, or nothing when either is missing.
    ratio() {
        local a b
        a=$(col c10 "$1" '1e6*($6+$7)/$4'); b=$(col c10 "$2" '1e6*($6+$7)/$4')
        [ "$a" != nan ] && [ "$b" != nan ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }'
    }
    r=$(ratio ws-epoll http-epoll || true)
    [ -z "$r" ] || awk -v r="$r" 'BEGIN { printf "Goal: ws-epoll <= http-epoll: %s (%s×).\n", (r <= 1 ? "holds" : "does not hold"), r }'
    r=$(ratio python ws-epoll || true)
    [ -z "$r" ] || awk -v r="$r" 'BEGIN { printf "Goal: ws-epoll <= python / 2: %s (python costs %s× ws-epoll).\n", (r >= 2 ? "holds" : "does not hold"), r }'
    r=$(ratio ws-epoll ws-tokio || true)
    [ -z "$r" ] || awk -v r="$r" 'BEGIN { printf "`--io auto` for ws://: %s (epoll costs %s× tokio per message).\n", (r < 1 ? "epoll" : "tokio"), r }'
    r=$(ratio wss-epoll wss-tokio || true)
    [ -z "$r" ] || awk -v r="$r" 'BEGIN { printf "`--io auto` for wss://: %s (epoll costs %s× tokio per message).\n", (r < 1 ? "epoll" : "tokio"), r }'
    r=$(ratio ws-uring ws-epoll || true)
    [ -z "$r" ] || echo "ws:// on io_uring costs ${r}× epoll per message."
    echo
    echo "Commands (under \`taskset -c 1\`; PORT = the server's):"
    echo
    for tool in $TOOLS; do
        echo "- $tool: \`$(client_cmd "$tool" c10 "$DURATION" out | sed "s#$STAMPEDE_BIN#stampede#; s#$PYTHON#python3#; s#$ROOT/##; s#:$PORT/#:PORT/#g; s#:${TLS_PORT:-none}/#:TLS_PORT/#g")\`"
    done
    echo
    bench_rounds_details client "client's own count" 2 - | sed 's/nginx requests/server count/' 
} > "$TMP/report.md"
bench_publish_report
