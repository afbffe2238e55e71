#!/usr/bin/env bash
# Client CPU time per request: stampede side by side with wrk (and ab) against nginx.
#
# Why CPU per request and not req/s: on a 2-core loopback box nginx (one worker,
# core 0) saturates at roughly the same req/s whatever the client, so req/s
# cannot tell clients apart. What differs is how much CPU the client burns per
# request on its own core (core 1). See issue 2 (goal: <= 1.5x wrk) and issue 11
# (goal: <= 0.75x wrk).
#
# Method
#   - a private nginx (temp dir, 1 worker, pinned to core 0 with taskset and
#     worker_cpu_affinity, 127.0.0.1 on a free port, 515-byte index.html,
#     access_log off, keepalive_requests 1000000, keepalive_timeout 65);
#   - every client pinned to core 1 with taskset, one thread each;
#   - client CPU = user + sys from wait4() rusage (/usr/bin/time), which covers
#     all threads of the client and the loopback softirq work run in its context;
#   - requests = what nginx itself counted: stub_status "requests" read before
#     and after the run, minus the one status request in between;
#   - rounds interleaved (wrk, stampede, [ab], wrk, stampede, ...), median of the
#     rounds per scenario and tool; ratio = median(stampede) / median(wrk);
#   - syscalls per request in a separate short run per tool under
#     `perf stat -e raw_syscalls:sys_enter` (tracepoints cost a little per
#     syscall, so they never run during the CPU rounds);
#   - "other CPU" per round = machine-wide busy time minus client minus nginx
#     worker: a noise gauge (other engineers compiling on the same box).
#
# Usage
#   bench/client-vs-wrk.sh                 # 3 rounds x 10 s, all scenarios (~8 min)
#   bench/client-vs-wrk.sh --quick         # 1 round x 5 s, no ab, short syscall runs (< 2 min)
#   bench/client-vs-wrk.sh --rounds 5 --duration 20 --no-ab --no-syscalls
#   bench/client-vs-wrk.sh --scenarios ka100,c1
#   STAMPEDE=/path/to/stampede bench/client-vs-wrk.sh
# Options
#   --rounds N         interleaved rounds (default 3)
#   --duration S       seconds per client run (default 10)
#   --scenarios LIST   comma list of ka100, ka1000, close100, c1 (default all)
#   --no-ab            skip ab (ab runs by default except with --quick)
#   --oha              also run oha (installed with `cargo install oha --locked`
#                      when missing; off by default: the install compiles for minutes)
#   --epoll            also run stampede with --io epoll (tool "stampede-epoll";
#                      "stampede" is the default event loop: io_uring where the
#                      kernel offers it, epoll otherwise; the report says which)
#   --floor            also run the floor probes of bench/floor (minimal clients
#                      that only move bytes: epoll and io_uring, keep-alive
#                      scenarios only), built with cargo on first use
#   --no-syscalls      skip the perf syscall-count runs
#   --wait-quiet S     before measuring, wait until no cargo/rustc/serve-vs-nginx
#                      process has been seen and the CPUs have been idle for S
#                      seconds (default 20; 0 = off); before each run wait 4 s of
#                      quiet, and redo a run (up to 2 times) when other processes
#                      used more than 15% of a CPU during it. All waiting shares a
#                      20-minute budget, after which the report flags the noise.
#   --wait-budget S    change that budget (seconds)
#   --out PATH         where to write the markdown (default bench/results/DATE-client.md)
#   --no-install       never call apt-get
# Everything is bounded: each client run has a duration, only 127.0.0.1 is used,
# nginx is stopped by a trap on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=3
DURATION=10
SCENARIOS="ka100,ka1000,close100,c1"
WITH_AB=1
WITH_OHA=0
WITH_EPOLL=0
WITH_FLOOR=0
WITH_SYSCALLS=1
SYSCALL_DURATION=3
WAIT_QUIET=20
WAIT_BUDGET=1200     # seconds, over all waits
PRE_RUN_QUIET=4      # seconds of quiet before each client run
MAX_OTHER_CPU=15     # % of a CPU used by others that makes a run be redone
RETRIES=2
INSTALL=1
QUICK=0
OUT=""

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1; ROUNDS=1; DURATION=5; WITH_AB=0; SYSCALL_DURATION=2; WAIT_QUIET=0; PRE_RUN_QUIET=0; RETRIES=0 ;;
        --rounds) ROUNDS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --scenarios) SCENARIOS=$2; shift ;;
        --no-ab) WITH_AB=0 ;;
        --ab) WITH_AB=1 ;;
        --oha) WITH_OHA=1 ;;
        --epoll) WITH_EPOLL=1 ;;
        --floor) WITH_FLOOR=1 ;;
        --no-syscalls) WITH_SYSCALLS=0 ;;
        --wait-quiet) WAIT_QUIET=$2; shift ;;
        --wait-budget) WAIT_BUDGET=$2; shift ;;
        --out) OUT=$2; shift ;;
        --no-install) INSTALL=0 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "client-vs-wrk: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$(nproc)" -ge 2 ] || { echo "client-vs-wrk: needs at least 2 CPUs (server on 0, client on 1)" >&2; exit 2; }

