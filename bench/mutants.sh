#!/usr/bin/env bash
# Mutation testing of the pure cores with cargo-mutants: each mutant (a `+`
# turned `-`, a match arm deleted, a function returning a default) is built
# and the crate's own tests are run against it; a mutant no test notices is
# "missed" — code whose behaviour the tests do not pin.
#
# Targets (one or more; default: analysis):
#   analysis   crates/stampede-analysis, every file
#   pacer      crates/stampede-engine/src/worker/pacer.rs (intended-time arithmetic, arrivals)
#   exchange   crates/stampede-engine/src/exchange/ (an HTTP/1.1 response read
#              from bytes, a request's clocks and retry, a connection's life,
#              the reactors' Ledger), against the exchange's own tests
#              (`exchange::`, the Ledger's in ledger_tests.rs)
#   workload   crates/stampede-workload: template/, check/, extract.rs
#   jmeter     crates/stampede-jmeter: rules.rs, functions.rs, sampler.rs,
#              thread_group.rs (JMeter elements mapped to stampede's)
# Usage
#   bench/mutants.sh [TARGET...] [--file GLOB]... [--in-diff DIFF] [--jobs N]
#                    [--timeout S] [--out DIR] [--list] [--strict]
#   --file GLOB    narrow a target to matching files (repeatable), e.g.
#                  --file 'crates/stampede-analysis/src/difference.rs'
#   --in-diff DIFF only mutants on lines that DIFF (a `git diff` file) changes
#   --jobs N       builds in parallel (default 1: the machine is shared)
#   --timeout S    test timeout per mutant (default: cargo-mutants' own,
#                  from the baseline run)
#   --out DIR      where cargo-mutants writes (default target/mutants-out);
#                  each target goes to DIR/TARGET/mutants.out
#   --list         list the mutants only, build nothing
#   --strict       exit 1 when a mutant is missed (for CI with --in-diff)
# Prints, per target: caught, missed, timeout, unviable, viable (built and
# tested: caught + missed + timeout) and caught% = (caught + timeout) /
# viable. The missed mutants are in DIR/TARGET/mutants.out/missed.txt.
# Builds go to a separate target dir (target/mutants) so the usual one is
# not invalidated. Needs cargo-mutants (`cargo install cargo-mutants
# --locked`); exit status 2 on bad usage, 1 when a run fails (or, with
# --strict, when a mutant is missed), else 0.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=mutants
log() { printf '[%s] %s\n' "$NAME" "$*" >&2; }
die() { echo "$NAME: $*" >&2; exit 2; }

TARGETS=() FILES=() IN_DIFF="" JOBS=1 TIMEOUT="" OUT="$ROOT/target/mutants-out" LIST=0 STRICT=0
while [ $# -gt 0 ]; do
    case "$1" in
        analysis|pacer|exchange|workload|jmeter) TARGETS+=("$1"); shift ;;
        --file) [ $# -ge 2 ] || die "--file needs a glob"; FILES+=("$2"); shift 2 ;;
        --in-diff) [ $# -ge 2 ] || die "--in-diff needs a diff file"; IN_DIFF=$2; shift 2 ;;
        --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; TIMEOUT=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || die "--out needs a directory"; OUT=$2; shift 2 ;;
        --list) LIST=1; shift ;;
        --strict) STRICT=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown target or option $1 (see --help)" ;;
    esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(analysis)
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs: not a positive number: $JOBS"
[ -z "$TIMEOUT" ] || [[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout: not a positive number: $TIMEOUT"
[ -z "$IN_DIFF" ] || [ -f "$IN_DIFF" ] || die "--in-diff: no such file: $IN_DIFF"
cargo mutants --version >/dev/null 2>&1 \
    || die "cargo-mutants is not installed: cargo install cargo-mutants --locked"

# target_args TARGET: the package and files of a target.
target_args() {
    case "$1" in
        analysis) echo "-p stampede-analysis" ;;
        pacer) echo "-p stampede-engine -f crates/stampede-engine/src/worker/pacer.rs" ;;
        exchange) echo "-p stampede-engine -f crates/stampede-engine/src/exchange/*.rs" \
            "-e crates/stampede-engine/src/exchange/ledger_tests.rs" ;;
        workload) echo "-p stampede-workload -f crates/stampede-workload/src/template/*.rs" \
            "-f crates/stampede-workload/src/check/*.rs -f crates/stampede-workload/src/extract.rs" ;;
        jmeter) echo "-p stampede-jmeter" \
            "-f crates/stampede-jmeter/src/rules.rs -f crates/stampede-jmeter/src/functions.rs" \
            "-f crates/stampede-jmeter/src/sampler.rs -f crates/stampede-jmeter/src/thread_group.rs" ;;
    esac
}

# target_tests TARGET: the tests a target's mutants are run against, when
# not all of its package's: the exchange's own table tests (the engine's
# other tests open sockets and take minutes a mutant).
target_tests() {
    case "$1" in
        exchange) echo "-- --lib exchange::" ;;
    esac
}

# count FILE: its lines, 0 when it does not exist.
count() { if [ -f "$1" ]; then grep -c . "$1" || true; else echo 0; fi; }

cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target/mutants"
status=0
for target in "${TARGETS[@]}"; do
    # Word splitting of the target's arguments is wanted; the globs are
    # cargo-mutants', so they must reach it unexpanded.
    set -f
    # shellcheck disable=SC2207
    args=($(target_args "$target"))
    set +f
    # --file replaces the target's own files: cargo-mutants would take the
    # union, and the point is to narrow.
    if [ ${#FILES[@]} -gt 0 ]; then
        args=("${args[0]}" "${args[1]}")
        for glob in "${FILES[@]}"; do args+=(-f "$glob"); done
    fi
    [ -z "$IN_DIFF" ] || args+=(--in-diff "$IN_DIFF")
    [ -z "$TIMEOUT" ] || args+=(--timeout "$TIMEOUT")
    if [ "$LIST" = 1 ]; then
        cargo mutants --list "${args[@]}"
        continue
    fi
    dir="$OUT/$target"
    mkdir -p "$dir"
    log "$target: cargo mutants ${args[*]} --test-package ${args[1]} -j $JOBS"
    started=$(date +%s)
    # Exit status 2 means "some mutants were missed", 3 "some timed out":
    # both are results. Anything else is a failed run.
    rc=0
    # shellcheck disable=SC2046
    cargo mutants "${args[@]}" --test-package "${args[1]}" -j "$JOBS" --output "$dir" \
        $(target_tests "$target") || rc=$?
    took=$(( $(date +%s) - started ))
    case "$rc" in 0|2|3) ;; *) log "$target: cargo mutants failed (exit $rc)"; status=1; continue ;; esac
    m="$dir/mutants.out"
    caught=$(count "$m/caught.txt") missed=$(count "$m/missed.txt")
    timeout=$(count "$m/timeout.txt") unviable=$(count "$m/unviable.txt")
    viable=$((caught + missed + timeout))
    pct=$(awk -v c=$((caught + timeout)) -v v="$viable" 'BEGIN { if (v > 0) printf "%.1f", 100 * c / v; else print "n/a" }')
    printf '%s: caught %d, missed %d, timeout %d, unviable %d; viable %d; caught %s%% (%d s)\n' \
        "$target" "$caught" "$missed" "$timeout" "$unviable" "$viable" "$pct" "$took"
    if [ "$missed" -gt 0 ]; then
        sed 's/^/  missed: /' "$m/missed.txt"
        [ "$STRICT" = 0 ] || status=1
    fi
done
exit "$status"
