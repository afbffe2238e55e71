#!/usr/bin/env bash
# serve-vs-nginx.sh — `stampede serve` against nginx, one core each, same page.
#
# Both servers get one worker pinned to CPU 0 and serve the same 515-byte
# index.html over keep-alive; wrk (-t1 -c100) is pinned to CPU 1. Rounds are
# interleaved (stampede, nginx, stampede, nginx, ...) so that drift in the machine
# hits both alike. Two modes: access log off, then on (to a file, buffered and
# flushed once a second by both servers). Prints req/s medians and the ratio.
#
# --wait-quiet S: before each run, wait up to S seconds for the machine to be idle
# (other benchmarks running on the same cores make both numbers meaningless).
#
# usage: bench/serve-vs-nginx.sh [--quick] [--rounds N] [--duration 10s]
#                                [--wait-quiet SECS] [--out FILE]
set -euo pipefail

ROUNDS=3
DURATION=10s
OUT=""
WAIT_QUIET=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) ROUNDS=2; DURATION=5s ;;
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --wait-quiet) WAIT_QUIET="$2"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

REPO="$(cd "$(dirname "$0")/.." && pwd)"
# Below the ephemeral range (32768–60999), so no client socket can hold them.
S_PORT=${S_PORT:-18100}
N_PORT=${N_PORT:-18200}
CONNS=100

