#!/usr/bin/env bash
# Client CPU time per request over HTTP/3 (issue 24): stampede --http3 against
# oha's HTTP/3 build on the same target, and stampede's HTTP/3 against its
# HTTP/2 over TLS on the same target, with a perf profile of where stampede's
# HTTP/3 time goes (crypto, UDP syscalls, QUIC and stream bookkeeping).
#
# Method (bench/lib.sh's helpers, as engine-vs-peers.sh)
#   - the target is the built-in server (`stampede serve --tls --http3
#     --threads 1`, pinned to core 0): nginx 1.22 (Debian) has no HTTP/3, and
#     the built-in target serves HTTP/2 over TLS and HTTP/3 on one port number,
#     so both protocols meet the same server code; requests are counted by the
#     server (`/stats` requests_total before and after each run);
#   - every client pinned to core 1, one thread; client CPU = user + sys from
#     wait4 rusage; rounds interleaved, medians;
#   - the profile: one extra stampede --http3 run under `perf record -g`,
#     summed by where each sample's own code lives.
# Scenarios
#   h3-10x10   HTTP/3, 10 conns x 10 streams (stampede --http3 --streams 10;
#              oha --http-version 3 -c 10 -p 10)
#   h2-10x10   HTTP/2 over TLS, the same shape (stampede --http2), for the
#              HTTP/3 vs HTTP/2 ratio
#   h3-50x1    HTTP/3, 50 conns x 1 stream (oha -c 50), one request in flight
#              per connection
# Usage
#   bench/http3-vs-peers.sh                     # 3 rounds x 8 s
#   bench/http3-vs-peers.sh --quick             # 1 round x 3 s, no profile
#   bench/http3-vs-peers.sh --rounds 5 --duration 10 --no-oha
# Options
#   --rounds N, --duration S, --out PATH, --no-install, --wait-quiet S, --wait-budget S,
#   --scenarios LIST (of h3-10x10,h2-10x10,h3-50x1),
#   --stampede PATH (default $STAMPEDE, else target/release/stampede, built when
#   missing), --no-oha (oha is `cargo install oha --locked --features http3`,
#   a long build; without it only the HTTP/3 vs HTTP/2 ratio), --no-profile.
# Everything is bounded: each client run has a duration, only 127.0.0.1 is used,
# the server is stopped by a trap on exit. Writes bench/results/DATE-http3.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=http3-vs-peers
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults DURATION=8 WAIT_QUIET=5 WAIT_BUDGET=300 PRE_RUN_QUIET=2 RETRIES=1
SCS=(h3-10x10 h2-10x10 h3-50x1)
WITH_OHA=1
WITH_PROFILE=1
# This script's own options (the shared ones are bench/lib.sh's bench_options).
own_option() {
    case "$1" in
        --no-oha) WITH_OHA=0; BENCH_TOOK=1 ;;
        --scenarios) IFS=, read -r -a SCS <<< "${2-}"; BENCH_TOOK=2 ;;
        --no-profile) WITH_PROFILE=0; BENCH_TOOK=1 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
bench_options own_option "$@"
[ "$QUICK" = 0 ] || WITH_PROFILE=0
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "--duration takes whole seconds, got $DURATION"
for sc in "${SCS[@]}"; do
    case $sc in h3-10x10|h2-10x10|h3-50x1) ;; *) die "unknown scenario $sc (one of h3-10x10,h2-10x10,h3-50x1)" ;; esac
done
has() { [[ " ${SCS[*]} " == *" $1 "* ]]; }
bench_start http3
OHA=""
if [ "$WITH_OHA" = 1 ]; then
    OHA=$(command -v oha) || { log "oha is not on PATH (cargo install oha --locked --features http3): no oha figures"; WITH_OHA=0; }
fi
command -v jq >/dev/null && command -v curl >/dev/null && [ -x /usr/bin/time ] \
    || die "needs jq, curl and /usr/bin/time"
bench_workspace

PORT=$(free_port)
taskset -c 0 "$STAMPEDE_BIN" serve --tls --http3 --threads 1 --port "$PORT" \
    > "$TMP/serve.log" 2>&1 &
