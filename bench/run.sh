#!/usr/bin/env bash
# Throughput and memory of `mirotrace analyze` against the floor of a plain
# serde_json decode, on one core and on all, next to a pure-CPU control.
#
# usage: bench/run.sh [SIZE]          SIZE: 1G (default), 200M, 50M, ...
#   REPEAT=N   runs of each measurement, the fastest is kept (default 3)
#   CORPUS=F   the corpus replicated into the input (default: the dev corpus)
#
# The input is the corpus repeated with fresh trace ids (bench/make_input.py),
# kept in bench/out/ (git-ignored) for later runs. Output: a Markdown table on
# stdout, also saved as bench/out/latest.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${1:-1G}
REPEAT=${REPEAT:-3}
CORPUS=${CORPUS:-../shared/conformance/replay/dev.jsonl}
OUT=bench/out
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$TARGET/release/mirotrace
FLOOR=$TARGET/release/examples/decode_floor
CONTROL=$TARGET/release/examples/cpu_control
TIME=/usr/bin/time
NPROC=$(nproc)

if [ ! -x "$TIME" ]; then
  echo "bench: $TIME is missing (apt-get install time)" >&2
  exit 2
fi
if [ ! -f "$CORPUS" ]; then
  echo "bench: corpus $CORPUS not found (set CORPUS=...)" >&2
  exit 2
fi
mkdir -p "$OUT"
INPUT=$OUT/input-$SIZE.jsonl
[ -f "$INPUT" ] || python3 bench/make_input.py "$CORPUS" "$INPUT" "$SIZE"
cargo build --release --quiet --bin mirotrace --example decode_floor --example cpu_control

BYTES=$(stat -c %s "$INPUT")
LINES=$(wc -l < "$INPUT")
cat "$INPUT" > /dev/null # page cache: every run reads from memory

# Correctness first: the report must count every line of the input.
"$BIN" analyze -q --format json "$INPUT" > "$OUT/analyze.json"
ATTEMPTS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["attempts"])' "$OUT/analyze.json")
if [ "$ATTEMPTS" != "$LINES" ]; then
  echo "bench: analyze counted $ATTEMPTS attempts in $LINES lines" >&2
  exit 1
fi

# measure NAME CMD...: the fastest of $REPEAT runs; sets WALL CPU RSS_MB.
measure() {
  local name=$1 best="" line
  shift
  for _ in $(seq "$REPEAT"); do
    "$TIME" -f "%e %U %S %M" -o "$OUT/time.txt" "$@" > /dev/null
    line=$(tail -1 "$OUT/time.txt")
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
      best=$line
    fi
  done
  read -r WALL USER SYS RSS_KB <<< "$best"
  CPU=$(awk -v u="$USER" -v s="$SYS" 'BEGIN { printf "%.2f", u + s }')
  RSS_MB=$(awk -v k="$RSS_KB" 'BEGIN { printf "%.0f", k / 1024 }')
  echo "$name $WALL $CPU $RSS_MB" >> "$OUT/runs.txt"
}

: > "$OUT/runs.txt"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
measure "decode floor (1 thread)" "$FLOOR" "$INPUT"
measure "analyze, 1 core (taskset, -j 1)" taskset -c 0 "$BIN" analyze -q -j 1 --format json "$INPUT"
measure "analyze -j 1" "$BIN" analyze -q -j 1 --format json "$INPUT"
measure "analyze -j $NPROC (all cores)" "$BIN" analyze -q -j "$NPROC" --format json "$INPUT"
"$CONTROL" "$NPROC" > "$OUT/control.txt"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "input: $INPUT, $BYTES bytes, $LINES lines (corpus $CORPUS replicated)"
  echo "machine: nproc $NPROC, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $LOAD_BEFORE before, $LOAD_AFTER after"
  echo "best of $REPEAT runs each (by wall time); MB = 10^6 bytes; CPU s = user + system time of all threads"
  echo
  echo "| run | wall s | CPU s | MB/s | % of floor | MB per CPU-s | % of floor (CPU) | peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  awk -v bytes="$BYTES" '
    { name = $1; for (i = 2; i <= NF - 3; i++) name = name " " $i
      wall = $(NF - 2); cpu = $(NF - 1); rss = $NF
      rate = bytes / wall / 1e6; cpu_rate = bytes / cpu / 1e6
      if (NR == 1) { floor = rate; cpu_floor = cpu_rate }
      printf "| %s | %.2f | %.2f | %.0f | %.0f%% | %.0f | %.0f%% | %s |\n",
        name, wall, cpu, rate, 100 * rate / floor, cpu_rate, 100 * cpu_rate / cpu_floor, rss }
  ' "$OUT/runs.txt"
  echo
  J1=$(awk 'NR == 3 { print $(NF - 2) }' "$OUT/runs.txt")
  JN=$(awk 'NR == 4 { print $(NF - 2) }' "$OUT/runs.txt")
  CONTROL_SPEEDUP=$(sed -n 's/^speedup=//p' "$OUT/control.txt")
  awk -v a="$J1" -v b="$JN" -v c="$CONTROL_SPEEDUP" -v n="$NPROC" \
    'BEGIN { printf "speed-up from 1 to %d threads: analyze %.2fx, pure-CPU control %sx\n", n, a / b, c }'
} | tee "$OUT/latest.md"
