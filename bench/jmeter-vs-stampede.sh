#!/usr/bin/env bash
# Client CPU per request of the same JMeter test plan run by JMeter and by
# `stampede jmeter` (issue 20's Performance section): one thread group, one
# GET sampler, 100 threads, loops forever, a 10 s scheduler, both writing
# their JTL file (-l), against the same private nginx.
#
# Method: bench/lib.sh (as bench/engine-vs-peers.sh): nginx (1 worker on core
# 0, the 515-byte page), each client on core 1 under /usr/bin/time, client
# CPU = user + sys (wait4 rusage, the JVM's every thread included), requests
# counted by nginx's stub_status; rounds interleaved, medians.
# JMeter is Debian's 2.13 (`apt-get install jmeter jmeter-http`). Debian's
# XStream 1.4.20 refuses to load any 2.13 plan (ForbiddenClassException:
# org.apache.jmeter.save.ScriptWrapper, its allow-list is newer than JMeter
# 2.13); the script compiles a one-class shim (NoTypePermission allowing
# every type) and puts it first on JMeter's class path. Nothing else of
# JMeter is changed.
# Usage
#   bench/jmeter-vs-stampede.sh                  # 1 round x 10 s
#   bench/jmeter-vs-stampede.sh --rounds 3
# Options: --rounds N, --duration S, --out PATH, --no-install, --wait-quiet S,
#   --wait-budget S, --stampede PATH (default target/release/stampede),
#   --quick (1 round x 3 s, no waiting for quiet).
# Everything is bounded: each run has a duration, only 127.0.0.1 is used, nginx
# is stopped by a trap on exit. Writes bench/results/DATE-jmeter.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=jmeter-vs-stampede
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

bench_defaults ROUNDS=1 WAIT_BUDGET=300 RETRIES=1
THREADS=100
bench_options "" "$@"
bench_start jmeter

mapfile -t need_pkgs < <(bench_base_missing)
[ -f /usr/share/jmeter/bin/ApacheJMeter.jar ] || need_pkgs+=(jmeter jmeter-http)
command -v javac >/dev/null || need_pkgs+=(default-jdk-headless)
bench_install "${need_pkgs[@]}"
bench_check_stub_status
bench_workspace

# The XStream shim (see the header).
mkdir -p "$TMP/shim/src/com/thoughtworks/xstream/security" "$TMP/shim/classes"
cat > "$TMP/shim/src/com/thoughtworks/xstream/security/NoTypePermission.java" <<'EOF'
package com.thoughtworks.xstream.security;
public class NoTypePermission implements TypePermission {
    public static final TypePermission NONE = new NoTypePermission();
    public boolean allows(Class type) { return true; }
    public int hashCode() { return 1; }
    public boolean equals(Object obj) { return obj != null && obj.getClass() == NoTypePermission.class; }
}
EOF
javac -nowarn -cp /usr/share/java/xstream.jar -d "$TMP/shim/classes" \
    "$TMP/shim/src/com/thoughtworks/xstream/security/NoTypePermission.java"
JMETER="java -cp $TMP/shim/classes:/usr/share/jmeter/bin/ApacheJMeter.jar -Djmeter.home=/usr/share/jmeter org.apache.jmeter.NewDriver"
JMETER_VERSION=$(cd "$TMP" && $JMETER --version 2>&1 | awk '/^Version/ {print $2; exit}')

PORT=$(free_port)
bench_nginx_start "$(bench_plain_server)"

# The plan, as JMeter 2.13 writes it.
write_plan() {
    cat > "$TMP/plan.jmx" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="2.8" jmeter="2.13 r1665067">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="CPU per request" enabled="true">
      <elementProp name="TestPlan.user_defined_variables" elementType="Arguments" guiclass="ArgumentsPanel" testclass="Arguments" testname="User Defined Variables" enabled="true">
        <collectionProp name="Arguments.arguments"/>
      </elementProp>
    </TestPlan>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Thread Group" enabled="true">
        <stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller" enabled="true">
          <boolProp name="LoopController.continue_forever">false</boolProp>
          <intProp name="LoopController.loops">-1</intProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">$THREADS</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">\${__P(duration,10)}</stringProp>
        <stringProp name="ThreadGroup.delay">0</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="index" enabled="true">
          <elementProp name="HTTPsampler.Arguments" elementType="Arguments" guiclass="HTTPArgumentsPanel" testclass="Arguments" enabled="true">
            <collectionProp name="Arguments.arguments"/>
          </elementProp>
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.port">$PORT</stringProp>
          <stringProp name="HTTPSampler.protocol">http</stringProp>
          <stringProp name="HTTPSampler.path">/index.html</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
          <boolProp name="HTTPSampler.follow_redirects">true</boolProp>
          <boolProp name="HTTPSampler.use_keepalive">true</boolProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
EOF
}
write_plan