NGINX_PID=$!            # bench_cleanup stops it (the name is lib.sh's)
NGINX_WORKER=$NGINX_PID # its CPU is left out of "other CPU"
for _ in $(seq 100); do curl -fsSk "https://127.0.0.1:$PORT/stats" -o /dev/null 2>/dev/null && break; sleep 0.1; done
curl -fsSk "https://127.0.0.1:$PORT/stats" -o /dev/null || { cat "$TMP/serve.log" >&2; die "the target does not answer"; }
URL="https://127.0.0.1:$PORT/index.html"
# The server's own count (lib.sh's measure subtracts the /stats request itself).
server_count() { curl -fsSk "https://127.0.0.1:$PORT/stats" | jq -r .requests_total; }

scenario_tools() {
    case $1 in
        h3-*) if [ "$WITH_OHA" = 1 ]; then echo "oha stampede"; else echo "stampede"; fi ;;
        h2-*) echo "stampede" ;;
    esac
}
shape() { local s=${1#*-}; echo "${s%x*} ${s#*x}"; }
client_cmd() {
    local tool=$1 sc=$2 secs=$3 out=$4 c s proto
    read -r c s < <(shape "$sc")
    proto=--http3; [[ $sc == h2-* ]] && proto=--http2
    case $tool in
        stampede) echo "$STAMPEDE_BIN run -t 1 -d ${secs}s -q --json $out.json $proto --insecure -c $c --streams $s $URL" ;;
        oha) echo "$OHA --no-tui --output-format json --http-version 3 --insecure -z ${secs}s -c $c -p $s $URL" ;;
    esac
}
display_cmd() { client_cmd "$@" | sed "s#$STAMPEDE_BIN#stampede#; s#$OHA#oha#; s#$TMP/[^ ]*#out#g; s#127.0.0.1:[0-9]*#ADDRESS#"; }
tool_p50_us() {
    case $1 in
        stampede) stampede_p50_us "$2" ;;
        oha) jq -r '.latencyPercentiles.p50 * 1e6 | floor' "$2.stdout" 2>/dev/null || echo - ;;
    esac
}
tool_count() {
    case $1 in
        stampede) stampede_count "$2" ;;
        oha) jq -r '.statusCodeDistribution["200"] // 0' "$2.stdout" 2>/dev/null || echo - ;;
    esac
}
tool_errors() {
    case $1 in
        stampede) stampede_errors "$2" ;;
        oha) jq -r '.errorDistribution | to_entries | map("\(.key): \(.value)") | join("; ")' "$2.stdout" 2>/dev/null || true ;;
    esac
}

ROWS="$TMP/rows.tsv"; : > "$ROWS"
wait_quiet "$WAIT_QUIET"
taskset -c 1 "$STAMPEDE_BIN" run -q -t 1 -d 2s --http3 --insecure -c 10 --streams 10 "$URL" > /dev/null
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in $(scenario_tools "$sc"); do run_one "$round" "$sc" "$tool"; done
    done
done

