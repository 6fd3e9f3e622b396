#!/usr/bin/env bash
# Throughput and memory of `mirotrace analyze` against the floor of a plain
# serde_json decode, on one core and on all, next to a pure-CPU control.
#
# usage: bench/run.sh [SIZE]          SIZE: 1G (default), 200M, 50M, ...
#   REPEAT=N   rounds of measurements, the fastest of each is kept (default 3)
#   CORPUS=F   the corpus replicated into the input (default: the dev corpus)
#
# The input is the corpus repeated with fresh trace ids (bench/make_input.py),
# kept in bench/out/ (git-ignored) for later runs. Output: a Markdown table on
# stdout, also saved as bench/out/latest.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${1:-1G}
REPEAT=${REPEAT:-3}
CORPUS=${CORPUS:-tests/data/replay/dev.jsonl.zst}
OUT=bench/out
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$TARGET/profiling/mirotrace
FLOOR=$TARGET/profiling/examples/decode_floor
CONTROL=$TARGET/profiling/examples/cpu_control
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
# The bundled corpora are zstd-compressed: replicate the plain text.
case "$CORPUS" in
  *.zst)
    plain=$OUT/$(basename "${CORPUS%.zst}")
    [ -f "$plain" ] || zstd -q -d -c "$CORPUS" > "$plain"
    CORPUS=$plain
    ;;
esac
INPUT=$OUT/input-$SIZE.jsonl
[ -f "$INPUT" ] || python3 bench/make_input.py "$CORPUS" "$INPUT" "$SIZE"
cargo build --profile profiling --quiet --bin mirotrace --example decode_floor --example cpu_control

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

# The runs are interleaved, round by round (floor, 1 core, -j 1, all cores,
# then again), and the fastest of each is kept: a busy spell on this shared
# machine then slows every kind of run alike instead of one of them.
NAMES=("decode floor (1 thread)" "analyze, 1 core (taskset, -j 1)" "analyze -j 1" "analyze -j $NPROC (all cores)")
# timed K: runs measurement K once under /usr/bin/time.
timed() {
  local t=("$TIME" -f "%e %U %S %M" -o "$OUT/time.txt")
  case $1 in
    0) "${t[@]}" "$FLOOR" "$INPUT" ;;
    1) "${t[@]}" taskset -c 0 "$BIN" analyze -q -j 1 --format json "$INPUT" ;;
    2) "${t[@]}" "$BIN" analyze -q -j 1 --format json "$INPUT" ;;
    3) "${t[@]}" "$BIN" analyze -q -j "$NPROC" --format json "$INPUT" ;;
  esac > /dev/null
}
declare -a BEST
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for _ in $(seq "$REPEAT"); do
  for k in 0 1 2 3; do
    timed "$k"
    line=$(tail -1 "$OUT/time.txt")
    if [ -z "${BEST[$k]:-}" ] || awk -v a="${line%% *}" -v b="${BEST[$k]%% *}" 'BEGIN { exit !(a < b) }'; then
      BEST[$k]=$line
    fi
  done
done
: > "$OUT/runs.txt"
for k in 0 1 2 3; do
  read -r WALL USER SYS RSS_KB <<< "${BEST[$k]}"
  CPU=$(awk -v u="$USER" -v s="$SYS" 'BEGIN { printf "%.2f", u + s }')
  RSS_MB=$(awk -v k="$RSS_KB" 'BEGIN { printf "%.0f", k / 1024 }')
  echo "${NAMES[$k]} $WALL $CPU $RSS_MB" >> "$OUT/runs.txt"
done
"$CONTROL" "$NPROC" > "$OUT/control.txt"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "input: $INPUT, $BYTES bytes, $LINES lines (corpus $CORPUS replicated)"
  echo "machine: nproc $NPROC, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $LOAD_BEFORE before, $LOAD_AFTER after"
  echo "best of $REPEAT interleaved rounds (by wall time); MB = 10^6 bytes; CPU s = user + system time of all threads"
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
