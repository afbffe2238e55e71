# shellcheck shell=bash
# What the client benchmarks (client-vs-wrk.sh, engine-vs-peers.sh) share: a
# private nginx pinned to core 0, a free port, the 515-byte page, requests
# counted by nginx's stub_status, CPU from wait4 rusage (/usr/bin/time), the
# noise guard (--wait-quiet), interleaved runs with redo on disturbance, and
# medians, and the options they all take (bench_options). Sourced, never run.
#
# The sourcing script sets, before calling these functions:
#   BENCH_NAME      prefix of log lines and error messages
#   DURATION        seconds per client run
#   RETRIES, PRE_RUN_QUIET, WAIT_BUDGET, MAX_OTHER_CPU   the noise guard
#   INSTALL         1 = apt-get what is missing
# and defines the hooks measure() calls:
#   client_cmd TOOL SCENARIO SECONDS OUT   the command line (eval'd)
#   tool_p50_us TOOL OUT, tool_count TOOL OUT, tool_errors TOOL OUT
#   tool_extra TOOL SCENARIO OUT           optional: one more TSV column
#   pre_measure TOOL SCENARIO OUT          optional: called just before the run

log() { printf '[%s] %s\n' "$BENCH_NAME" "$*" >&2; }
die() { echo "$BENCH_NAME: $*" >&2; exit 2; }

# ---------------------------------------------------------------- options
# bench_defaults [VAR=VALUE...]: the shared settings at their usual values
# (3 rounds of 10 s, --wait-quiet 20, --wait-budget 600, a 4 s pre-run
# quiet, 15% other CPU at most, 2 redos, installing what is missing, the
# default result path), then the script's own defaults over them.
bench_defaults() {
    ROUNDS=3 DURATION=10 WAIT_QUIET=20 WAIT_BUDGET=600 PRE_RUN_QUIET=4
    MAX_OTHER_CPU=15 RETRIES=2 INSTALL=1 OUT=""
    local setting
    for setting in "$@"; do
        printf -v "${setting%%=*}" '%s' "${setting#*=}"
    done
}
# bench_start NAME: after the options, what every client benchmark needs
# first: two CPUs (server on 0, client on 1), DATE, and OUT defaulting to
# bench/results/DATE-NAME.md.
bench_start() {
    [ "$(nproc)" -ge 2 ] || die "needs at least 2 CPUs (server on 0, client on 1)"
    DATE=$(date +%F)
    [ -n "$OUT" ] || OUT="$ROOT/bench/results/$DATE-$1.md"
}
# bench_options OWN "$@": reads the command line. The options every benchmark
# takes are read here, into the variables the script set to its defaults:
#   --rounds N, --duration S, --wait-quiet S, --wait-budget S, --out PATH,
#   --stampede PATH, --no-install (INSTALL=0), --quick (1 round of 3 s, no
#   waiting for quiet, no redo; QUICK=1 for the script's own shortcuts) and
#   -h/--help (the script's header comment, up to `set -euo`).
# OWN is the script's function for its own options, or "": called with the
# words left, it sets BENCH_TOOK to how many it took (0: not one of its
# own). It runs first, so a script may take an option differently. An
# unknown option, or one without its value, dies with exit status 2.
bench_options() {
    local own=$1
    shift
    QUICK=0
    while [ $# -gt 0 ]; do
        BENCH_TOOK=0
        [ -z "$own" ] || "$own" "$@"
        [ "$BENCH_TOOK" -gt 0 ] || bench_common_option "$@"
        [ "$BENCH_TOOK" -gt 0 ] || die "unknown option $1 (see --help)"
        [ $# -ge "$BENCH_TOOK" ] || die "$1 needs a value (see --help)"
        shift "$BENCH_TOOK"
    done
}
# bench_common_option "$@": one of the shared options, BENCH_TOOK as above.
bench_common_option() {
    case "$1" in
        --quick) QUICK=1; ROUNDS=1; DURATION=3; WAIT_QUIET=0; PRE_RUN_QUIET=0; RETRIES=0; BENCH_TOOK=1 ;;
        --rounds) ROUNDS=${2-}; BENCH_TOOK=2 ;;
        --duration) DURATION=${2-}; BENCH_TOOK=2 ;;
        --wait-quiet) WAIT_QUIET=${2-}; BENCH_TOOK=2 ;;
        --wait-budget) WAIT_BUDGET=${2-}; BENCH_TOOK=2 ;;
        --out) OUT=${2-}; BENCH_TOOK=2 ;;
        --stampede) STAMPEDE=${2-}; BENCH_TOOK=2 ;;
        --no-install) INSTALL=0; BENCH_TOOK=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) BENCH_TOOK=0 ;;
    esac
}

