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
#   STAMPEDE=/path/to/stampede bench/client-vs-wrk.sh   (or --stampede PATH)
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
#   --stampede PATH    the stampede binary to measure (default $STAMPEDE, else
#                      target/release/stampede, built when missing)
#   --base PATH        also run an older stampede binary (tool "stampede-base",
#                      and "stampede-base-epoll" with --epoll), interleaved with
#                      the rest; the report adds a "vs base" column. This is the
#                      regression check: the new binary against the last landed
#                      one, in the same rounds, e.g.
#                      git worktree add /tmp/old <commit> && cargo build --release
#                      --manifest-path /tmp/old/Cargo.toml, then
#                      --base /tmp/old/target/release/stampede
# Everything is bounded: each client run has a duration, only 127.0.0.1 is used,
# nginx is stopped by a trap on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=client-vs-wrk
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
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
BASE=""
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
        --stampede) STAMPEDE=$2; shift ;;
        --base) BASE=${2-}; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "client-vs-wrk: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "client-vs-wrk: --base: not an executable: $BASE" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "client-vs-wrk: needs at least 2 CPUs (server on 0, client on 1)" >&2; exit 2; }

DATE=$(date +%F)
[ -n "$OUT" ] || OUT="$ROOT/bench/results/$DATE-client.md"

# ---------------------------------------------------------------- dependencies
mapfile -t need_pkgs < <(bench_base_missing)
command -v wrk >/dev/null || need_pkgs+=(wrk)
if [ "$WITH_AB" = 1 ] && ! command -v ab >/dev/null; then need_pkgs+=(apache2-utils); fi
bench_install "${need_pkgs[@]}"
if [ "$WITH_AB" = 1 ] && ! command -v ab >/dev/null; then log "ab unavailable: skipping it"; WITH_AB=0; fi
if [ "$WITH_OHA" = 1 ] && ! command -v oha >/dev/null; then
    if [ "$INSTALL" = 1 ] && command -v cargo >/dev/null; then
        log "installing oha with cargo (compiles for a few minutes)"
        cargo install oha --locked --quiet || true
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    command -v oha >/dev/null || { log "oha unavailable: skipping it"; WITH_OHA=0; }
fi
bench_check_stub_status
bench_check_perf
STAMPEDE_SRC=${STAMPEDE:-$ROOT/target/release/stampede}

# ---------------------------------------------------------------- workspace
bench_workspace
if [ "$WITH_FLOOR" = 1 ]; then bench_floor_probes floor-epoll floor-uring; fi
# A copy, like STAMPEDE_BIN: the base may be rebuilt while this runs.
[ -z "$BASE" ] || cp "$BASE" "$TMP/stampede-base"
PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)"

# ---------------------------------------------------------------- helpers
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
        stampede-base|stampede-base-epoll)
            local flag=""; [ "$ka" = 1 ] || flag=" --no-keepalive"
            [ "$tool" = stampede-base ] || flag="$flag --io epoll"
            echo "$TMP/stampede-base run $URL -t 1 -c $c -d ${secs}s -q$flag --json $out.json" ;;
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
display_cmd() { client_cmd "$@" | sed "s#$TMP/stampede-base#stampede-base#; s#$STAMPEDE_BIN#stampede#; s#$TMP/floor-#bench/floor/target/release/floor-#; s#$TMP/[^ ]*#out#g; s#$URL#URL#; s#127.0.0.1:$PORT#ADDRESS#"; }

# p50 latency in µs as the tool reports it ("-" when it cannot)
tool_p50_us() {
    local tool=$1 out=$2
    case $tool in
        wrk) wrk_p50_us "$out.stdout" ;;
        stampede|stampede-epoll|stampede-base|stampede-base-epoll) stampede_p50_us "$out" ;;
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
        wrk) wrk_count "$out" ;;
        stampede|stampede-epoll|stampede-base|stampede-base-epoll) stampede_count "$out" ;;
        ab) awk '/^Complete requests:/ {print $3}' "$out.stdout" ;;
        floor-*) awk '{print $2}' "$out.stdout" ;;
        *) echo - ;;
    esac
}
tool_errors() {
    local tool=$1 out=$2
    case $tool in
        wrk) wrk_errors "$out" ;;
        stampede|stampede-epoll|stampede-base|stampede-base-epoll) stampede_errors "$out" ;;
        ab) awk '/^Failed requests:|^Non-2xx/ && $NF != 0 {printf "%s ", $0}' "$out.stdout" ;;
    esac
}

