#!/usr/bin/env bash
# Seed 001 (coroutine server under JMeter): access log on vs off at 1000
# connections. JMeter keeps connections alive, so this does too.
# Three runs, each `--repeat R` rounds of D seconds against a fresh 1-worker
# `stampede serve`: log off, log on, log off again (the second "off" shows how
# far this shared machine drifts between runs), then `stampede compare`.
# Full: D=15 s, R=3 (~2.5 min). --quick: D=3 s, R=2 (~25 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exp_parse_args "$@"
exp_setup

if [ "$QUICK" = 1 ]; then D=3; R=2; else D=15; R=3; fi
CONNS=1000
PAGE=/index.html
LOG="$OUT/access.log"
rm -f "$LOG"

PORT=$(free_port)   # one port for all runs, so `stampede compare` sees one plan
run_one() { # name, extra serve args...
  local name=$1; shift
  local port=$PORT
  echo "access log: $name, -c $CONNS, $R x ${D}s" >&2
  $PIN_C "$S" run "http://127.0.0.1:$port$PAGE" -c "$CONNS" -d "${D}s" --repeat "$R" -q \
    --json "$OUT/$name.json" \
    --spawn "$PIN_S $S serve --threads 1 --port $port $*" >"$OUT/$name.txt" 2>&1
}

run_one log-off
run_one log-on --access-log "$LOG"
LOG_LINES=$(wc -l <"$LOG"); LOG_BYTES=$(stat -c %s "$LOG")
rm -f "$LOG"   # it can reach hundreds of MB; its size is kept below
run_one log-off-again

# Two repeat files at a time: that is when compare gives confidence intervals.
"$S" compare "$OUT/log-off.json" "$OUT/log-on.json" \
  --json "$OUT/compare.json" >"$OUT/compare.txt" 2>&1 || true
"$S" compare "$OUT/log-off.json" "$OUT/log-off-again.json" >"$OUT/compare-drift.txt" 2>&1 || true

machine_line
python3 - "$OUT" "$LOG_LINES" "$LOG_BYTES" "$D" "$R" <<'EOF'
import json, sys
out, lines, nbytes, d, r = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def load(name):
    j = json.load(open(f"{out}/{name}.json"))
    runs = j["runs"]
    n = len(runs)
    mean = lambda f: sum(f(x) for x in runs) / n
    srv = lambda x: next(p for p in x["monitor"]["processes"] if p["role"] == "server")
    return dict(
        rps=mean(lambda x: x["rps"]), rps_ci=j["summary"]["rps"]["half_width"],
        mean_ms=mean(lambda x: x["latency_us"]["mean"]) / 1000,
        p50=mean(lambda x: x["latency_us"]["p50"]) / 1000,
        p99=mean(lambda x: x["latency_us"]["p99"]) / 1000,
        p999=mean(lambda x: x["latency_us"]["p99_9"]) / 1000,
        err=mean(lambda x: x["error_rate_pct"]),
        cpu=mean(lambda x: srv(x)["cpu_pct_mean"]),
        cpu1k=mean(lambda x: srv(x)["cpu_s_per_1k_requests"]) * 1000,
    )
rows = [("log off", load("log-off")), ("log on", load("log-on")), ("log off again", load("log-off-again"))]
base = rows[0][1]
pct = lambda a, b: (b - a) / a * 100 if a else float("nan")
print()
print(f"1 worker, -c 1000 keep-alive, /index.html; each row: mean of {r} rounds x {d} s")
print()
print("| server | req/s (±95% CI) | Δ req/s | mean | Δ mean | p50 | p99 | Δ p99 | p99.9 | errors | server CPU | CPU-ms per 1k req |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, x in rows:
    d = name != "log off"
    f = lambda v: f"{v:+.1f}%" if d else "—"
    print(f"| {name} | {x['rps']:,.0f} ± {x['rps_ci']:,.0f} | {f(pct(base['rps'], x['rps']))} | {x['mean_ms']:.1f} ms | {f(pct(base['mean_ms'], x['mean_ms']))} "
          f"| {x['p50']:.1f} ms | {x['p99']:.1f} ms | {f(pct(base['p99'], x['p99']))} | {x['p999']:.1f} ms | {x['err']:.2f}% | {x['cpu']:.0f}% | {x['cpu1k']:.1f} |")
print()
print(f"access log written during 'log on': {lines:,} lines, {nbytes/2**20:,.1f} MiB ({nbytes/max(lines,1):.0f} bytes a line)")
print()
for title, f in (("stampede compare log-off.json log-on.json", "compare.txt"),
                 ("stampede compare log-off.json log-off-again.json (drift: same server, same settings)", "compare-drift.txt")):
    print(f"{title}:")
    print()
    print("```")
    print(open(f"{out}/{f}").read().rstrip())
    print("```")
    print()
EOF
