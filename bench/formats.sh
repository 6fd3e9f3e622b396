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
BIN=$TARGET/profiling/mirotrace
FLOOR=$TARGET/profiling/examples/decode_floor

cargo build --profile profiling --quiet --bin mirotrace --example decode_floor
mapfile -t INPUTS < <(python3 bench/make_formats.py "$OUT" "$SIZE")

# best K CMD...: "WALL CPU" of the run with the least CPU time (user +
# system, all threads) of K runs. CPU time is the measure on a shared
# machine: wall time there counts the other jobs' turns too.
best() {
  local k=$1 b="" line
  shift
  for _ in $(seq "$k"); do
    /usr/bin/time -f "%e %U %S" -o "$OUT/time.txt" "$@" > /dev/null
    line=$(tail -1 "$OUT/time.txt" | awk '{ printf "%.3f %.3f", $1, $2 + $3 }')
    if [ -z "$b" ] || awk -v a="${line#* }" -v b="${b#* }" 'BEGIN { exit !(a < b) }'; then b=$line; fi
  done
  echo "$b"
}

{
  echo "inputs: bench/make_formats.py, ${SIZE} each; machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "best of $REPEAT runs by CPU time (user + system); MB = 10^6 bytes; ratio = decode CPU s / analyze CPU s (1.0 = as fast as decoding alone)"
  echo
  echo "| input | MB | traces | attempts | decode CPU s | analyze -j 1 CPU s (wall) | MB per CPU-s | ratio to decode |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for input in "${INPUTS[@]}"; do
    if [ -n "${ONLY:-}" ] && ! [[ $(basename "$input") =~ $ONLY ]]; then continue; fi
    cat "$input" > /dev/null
    bytes=$(stat -c %s "$input")
    "$BIN" analyze -q -j 1 --format json "$input" > "$OUT/report.json"
    read -r traces attempts < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["traces"], d["attempts"])' "$OUT/report.json")
    read -r _ floor < <(best "$REPEAT" "$FLOOR" "$input")
    read -r wall analyze < <(best "$REPEAT" "$BIN" analyze -q -j 1 --format json "$input")
    awk -v n="$(basename "$input")" -v b="$bytes" -v t="$traces" -v a="$attempts" -v f="$floor" -v z="$analyze" -v w="$wall" \
      'BEGIN { printf "| %s | %.1f | %d | %d | %.2f | %.2f (%.2f) | %.0f | %.2f |\n", n, b / 1e6, t, a, f, z, w, b / 1e6 / z, f / z }'
  done
} | tee "$OUT/../formats.md"