DATE=$(date +%F)
[ -n "$OUT" ] || OUT="$ROOT/bench/results/$DATE-client.md"
log() { printf '[client-vs-wrk] %s\n' "$*" >&2; }

# ---------------------------------------------------------------- dependencies
need_pkgs=()
command -v nginx >/dev/null || need_pkgs+=(nginx)
command -v wrk >/dev/null || need_pkgs+=(wrk)
command -v curl >/dev/null || need_pkgs+=(curl)
[ -x /usr/bin/time ] || need_pkgs+=(time)
command -v taskset >/dev/null || need_pkgs+=(util-linux)
if [ "$WITH_AB" = 1 ] && ! command -v ab >/dev/null; then need_pkgs+=(apache2-utils); fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$INSTALL" = 1 ]; then
        SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
        log "installing ${need_pkgs[*]}"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
    else
        echo "client-vs-wrk: missing ${need_pkgs[*]} (and --no-install given)" >&2; exit 2
    fi
fi
if [ "$WITH_AB" = 1 ] && ! command -v ab >/dev/null; then log "ab unavailable: skipping it"; WITH_AB=0; fi
if [ "$WITH_OHA" = 1 ] && ! command -v oha >/dev/null; then
    if [ "$INSTALL" = 1 ] && command -v cargo >/dev/null; then
        log "installing oha with cargo (compiles for a few minutes)"
        cargo install oha --locked --quiet || true
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    command -v oha >/dev/null || { log "oha unavailable: skipping it"; WITH_OHA=0; }
fi
nginx -V 2>&1 | grep -q with-http_stub_status_module \
    || { echo "client-vs-wrk: this nginx lacks stub_status; cannot count requests server-side" >&2; exit 2; }

if [ "$WITH_SYSCALLS" = 1 ]; then
    if ! command -v perf >/dev/null || ! perf stat -e raw_syscalls:sys_enter -x, true >/dev/null 2>&1; then
        log "perf syscall tracepoints unavailable (try: apt-get install linux-perf; run as root): no syscall counts"
        WITH_SYSCALLS=0
    fi
fi

STAMPEDE_SRC=${STAMPEDE:-$ROOT/target/release/stampede}
if [ ! -x "$STAMPEDE_SRC" ]; then
    log "building stampede (cargo build --release)"
    (cd "$ROOT" && cargo build --release --quiet)
fi

# ---------------------------------------------------------------- workspace
TMP=$(mktemp -d /tmp/client-vs-wrk.XXXXXX)
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A private copy: others may rebuild target/release while this runs.
cp "$STAMPEDE_SRC" "$TMP/stampede"
STAMPEDE_BIN="$TMP/stampede"
if [ "$WITH_FLOOR" = 1 ]; then
    log "building the floor probes (bench/floor)"
    (cd "$ROOT/bench/floor" && cargo build --release --quiet)
    cp "$ROOT/bench/floor/target/release/floor-epoll" "$ROOT/bench/floor/target/release/floor-uring" "$TMP/"
