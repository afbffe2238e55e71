#!/usr/bin/env bash
# Connection ladder: client memory and CPU per request as the connection count
# grows (10 … 50,000), against the built-in target. Issue 11 asks for 50,000
# keep-alive connections from one process, all doing requests, with client
# memory <= 4 KiB per connection beyond a fixed base.
#
# Method
#   - `stampede serve --threads 1` on core 0 (its --max-connections and open-file
#     limit sized for the largest rung); the client on core 1, one thread;
#   - each rung: `stampede URL -c N -t 1 -d DUR -q --json`, from
#     --source-addrs 127.0.0.1-127.0.0.4 (each local address has its own ~28k
#     ephemeral ports towards one server port);
#   - client RSS = its own monitor's maximum (monitor.processes[role=client]);
#     CPU per request = client user+sys (wait4 rusage) / requests it completed;
#     opening the connections is part of the run and of its cost (no warm-up
#     unless --warmup is given, which then inflates µs/req);
#   - per-connection memory = (RSS(N) - RSS(smallest rung)) / (N - smallest N).
# Usage
#   bench/connection-ladder.sh                      # 10,100,1000,10000,50000; 8 s each
#   bench/connection-ladder.sh --rungs 10,1000 --duration 4s --warmup 1s
#   bench/connection-ladder.sh --io tokio           # the same through the tokio path
# Writes bench/results/DATE-ladder.md (or --out PATH). Everything runs on
# 127.0.0.0/8 and every run is bounded by its duration. Needs root for the
# 50,000 rung (the hard open-file limit is raised by stampede itself).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNGS="10,100,1000,10000,50000"
DURATION=8s
WARMUP=""
IO=auto
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rungs) RUNGS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --warmup) WARMUP=$2; shift ;;
        --io) IO=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "connection-ladder: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

STAMPEDE=${STAMPEDE:-$ROOT/target/release/stampede}
[ -x "$STAMPEDE" ] || (cd "$ROOT" && cargo build --release --quiet)
command -v jq >/dev/null || { echo "connection-ladder: needs jq (apt-get install jq)" >&2; exit 2; }
DATE=$(date -u +%Y-%m-%d)
OUT=${OUT:-$ROOT/bench/results/$DATE-ladder.md}
TMP=$(mktemp -d)
BIN=$TMP/stampede
cp "$STAMPEDE" "$BIN"   # a rebuild during the run has no effect
PORT=18300
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

taskset -c 0 "$BIN" serve --port $PORT --threads 1 --max-connections 120000 >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$PORT/" -o /dev/null 2>/dev/null && break; sleep 0.1; done

ROWS=$TMP/rows
SKIPPED=$TMP/skipped
: > "$ROWS"; : > "$SKIPPED"
for n in ${RUNGS//,/ }; do
    hard=$(ulimit -Hn)
    if [ "$hard" != unlimited ] && [ $((n + 100)) -gt "$hard" ] && ! (ulimit -Hn $((n + 100))) 2>/dev/null; then
        # Without CAP_SYS_RESOURCE nobody in this process tree can raise it.
        echo "- $n connections: not run: the hard open-file limit is $hard and this process may not raise it (CAP_SYS_RESOURCE missing); run as root on a host that allows \`ulimit -Hn $((n + 100))\`" >> "$SKIPPED"
        echo "[ladder] $n connections skipped: hard open-file limit $hard" >&2
        continue
    fi
    sleep 2   # let the previous rung's sockets close
    /usr/bin/time -f "%U %S" -o "$TMP/time" taskset -c 1 "$BIN" "http://127.0.0.1:$PORT/" \
        -c "$n" -t 1 -d "$DURATION" ${WARMUP:+--warmup "$WARMUP"} --io "$IO" \
        --source-addrs 127.0.0.1-127.0.0.4 -q --json "$TMP/r.json" >"$TMP/out" 2>&1 \
        || { echo "connection-ladder: the $n-connection run failed:" >&2; cat "$TMP/out" >&2; exit 1; }
    read -r user sys < "$TMP/time"
    jq -r --arg n "$n" --arg u "$user" --arg s "$sys" '
        ([.monitor.processes[] | select(.role == "client")][0]) as $c |
        [$n, .plan.io, .requests.success, .requests.errors, (.rps | floor),
         .latency_us.p99, .connections.opened, $c.rss_max_bytes,
         ((($u|tonumber) + ($s|tonumber)) * 1e6 / (.requests.completed + 0.0001))] | @tsv' \
        "$TMP/r.json" >> "$ROWS"
    tail -1 "$ROWS" | awk -F'\t' '{printf "[ladder] %6d conns (%s): %d ok, %d errors, %d req/s, RSS %.1f MiB, %.2f us/req\n", $1, $2, $3, $4, $5, $8/1048576, $9}' >&2
done

{
    echo "# Connection ladder ($DATE)"
    echo
    echo "- machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), kernel $(uname -r)"
    echo "- started $(date -u +%Y-%m-%dT%H:%MZ); stampede $("$BIN" --version | awk '{print $2}') ($(git -C "$ROOT" rev-parse --short HEAD)), --io $IO"
    echo "- server: \`stampede serve --threads 1\` on core 0; client on core 1: \`stampede URL -c N -t 1 -d $DURATION ${WARMUP:+--warmup $WARMUP }--source-addrs 127.0.0.1-127.0.0.4\`"
    echo "- µs/req = client user+sys (rusage) / requests completed; opening the connections is part of the run, so large rungs carry their setup"
    echo
    echo "| connections | io | ok | errors | req/s | p99 | connections opened | client RSS | µs/req | memory per connection over the first rung |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' 'NR == 1 {n0 = $1; r0 = $8}
        {per = (NR == 1) ? "-" : sprintf("%.2f KiB", ($8 - r0) / ($1 - n0) / 1024);
         printf "| %d | %s | %d | %d | %d | %.1f ms | %d | %.1f MiB | %.2f | %s |\n", $1, $2, $3, $4, $5, $6/1000, $7, $8/1048576, $9, per}' "$ROWS"
    if [ -s "$SKIPPED" ]; then echo; cat "$SKIPPED"; fi
} > "$OUT"
cat "$OUT"
echo "[ladder] wrote $OUT" >&2
