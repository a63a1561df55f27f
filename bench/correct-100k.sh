#!/usr/bin/env bash
# Never a false verdict: 0 violations over CASES swarm cases (default
# 20 000) of each correct protocol, at default check settings otherwise:
# the five catalog protocols expected ok, then every scenario file of the
# catalog scripts and the examples that expects ok (issue 15, issue 28).
# Exits non-zero if any check does not match.
# Usage: bench/correct-100k.sh [XACKLY] [CASES_PER_PROTOCOL] [JOBS]
set -euo pipefail
out=$(mktemp -d)  # reports and replay files of each check, removed at exit
trap 'rm -rf "$out"' EXIT
xackly=${1:-./build/xackly}
cases=${2:-20000}
jobs=${3:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
check() {  # NAME, then check's target flags
  local name=$1 start
  shift
  start=$(date +%s)
  "$xackly" check "$@" --cases "$cases" -j "$jobs" --out "$out" 2>/dev/null |
    grep -E "^$name +expected" || status=1
  echo "  ($name: $(( $(date +%s) - start )) s wall)"
}
for p in txn-dedupe lua-dedupe safe-trim dlq-after-3 txn-dedupe-restart-aof; do
  check "$p" --protocol "$p"
done
for f in $(grep -l '^expect = "ok"' "$root"/scenarios/catalog/scripts/*.toml "$root"/scenarios/examples/*.toml); do
  check "$(sed -n 's/^name = "\(.*\)"/\1/p' "$f")" --scenario "$f"
done
exit $status