fi
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

free_port() {
    local p
    for p in $(shuf -i 20000-32000 -n 100); do   # below the ephemeral range
        ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
    done
    echo "client-vs-wrk: no free port found" >&2; exit 2
}
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/index.html"
STATUS_URL="http://127.0.0.1:$PORT/nginx_status"

mkdir -p "$TMP/www" "$TMP/logs"
chmod 755 "$TMP" "$TMP/www"   # the nginx worker runs as an unprivileged user when started by root
prefix='<!DOCTYPE html>
<html><head><title>stampede benchmark page</title></head><body><p>'
suffix='</p></body></html>
'
pad=$((515 - ${#prefix} - ${#suffix}))
{ printf '%s' "$prefix"; printf '%*s' "$pad" '' | tr ' ' 'x'; printf '%s' "$suffix"; } > "$TMP/www/index.html"
[ "$(wc -c < "$TMP/www/index.html")" = 515 ] || { echo "client-vs-wrk: index.html is not 515 bytes" >&2; exit 2; }

cat > "$TMP/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
worker_cpu_affinity 01;
worker_rlimit_nofile 65536;
pid $TMP/nginx.pid;
error_log $TMP/logs/error.log warn;
events { worker_connections 16384; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 65;
    sendfile on;
    client_body_temp_path $TMP/body;
    proxy_temp_path $TMP/proxy;
    fastcgi_temp_path $TMP/fastcgi;
    uwsgi_temp_path $TMP/uwsgi;
    scgi_temp_path $TMP/scgi;
    types { text/html html; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$PORT backlog=4096;
        root $TMP/www;
        location = /nginx_status { stub_status; }
    }
}
EOF
taskset -c 0 nginx -p "$TMP" -e "$TMP/logs/error.log" -c "$TMP/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do curl -fsS "$URL" -o /dev/null 2>/dev/null && break; sleep 0.1; done
curl -fsS "$URL" -o /dev/null || { echo "client-vs-wrk: nginx did not come up:" >&2; cat "$TMP/logs/error.log" >&2; exit 2; }
NGINX_WORKER=$(pgrep -P "$NGINX_PID" | head -1)
log "nginx master $NGINX_PID worker $NGINX_WORKER on 127.0.0.1:$PORT (core 0); clients on core 1"

# ---------------------------------------------------------------- helpers
server_count() { curl -fsS "$STATUS_URL" | awk 'NR==3 {print $3}'; }
# jiffies (USER_HZ) of the whole machine that were busy, and of one process
machine_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9}' /proc/stat; }
proc_jiffies() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

noisy_procs() {
    # cargo/rustc builds or the server benchmark of another engineer
    { pgrep -x 'cargo|rustc' || true; pgrep -f 'serve-vs-nginx\.sh' || true; } | grep -v "^$$\$" || true
}
# Waits until no named build/benchmark process has been seen and the machine has
# been idle (< 10% of one CPU busy) for $1 seconds. All waits share one budget
# (WAIT_BUDGET seconds); once it is spent the script measures anyway and says so.
wait_quiet() {
    local need=$1 quiet_since now b0 b1 said=0
    [ "$need" -gt 0 ] && [ "$WAIT_BUDGET" -gt 0 ] || return 0
    quiet_since=$(date +%s)
    while :; do
        b0=$(machine_busy); sleep 2; b1=$(machine_busy)
        now=$(date +%s)
        if [ -n "$(noisy_procs)" ] || [ $((b1 - b0)) -gt $((HZ * 2 / 10)) ]; then
            quiet_since=$now
            WAIT_BUDGET=$((WAIT_BUDGET - 2))
            if [ "$said" = 0 ]; then log "machine busy: waiting for ${need}s of quiet (wait budget left ${WAIT_BUDGET}s)"; said=1; fi
        fi
        [ $((now - quiet_since)) -ge "$need" ] && return 0
        if [ "$WAIT_BUDGET" -le 0 ]; then
            log "wait budget spent: the machine stays busy, figures may be noisy"
            NOISE_NOTE="The machine stayed busy beyond the wait budget; see the other-CPU column."
            return 0
        fi
    done
}
NOISE_NOTE=""

# scenario -> connections, keep-alive?
scenario_conns() { case $1 in ka100|close100) echo 100 ;; ka1000) echo 1000 ;; c1) echo 1 ;; esac; }
scenario_ka() { case $1 in close100) echo 0 ;; *) echo 1 ;; esac; }
scenario_title() {
    case $1 in
        ka100) echo "keep-alive, 100 conns" ;;
        ka1000) echo "keep-alive, 1000 conns" ;;
        close100) echo "new connection per request, 100 conns" ;;
        c1) echo "keep-alive, 1 conn (latency)" ;;
    esac
}

