#!/usr/bin/env bash
# Seed 003 (kit_server under ab): 1, 2 and 5 server threads at 200 concurrent
# short connections (`ab -n 1000000 -c 200`, no -k). The client runs one
# thread, as ab does. The server is pinned to CPU 0 and the client to CPU 1,
# then one more row lets a 2-thread server and the client share both CPUs.
# Full: -n 1,000,000 per row (as the seed), capped at 60 s (~4 min).
# --quick: -n 30,000 capped at 8 s (~30 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exp_parse_args "$@"
exp_setup

if [ "$QUICK" = 1 ]; then N=30000; CAP=8; else N=1000000; CAP=60; fi
CONNS=200
PAGE=/index.html
ROWS=("1 pinned" "2 pinned" "5 pinned" "2 shared")

for row in "${ROWS[@]}"; do
  read -r threads mode <<<"$row"
  port=$(free_port)
  if [ "$mode" = pinned ]; then ps=$PIN_S; pc=$PIN_C; else ps=""; pc=""; fi
  echo "threads: $threads ($mode), -n $N -c $CONNS short connections" >&2
  $pc "$S" run "http://127.0.0.1:$port$PAGE" -c "$CONNS" -n "$N" -d "${CAP}s" -t 1 \
    --no-keepalive -q --json "$OUT/threads-$threads-$mode.json" \
    --spawn "$ps $S serve --threads $threads --port $port" >"$OUT/threads-$threads-$mode.txt" 2>&1
done

machine_line
python3 - "$OUT" "$N" "$CAP" "${ROWS[@]}" <<'EOF'
import json, sys
out, n, cap, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
print()
print(f"-c 200, new connection per request, -n {n:,} (capped at {cap} s), client: 1 thread")
print()
print("| server threads | CPUs | completed | time | req/s | mean | p50 | p99 | errors | server CPU | busiest thread | server CPU-ms per 1k req | ctx vol/invol | ctx per 1k req | client CPU | client CPU-ms per 1k req | machine busy |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def busy(j):
    m = j["monitor"].get("machine") or []
    return sum(x["cpu_pct"] for x in m) / len(m) if m else float("nan")
for row in rows:
    threads, mode = row.split()
    j = json.load(open(f"{out}/threads-{threads}-{mode}.json"))
    procs = j["monitor"]["processes"]
    s = next(p for p in procs if p["role"] == "server")
    c = next((p for p in procs if p["role"] == "client"), None)
    l = j["latency_us"]
    cpus = "server CPU 0, client CPU 1" if mode == "pinned" else "both share CPUs 0-1"
    print(f"| {threads} | {cpus} | {j['requests']['completed']:,} | {j['elapsed_s']:.1f} s | {j['rps']:,.0f} | {l['mean']/1000:.2f} ms "
          f"| {l['p50']/1000:.2f} ms | {l['p99']/1000:.2f} ms | {j['requests']['errors']:,} | {s['cpu_pct_mean']:.0f}% | {s['busiest_thread_pct_max']:.0f}% | {s['cpu_s_per_1k_requests']*1000:.1f} "
          f"| {s['ctx_voluntary']:,} / {s['ctx_involuntary']:,} | {(s['ctx_voluntary']+s['ctx_involuntary'])/max(j['requests']['completed'],1)*1000:,.0f} "
          f"| {c['cpu_pct_mean'] if c else float('nan'):.0f}% | {c['cpu_s_per_1k_requests']*1000 if c else float('nan'):.1f} | {busy(j):.0f}% |")
print()
print("CPU is % of one core; 'machine busy' is all CPUs, everyone's processes included (this machine is shared). 'busiest thread' is the highest one-second sample of the busiest server thread.")
EOF
