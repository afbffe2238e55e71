# Shared by the experiment scripts in this folder (sourced, not run).
# Builds stampede when missing, parses --quick/--out, picks free ports, pins
# the server to CPU 0 and the client to CPU 1, and stops what it started.
# Every load targets 127.0.0.1 only.

EXP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$EXP_DIR/../.." && pwd)
S="$ROOT/target/release/stampede"
QUICK=0
OUT=""
STARTED_PIDS=()

exp_usage() {
  cat <<EOF
usage: $(basename "$0") [--quick] [--out DIR]
  --quick    short steps: finishes in under a minute on a 2-core machine
  --out DIR  keep the JSON results and logs here (default: a new temp dir)
EOF
}

exp_parse_args() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --quick) QUICK=1 ;;
      --out) OUT=${2:?--out needs a directory}; shift ;;
      --out=*) OUT=${1#--out=} ;;
      -h|--help) exp_usage; exit 0 ;;
      *) echo "unknown argument: $1" >&2; exp_usage >&2; exit 2 ;;
    esac
    shift
  done
}

exp_cleanup() {
  local pid
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
}

exp_setup() {
  trap exp_cleanup EXIT
  trap 'exit 130' INT TERM
  command -v python3 >/dev/null || { echo "python3 is needed to read the JSON results" >&2; exit 1; }
  if [ ! -x "$S" ]; then
    echo "building $S ..." >&2
    (cd "$ROOT" && cargo build --release) >&2
  fi
  if [ -z "$OUT" ]; then OUT=$(mktemp -d /tmp/stampede-exp.XXXXXX); fi
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  # Server on CPU 0, client on CPU 1, so the two do not fight over a core.
  PIN_S=""; PIN_C=""
  if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    PIN_S="taskset -c 0"; PIN_C="taskset -c 1"
  fi
}

# A TCP port on 127.0.0.1 that nothing listens on (bash's /dev/tcp, no tools).
free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  echo "no free port found" >&2; return 1
}

# Waits up to 10 s for 127.0.0.1:$1 to accept.
wait_port() {
  local i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on 127.0.0.1:$1" >&2; return 1
}

# Starts a command in the background and remembers it for the trap.
start_bg() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  STARTED_PIDS+=("$!")
  LAST_PID=$!
}

stop_bg() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# The header every table carries: when, where, how loaded the machine was.
machine_line() {
  local model
  model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
  [ -n "$model" ] || model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
  echo "Measured $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(nproc) CPUs ($model), load average $(cut -d' ' -f1-3 /proc/loadavg); server pinned: ${PIN_S:-no}, client pinned: ${PIN_C:-no}; $([ "$QUICK" = 1 ] && echo 'mode: --quick' || echo 'mode: full'); results in $OUT"
}
