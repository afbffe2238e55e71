#!/usr/bin/env bash
# Seed 001 (coroutine server under JMeter): the ladder 1000/2000/5000/10000
# users, read by hand into "stable range, ceiling, queueing, past capacity".
# Here `stampede sweep` runs the ladder against a CPU-bound route on a
# 1-worker server (/cpu/100000: about 0.35 ms of CPU a request, a ceiling
# near the seed's ~2,800 req/s) and does the reading: classification, knee,
# capacity, USL. Connect timeout 3 s and response timeout 10 s are stampede's
# defaults - the same as the seed's JMeter settings.
# A second, short sweep runs below the seed's ladder (1 to 1000 connections),
# where the real knee of a CPU-bound single worker is.
# Full: 30 s steps after 5 s warm-up, then 10 s low steps (~4 min).
# --quick: 6 s steps after 3 s warm-up, then 2 s low steps (~55 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exp_parse_args "$@"
exp_setup

if [ "$QUICK" = 1 ]; then STEP=6; WARM=3; LOW=1,4,32,1000; LSTEP=2; LWARM=1
else STEP=30; WARM=5; LOW=1,2,4,8,32,128,1000; LSTEP=10; LWARM=2; fi
LADDER=${LADDER:-1000,2000,5000,10000}
ROUTE=${ROUTE:-/cpu/100000}
port=$(free_port)

echo "sweep: $LADDER connections on $ROUTE, ${STEP}s steps after ${WARM}s warm-up" >&2
$PIN_C "$S" sweep "http://127.0.0.1:$port$ROUTE" -c "$LADDER" --step "${STEP}s" --warmup "${WARM}s" \
  -t 1 --json "$OUT/sweep.json" --spawn "$PIN_S $S serve --threads 1 --port $port" \
  >"$OUT/sweep.txt" 2>"$OUT/sweep.err"
port=$(free_port)
echo "sweep below the ladder: $LOW connections, ${LSTEP}s steps" >&2
$PIN_C "$S" sweep "http://127.0.0.1:$port$ROUTE" -c "$LOW" --step "${LSTEP}s" --warmup "${LWARM}s" \
  -t 1 --json "$OUT/sweep-low.json" --spawn "$PIN_S $S serve --threads 1 --port $port" \
  >"$OUT/sweep-low.txt" 2>"$OUT/sweep-low.err"

machine_line
python3 - "$OUT" "$STEP" "$WARM" "$ROUTE" "$LSTEP" "$LWARM" <<'EOF'
import json, sys
out, step, warm, route, lstep, lwarm = sys.argv[1:7]
def ms(us):
    v = us / 1000
    return f"{v:,.2f} ms" if v < 10 else f"{v:,.0f} ms"
for name, st, wu, title in (("sweep", step, warm, "The seed's ladder"), ("sweep-low", lstep, lwarm, "Below the seed's ladder")):
  j = json.load(open(f"{out}/{name}.json"))
  print()
  print(f"### {title}: {route} on 1 worker (CPU 0), client 1 thread (CPU 1), {st} s steps after {wu} s warm-up, keep-alive")
  print()
  print("| connections | req/s | goodput | effective = rps×(1−err) | mean | p50 | p99 | errors | Little's law N≈X·R | server CPU | class |")
  print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
  for s in j["steps"]:
      r = s["result"]
      l = r["latency_us"]
      procs = (r.get("monitor") or {}).get("processes") or []
      srv = next((p for p in procs if p["role"] == "server"), None)
      inflight = r["goodput"] * l["mean"] / 1e6
      print(f"| {s['connections']:,} | {r['rps']:,.0f} | {s['goodput']:,.0f} | {s['effective_rps']:,.0f} | {ms(l['mean'])} | {ms(l['p50'])} "
            f"| {ms(l['p99'])} | {s['error_rate_pct']:.2f}% | {inflight:,.0f} | {(srv['cpu_pct_mean'] if srv else float('nan')):.0f}% | {s['class']} |")
  print()
  errs = {s['connections']: r for s in j['steps'] for r in [s['result']['errors']] if r}
  if errs:
      print("errors by kind: " + "; ".join(f"{c:,} connections: " + ", ".join(f"{k} {v:,}" for k, v in e.items()) for c, e in errs.items()))
      print()
  print("stampede sweep's verdict:")
  print()
  for line in j.get("verdict") or []:
      print(f"- {line}")
  for w in j.get("warnings") or []:
      print(f"- WARNING: {w}")
EOF
