#!/usr/bin/env bash
# Client CPU time per request on the paths client-vs-wrk.sh does not cover, each
# against the peer made for it (issue 17): the open model against wrk2, TLS
# against wrk over https, HTTP/2 (TLS and h2c) against h2load, and a paced
# byte-moving floor probe for the open model.
#
# Method (the same as client-vs-wrk.sh, whose helpers live in bench/lib.sh)
#   - a private nginx (1 worker pinned to core 0) with: a plain port (the page
#     and stub_status), a TLS port (self-signed ECDSA P-256 certificate made
#     here), two TLS ports for new-connection-per-request runs (one with
#     session resumption: tickets and a session cache; one without either),
#     each logging "$ssl_session_reused $ssl_protocol $ssl_cipher" so the
#     report can say how many handshakes each client resumed; an HTTP/2 TLS
#     port (`listen ... ssl http2`) and an h2c port (`listen ... http2`);
#   - every client pinned to core 1, one thread; client CPU = user + sys from
#     wait4 rusage; requests = nginx's stub_status count (global over ports);
#   - rounds interleaved, medians; ratio = median(stampede) / median(peer);
#   - open model: stampede `-r R -c 100 -t 1`, wrk2 `-t1 -c100 -R R`, and
#     floor-paced (bench/floor: requests on a fixed schedule, one epoll_pwait2
#     per wait with a nanosecond timeout, 1 ns timer slack, no parsing); the
#     rate each held = nginx's count / duration; lateness (actual − intended
#     send): stampede's schedule.lateness_p99_us (p99 over every send) and
#     late_sends (> 1 ms late) from --json, the probe's own p99 over all sends.
# Scenarios
#   open20k open50k           open model at 20,000 and 50,000 req/s, 100 conns
#   tls-ka100                 TLS keep-alive, 100 conns (stampede --insecure; wrk https)
#   tls-close100              TLS, new connection per request, session resumption on
#                             (stampede --no-keepalive; wrk -H 'Connection: close')
#   tls-close100-noresume     the same, full handshakes (nginx without tickets or
#                             session cache; stampede --no-tls-resume)
#   h2-10x10 h2-100x100       HTTP/2 over TLS, conns x streams (stampede --http2
#                             --streams; h2load -c -m)
#   h2c-10x10 h2c-100x100     the same over h2c (prior knowledge)
# Usage
#   bench/engine-vs-peers.sh                         # 3 rounds x 10 s, all scenarios
#   bench/engine-vs-peers.sh --quick                 # 1 round x 3 s, no syscall runs
#   bench/engine-vs-peers.sh --scenarios open20k,h2c-10x10 --rounds 5
#   STAMPEDE=/path/to/stampede bench/engine-vs-peers.sh   (or --stampede PATH)
# Options
#   --rounds N, --duration S, --scenarios LIST, --out PATH, --no-install,
#   --wait-quiet S, --wait-budget S, --no-syscalls   as in client-vs-wrk.sh
#   --stampede PATH    the stampede binary (default $STAMPEDE, else
#                      target/release/stampede, built when missing)
#   --wrk2-src PATH    build wrk2 from this source tarball (giltene/wrk2);
#                      otherwise `wrk2` on PATH is used
#   --no-floor         skip the paced floor probe (built with cargo otherwise)
#   --epoll            also run stampede with --io epoll (tool "stampede-epoll")
#   --uring            HTTP/2 scenarios: also run stampede with --io uring
#                      (tool "stampede-uring")
#                      in the open-model, TLS keep-alive and HTTP/2 scenarios
#                      (over HTTP/2: the reactor's own codec, stampede-h2); the
#                      HTTP/2 scenarios then run `--io tokio` (the `h2` crate)
#                      as "stampede-tokio" in place of the default's "stampede"
#   --tls 1.2|1.3      the TLS version nginx offers (default 1.3)
# Everything is bounded: each client run has a duration, only 127.0.0.1 is used,
# nginx is stopped by a trap on exit. Writes bench/results/DATE-peers.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=engine-vs-peers
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults WAIT_BUDGET=1200
ALL_SCENARIOS="open20k,open50k,tls-ka100,tls-close100,tls-close100-noresume,h2-10x10,h2-100x100,h2c-10x10,h2c-100x100"
SCENARIOS=$ALL_SCENARIOS
WITH_FLOOR=1
WITH_EPOLL=0
WITH_URING=0
WITH_SYSCALLS=1
SYSCALL_DURATION=3
WRK2_SRC=""
TLS_VERSION=1.3
# This script's own options (the shared ones are bench/lib.sh's bench_options).
own_option() {
    case "$1" in
        --scenarios) SCENARIOS=${2-}; BENCH_TOOK=2 ;;
        --no-floor) WITH_FLOOR=0; BENCH_TOOK=1 ;;
        --epoll) WITH_EPOLL=1; BENCH_TOOK=1 ;;
        --uring) WITH_URING=1; BENCH_TOOK=1 ;;
        --no-syscalls) WITH_SYSCALLS=0; BENCH_TOOK=1 ;;
        --wrk2-src) WRK2_SRC=${2-}; BENCH_TOOK=2 ;;
        --tls) TLS_VERSION=${2-}; BENCH_TOOK=2 ;;
        *) BENCH_TOOK=0 ;;
    esac
}
bench_options own_option "$@"
[ "$QUICK" = 0 ] || WITH_SYSCALLS=0
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "--duration takes whole seconds, got $DURATION"
case $TLS_VERSION in 1.2|1.3) ;; *) die "--tls takes 1.2 or 1.3, got $TLS_VERSION" ;; esac
IFS=, read -r -a SCS <<< "$SCENARIOS"
for sc in "${SCS[@]}"; do
    [[ ,$ALL_SCENARIOS, == *,$sc,* ]] || die "unknown scenario $sc (one of $ALL_SCENARIOS)"