# The client command for (tool, scenario, seconds); reports go to $2's files.
client_cmd() {
    local tool=$1 sc=$2 secs=$3 out=$4 c ka
    c=$(scenario_conns "$sc"); ka=$(scenario_ka "$sc")
    case $tool in
        wrk)
            if [ "$ka" = 1 ]; then echo "wrk -t1 -c$c -d${secs}s --latency $URL"
            else echo "wrk -t1 -c$c -d${secs}s --latency -H 'Connection: close' $URL"; fi ;;
        stampede)
            local flag=""; [ "$ka" = 1 ] || flag=" --no-keepalive"
            echo "$STAMPEDE_BIN run $URL -t 1 -c $c -d ${secs}s -q$flag --json $out.json" ;;
        stampede-epoll)
            local flag=""; [ "$ka" = 1 ] || flag=" --no-keepalive"
            echo "$STAMPEDE_BIN run $URL -t 1 -c $c -d ${secs}s -q$flag --io epoll --json $out.json" ;;
        floor-epoll|floor-uring)
            echo "$TMP/$tool 127.0.0.1:$PORT $c $secs /index.html $RESPONSE_BYTES" ;;
        ab)
            local k="-k "; [ "$ka" = 1 ] || k=""
            echo "ab ${k}-q -c $c -t $secs -n 100000000 $URL" ;;
        oha)
            # One worker thread like the others (taskset pins it to core 1 anyway).
            local d=""; [ "$ka" = 1 ] || d=" --disable-keepalive"
            echo "oha --no-tui -z ${secs}s -c $c$d $URL" ;;
    esac
}
# What the README/doc shows (without the temp path)
display_cmd() { client_cmd "$@" | sed "s#$STAMPEDE_BIN#stampede#; s#$TMP/floor-#bench/floor/target/release/floor-#; s#$TMP/[^ ]*#out#g; s#$URL#URL#; s#127.0.0.1:$PORT#ADDRESS#"; }

