#!/usr/bin/env bash
# Client CPU per request of wrk's Lua scripts, real wrk and `stampede wrk -s`
# side by side on the same nginx (issue 19's Performance goals):
#   post     wrk's post.lua: method, body, header set at load time (the
#            request is formatted once); stampede also runs the same request
#            from flags (-m POST -b ... -H ...), the baseline the script must match
#   counter  wrk's counter.lua: request() builds a new path and header per call
#   setup    wrk's setup.lua: request() and response() count per thread,
#            done() reads the counts back
# Goals: post the same CPU as the flags; counter and setup <= 0.8x wrk's.
#
# Method: as bench/workload-overhead.sh (helpers in bench/lib.sh): a private
# nginx (1 worker on core 0), clients on core 1 with one thread and 100
# connections, client CPU = user + sys (wait4 rusage), requests counted by
# nginx's stub_status, rounds interleaved, medians.
# Usage
#   bench/lua-vs-wrk.sh                 # 3 rounds x 10 s
#   bench/lua-vs-wrk.sh --quick         # 1 round x 3 s, no waiting for quiet
# Options: --rounds N, --duration S, --out PATH, --no-install, --wait-quiet S,
#   --wait-budget S, --stampede PATH (default target/release/stampede).
# Everything is bounded: each run has a duration, only 127.0.0.1 is used, nginx
# is stopped by a trap on exit. Writes bench/results/DATE-lua.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=lua-vs-wrk
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults
bench_options "" "$@"
bench_start lua

mapfile -t need_pkgs < <(bench_base_missing)
command -v wrk >/dev/null || need_pkgs+=(wrk)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
bench_workspace

PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)"

# The scripts, written as wrk's scripts/ has them.
cat > "$TMP/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body   = "foo=bar&baz=quux"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
LUA
cat > "$TMP/counter.lua" <<'LUA'
counter = 0
request = function()
   path = "/?" .. counter
   wrk.headers["X-Counter"] = counter
   counter = counter + 1
   return wrk.format(nil, path)
end
LUA
cat > "$TMP/setup.lua" <<'LUA'
local counter = 1
local threads = {}
function setup(thread)
   thread:set("id", counter)
   table.insert(threads, thread)
   counter = counter + 1
end
function init(args)
   requests  = 0
   responses = 0
end
function request()
   requests = requests + 1
   return wrk.request()
end
function response(status, headers, body)
   responses = responses + 1
end
function done(summary, latency, requests)
   for index, thread in ipairs(threads) do
      print(("thread %d made %d requests and got %d responses"):format(
         thread:get("id"), thread:get("requests"), thread:get("responses")))
   end
end
LUA

SCS=(post counter setup)
tools_of() { case $1 in post) echo "wrk stampede flags" ;; *) echo "wrk stampede" ;; esac; }
client_cmd() {
    local tool=$1 sc=$2 secs=$3 out=$4
    case $tool in
        wrk) echo "wrk -t1 -c100 -d${secs}s -s $TMP/$sc.lua $URL" ;;
        stampede) echo "$STAMPEDE_BIN wrk -t1 -c100 -d${secs}s -s $TMP/$sc.lua --stampede-json $out.json $URL" ;;
        flags) echo "$STAMPEDE_BIN run -t 1 -c 100 -d ${secs}s -q --json $out.json -m POST -b 'foo=bar&baz=quux' -T application/x-www-form-urlencoded $URL" ;;
    esac
}
display_cmd() { client_cmd "$@" | sed "s#$STAMPEDE_BIN#stampede#; s#$TMP/\([a-z]*\.lua\)#\1#; s#$TMP/[^ ]*#FILE#g; s#127.0.0.1:[0-9]*#ADDRESS#"; }
tool_p50_us() { case $1 in wrk) echo - ;; *) stampede_p50_us "$2" ;; esac; }
tool_count() { case $1 in wrk) wrk_count "$2" ;; *) stampede_count "$2" ;; esac; }
tool_errors() { case $1 in wrk) wrk_errors "$2" ;; *) stampede_errors "$2" ;; esac; }

ROWS="$TMP/rows.tsv"; : > "$ROWS"
wait_quiet "$WAIT_QUIET"
taskset -c 1 wrk -t1 -c100 -d2s "$URL" > /dev/null
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in $(tools_of "$sc"); do run_one "$round" "$sc" "$tool"; done
    done
done

{
    echo "# wrk's Lua scripts: client CPU per request, wrk vs stampede wrk -s ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS interleaved round(s) of ${DURATION} s per tool and script; medians shown"
    echo "- nginx: 1 worker on core 0, 515-byte index.html; clients on core 1, one thread, 100 connections"
    echo "- µs/req = client user+sys CPU (wait4 rusage) / requests counted by nginx (stub_status)"
    echo "- wrk: $(wrk -v 2>&1 | head -1)"
    bench_stampede_version
    bench_noise_lines
    echo
    echo "| script | client | µs/req (user + sys) | vs wrk | req/s | notes |"
    echo "|---|---|---|---|---|---|"
    for sc in "${SCS[@]}"; do
        base=$(col "$sc" wrk '1e6*($6+$7)/$4')
        for tool in $(tools_of "$sc"); do
            us=$(col "$sc" "$tool" '1e6*($6+$7)/$4')
            [ "$us" = nan ] && continue
            usr=$(col "$sc" "$tool" '1e6*$6/$4'); sys=$(col "$sc" "$tool" '1e6*$7/$4')
            rps=$(col "$sc" "$tool" '$4/$5')
            n=$(awk -F'\t' -v sc="$sc" -v t="$tool" '$2==sc && $3==t && $11!="-" { s = s (s ? "; " : "") $11 } END { print (s ? s : "-") }' "$ROWS")
            awk -v sc="$sc" -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v b="$base" -v rps="$rps" -v n="$n" \
                'BEGIN { printf "| %s | %s | %.2f (%.2f + %.2f) | %.3f× | %.0f | %s |\n", sc, t, us, u, s, us / b, rps, n }'
        done
    done
    echo
    echo "Commands (each under \`taskset -c 1\`; ADDRESS = 127.0.0.1 and nginx's port):"
    echo
    for sc in "${SCS[@]}"; do
        for tool in $(tools_of "$sc"); do echo "- $sc $tool: \`$(display_cmd "$tool" "$sc" "$DURATION" x)\`"; done
    done
    echo
    bench_rounds_details "script|client"
} > "$TMP/report.md"
bench_publish_report