done
wants() { [[ ,$SCENARIOS, == *,$1* ]]; }   # a scenario of this family is asked for

bench_start peers

# ---------------------------------------------------------------- dependencies
mapfile -t need_pkgs < <(bench_base_missing)
command -v openssl >/dev/null || need_pkgs+=(openssl)
command -v wrk >/dev/null || need_pkgs+=(wrk)   # the warm-up and the TLS peer
wants h2 && ! command -v h2load >/dev/null && need_pkgs+=(nghttp2-client)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
nginx -V 2>&1 | grep -q with-http_v2_module || die "this nginx lacks the HTTP/2 module"
bench_check_perf

bench_workspace
WRK2=""
if wants open; then
    if [ -n "$WRK2_SRC" ]; then
        [ -f "$WRK2_SRC" ] || die "--wrk2-src: no such file $WRK2_SRC"
        log "building wrk2 from $WRK2_SRC"
        mkdir -p "$TMP/wrk2"
        tar -xzf "$WRK2_SRC" -C "$TMP/wrk2"
        wrk2_dir=$(find "$TMP/wrk2" -mindepth 1 -maxdepth 1 -type d | head -1)
        make -C "$wrk2_dir" -j"$(nproc)" > "$TMP/wrk2/build.log" 2>&1 \
            || { tail -20 "$TMP/wrk2/build.log" >&2; die "wrk2 did not build (needs build-essential, libssl-dev, zlib1g-dev)"; }
        WRK2="$wrk2_dir/wrk"
    else
        WRK2=$(command -v wrk2) || die "wrk2 is not on PATH: give --wrk2-src TARBALL (giltene/wrk2 source)"
    fi
    if [ "$WITH_FLOOR" = 1 ]; then bench_floor_probes floor-paced; fi
fi

# ---------------------------------------------------------------- nginx
PORT=$(free_port)
TLS_PORT=$(free_port); RESUME_PORT=$(free_port); NORESUME_PORT=$(free_port)
H2_PORT=$(free_port); H2C_PORT=$(free_port)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2> "$TMP/openssl.log" \
    || { cat "$TMP/openssl.log" >&2; die "could not make the test certificate"; }
chmod 644 "$TMP/key.pem"   # read by the nginx worker
tls_server() {  # port extra-listen-flags extra-directives
    cat <<EOF
    server {
        listen 127.0.0.1:$1 ssl $2 backlog=4096;
        ssl_protocols TLSv$TLS_VERSION;
        ssl_certificate $TMP/cert.pem;
        ssl_certificate_key $TMP/key.pem;
        root $TMP/www;
$3
    }
EOF
}
servers="$(bench_plain_server)
    log_format tls_resumed '\$ssl_session_reused \$ssl_protocol \$ssl_cipher';
