#!/usr/bin/env bash
# Determinism of protocol scripts across processes (ASLR on, Lua's string
# hash seeded per process): the same script scenario run by two separate
# xackly processes gives the same trace hash (a run may exit 1: one seed is
# one schedule, and the script's expected verdict may need a search).
#   two_process_trace.sh XACKLY SCENARIO
set -euo pipefail
xackly=$1
scenario=$2
# One run is one schedule: its verdict may differ from the expectation (exit 1).
first=$("$xackly" run --scenario "$scenario" || [[ $? -eq 1 ]])
second=$("$xackly" run --scenario "$scenario" || [[ $? -eq 1 ]])
hash1=$(grep '^trace ' <<<"$first" | cut -d' ' -f2 | tr -d ',')
hash2=$(grep '^trace ' <<<"$second" | cut -d' ' -f2 | tr -d ',')
if [[ -z "$hash1" || "$hash1" != "$hash2" ]]; then
  echo "trace hashes differ between processes: '$hash1' vs '$hash2'" >&2
  exit 1
fi
echo "same trace in two processes: $hash1"