SCS=(t100)
TOOLS="jmeter stampede"
client_cmd() {
    local tool=$1 secs=$3 out=$4
    case $tool in
        jmeter) echo "$JMETER -n -t $TMP/plan.jmx -l $out.jtl -j $out.log -Jduration=$secs -Jjmeter.save.saveservice.print_field_names=true" ;;
        stampede) echo "$STAMPEDE_BIN jmeter -n -t $TMP/plan.jmx -l $out.jtl -j $out.log -Jduration=$secs" ;;
    esac
}
display_cmd() {
    client_cmd "$@" | sed "s#$STAMPEDE_BIN#stampede#; s#java -cp [^ ]* -Djmeter.home=[^ ]* org.apache.jmeter.NewDriver#jmeter#; s#$TMP/[^ ]*#FILE#g"
}
# The JTL's samples (less the header), median elapsed and failures.
tool_count() { [ -f "$2.jtl" ] && echo $(($(wc -l < "$2.jtl") - 1)) || echo -; }
tool_p50_us() {
    [ -f "$2.jtl" ] || { echo -; return; }
    awk -F, 'NR > 1 {print $2}' "$2.jtl" | median | awk '{printf "%.0f", $1 * 1000}'
}
tool_errors() {
    [ -f "$2.jtl" ] || return 0
    awk -F, 'NR > 1 && $8 != "true" {n++} END {if (n) print "failed samples " n}' "$2.jtl"
}
tool_extra() { grep -m1 '^summary =' "$3.stdout" 2>/dev/null | tr -s ' ' || echo -; }

ROWS="$TMP/rows.tsv"; : > "$ROWS"
wait_quiet "$WAIT_QUIET"
START=$(date -u +%FT%TZ)
for round in $(seq "$ROUNDS"); do
    for sc in "${SCS[@]}"; do
        for tool in $TOOLS; do run_one "$round" "$sc" "$tool"; done
    done
done

{
    echo "# JMeter vs stampede jmeter: client CPU per request of the same plan ($DATE)"
    echo
    bench_machine_lines
    echo "- started $START; $ROUNDS round(s) of ${DURATION} s per tool; medians shown"
    echo "- plan: one thread group, $THREADS threads, loops -1 with a ${DURATION} s scheduler, one keep-alive GET of the 515-byte page; both write the JTL (-l)"
    echo "- nginx: 1 worker on core 0; each client on core 1"
    echo "- µs/req = client user+sys CPU (wait4 rusage; JVM start-up included) / requests counted by nginx (stub_status)"
    echo "- JMeter $JMETER_VERSION (Debian's jmeter package) on $(java -version 2>&1 | head -1), with the XStream shim described in the script"
    bench_stampede_version
    bench_noise_lines
    echo
    echo "| tool | µs/req (user + sys) | vs stampede | req/s | p50 elapsed (JTL) | summary |"
    echo "|---|---|---|---|---|---|"
    base=$(col t100 stampede '1e6*($6+$7)/$4')
    for tool in $TOOLS; do
        us=$(col t100 "$tool" '1e6*($6+$7)/$4')
        [ "$us" = nan ] && continue
        usr=$(col t100 "$tool" '1e6*$6/$4'); sys=$(col t100 "$tool" '1e6*$7/$4')
        rps=$(col t100 "$tool" '$4/$5')
        p50=$(awk -F'\t' -v t="$tool" '$3==t && $8 ~ /^[0-9.]+$/ {print $8}' "$ROWS" | median)
        summary=$(awk -F'\t' -v t="$tool" '$3==t {s=$11} END {print s}' "$ROWS")
        awk -v t="$tool" -v us="$us" -v u="$usr" -v s="$sys" -v b="$base" -v rps="$rps" -v p="$p50" -v m="$summary" \
            'BEGIN { printf "| %s | %.2f (%.2f + %.2f) | %.2f× | %.0f | %s µs | `%s` |\n", t, us, u, s, us / b, rps, p, m }'
    done
    echo
    echo "Commands (each under \`taskset -c 1\`; FILE = files of the run):"
    echo
    for tool in $TOOLS; do echo "- $tool: \`$(display_cmd "$tool" t100 "$DURATION" x)\`"; done
    echo
    bench_rounds_details tool "JTL samples"
} > "$TMP/report.md"
bench_publish_report