$(tls_server "$TLS_PORT" "" "")
$(tls_server "$RESUME_PORT" "" "        ssl_session_cache shared:resume:10m; ssl_session_tickets on;
        access_log $TMP/logs/resume.log tls_resumed;")
$(tls_server "$NORESUME_PORT" "" "        ssl_session_cache off; ssl_session_tickets off;
        access_log $TMP/logs/noresume.log tls_resumed;")
$(tls_server "$H2_PORT" http2 "")
    server {
        listen 127.0.0.1:$H2C_PORT http2 backlog=4096;
        root $TMP/www;
    }"
bench_nginx_start "$servers"
curl -fsSk "https://127.0.0.1:$TLS_PORT/index.html" -o /dev/null || die "nginx's TLS port does not answer"
RESPONSE_BYTES=$(curl -s -o /dev/null -w '%{size_header} %{size_download}' "$URL" | awk '{print $1 + $2}')

# ---------------------------------------------------------------- scenarios
scenario_title() {
    case $1 in
        open20k) echo "open model -r 20000, 100 conns" ;;
        open50k) echo "open model -r 50000, 100 conns" ;;
        tls-ka100) echo "TLS keep-alive, 100 conns" ;;
        tls-close100) echo "TLS new connection per request, 100 conns, resumption" ;;
        tls-close100-noresume) echo "TLS new connection per request, 100 conns, full handshakes" ;;
        h2-10x10) echo "HTTP/2 over TLS, 10 conns x 10 streams" ;;
        h2-100x100) echo "HTTP/2 over TLS, 100 conns x 100 streams" ;;
        h2c-10x10) echo "h2c, 10 conns x 10 streams" ;;
        h2c-100x100) echo "h2c, 100 conns x 100 streams" ;;
    esac
}
scenario_rate() { case $1 in open20k) echo 20000 ;; open50k) echo 50000 ;; esac; }
scenario_tools() {
    case $1 in
        open*) echo "wrk2 stampede$(epoll_tool)$([ "$WITH_FLOOR" = 1 ] && echo " floor-paced")" ;;
        tls-ka100) echo "wrk stampede$(epoll_tool)" ;;
        tls-*) echo "wrk stampede" ;;
        h2*) if [ "$WITH_EPOLL" = 1 ]; then echo "h2load stampede-tokio stampede-epoll$(uring_tool)"; else echo "h2load stampede$(uring_tool)"; fi ;;
    esac
}
# " stampede-epoll" when --epoll asks for the epoll reactor as well.
epoll_tool() { if [ "$WITH_EPOLL" = 1 ]; then echo " stampede-epoll"; fi; }
# " stampede-uring" when --uring asks for the io_uring reactor (HTTP/2).
uring_tool() { if [ "$WITH_URING" = 1 ]; then echo " stampede-uring"; fi; }
scenario_peer() { scenario_tools "$1" | cut -d' ' -f1; }
# HTTP/2 scenarios: connections and streams from the name (h2-10x10 -> 10 10)
h2_shape() { local s=${1#*-}; echo "${s%x*} ${s#*x}"; }
h2_url() { case $1 in h2c-*) echo "http://127.0.0.1:$H2C_PORT/index.html" ;; *) echo "https://127.0.0.1:$H2_PORT/index.html" ;; esac; }
tls_url() {
    case $1 in
        tls-ka100) echo "https://127.0.0.1:$TLS_PORT/index.html" ;;
        tls-close100) echo "https://127.0.0.1:$RESUME_PORT/index.html" ;;
        tls-close100-noresume) echo "https://127.0.0.1:$NORESUME_PORT/index.html" ;;
    esac
}
tls_log() { case $1 in tls-close100) echo "$TMP/logs/resume.log" ;; tls-close100-noresume) echo "$TMP/logs/noresume.log" ;; esac; }

# The client command for (tool, scenario, seconds); reports go to $4's files.
client_cmd() {
    local tool=$1 sc=$2 secs=$3 out=$4
    local st="$STAMPEDE_BIN run -t 1 -d ${secs}s -q --json $out.json"
    case $sc in
        open*)
            local r; r=$(scenario_rate "$sc")
            case $tool in
                wrk2) echo "$WRK2 -t1 -c100 -d${secs}s -R$r --latency $URL" ;;
                stampede) echo "$st -r $r -c 100 $URL" ;;
                stampede-epoll) echo "$st --io epoll -r $r -c 100 $URL" ;;
                floor-paced) echo "$TMP/floor-paced 127.0.0.1:$PORT 100 $secs /index.html $RESPONSE_BYTES $r" ;;
            esac ;;
        tls-*)
            local u close=0 flags=""; u=$(tls_url "$sc")
            [ "$sc" = tls-ka100 ] || close=1
            case $tool in
                wrk) if [ "$close" = 1 ]; then echo "wrk -t1 -c100 -d${secs}s --latency -H 'Connection: close' $u"
                     else echo "wrk -t1 -c100 -d${secs}s --latency $u"; fi ;;
                stampede)
                    [ "$close" = 1 ] && flags=" --no-keepalive"
                    [ "$sc" = tls-close100-noresume ] && flags="$flags --no-tls-resume"
                    echo "$st -c 100 --insecure$flags $u" ;;
                stampede-epoll) echo "$st --io epoll -c 100 --insecure $u" ;;
            esac ;;
        h2*)
            local c s u; read -r c s < <(h2_shape "$sc"); u=$(h2_url "$sc")
            case $tool in
                h2load) echo "h2load -t1 -c$c -m$s -D$secs $u" ;;
                stampede|stampede-tokio|stampede-epoll|stampede-uring)
                    local k="" io=""; [[ $sc == h2c-* ]] || k=" --insecure"
                    [ "$tool" = stampede ] || io=" --io ${tool#stampede-}"
                    echo "$st$io --http2 -c $c --streams $s$k $u" ;;
            esac ;;
    esac
}
display_cmd() {
    client_cmd "$@" | sed "s#$STAMPEDE_BIN#stampede#; s#$WRK2#wrk2#; s#$TMP/floor-#bench/floor/target/release/floor-#;
        s#$TMP/[^ ]*#out#g; s#127.0.0.1:[0-9]*#ADDRESS#"
}

