#!/usr/bin/env bash
# Task logs against native JSONL, byte for byte: `mirotrace analyze` on a
# folder of MiroThinker task logs and on the native traces of the same run
# (traces.jsonl) replicated to the same number of bytes. Reading task logs
# should cost at most twice as much per byte.
#
# usage: bench/tasklogs.sh [COPIES]   COPIES of the task-log folder (default 6, ≈10 MB)
#   REPEAT=N     rounds, the fastest of each kind is kept (default 3)
#   TASKLOGS=D   a corpus folder with logs/ and traces.jsonl (default: the
#                bundled tests/data/tasklogs, decompressed into bench/out/)
#
# Inputs are kept in bench/out/ (git-ignored). Output: a Markdown table on
# stdout, also saved as bench/out/tasklogs.md.
set -euo pipefail
cd "$(dirname "$0")/.."

COPIES=${1:-6}
REPEAT=${REPEAT:-3}
OUT=bench/out
SRC=${TASKLOGS:-}
if [ -z "$SRC" ]; then
  # The bundled corpus is zstd-compressed: work on plain copies.
  SRC=$OUT/tasklogs-src
  if [ ! -d "$SRC" ]; then
    mkdir -p "$SRC.tmp/logs"
    for f in tests/data/tasklogs/logs/*.zst; do
      zstd -q -d -c "$f" > "$SRC.tmp/logs/$(basename "${f%.zst}")"
    done
    zstd -q -d -c tests/data/tasklogs/traces.jsonl.zst > "$SRC.tmp/traces.jsonl"
    mv "$SRC.tmp" "$SRC"
  fi
fi
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$TARGET/profiling/mirotrace
TIME=/usr/bin/time

if [ ! -x "$TIME" ]; then
  echo "bench: $TIME is missing (apt-get install time)" >&2
  exit 2
fi
if [ ! -d "$SRC/logs" ] || [ ! -f "$SRC/traces.jsonl" ]; then
  echo "bench: $SRC/logs or $SRC/traces.jsonl not found (set TASKLOGS=...)" >&2
  exit 2
fi
mkdir -p "$OUT"

# COPIES copies of every task log, each with its own task id.
LOGS=$OUT/tasklogs-x$COPIES
if [ ! -d "$LOGS" ]; then
  mkdir -p "$LOGS.tmp"
  python3 - "$SRC/logs" "$LOGS.tmp" "$COPIES" <<'EOF'
import os, re, sys
src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
task_id = re.compile(r'("task_id": ")((?:[^"\\]|\\.)*)"')
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"):
        continue
    text = open(os.path.join(src, name), encoding="utf-8").read()
    for c in range(copies):
        renamed = task_id.sub(lambda m: f'{m.group(1)}{m.group(2)}~{c}"', text, count=1)
        with open(os.path.join(dst, f"{name[:-5]}~{c}.json"), "w", encoding="utf-8") as out:
            out.write(renamed)
EOF
  mv "$LOGS.tmp" "$LOGS"
fi
LOG_BYTES=$(cat "$LOGS"/*.json | wc -c)
# The native traces of the same run, replicated to the same size.
NATIVE=$OUT/tasklogs-native-$LOG_BYTES.jsonl
[ -f "$NATIVE" ] || python3 bench/make_input.py "$SRC/traces.jsonl" "$NATIVE" "$LOG_BYTES"
NATIVE_BYTES=$(stat -c %s "$NATIVE")

cargo build --profile profiling --quiet --bin mirotrace
cat "$LOGS"/*.json "$NATIVE" > /dev/null # page cache

attempts() { "$BIN" analyze -q -j 1 --format json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attempts"])'; }
LOG_ATTEMPTS=$(attempts "$LOGS")
NATIVE_ATTEMPTS=$(attempts "$NATIVE")

# Interleaved rounds; the fastest wall time of each kind is kept.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
BEST_LOG=""
BEST_NATIVE=""
for _ in $(seq "$REPEAT"); do
  "$TIME" -f "%e" -o "$OUT/time.txt" "$BIN" analyze -q -j 1 --format json "$LOGS" > /dev/null
  BEST_LOG=$(best "$(tail -1 "$OUT/time.txt")" "$BEST_LOG")
  "$TIME" -f "%e" -o "$OUT/time.txt" "$BIN" analyze -q -j 1 --format json "$NATIVE" > /dev/null
  BEST_NATIVE=$(best "$(tail -1 "$OUT/time.txt")" "$BEST_NATIVE")
done

{
  echo "task logs: $LOGS ($COPIES copies of $SRC/logs), $LOG_BYTES bytes, $LOG_ATTEMPTS attempts"
  echo "native: $NATIVE ($SRC/traces.jsonl replicated), $NATIVE_BYTES bytes, $NATIVE_ATTEMPTS attempts"
  echo "analyze -j 1 --format json, best of $REPEAT interleaved rounds; MB = 10^6 bytes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| input | bytes | wall s | MB/s | s per MB | attempts/s |"
  echo "|---|---:|---:|---:|---:|---:|"
  for row in "task logs|$LOG_BYTES|$BEST_LOG|$LOG_ATTEMPTS" "native JSONL|$NATIVE_BYTES|$BEST_NATIVE|$NATIVE_ATTEMPTS"; do
    IFS='|' read -r name bytes wall n <<< "$row"
    awk -v name="$name" -v b="$bytes" -v w="$wall" -v n="$n" \
      'BEGIN { printf "| %s | %d | %.2f | %.1f | %.3f | %.0f |\n", name, b, w, b / w / 1e6, w / (b / 1e6), n / w }'
  done
  echo
  awk -v lw="$BEST_LOG" -v lb="$LOG_BYTES" -v nw="$BEST_NATIVE" -v nb="$NATIVE_BYTES" \
    'BEGIN { r = (lw / lb) / (nw / nb); printf "time per byte, task logs / native: %.2fx (%s 2x)\n", r, r <= 2 ? "within" : "OVER" }'
} | tee "$OUT/tasklogs.md"