# p50 latency in µs as the tool reports it ("-" when it cannot)
tool_p50_us() {
    local tool=$1 out=$2
    case $tool in
        wrk) awk '$1=="50%" { v=$2; u=v; sub(/[0-9.]+/,"",u); sub(/[a-z]+$/,"",v);
                  m = (u=="us")?1:(u=="ms")?1000:(u=="s")?1000000:1; printf "%.1f", v*m }' "$out.stdout" ;;
        stampede|stampede-epoll) jq -r '.latency_us.p50' "$out.json" 2>/dev/null || echo - ;;
        # oha: "  50.00% in 0.3794 ms" under "Response time distribution" (unit: ms, secs or µs)
        oha) awk '$1=="50.00%" && $2=="in" { m = ($4=="ms")?1000:($4=="secs"||$4=="s")?1000000:1;
                  printf "%.1f", $3 * m; exit }' "$out.stdout" ;;
        *) echo - ;;
    esac
}
# the client's own count of completed requests, for a cross-check
tool_count() {
    local tool=$1 out=$2
    case $tool in
        wrk) awk '/requests in/ {print $1}' "$out.stdout" ;;
        stampede|stampede-epoll) jq -r '.requests.completed' "$out.json" 2>/dev/null || echo - ;;
        ab) awk '/^Complete requests:/ {print $3}' "$out.stdout" ;;
        floor-*) awk '{print $2}' "$out.stdout" ;;
        *) echo - ;;
    esac
}
tool_errors() {
    local tool=$1 out=$2
    case $tool in
        wrk) awk '/Socket errors|Non-2xx/ {printf "%s ", $0}' "$out.stdout" ;;
        stampede|stampede-epoll) jq -r '[.requests.errors, .requests.failed_status] | "errors \(.[0]) non2xx \(.[1])"' "$out.json" 2>/dev/null | grep -v 'errors 0 non2xx 0' || true ;;
        ab) awk '/^Failed requests:|^Non-2xx/ && $NF != 0 {printf "%s ", $0}' "$out.stdout" ;;
    esac
}

ROWS="$TMP/rows.tsv"   # round scenario tool server_requests wall user sys p50 tool_count other_cpu_pct
: > "$ROWS"
measure() {  # round scenario tool -> one TSV row on stdout, progress on stderr
    local round=$1 sc=$2 tool=$3 out="$TMP/r$1-$2-$3" cmd before after busy0 busy1 ng0 ng1 wall user sys req other
    cmd=$(client_cmd "$tool" "$sc" "$DURATION" "$out")
    before=$(server_count); busy0=$(machine_busy); ng0=$(proc_jiffies "$NGINX_WORKER")
    # shellcheck disable=SC2086
    eval taskset -c 1 /usr/bin/time -f "'%e %U %S'" -o "$out.time" $cmd > "$out.stdout" 2> "$out.stderr" \
        || log "round $round $sc $tool exited non-zero (see below)"
    busy1=$(machine_busy); ng1=$(proc_jiffies "$NGINX_WORKER"); after=$(server_count)
    read -r wall user sys < <(tail -1 "$out.time")
    req=$((after - before - 1))
    other=$(awk -v b=$((busy1 - busy0)) -v n=$((ng1 - ng0)) -v hz="$HZ" -v u="$user" -v s="$sys" -v w="$wall" \
        'BEGIN { o = (b - n) / hz - u - s; if (o < 0) o = 0; printf "%.0f", 100 * o / w }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$sc" "$tool" "$req" "$wall" "$user" "$sys" \
        "$(tool_p50_us "$tool" "$out")" "$(tool_count "$tool" "$out")" "$other"
    local errs; errs=$(tool_errors "$tool" "$out")
    [ -z "$errs" ] || log "  $tool $sc: $errs"
    [ "$req" -gt 0 ] || { log "  $tool $sc: nginx counted no requests; stderr:"; cat "$out.stderr" >&2; }
    awk -v r="$req" -v u="$user" -v s="$sys" -v w="$wall" -v t="$tool" -v sc="$sc" -v rd="$round" -v o="$other" \
        'BEGIN { printf "[client-vs-wrk] round %s %-8s %-8s %9d req %8.0f req/s %6.2f us/req (other CPU %s%%)\n",
                 rd, sc, t, r, r / w, (r > 0 ? 1e6 * (u + s) / r : 0), o }' >&2
}
run_one() {
    local attempt row other
    for attempt in $(seq 0 "$RETRIES"); do
        sleep 1   # let the previous run's connections drain
        wait_quiet "$PRE_RUN_QUIET"
        row=$(measure "$@")
        other=$(cut -f10 <<< "$row")
        if [ "$other" -le "$MAX_OTHER_CPU" ] || [ "$attempt" -ge "$RETRIES" ] || [ "$WAIT_BUDGET" -le 0 ]; then break; fi
        log "  disturbed (other processes used ${other}% of a CPU): redoing"
        REDONE=$((REDONE + 1))
    done
    printf '%s\n' "$row" >> "$ROWS"
}
REDONE=0

