#!/usr/bin/env bash
# 0 violations over 100 000 swarm cases of the correct catalog protocols
# (issue 15): 20 000 cases each of the five protocols expected ok, default
# check settings otherwise. Exits non-zero if any check does not match.
# Usage: bench/correct-100k.sh [XACKLY] [CASES_PER_PROTOCOL] [JOBS]
set -euo pipefail
out=$(mktemp -d)  # reports and replay files of each check, removed at exit
trap 'rm -rf "$out"' EXIT
xackly=${1:-./build/xackly}
cases=${2:-20000}
jobs=${3:-2}
status=0
for p in txn-dedupe lua-dedupe safe-trim dlq-after-3 txn-dedupe-restart-aof; do
  start=$(date +%s)
  "$xackly" check --protocol "$p" --cases "$cases" -j "$jobs" --out "$out" 2>/dev/null |
    grep -E "^$p +expected" || status=1
  echo "  ($p: $(( $(date +%s) - start )) s wall)"
done
exit $status