# Where the time goes: one profiled run, each sample charged to its own symbol.
PROFILE=""
if [ "$WITH_PROFILE" = 1 ] && command -v perf >/dev/null; then
    wait_quiet "$PRE_RUN_QUIET"
    # shellcheck disable=SC2046
    if taskset -c 1 perf record -q -F 999 -g -o "$TMP/perf.data" -- \
        $(client_cmd stampede h3-10x10 "$DURATION" "$TMP/profile") > /dev/null 2> "$TMP/perf.log"; then
        perf report -i "$TMP/perf.data" --no-children --sort sym --stdio 2>/dev/null \
            | awk '/^ +[0-9.]+%/ {print}' > "$TMP/symbols.txt"
        PROFILE=$(awk '
            { pct = $1; sub(/%/, "", pct); sym = $0; sub(/^ +[0-9.]+% +/, "", sym)
              k = (sym ~ /^\[k\]/)
              if (sym ~ /aes|gcm|chacha|poly1305|ring_core|GFp|sha256|sha512|x25519|ecp_nistz/) c = "crypto (ring: AEAD, header protection, handshakes)"
              else if (k && sym ~ /udp|sendmsg|recvmsg|ip_|__ip|dev_|net_|skb|sock|loopback|napi|__sys_|syscall|entry_SYSCALL|do_syscall|copy_|__x64_sys|netif|gso|gro/) c = "kernel: UDP send/receive (syscalls, GSO/GRO, loopback)"
              else if (k) c = "kernel: other (scheduler, timers, futex)"
              else if (sym ~ /quinn_proto/) c = "quinn-proto (QUIC state, packets, ACKs, streams)"
              else if (sym ~ /quinn_udp|quinn::/) c = "quinn (endpoint driver, UDP I/O)"
              else if (sym ~ /h3::|h3_quinn|qpack/) c = "h3 + h3-quinn (frames, QPACK)"
              else if (sym ~ /tokio/) c = "tokio (scheduler, timers)"
              else if (sym ~ /malloc|free|realloc|memcpy|memmove|memset|_int_/) c = "libc: malloc/free, memcpy"
              else if (sym ~ /stampede|hdrhistogram/) c = "stampede (engine, recorder)"
              else c = "other user space"
              share[c] += pct }
            END { for (c in share) printf "| %s | %.1f%% |\n", c, share[c] }' "$TMP/symbols.txt" | sort -t'|' -k3 -gr)
    else
        log "perf record failed: $(head -1 "$TMP/perf.log")"
    fi
fi

us_per_req() { col "$1" "$2" '1e6 * ($6 + $7) / $4'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "-"; else printf "%.2f×", a / b }'; }
{
    echo "# Client CPU per request over HTTP/3: stampede vs oha, and HTTP/3 vs HTTP/2 ($DATE)"
    echo
    echo "- started $START, $ROUNDS round(s) × ${DURATION}s, every client pinned to core 1 (one thread), the target to core 0"
    bench_machine_lines
    bench_stampede_version
    echo "- target: stampede serve --tls --http3 --threads 1 (HTTP/2 over TLS and HTTP/3 on one port number); requests counted by its /stats"
    if [ "$WITH_OHA" = 1 ]; then echo "- oha: $("$OHA" --version 2>/dev/null | head -1) (built with --features http3)"; else echo "- oha: not available (no oha figures)"; fi
    echo "- $("$STAMPEDE_BIN" run -q -n 1 --http3 --insecure "$URL" 2>&1 | grep -o 'UDP offload.*' | head -1)"
    bench_noise_lines
    echo
    echo "| scenario | tool | µs/req (user+sys) | user µs | sys µs | req/s | p50 µs |"
    echo "|---|---|---|---|---|---|---|"
    for sc in "${SCS[@]}"; do
        for tool in $(scenario_tools "$sc"); do
            echo "| $sc | $tool | $(us_per_req "$sc" "$tool") | $(col "$sc" "$tool" '1e6 * $6 / $4') | $(col "$sc" "$tool" '1e6 * $7 / $4') | $(col "$sc" "$tool" '$4 / $5') | $(col "$sc" "$tool" '$8') |"
        done
    done
    echo
    if [ "$WITH_OHA" = 1 ]; then
        for sc in h3-10x10 h3-50x1; do
            if has "$sc"; then echo "- $sc: stampede / oha = $(ratio "$(us_per_req "$sc" stampede)" "$(us_per_req "$sc" oha)")"; fi
        done
    fi
    if has h3-10x10 && has h2-10x10; then
        echo "- HTTP/3 / HTTP/2 over TLS (stampede, 10 × 10): $(ratio "$(us_per_req h3-10x10 stampede)" "$(us_per_req h2-10x10 stampede)")"
    fi
    if [ -n "$PROFILE" ]; then
        echo
        echo "Where stampede's HTTP/3 time goes (perf record -F 999 -g, h3-10x10, self time by symbol, grouped):"
        echo
        echo "| where | share of samples |"
        echo "|---|---|"
        echo "$PROFILE"
        echo
        echo "Top symbols:"
        echo
        echo '```'
        head -25 "$TMP/symbols.txt"
        echo '```'
    fi
    echo
    echo "Commands:"
    echo
    for sc in "${SCS[@]}"; do for tool in $(scenario_tools "$sc"); do echo "- \`$(display_cmd "$tool" "$sc" "$DURATION" out)\`"; done; done
    echo
    echo "Every round (round, scenario, tool, server requests, wall s, user s, sys s, p50 µs, tool's count, other CPU %):"
    echo
    echo '```'
    cut -f1-10 "$ROWS"
    echo '```'
} > "$OUT"
log "wrote $OUT"
cat "$OUT"
