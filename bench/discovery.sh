#!/usr/bin/env bash
# Median case of first discovery of every broken catalog protocol at default
# check settings, over seeds 1..5 (issue 15). Prints one row per protocol:
# the case index of the first hit for each seed ("-" when --cases ran out)
# and the median. Usage: bench/discovery.sh [XACKLY] [CASES] [JOBS]
set -euo pipefail
out=$(mktemp -d)  # reports and replay files of each check, removed at exit
trap 'rm -rf "$out"' EXIT
xackly=${1:-./build/xackly}
cases=${2:-200}
jobs=${3:-2}
printf '%-26s %-28s %s\n' protocol "first hit, seeds 1..5" median
for p in $("$xackly" protocols --format json | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p["expected"] != "ok": print(p["name"])'); do
  hits=()
  for seed in 1 2 3 4 5; do
    line=$("$xackly" check --protocol "$p" --seed "$seed" --cases "$cases" -j "$jobs" --out "$out" 2>/dev/null |
           grep -E "^$p +expected" || true)
    hit=$(sed -n 's/.*first hit at case \([0-9]*\).*/\1/p' <<<"$line")
    hits+=("${hit:--}")
  done
  median=$(printf '%s\n' "${hits[@]}" | python3 -c '
import sys, statistics
v = [int(x) if x.strip() != "-" else 10**9 for x in sys.stdin]
m = statistics.median_low(v)
print("not found" if m == 10**9 else m)')
  printf '%-26s %-28s %s\n' "$p" "${hits[*]}" "$median"
done
