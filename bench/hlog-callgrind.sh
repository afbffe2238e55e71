#!/usr/bin/env bash
# What `--hlog` costs the client, in instructions per request: the same
# open-model run under callgrind plain, with `--hlog` at 1 s and at 100 ms
# intervals. Instruction counts do not depend on the host's load (times
# do, ±10% between rounds on a shared machine: too coarse for 1%).
#
# Method
#   - `stampede serve` (one thread) on core 0, the client on core 1;
#   - `stampede run URL -r 2000 -d DURATION -c 20 -t 1 -q --json X`
#     [`--hlog F --hlog-interval 1s|100ms`] under
#     `valgrind --tool=callgrind` (user-space instructions, every thread);
#   - per request = the run's instructions / `requests.completed`;
#   - where the difference goes: `callgrind_annotate --inclusive=yes` of
#     the interval builder (`IntervalBuilder::add`), the log writer
#     (`HlogSink::interval`), the per-second series and the result.
# Usage
#   bench/hlog-callgrind.sh [--stampede PATH] [--duration S] [--out DIR]
#   (defaults: target/release/stampede, 5 s, a new temporary folder; the
#   callgrind files stay there for callgrind_annotate).
# Loopback only; every run is bounded by its duration; the server is
# stopped on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAMPEDE=$ROOT/target/release/stampede
DURATION=5
OUT=""
while [ $# -gt 0 ]; do
    case $1 in
    --stampede) STAMPEDE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "hlog-callgrind: unknown option $1" >&2; exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "hlog-callgrind: needs valgrind" >&2; exit 2; }
[ -x "$STAMPEDE" ] || { echo "hlog-callgrind: no binary at $STAMPEDE" >&2; exit 2; }
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/hlog-callgrind.XXXXXX)
mkdir -p "$OUT"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 0 "$STAMPEDE" serve -t 1 -p "$PORT" >/dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
    sleep 0.1
done

printf '| variant | instructions | completed | per request |\n| --- | ---: | ---: | ---: |\n'
for variant in plain 1s 100ms; do
    args=(run "http://127.0.0.1:$PORT/" -r 2000 -d "${DURATION}s" -c 20 -t 1 -q --json "$OUT/$variant.json")
    [ "$variant" = plain ] || args+=(--hlog "$OUT/$variant.hlog" --hlog-interval "$variant")
    taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="$OUT/$variant.cg" \
        "$STAMPEDE" "${args[@]}" >"$OUT/$variant.txt" 2>"$OUT/$variant.valgrind"
    # valgrind's own total: every thread's user-space instructions.
    total=$(awk '/Collected :/ {print $NF}' "$OUT/$variant.valgrind")
    completed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["completed"])' "$OUT/$variant.json")
    printf '| %s | %s | %s | %s |\n' "$variant" "$total" "$completed" "$((total / completed))"
done
echo
echo "Inclusive instructions of the log's parts and what every run does (callgrind_annotate --inclusive=yes):"
for variant in plain 1s 100ms; do
    echo "## $variant"
    callgrind_annotate --inclusive=yes "$OUT/$variant.cg" 2>/dev/null |
        grep -E 'IntervalBuilder::add|IntervalBuilder::finish|HlogSink as stampede_metrics::intervals::IntervalSink>::interval|IntervalHistograms::merge|TimeseriesBuilder::add|RunResult::from_recording|Snapshot::merge|encode_second' |
        grep -v '=>' | head -12 || true
done
echo "callgrind files: $OUT"