# ---------------------------------------------------------------- dependencies
# bench_install PKG... : installs the Debian packages given (or dies with
# --no-install).
bench_install() {
    [ $# -gt 0 ] || return 0
    [ "$INSTALL" = 1 ] || die "missing $* (and --no-install given)"
    local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    log "installing $*"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
# The packages every client benchmark needs, printed when missing.
bench_base_missing() {
    command -v nginx >/dev/null || echo nginx
    command -v curl >/dev/null || echo curl
    command -v jq >/dev/null || echo jq
    [ -x /usr/bin/time ] || echo time
    command -v taskset >/dev/null || echo util-linux
}
bench_check_stub_status() {
    nginx -V 2>&1 | grep -q with-http_stub_status_module \
        || die "this nginx lacks stub_status; cannot count requests server-side"
}
# Sets WITH_SYSCALLS=0 when perf's syscall tracepoint cannot be read.
bench_check_perf() {
    [ "$WITH_SYSCALLS" = 1 ] || return 0
    if ! command -v perf >/dev/null || ! perf stat -e raw_syscalls:sys_enter -x, true >/dev/null 2>&1; then
        log "perf syscall tracepoints unavailable (try: apt-get install linux-perf; run as root): no syscall counts"
        WITH_SYSCALLS=0
    fi
}

# ---------------------------------------------------------------- workspace
# bench_workspace: TMP (removed on exit, nginx stopped first), a private copy of
# stampede in STAMPEDE_BIN (others may rebuild target/release while this runs).
# STAMPEDE_SRC: the binary to copy (--stampede PATH, else target/release's,
# built with cargo when it is missing).
bench_workspace() {
    STAMPEDE_SRC=${STAMPEDE_SRC:-${STAMPEDE:-$ROOT/target/release/stampede}}
    TMP=$(mktemp -d "/tmp/$BENCH_NAME.XXXXXX")
    NGINX_PID=""
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    if [ ! -x "$STAMPEDE_SRC" ]; then
        [ "$STAMPEDE_SRC" = "$ROOT/target/release/stampede" ] || die "no executable stampede at $STAMPEDE_SRC"
        log "building stampede (cargo build --release)"
        (cd "$ROOT" && cargo build --release --quiet)
    fi
    cp "$STAMPEDE_SRC" "$TMP/stampede"
    STAMPEDE_BIN="$TMP/stampede"
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
}
bench_cleanup() {
    if [ -n "${NGINX_PID:-}" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}

# bench_floor_probes BIN... : builds bench/floor once and copies the probes to TMP.
bench_floor_probes() {
    log "building the floor probes (bench/floor)"
    (cd "$ROOT/bench/floor" && cargo build --release --quiet)
    local bin
    for bin in "$@"; do cp "$ROOT/bench/floor/target/release/$bin" "$TMP/"; done
}

free_port() {
    local p
    for p in $(shuf -i 20000-32000 -n 100); do   # below the ephemeral range
        ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
    done
    die "no free port found"
}

# ---------------------------------------------------------------- nginx
# bench_nginx_start SERVERS: writes $TMP/www/index.html (515 bytes) and an
# nginx.conf with the common http{} settings and the server blocks given, starts
# nginx pinned to core 0 and waits for http://127.0.0.1:$PORT (a plain port that
# serves /nginx_status: one of SERVERS must listen there). Sets NGINX_PID,
# NGINX_WORKER, URL, STATUS_URL.
bench_nginx_start() {
    local servers=$1 prefix suffix pad
    mkdir -p "$TMP/www" "$TMP/logs"
    chmod 755 "$TMP" "$TMP/www"   # the nginx worker runs as an unprivileged user when started by root
    prefix='<!DOCTYPE html>
<html><head><title>stampede benchmark page</title></head><body><p>'
    suffix='</p></body></html>
'
    pad=$((515 - ${#prefix} - ${#suffix}))
    { printf '%s' "$prefix"; printf '%*s' "$pad" '' | tr ' ' 'x'; printf '%s' "$suffix"; } > "$TMP/www/index.html"
    [ "$(wc -c < "$TMP/www/index.html")" = 515 ] || die "index.html is not 515 bytes"
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
$servers
}
EOF
    URL="http://127.0.0.1:$PORT/index.html"
    STATUS_URL="http://127.0.0.1:$PORT/nginx_status"
    taskset -c 0 nginx -p "$TMP" -e "$TMP/logs/error.log" -c "$TMP/nginx.conf" &
    NGINX_PID=$!
    for _ in $(seq 50); do curl -fsS "$URL" -o /dev/null 2>/dev/null && break; sleep 0.1; done
    curl -fsS "$URL" -o /dev/null || { echo "$BENCH_NAME: nginx did not come up:" >&2; cat "$TMP/logs/error.log" >&2; exit 2; }
    NGINX_WORKER=$(pgrep -P "$NGINX_PID" | head -1)
    log "nginx master $NGINX_PID worker $NGINX_WORKER on 127.0.0.1:$PORT (core 0); clients on core 1"
}
# The plain HTTP/1.1 server block (the page and stub_status) on $PORT.
bench_plain_server() {
    cat <<EOF
    server {
        listen 127.0.0.1:$PORT backlog=4096;
        root $TMP/www;
        location = /nginx_status { stub_status; }
    }
EOF
}

# ---------------------------------------------------------------- counters
# nginx's own request count (all its servers: stub_status is global)
server_count() { curl -fsS "$STATUS_URL" | awk 'NR==3 {print $3}'; }
# jiffies (USER_HZ) of the whole machine that were busy, and of one process
machine_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9}' /proc/stat; }
proc_jiffies() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

# ---------------------------------------------------------------- noise guard
noisy_procs() {
    # cargo/rustc builds or the server benchmark of another engineer
    { pgrep -x 'cargo|rustc' || true; pgrep -f 'serve-vs-nginx\.sh' || true; } | grep -v "^$$\$" || true
}
# Waits until no named build/benchmark process has been seen and the machine has
# been idle (< 10% of one CPU busy) for $1 seconds. All waits share one budget
# (WAIT_BUDGET seconds); once it is spent the script measures anyway and says so.
NOISE_NOTE=""
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

# ---------------------------------------------------------------- one run
# ROWS columns: round scenario tool server_requests wall user sys p50 tool_count
# other_cpu_pct extra
ROWS=""
measure() {  # round scenario tool -> one TSV row on stdout, progress on stderr
    local round=$1 sc=$2 tool=$3 out="$TMP/r$1-$2-$3" cmd before after busy0 busy1 ng0 ng1 wall user sys req other extra=-
    cmd=$(client_cmd "$tool" "$sc" "$DURATION" "$out")
    if declare -F pre_measure >/dev/null; then pre_measure "$tool" "$sc" "$out"; fi
    before=$(server_count); busy0=$(machine_busy); ng0=$(proc_jiffies "$NGINX_WORKER")
    # shellcheck disable=SC2086
    eval taskset -c 1 /usr/bin/time -f "'%e %U %S'" -o "$out.time" $cmd > "$out.stdout" 2> "$out.stderr" \
        || log "round $round $sc $tool exited non-zero (see below)"
    busy1=$(machine_busy); ng1=$(proc_jiffies "$NGINX_WORKER"); after=$(server_count)
    read -r wall user sys < <(tail -1 "$out.time")
    req=$((after - before - 1))
    other=$(awk -v b=$((busy1 - busy0)) -v n=$((ng1 - ng0)) -v hz="$HZ" -v u="$user" -v s="$sys" -v w="$wall" \
        'BEGIN { o = (b - n) / hz - u - s; if (o < 0) o = 0; printf "%.0f", 100 * o / w }')
    if declare -F tool_extra >/dev/null; then extra=$(tool_extra "$tool" "$sc" "$out"); fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$sc" "$tool" "$req" "$wall" "$user" "$sys" \
        "$(tool_p50_us "$tool" "$out")" "$(tool_count "$tool" "$out")" "$other" "${extra:--}"
    local errs; errs=$(tool_errors "$tool" "$out")
    [ -z "$errs" ] || log "  $tool $sc: $errs"
    [ "$req" -gt 0 ] || { log "  $tool $sc: nginx counted no requests; stderr:"; cat "$out.stderr" >&2; }
    awk -v r="$req" -v u="$user" -v s="$sys" -v w="$wall" -v t="$tool" -v sc="$sc" -v rd="$round" -v o="$other" -v n="$BENCH_NAME" \
        'BEGIN { printf "[%s] round %s %-8s %-8s %9d req %8.0f req/s %6.2f us/req (other CPU %s%%)\n",
                 n, rd, sc, t, r, r / w, (r > 0 ? 1e6 * (u + s) / r : 0), o }' >&2
}
REDONE=0
run_one() {  # round scenario tool: measure, redone when disturbed; appends to ROWS
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

# SYSROWS columns: scenario tool syscalls server_requests
SYSROWS=""
count_syscalls() {  # scenario tool: one short run under perf's syscall tracepoint
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

# ---------------------------------------------------------------- report helpers
median() { sort -g | awk '{a[NR]=$1} END { if (NR == 0) { print "nan"; exit } print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'; }
col() { # col scenario tool expr  (expr over $4 req $5 wall $6 user $7 sys $8 p50 $11 extra)
    awk -F'\t' -v sc="$1" -v t="$2" '$2==sc && $3==t && $4>0 {print '"$3"'}' "$ROWS" | median
}
syscalls_per_req() {
    awk -F'\t' -v sc="$1" -v t="$2" '$1==sc && $2==t && $4>0 && $3!="" {printf "%.2f", $3/$4; f=1} END {if (!f) printf "-"}' "$SYSROWS"
}
# What a client's report says, from the files of one run (OUT.stdout, OUT.json):
# stampede's --json, and wrk's (or wrk2's) text.
stampede_p50_us() { jq -r '.latency_us.p50' "$1.json" 2>/dev/null || echo -; }
stampede_count() { jq -r '.requests.completed' "$1.json" 2>/dev/null || echo -; }
stampede_errors() {
    jq -r '[.requests.errors, .requests.failed_status] | "errors \(.[0]) non2xx \(.[1])"' "$1.json" 2>/dev/null \
        | grep -v 'errors 0 non2xx 0' || true
}
wrk_count() { awk '/requests in/ {print $1}' "$1.stdout"; }
wrk_errors() { awk '/Socket errors|Non-2xx/ {printf "%s ", $0}' "$1.stdout"; }
# p50 in µs of a wrk or wrk2 --latency report ("50%" or "50.000%" lines)
wrk_p50_us() {
    awk '$1=="50%" || $1=="50.000%" { v=$2; u=v; sub(/[0-9.]+/,"",u); sub(/[a-z]+$/,"",v);
         m = (u=="us")?1:(u=="ms")?1000:(u=="s")?1000000:1; printf "%.1f", v*m; exit }' "$1"
}
bench_machine_lines() {
    echo "- machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), kernel $(uname -r)"
}
bench_stampede_version() {
    echo "- stampede: $("$STAMPEDE_BIN" --version 2>/dev/null | head -1) (binary sha256 $(sha256sum "$STAMPEDE_BIN" | cut -c1-12), built $(date -u -r "$STAMPEDE_SRC" +%FT%TZ), tree $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && [ -n "$(git status --porcelain 2>/dev/null | head -1)" ] && echo '+uncommitted'))"
}
bench_noise_lines() {
    [ -z "$NOISE_NOTE" ] || echo "- note: $NOISE_NOTE"
    [ "$REDONE" = 0 ] || echo "- $REDONE run(s) were redone because other processes used more than ${MAX_OTHER_CPU}% of a CPU during them"
    awk -F'\t' '$10 > m {m = $10} END { printf "- noise: at most %d%% of a CPU was used by other processes during a round (machine busy time minus client and nginx worker)%s\n", m, (m > 15 ? " — figures disturbed; rerun on a quiet machine" : "") }' "$ROWS"
}

# bench_variant_rows BASE JOIN: the median rows of a variant table, one per
# scenario (SCS, titled by scenario_title) and variant (TOOLS) of ROWS, each
# against variant BASE of its scenario; JOIN `all` lists every round's
# notes, `last` the last round's.
bench_variant_rows() {
    local base_tool=$1 join=$2 sc tool base us usr sys rps p50 n
    for sc in "${SCS[@]}"; do
        base=$(col "$sc" "$base_tool" '1e6*($6+$7)/$4')
        for tool in $TOOLS; do
            us=$(col "$sc" "$tool" '1e6*($6+$7)/$4')
            [ "$us" = nan ] && continue
            usr=$(col "$sc" "$tool" '1e6*$6/$4'); sys=$(col "$sc" "$tool" '1e6*$7/$4')
            rps=$(col "$sc" "$tool" '$4/$5')
            p50=$(awk -F'\t' -v sc="$sc" -v t="$tool" '$2==sc && $3==t && $8 ~ /^[0-9.]+$/ {print $8}' "$ROWS" | median)
            case $p50 in nan|"") p50="-" ;; *) p50=$(awk -v p="$p50" 'BEGIN { printf "%.0f µs", p }') ;; esac
            n=$(awk -F'\t' -v sc="$sc" -v t="$tool" -v join="$join" \
                '$2==sc && $3==t && $11!="-" { s = (join == "all") ? s (s ? "; " : "") $11 : $11 } END { print (s ? s : "-") }' "$ROWS")
            awk -v sc="$(scenario_title "$sc")" -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v b="$base" -v rps="$rps" -v p="$p50" -v n="$n" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.3f× | %.0f | %s | %s |\n", sc, t, us, u, s, us / b, rps, p, n }'
        done
    done
}

# bench_rounds_details [LABELS [COUNT [DIGITS [NOTES]]]]: every round of
# ROWS, folded under a <details>. LABELS: the headers of ROWS' columns 2 and
# 3, `|`-separated (default `model|variant`), or one header for column 3
# alone (the script has one kind of row per client); COUNT: the header of
# column 9, the client's own count (default `client's own count`); DIGITS:
# decimals of µs/req (default 2); NOTES: `notes` to end each row with
# column 11 (the default with the default LABELS), `-` for none.
bench_rounds_details() {
    local labels=${1:-model|variant} count=${2:-"client's own count"} digits=${3:-2}
    local notes=${4:-}
    [ -n "$notes" ] || { [ $# -eq 0 ] && notes=notes || notes=-; }
    local header="| round | ${labels//|/ | } | nginx requests | $count | wall s | user s | sys s | µs/req | other CPU % |"
    [ "$notes" = - ] || header="$header notes |"
    echo "<details><summary>Every round</summary>"
    echo
    echo "$header"
    echo "$header" | sed 's/[^|]\+/---/g'
    awk -F'\t' -v both="$([[ $labels == *"|"* ]] && echo 1 || echo 0)" -v d="$digits" -v notes="$([ "$notes" = - ] && echo 0 || echo 1)" '{
        line = "| " $1 " | " (both ? $2 " | " : "") $3 " | " sprintf("%d", $4) " | " $9 " | "
        line = line sprintf("%.2f | %.2f | %.2f | %." d "f", $5, $6, $7, ($4 > 0 ? 1e6 * ($6 + $7) / $4 : 0))
        line = line " | " $10 " |" (notes ? " " $11 " |" : "")
        print line }' "$ROWS"
    echo
    echo "</details>"
}

# bench_publish_report: $TMP/report.md to $OUT and to stdout.
bench_publish_report() {
    mkdir -p "$(dirname "$OUT")"
    cp "$TMP/report.md" "$OUT"
    cat "$TMP/report.md"
    log "wrote $OUT"
}
