#!/usr/bin/env bash
# Per input format: `mirotrace analyze -j 1` throughput as a ratio to a
# plain serde_json decode of the same bytes (examples/decode_floor.rs: line
# by line for JSONL, whole for a document, entry by entry for a ZIP).
#
# usage: bench/formats.sh [SIZE]     SIZE per input (default 30M)
#   REPEAT=N   runs of each measurement, the fastest kept (default 3)
#   ONLY=RE    measure only the inputs whose name matches this regex
#
# Inputs are built from fixtures/harnesses/ (bench/make_formats.py) into
# bench/out/formats/ (git-ignored). Output: a Markdown table on stdout, also
# saved as bench/out/formats.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${1:-30M}
REPEAT=${REPEAT:-3}
OUT=bench/out/formats-$SIZE
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$TARGET/release/mirotrace
FLOOR=$TARGET/release/examples/decode_floor

cargo build --release --quiet --bin mirotrace --example decode_floor
mapfile -t INPUTS < <(python3 bench/make_formats.py "$OUT" "$SIZE")

# best K CMD...: the fastest wall time of K runs, in seconds.
best() {
  local k=$1 t b=""
  shift
  for _ in $(seq "$k"); do
    local s e
    s=$(date +%s.%N)
    "$@" > /dev/null
    e=$(date +%s.%N)
    t=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')
    if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
  done
  echo "$b"
}

{
  echo "inputs: bench/make_formats.py, ${SIZE} each; machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "best of $REPEAT runs; MB = 10^6 bytes; ratio = decode time / analyze time (1.0 = as fast as decoding alone)"
  echo
  echo "| input | MB | traces | attempts | decode s | analyze -j 1 s | MB/s | ratio to decode |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for input in "${INPUTS[@]}"; do
    if [ -n "${ONLY:-}" ] && ! [[ $(basename "$input") =~ $ONLY ]]; then continue; fi
    cat "$input" > /dev/null
    bytes=$(stat -c %s "$input")
    "$BIN" analyze -q -j 1 --format json "$input" > "$OUT/report.json"
    read -r traces attempts < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["traces"], d["attempts"])' "$OUT/report.json")
    floor=$(best "$REPEAT" "$FLOOR" "$input")
    analyze=$(best "$REPEAT" "$BIN" analyze -q -j 1 --format json "$input")
    awk -v n="$(basename "$input")" -v b="$bytes" -v t="$traces" -v a="$attempts" -v f="$floor" -v z="$analyze" \
      'BEGIN { printf "| %s | %.1f | %d | %d | %.3f | %.3f | %.0f | %.2f |\n", n, b / 1e6, t, a, f, z, b / 1e6 / z, f / z }'
  done
} | tee "$OUT/../formats.md"
