#!/usr/bin/env bash
# Seed 003 (kit_server vs nginx under ab): short connections vs keep-alive
# (`ab -n 1000000 -c 200 [-k]`), the server under test vs nginx with a single
# worker as the control. Both serve the same 515-byte page; the client runs one
# thread, as ab does. nginx is installed with apt-get when missing and runs
# from a private config in a temp dir (one process: master_process off,
# access log off as stampede serve's default), stopped after each run.
# Full: -n 1,000,000 per row (as the seed), capped at 60 s (~3-4 min).
# --quick: -n 30,000 capped at 6 s (~25 s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exp_parse_args "$@"
exp_setup

if [ "$QUICK" = 1 ]; then N=30000; CAP=6; else N=1000000; CAP=60; fi
CONNS=200

NGINX=$(command -v nginx || true)
[ -n "$NGINX" ] || { [ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx; } || true
if [ -z "$NGINX" ]; then
  echo "nginx missing: apt-get install -y nginx" >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y nginx >&2 || true; else sudo apt-get install -y nginx >&2 || true; fi
  NGINX=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)
fi

# The same page for both servers: the built-in /index.html, 515 bytes.
NGX_DIR=$(mktemp -d /tmp/stampede-nginx.XXXXXX)
trap 'exp_cleanup; rm -rf "$NGX_DIR"' EXIT
mkdir -p "$NGX_DIR/www" "$NGX_DIR/logs"
port=$(free_port)
start_bg "$OUT/page-serve.log" "$S" serve --threads 1 --port "$port"
wait_port "$port"
if command -v curl >/dev/null; then
  curl -s "http://127.0.0.1:$port/index.html" -o "$NGX_DIR/www/index.html"
else
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /index.html HTTP/1.0\r\nHost: x\r\n\r\n' >&3
  sed '1,/^\r$/d' <&3 >"$NGX_DIR/www/index.html"; exec 3<&-
fi
stop_bg "$LAST_PID"
PAGE_BYTES=$(stat -c %s "$NGX_DIR/www/index.html")

nginx_conf() { # port
  cat >"$NGX_DIR/nginx.conf" <<EOF
worker_processes 1;
master_process off;
daemon off;
pid $NGX_DIR/nginx.pid;
error_log $NGX_DIR/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $NGX_DIR/body;
  proxy_temp_path $NGX_DIR/proxy;
  fastcgi_temp_path $NGX_DIR/fastcgi;
  uwsgi_temp_path $NGX_DIR/uwsgi;
  scgi_temp_path $NGX_DIR/scgi;
  types { text/html html; }
  server {
    listen 127.0.0.1:$1 backlog=4096;
    root $NGX_DIR/www;
  }
}
EOF
}

ROWS=()
for server in stampede nginx; do
  if [ "$server" = nginx ] && [ -z "$NGINX" ]; then
    echo "nginx could not be installed: its rows are skipped" >&2; continue
  fi
  for conn in short keepalive; do
    port=$(free_port)
    if [ "$server" = nginx ]; then
      nginx_conf "$port"
      cmd="$PIN_S $NGINX -p $NGX_DIR -c $NGX_DIR/nginx.conf"
    else
      cmd="$PIN_S $S serve --threads 1 --port $port"
    fi
    ka=""; [ "$conn" = short ] && ka="--no-keepalive"
    echo "$server, $conn, -n $N -c $CONNS" >&2
    $PIN_C "$S" run "http://127.0.0.1:$port/index.html" -c "$CONNS" -n "$N" -d "${CAP}s" -t 1 $ka \
      -q --json "$OUT/$server-$conn.json" --spawn "$cmd" >"$OUT/$server-$conn.txt" 2>&1
    ROWS+=("$server $conn")
  done
done

machine_line
[ -n "$NGINX" ] && echo "nginx: $("$NGINX" -v 2>&1 | sed 's/^nginx version: //')"
python3 - "$OUT" "$N" "$CAP" "$PAGE_BYTES" "${ROWS[@]}" <<'EOF'
import json, sys
out, n, cap, page, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
print()
print(f"-c 200, -n {n:,} (capped at {cap} s), {page}-byte page, client: 1 thread; server: 1 worker on CPU 0")
print()
print("| server | connections | completed | req/s | mean | p50 | p99 | p99.9 | errors | bytes/response | server CPU | server CPU-ms per 1k req | client CPU | client CPU-ms per 1k req | machine busy |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for row in rows:
    server, conn = row.split()
    j = json.load(open(f"{out}/{server}-{conn}.json"))
    procs = j["monitor"]["processes"]
    s = next(p for p in procs if p["role"] == "server")
    c = next((p for p in procs if p["role"] == "client"), None)
    m = j["monitor"].get("machine") or []
    busy = sum(x["cpu_pct"] for x in m) / len(m) if m else float("nan")
    l = j["latency_us"]
    done = j["requests"]["completed"] or 1
    label = "keep-alive (-k)" if conn == "keepalive" else "short (new per request)"
    print(f"| {'stampede serve' if server == 'stampede' else 'nginx'} | {label} | {j['requests']['completed']:,} | {j['rps']:,.0f} | {l['mean']/1000:.2f} ms "
          f"| {l['p50']/1000:.2f} ms | {l['p99']/1000:.2f} ms | {l['p99_9']/1000:.2f} ms | {j['requests']['errors']:,} | {j['bytes']['received']/done:.0f} "
          f"| {s['cpu_pct_mean']:.0f}% | {s['cpu_s_per_1k_requests']*1000:.1f} | {c['cpu_pct_mean'] if c else float('nan'):.0f}% | {c['cpu_s_per_1k_requests']*1000 if c else float('nan'):.1f} | {busy:.0f}% |")
print()
print("CPU is % of one core; 'machine busy' is all CPUs, everyone's processes included (this machine is shared).")
EOF