SYSROWS="$TMP/sys.tsv"   # scenario tool syscalls server_requests
: > "$SYSROWS"
count_syscalls() {
    local sc=$1 tool=$2 out="$TMP/sys-$1-$2" cmd before after n
    cmd=$(client_cmd "$tool" "$sc" "$SYSCALL_DURATION" "$out")
    sleep 1
    wait_quiet "$PRE_RUN_QUIET"
    before=$(server_count)
    # shellcheck disable=SC2086
    eval taskset -c 1 perf stat -x, -e raw_syscalls:sys_enter -o "$out.perf" $cmd > "$out.stdout" 2> "$out.stderr" || true
    after=$(server_count)
    n=$(awk -F, '/raw_syscalls:sys_enter/ {print $1}' "$out.perf")
    printf '%s\t%s\t%s\t%s\n' "$sc" "$tool" "$n" $((after - before - 1)) >> "$SYSROWS"
}

# ---------------------------------------------------------------- run
TOOLS=(wrk stampede); [ "$WITH_EPOLL" = 1 ] && TOOLS+=(stampede-epoll)
[ "$WITH_AB" = 1 ] && TOOLS+=(ab); [ "$WITH_OHA" = 1 ] && TOOLS+=(oha)
[ "$WITH_FLOOR" = 1 ] && TOOLS+=(floor-epoll floor-uring)
# The pairs not measured: ab reports whole milliseconds (no use at -c 1); the
# floor probes keep their connections (no new-connection scenario).
skipped() { { [ "$1" = ab ] && [ "$2" = c1 ]; } || { [[ $1 == floor-* ]] && [ "$2" = close100 ]; }; }
# What the floor probes count as one response: head and body of index.html.
RESPONSE_BYTES=$(curl -s -o /dev/null -w '%{size_header} %{size_download}' "$URL" | awk '{print $1 + $2}')
IFS=, read -r -a SCS <<< "$SCENARIOS"
for sc in "${SCS[@]}"; do [ -n "$(scenario_conns "$sc")" ] || { echo "client-vs-wrk: unknown scenario $sc" >&2; exit 2; }; done

wait_quiet "$WAIT_QUIET"
# warm-up: page cache, nginx worker, ARP-less loopback paths
taskset -c 1 wrk -t1 -c100 -d2s "$URL" > /dev/null
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in "${TOOLS[@]}"; do
            skipped "$tool" "$sc" && continue
            run_one "$round" "$sc" "$tool"
        done
    done
done
if [ "$WITH_SYSCALLS" = 1 ]; then
    for sc in "${SCS[@]}"; do
        for tool in "${TOOLS[@]}"; do
            skipped "$tool" "$sc" && continue
            count_syscalls "$sc" "$tool"
        done
    done
fi

# ---------------------------------------------------------------- report
median() { sort -g | awk '{a[NR]=$1} END { if (NR == 0) { print "nan"; exit } print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'; }
col() { # col scenario tool expr  (expr over $4 req $5 wall $6 user $7 sys $8 p50)
    awk -F'\t' -v sc="$1" -v t="$2" '$2==sc && $3==t && $4>0 {print '"$3"'}' "$ROWS" | median
}
syscalls_per_req() {
    awk -F'\t' -v sc="$1" -v t="$2" '$1==sc && $2==t && $4>0 && $3!="" {printf "%.2f", $3/$4; f=1} END {if (!f) printf "-"}' "$SYSROWS"
}

versions() {
    echo "- stampede: $("$STAMPEDE_BIN" --version 2>/dev/null | head -1) (binary sha256 $(sha256sum "$STAMPEDE_BIN" | cut -c1-12), built $(date -u -r "$STAMPEDE_SRC" +%FT%TZ), tree $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && [ -n "$(git status --porcelain 2>/dev/null | head -1)" ] && echo '+uncommitted'))"
    echo "- wrk: $(wrk --version 2>&1 | head -1 | awk '{print $2}')"
    [ "$WITH_AB" = 1 ] && echo "- ab: $(ab -V 2>&1 | head -1 | sed 's/This is ApacheBench, //; s/ <.*//')"
    [ "$WITH_OHA" = 1 ] && echo "- oha: $(oha --version 2>&1 | head -1)"
    echo "- nginx: $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    return 0
}