tool_p50_us() {
    local tool=$1 out=$2
    case $tool in
        wrk|wrk2) wrk_p50_us "$out.stdout" ;;
        stampede*) stampede_p50_us "$out" ;;
        floor-paced) echo - ;;
        # h2load prints min/max/mean/sd of "time for request", no percentiles
        h2load) echo - ;;
    esac
}
tool_count() {
    local tool=$1 out=$2
    case $tool in
        wrk|wrk2) wrk_count "$out" ;;
        stampede*) stampede_count "$out" ;;
        floor-paced) awk '{print $2}' "$out.stdout" ;;
        h2load) awk '/^requests:/ {print $8}' "$out.stdout" ;;
    esac
}
tool_errors() {
    local tool=$1 out=$2
    case $tool in
        wrk|wrk2) wrk_errors "$out" ;;
        stampede*) stampede_errors "$out" ;;
        h2load) awk '/^requests:/ && ($10 != 0 || $12 != 0 || $14 != 0) {print}' "$out.stdout" ;;
        floor-paced) [ -s "$out.stderr" ] && head -1 "$out.stderr" || true ;;
    esac
}
# Before a TLS new-connection run: where its server's log stands.
pre_measure() {
    local logfile; logfile=$(tls_log "$2")
    [ -n "$logfile" ] || return 0
    if [ -f "$logfile" ]; then wc -l < "$logfile" > "$3.logstart"; else echo 0 > "$3.logstart"; fi
}
# One more column: stampede's event loop, lateness (open model), resumed
# handshakes (TLS new connections).
tool_extra() {
    local io note
    note=$(scenario_note "$@")
    [[ $1 == stampede* ]] || { echo "$note"; return; }
    io=$(jq -r '.plan.io // "?"' "$3.json" 2>/dev/null || echo "?")
    case $note in -) echo "io $io" ;; *) echo "io $io; $note" ;; esac
}
scenario_note() {
    local tool=$1 sc=$2 out=$3 logfile
    case $sc in
        open*)
            case $tool in
                stampede|stampede-epoll) jq -r '.schedule | if . == null then "-" else "lateness p99 \(.lateness_p99_us // "?") µs, late>1ms \(.late_sends)" end' "$out.json" 2>/dev/null || echo - ;;
                floor-paced) awk '{for (i = 1; i < NF; i++) { if ($i == "p99") p = $(i+1); if ($i == "over_1ms") o = $(i+1) }
                                   printf "late>1ms %s, p99 of all %s µs", o, p}' "$out.stdout" ;;
                *) echo - ;;
            esac ;;
        tls-close*)
            logfile=$(tls_log "$sc")
            sleep 0.2   # nginx writes a line when each request ends
            tail -n +"$(( $(cat "$out.logstart") + 1 ))" "$logfile" \
                | awk '{ n++; if ($1 == "r") r++; v[$2 " " $3] = 1 }
                       END { for (k in v) s = s (s ? ", " : "") k; if (n) printf "resumed %.0f%% (%s)", 100 * r / n, s; else print "-" }' ;;
        *) echo - ;;
    esac
}

ROWS="$TMP/rows.tsv"; : > "$ROWS"
SYSROWS="$TMP/sys.tsv"; : > "$SYSROWS"

# ---------------------------------------------------------------- run
wait_quiet "$WAIT_QUIET"
# warm-up: page cache, nginx worker, the TLS key
taskset -c 1 wrk -t1 -c100 -d2s "$URL" > /dev/null
taskset -c 1 wrk -t1 -c10 -d1s "https://127.0.0.1:$TLS_PORT/index.html" > /dev/null
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in $(scenario_tools "$sc"); do run_one "$round" "$sc" "$tool"; done
    done