need_install=()
command -v wrk >/dev/null || need_install+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_install+=(nginx-light)
command -v taskset >/dev/null || need_install+=(util-linux)
if [ ${#need_install[@]} -gt 0 ]; then
  echo "installing ${need_install[*]} ..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_install[@]}" >/dev/null \
    || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx >/dev/null
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

if [ "$(nproc)" -lt 2 ]; then
  echo "warning: fewer than 2 CPUs; server and load generator will share a core" >&2
  LOAD_CPU=0
else
  LOAD_CPU=1
fi

# The stampede binary when the subcommand is wired, else the library's example.
cd "$REPO"
if cargo build --release --bin stampede >/dev/null 2>&1 \
   && "$REPO/target/release/stampede" serve --help >/dev/null 2>&1; then
  serve_cmd() { exec taskset -c 0 "$REPO/target/release/stampede" serve --threads 1 --port "$S_PORT" "$@"; }
  SERVER_DESC="target/release/stampede serve --threads 1"
else
  cargo build --release -p stampede-target --example serve >/dev/null
  serve_cmd() {
    local log=()
    [ "${1:-}" = "--access-log" ] && log=(--log "$2")
    exec taskset -c 0 "$REPO/target/release/examples/serve" "$S_PORT" 1 "${log[@]}"
  }
  SERVER_DESC="target/release/examples/serve (stampede-target, 1 thread)"
fi

WORK="$(mktemp -d /tmp/serve-vs-nginx.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/www" "$WORK/logs"
# nginx workers run as an unprivileged user: they must be able to read the page.
chmod 755 "$WORK" "$WORK/www"

wait_port() {
  for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$1/index.html" && return 0
    sleep 0.05
  done
  echo "server on port $1 did not come up" >&2
  exit 1
}

nginx_conf() { # $1 = access_log line
  cat > "$WORK/nginx.conf" <<NGX
worker_processes 1;
daemon off;
error_log $WORK/logs/error.log;
pid $WORK/nginx.pid;
events { worker_connections 10240; }
http {
  log_format clf '\$remote_addr - \$remote_user [\$time_local] "\$request" \$status \$body_bytes_sent';
  $1
  # For a 515-byte file nginx is faster with plain writes than with sendfile
  # (one writev instead of writev + sendfile); give it its best configuration.
  sendfile off;
  tcp_nodelay on;
  open_file_cache max=1000 inactive=60s;
  keepalive_requests 100000000;
  keepalive_timeout 65;
  types { text/html html; }
  server {
    listen 127.0.0.1:$N_PORT reuseport;
    root $WORK/www;
    location / { index index.html; }
  }
}
NGX
}

start_servers() { # $1 = off|on
  if [ "$1" = on ]; then
    serve_cmd --access-log "$WORK/logs/stampede-access.log" >/dev/null 2>&1 &
    PIDS+=($!)
    nginx_conf "access_log $WORK/logs/nginx-access.log clf buffer=64k flush=1s;"
  else
    serve_cmd >/dev/null 2>&1 &
    PIDS+=($!)
    nginx_conf "access_log off;"
  fi
  taskset -c 0 "$NGINX" -c "$WORK/nginx.conf" >/dev/null 2>&1 &
  PIDS+=($!)
  wait_port "$S_PORT"
  wait_port "$N_PORT"
}

stop_servers() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}

# Percent of all CPUs busy over half a second.
busy_pct() {
  local a b
  read -r -a a < /proc/stat
  sleep 0.5
  read -r -a b < /proc/stat
  local t=0 i
  for i in 1 2 3 4 5 6 7 8; do t=$((t + b[i] - a[i])); done
  local idle=$((b[4] - a[4] + b[5] - a[5]))
  [ "$t" -gt 0 ] && echo $((100 * (t - idle) / t)) || echo 0
}

wait_quiet() {
  [ "$WAIT_QUIET" -gt 0 ] || return 0
  local until=$((SECONDS + WAIT_QUIET)) b
  while [ "$SECONDS" -lt "$until" ]; do
    b=$(busy_pct)
    [ "$b" -lt 10 ] && return 0
  done
  echo "warning: machine still ${b}% busy after ${WAIT_QUIET}s; measuring anyway" >&2
  touch "$WORK/noisy"
}

# wrk → req/s; refuses to count a run with errors or non-2xx responses.
measure() { # $1 = port, $2 = duration
  local out
  wait_quiet
  out="$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$2" "http://127.0.0.1:$1/index.html")"
  if grep -qE "Non-2xx|Socket errors" <<<"$out"; then
    echo "wrk reported errors on port $1:" >&2
    echo "$out" >&2
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# Our own page bytes, so that both servers send exactly the same body.
serve_cmd >/dev/null 2>&1 &
PIDS+=($!)
wait_port "$S_PORT"
curl -sf "http://127.0.0.1:$S_PORT/index.html" -o "$WORK/www/index.html"
chmod 644 "$WORK/www/index.html"
stop_servers
[ "$(wc -c < "$WORK/www/index.html")" -eq 515 ] || { echo "index.html is not 515 bytes" >&2; exit 1; }

CPU_MODEL="$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
REPORT="$(mktemp)"
{
  echo "# stampede serve vs nginx — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(nproc) CPUs, ${CPU_MODEL:-unknown CPU}, kernel $(uname -r)"
  echo "stampede: $SERVER_DESC (taskset -c 0)"
  echo "nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //'), worker_processes 1 (taskset -c 0)"
  echo "load: taskset -c $LOAD_CPU wrk -t1 -c$CONNS -d$DURATION http://127.0.0.1:PORT/index.html ($ROUNDS interleaved rounds per mode)"
  echo
  printf '%-8s %-10s %s\n' "log" "server" "req/s per round"
} | tee "$REPORT"

declare -A MED
for mode in off on; do
  start_servers "$mode"
  measure "$S_PORT" 2s >/dev/null   # warm-up
  measure "$N_PORT" 2s >/dev/null
  s_all=""; n_all=""
  for _ in $(seq "$ROUNDS"); do
    s_all="$s_all $(measure "$S_PORT" "$DURATION")"
    n_all="$n_all $(measure "$N_PORT" "$DURATION")"
  done
  stop_servers
  printf '%-8s %-10s %s\n' "$mode" "stampede" "$s_all" | tee -a "$REPORT"
  printf '%-8s %-10s %s\n' "$mode" "nginx" "$n_all" | tee -a "$REPORT"
  MED[s_$mode]="$(median <<<"$s_all")"
  MED[n_$mode]="$(median <<<"$n_all")"
  if [ "$mode" = on ]; then
    s_lines=$(wc -l < "$WORK/logs/stampede-access.log")
    n_lines=$(wc -l < "$WORK/logs/nginx-access.log")
    echo "access-log lines written: stampede $s_lines, nginx $n_lines" | tee -a "$REPORT"
  fi
done

{
  echo
  printf '%-8s %14s %14s %8s %8s\n' "log" "stampede med" "nginx med" "ratio" "goal"
  for mode in off on; do
    goal=$([ "$mode" = off ] && echo "1.00" || echo "0.90")
    ratio=$(awk -v s="${MED[s_$mode]}" -v n="${MED[n_$mode]}" 'BEGIN {printf "%.2f", s/n}')
    printf '%-8s %14.0f %14.0f %7sx %7sx\n' "$mode" "${MED[s_$mode]}" "${MED[n_$mode]}" "$ratio" "$goal"
  done
  if [ -e "$WORK/noisy" ]; then
    echo "note: some runs started while other processes kept the machine busy"
  fi
} | tee -a "$REPORT"

if [ -n "$OUT" ]; then
  mkdir -p "$(dirname "$OUT")"
  cp "$REPORT" "$OUT"
  echo "written to $OUT" >&2
fi
rm -f "$REPORT"