{
    echo "# Client CPU per request: stampede vs wrk against nginx ($DATE)"
    echo
    echo "- machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), kernel $(uname -r)"
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per tool and scenario; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte index.html, access_log off; clients on core 1, one thread each"
    echo "- µs/req = client user+sys CPU (wait4 rusage) / requests counted by nginx (stub_status)"
    versions
    echo "- stampede's event loop (\`--io auto\`): $(cat "$TMP"/r1-*-stampede.json 2>/dev/null | jq -r '.plan.io' 2>/dev/null | sort -u | tr '\n' ' ')"
    [ -z "$NOISE_NOTE" ] || echo "- note: $NOISE_NOTE"
    [ "$REDONE" = 0 ] || echo "- $REDONE run(s) were redone because other processes used more than ${MAX_OTHER_CPU}% of a CPU during them"
    awk -F'\t' '$10 > m {m = $10} END { printf "- noise: at most %d%% of a CPU was used by other processes during a round (machine busy time minus client and nginx worker)%s\n", m, (m > 15 ? " — figures disturbed; rerun on a quiet machine" : "") }' "$ROWS"
    echo
    echo "| scenario | tool | µs/req (user + sys) | vs wrk | req/s | syscalls/req | p50 latency |"
    echo "|---|---|---|---|---|---|---|"
    for sc in "${SCS[@]}"; do
        wrk_us=$(col "$sc" wrk '1e6*($6+$7)/$4')
        for tool in "${TOOLS[@]}"; do
            skipped "$tool" "$sc" && continue
            us=$(col "$sc" "$tool" '1e6*($6+$7)/$4')
            [ "$us" = nan ] && continue
            usr=$(col "$sc" "$tool" '1e6*$6/$4'); sys=$(col "$sc" "$tool" '1e6*$7/$4')
            rps=$(col "$sc" "$tool" '$4/$5')
            p50=$(awk -F'\t' -v sc="$sc" -v t="$tool" '$2==sc && $3==t && $8 ~ /^[0-9.]+$/ {print $8}' "$ROWS" | median)
            case $p50 in nan|"") p50="-" ;; *) p50=$(awk -v p="$p50" 'BEGIN { printf "%.0f µs", p }') ;; esac
            awk -v sc="$(scenario_title "$sc")" -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v w="$wrk_us" \
                -v rps="$rps" -v sy="$(syscalls_per_req "$sc" "$tool")" -v p="$p50" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.2f× | %.0f | %s | %s |\n", sc, t, us, u, s, us / w, rps, sy, p }'
        done
    done
    echo
    echo "Commands (each under \`taskset -c 1\`; URL = http://127.0.0.1:PORT/index.html):"
    echo
    for sc in "${SCS[@]}"; do
        for tool in "${TOOLS[@]}"; do
            skipped "$tool" "$sc" && continue
            echo "- $sc: \`$(display_cmd "$tool" "$sc" "$DURATION" x)\`"
        done
    done
    echo
    echo "<details><summary>Every round</summary>"
    echo
    echo "| round | scenario | tool | nginx requests | client's own count | wall s | user s | sys s | µs/req | other CPU % |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %d | %s | %.2f | %.2f | %.2f | %.2f | %s |\n",
                  $1, $2, $3, $4, $9, $5, $6, $7, ($4 > 0 ? 1e6 * ($6 + $7) / $4 : 0), $10 }' "$ROWS"
    echo
    echo "</details>"
} > "$TMP/report.md"

mkdir -p "$(dirname "$OUT")"
cp "$TMP/report.md" "$OUT"
cat "$TMP/report.md"
log "wrote $OUT"
