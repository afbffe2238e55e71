#!/usr/bin/env bash
# Seed 000 (TKeed under WebBench): 4 workers vs 8 workers at 1000 clients, on
# the 515-byte page and on the 1 KB page, loaded with the webbench front-end.
# A 1-worker row is added: on this machine the server gets one core, so
# "workers = cores" means 1.
#
# Each configuration runs twice:
#   1. `stampede webbench -t T -c 1000 URL` - the report TKeed's author read
#      (pages/min, bytes/sec, susceed/failed);
#   2. the same words as `stampede run ... --no-keepalive --http1.0 --spawn`,
#      because the webbench front-end has no monitor: server CPU and context
#      switches come from this pass.
# Full: -t 60 (as the seed) + 20 s monitor pass, 5 configurations (~7 min).
# --quick: -t 4 + 3 s (~45 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exp_parse_args "$@"
exp_setup

if [ "$QUICK" = 1 ]; then T_WB=4; T_MON=3; else T_WB=60; T_MON=20; fi
CLIENTS=1000
CONFIGS=("1 /index.html" "4 /index.html" "8 /index.html" "4 /1k.html" "8 /1k.html")

for cfg in "${CONFIGS[@]}"; do
  read -r threads page <<<"$cfg"
  tag="t${threads}-$(basename "$page" .html)"
  # Pass 1: the webbench front-end against a server started here.
  port=$(free_port)
  start_bg "$OUT/serve-$tag.log" $PIN_S "$S" serve --threads "$threads" --port "$port"
  srv=$LAST_PID
  wait_port "$port"
  echo "webbench: $threads workers, $page, -t $T_WB -c $CLIENTS" >&2
  $PIN_C "$S" webbench -t "$T_WB" -c "$CLIENTS" "http://127.0.0.1:$port$page" \
    --stampede-json "$OUT/wb-$tag.json" >"$OUT/wb-$tag.txt" 2>/dev/null
  stop_bg "$srv"
  # Pass 2: same load words, with the server spawned and monitored.
  port=$(free_port)
  echo "monitor: $threads workers, $page, ${T_MON}s" >&2
  $PIN_C "$S" run "http://127.0.0.1:$port$page" -c "$CLIENTS" -d "${T_MON}s" \
    --no-keepalive --http1.0 -q --json "$OUT/mon-$tag.json" \
    --spawn "$PIN_S $S serve --threads $threads --port $port" >"$OUT/mon-$tag.txt" 2>&1
done

machine_line
python3 - "$OUT" "$T_WB" "$T_MON" "${CONFIGS[@]}" <<'EOF'
import json, re, sys, os
out, t_wb, t_mon, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
print()
print(f"webbench pass: -t {t_wb} -c 1000; monitor pass: stampede run, same words, {t_mon} s")
print()
print("| workers | page | pages/min | = req/s | bytes/sec | susceed | failed | p99 | monitor req/s | server CPU | server CPU-ms per 1k req | ctx switches vol/invol | ctx per 1k req | client CPU | machine busy |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for cfg in configs:
    threads, page = cfg.split()
    tag = f"t{threads}-{os.path.basename(page)[:-5]}"
    text = open(f"{out}/wb-{tag}.txt").read()
    m = re.search(r"Speed=(\d+) pages/min, (\d+) bytes/sec", text)
    r = re.search(r"Requests: (\d+) susceed, (\d+) failed", text)
    wb = json.load(open(f"{out}/wb-{tag}.json"))
    mon = json.load(open(f"{out}/mon-{tag}.json"))
    srv = next(p for p in mon["monitor"]["processes"] if p["role"] == "server")
    cli = next((p for p in mon["monitor"]["processes"] if p["role"] == "client"), None)
    ppm = int(m.group(1))
    ms = mon["monitor"].get("machine") or []
    busy = sum(x["cpu_pct"] for x in ms) / len(ms) if ms else float("nan")
    done = mon["requests"]["completed"] or 1
    ctx1k = (srv["ctx_voluntary"] + srv["ctx_involuntary"]) / done * 1000
    print(f"| {threads} | {page} | {ppm:,} | {ppm/60:,.0f} | {int(m.group(2)):,} | {int(r.group(1)):,} | {int(r.group(2)):,} "
          f"| {wb['latency_us']['p99']/1000:.1f} ms | {mon['rps']:,.0f} | {srv['cpu_pct_mean']:.0f}% | {srv['cpu_s_per_1k_requests']*1000:.1f} "
          f"| {srv['ctx_voluntary']:,} / {srv['ctx_involuntary']:,} | {ctx1k:.1f} | {cli['cpu_pct_mean'] if cli else float('nan'):.0f}% | {busy:.0f}% |")
print()
print("pages/min is webbench's unit: req/s = pages/min / 60. p99 is from the webbench pass; the columns after it from the monitor pass.")
print("CPU is % of one core (100% = one core busy); 'machine busy' is all CPUs, everyone's processes included (this machine is shared).")
EOF
