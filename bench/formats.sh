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
#
# Inspect's zstd `.eval` (what current releases write) needs a zipfile with
# zstd to be built: Python >= 3.14, or the venv of scripts/test-writers.sh
# (target/venv, where inspect_ai brings zipfile_zstd). For it the script
# also prints -j 2 against -j 1 (wall time), peak memory against the size of
# one sample and of the whole archive unpacked, and Inspect's own
# read_eval_log on the same file when inspect_ai is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${1:-30M}
REPEAT=${REPEAT:-3}
OUT=bench/out/formats-$SIZE
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$TARGET/profiling/mirotrace
FLOOR=$TARGET/profiling/examples/decode_floor

cargo build --profile profiling --quiet --bin mirotrace --example decode_floor
PY=${PYTHON:-python3}
if [ -z "${PYTHON:-}" ] && [ -x target/venv/bin/python ]; then PY=target/venv/bin/python; fi
mapfile -t INPUTS < <("$PY" bench/make_formats.py "$OUT" "$SIZE")

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

# best_wall K CMD...: "WALL MAXRSS_KB" of the run with the least wall time.
best_wall() {
  local k=$1 b="" line
  shift
  for _ in $(seq "$k"); do
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" > /dev/null
    line=$(tail -1 "$OUT/time.txt")
    if [ -z "$b" ] || awk -v a="${line% *}" -v b="${b% *}" 'BEGIN { exit !(a < b) }'; then b=$line; fi
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

EVAL=$OUT/inspect-zstd.eval
BIG=$OUT/big-samples.eval
if [ -f "$EVAL" ] && [ -f "$BIG" ] && { [ -z "${ONLY:-}" ] || [[ inspect-zstd.eval =~ $ONLY ]]; }; then
  {
    echo
    echo "Inspect .eval with zstd members: threads (wall s, best of $REPEAT) and peak memory (max RSS)"
    echo
    echo "| input | unpacked MB | largest sample MB | -j 1 wall s (RSS MB) | -j 2 wall s (RSS MB) | -j 1 / -j 2 |"
    echo "|---|---:|---:|---:|---:|---:|"
    for input in "$EVAL" "$BIG"; do
      read -r unpacked largest < <("$PY" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); s = [i.file_size for i in z.infolist()]
print(sum(s), max(s))' "$input")
      read -r w1 m1 < <(best_wall "$REPEAT" "$BIN" analyze -q -j 1 --format json "$input")
      read -r w2 m2 < <(best_wall "$REPEAT" "$BIN" analyze -q -j 2 --format json "$input")
      awk -v n="$(basename "$input")" -v u="$unpacked" -v l="$largest" -v w1="$w1" -v m1="$m1" -v w2="$w2" -v m2="$m2" \
        'BEGIN { printf "| %s | %.1f | %.1f | %.2f (%.0f) | %.2f (%.0f) | %.2f× |\n", n, u / 1e6, l / 1e6, w1, m1 / 1e3, w2, m2 / 1e3, w1 / w2 }'
    done
    if "$PY" -c 'import inspect_ai' 2> /dev/null; then
      read -r wi _ < <(best_wall 1 "$PY" -c 'import sys; from inspect_ai.log import read_eval_log; read_eval_log(sys.argv[1])' "$EVAL")
      read -r wm _ < <(best_wall "$REPEAT" "$BIN" analyze -q --format json "$EVAL")
      awk -v wi="$wi" -v wm="$wm" -v v="$("$PY" -c 'import inspect_ai; print(inspect_ai.__version__)')" \
        'BEGIN { printf "\ninspect-zstd.eval: Inspect %s read_eval_log %.2f s wall; mirotrace analyze (all cores) %.2f s wall: %.0f× faster\n", v, wi, wm, wi / wm }'
    fi
  } | tee -a "$OUT/../formats.md"
fi