done
if [ "$WITH_SYSCALLS" = 1 ]; then
    for sc in "${SCS[@]}"; do
        for tool in $(scenario_tools "$sc"); do count_syscalls "$sc" "$tool"; done
    done
fi

# ---------------------------------------------------------------- report
# the notes of every round of (scenario, tool), "; "-joined
notes() { awk -F'\t' -v sc="$1" -v t="$2" '$2==sc && $3==t && $11!="-" { s = s (s ? "; " : "") $11 } END { print (s ? s : "-") }' "$ROWS"; }
{
    echo "# Client CPU per request on the open model, TLS and HTTP/2: stampede vs wrk2, wrk, h2load ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per tool and scenario; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte index.html, access_log off except on the two TLS new-connection ports; clients on core 1, one thread each"
    echo "- µs/req = client user+sys CPU (wait4 rusage) / requests counted by nginx (stub_status); held = nginx's count / ${DURATION} s"
    echo "- TLS $TLS_VERSION only (nginx ssl_protocols); self-signed ECDSA P-256 certificate; the negotiated protocol and cipher are in the notes of the new-connection rows"
    bench_stampede_version
    echo "- wrk: $(wrk --version 2>&1 | head -1 | awk '{print $2}')$( [ -n "$WRK2" ] && echo "; wrk2: $WRK2")$(command -v h2load >/dev/null && echo "; h2load: $(h2load --version 2>&1 | awk '{print $2}')")"
    echo "- nginx: $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    echo "- stampede's event loop: in the notes of its rows (\`io\`, from the result's plan.io)"
    bench_noise_lines
    echo
    echo "| scenario | tool | µs/req (user + sys) | vs peer | req/s | held | syscalls/req | p50 latency | notes |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for sc in "${SCS[@]}"; do
        peer=$(scenario_peer "$sc")
        peer_us=$(col "$sc" "$peer" '1e6*($6+$7)/$4')
        rate=$(scenario_rate "$sc")
        for tool in $(scenario_tools "$sc"); do
            us=$(col "$sc" "$tool" '1e6*($6+$7)/$4')
            [ "$us" = nan ] && continue
            usr=$(col "$sc" "$tool" '1e6*$6/$4'); sys=$(col "$sc" "$tool" '1e6*$7/$4')
            rps=$(col "$sc" "$tool" '$4/$5')
            held=-
            [ -n "$rate" ] && held=$(col "$sc" "$tool" "\$4/$DURATION" | awk -v r="$rate" '{ printf "%.0f/s (%.1f%%)", $1, 100 * $1 / r }')
            p50=$(awk -F'\t' -v sc="$sc" -v t="$tool" '$2==sc && $3==t && $8 ~ /^[0-9.]+$/ {print $8}' "$ROWS" | median)
            case $p50 in nan|"") p50="-" ;; *) p50=$(awk -v p="$p50" 'BEGIN { printf "%.0f µs", p }') ;; esac
            awk -v sc="$(scenario_title "$sc")" -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v w="$peer_us" \
                -v rps="$rps" -v h="$held" -v sy="$(syscalls_per_req "$sc" "$tool")" -v p="$p50" -v n="$(notes "$sc" "$tool")" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.2f× | %.0f | %s | %s | %s | %s |\n", sc, t, us, u, s, us / w, rps, h, sy, p, n }'
        done
        if [[ $sc == open* ]] && [ "$WITH_FLOOR" = 1 ]; then
            for tool in stampede$(epoll_tool); do
                awk -v a="$(col "$sc" "$tool" '1e6*($6+$7)/$4')" -v b="$(col "$sc" floor-paced '1e6*($6+$7)/$4')" -v sc="$(scenario_title "$sc")" -v t="$tool" \
                    'BEGIN { if (b > 0 && a == a) printf "| %s | %s vs floor-paced | | %.2f× | | | | | |\n", sc, t, a / b }'
            done
        fi
    done
    echo
    echo "Commands (each under \`taskset -c 1\`; ADDRESS = 127.0.0.1 and the scenario's nginx port):"
    echo
    for sc in "${SCS[@]}"; do
        for tool in $(scenario_tools "$sc"); do echo "- $sc: \`$(display_cmd "$tool" "$sc" "$DURATION" x)\`"; done
    done
    echo
    bench_rounds_details "scenario|tool" "client's own count" 2 notes
} > "$TMP/report.md"
bench_publish_report