ROWS="$TMP/rows.tsv"; : > "$ROWS"
SYSROWS="$TMP/sys.tsv"; : > "$SYSROWS"

# ---------------------------------------------------------------- run
TOOLS=(wrk stampede); [ "$WITH_EPOLL" = 1 ] && TOOLS+=(stampede-epoll)
[ "$WITH_AB" = 1 ] && TOOLS+=(ab); [ "$WITH_OHA" = 1 ] && TOOLS+=(oha)
[ "$WITH_FLOOR" = 1 ] && TOOLS+=(floor-epoll floor-uring)
[ -n "$BASE" ] && TOOLS+=(stampede-base)
[ -n "$BASE" ] && [ "$WITH_EPOLL" = 1 ] && TOOLS+=(stampede-base-epoll)
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
versions() {
    bench_stampede_version
    [ -z "$BASE" ] || echo "- stampede-base: $("$TMP/stampede-base" --version 2>/dev/null | head -1) (binary sha256 $(sha256sum "$TMP/stampede-base" | cut -c1-12), $BASE)"
    echo "- wrk: $(wrk --version 2>&1 | head -1 | awk '{print $2}')"
    [ "$WITH_AB" = 1 ] && echo "- ab: $(ab -V 2>&1 | head -1 | sed 's/This is ApacheBench, //; s/ <.*//')"
    [ "$WITH_OHA" = 1 ] && echo "- oha: $(oha --version 2>&1 | head -1)"
    echo "- nginx: $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    return 0
}

{
    echo "# Client CPU per request: stampede vs wrk against nginx ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per tool and scenario; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte index.html, access_log off; clients on core 1, one thread each"
    echo "- µs/req = client user+sys CPU (wait4 rusage) / requests counted by nginx (stub_status)"
    versions
    echo "- stampede's event loop (\`--io auto\`): $(cat "$TMP"/r1-*-stampede.json 2>/dev/null | jq -r '.plan.io' 2>/dev/null | sort -u | tr '\n' ' ')"
    bench_noise_lines
    echo
    base_head=""; base_rule=""
    [ -z "$BASE" ] || { base_head=" vs base |"; base_rule="---|"; }
    echo "| scenario | tool | µs/req (user + sys) | vs wrk |$base_head req/s | syscalls/req | p50 latency |"
    echo "|---|---|---|---|$base_rule---|---|---|"
    for sc in "${SCS[@]}"; do
        wrk_us=$(col "$sc" wrk '1e6*($6+$7)/$4')
        base_us=nan; base_epoll_us=nan
        [ -z "$BASE" ] || base_us=$(col "$sc" stampede-base '1e6*($6+$7)/$4')
        [ -z "$BASE" ] || [ "$WITH_EPOLL" = 0 ] || base_epoll_us=$(col "$sc" stampede-base-epoll '1e6*($6+$7)/$4')
        for tool in "${TOOLS[@]}"; do
            skipped "$tool" "$sc" && continue
            us=$(col "$sc" "$tool" '1e6*($6+$7)/$4')
            [ "$us" = nan ] && continue
            usr=$(col "$sc" "$tool" '1e6*$6/$4'); sys=$(col "$sc" "$tool" '1e6*$7/$4')
            rps=$(col "$sc" "$tool" '$4/$5')
            p50=$(awk -F'\t' -v sc="$sc" -v t="$tool" '$2==sc && $3==t && $8 ~ /^[0-9.]+$/ {print $8}' "$ROWS" | median)
            case $p50 in nan|"") p50="-" ;; *) p50=$(awk -v p="$p50" 'BEGIN { printf "%.0f µs", p }') ;; esac
            # "vs base": stampede against the base binary on the same loop.
            vb=""
            if [ -n "$BASE" ]; then
                case $tool in
                    stampede) vb=$(awk -v a="$us" -v b="$base_us" 'BEGIN { if (b == "nan") print " - |"; else printf " %.3f× |", a / b }') ;;
                    stampede-epoll) vb=$(awk -v a="$us" -v b="$base_epoll_us" 'BEGIN { if (b == "nan") print " - |"; else printf " %.3f× |", a / b }') ;;
                    *) vb=" |" ;;
                esac
            fi
            awk -v sc="$(scenario_title "$sc")" -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v w="$wrk_us" \
                -v rps="$rps" -v sy="$(syscalls_per_req "$sc" "$tool")" -v p="$p50" -v vb="$vb" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.2f× |%s %.0f | %s | %s |\n", sc, t, us, u, s, us / w, vb, rps, sy, p }'
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
    bench_rounds_details "scenario|tool"
} > "$TMP/report.md"
bench_publish_report
