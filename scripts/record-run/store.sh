#!/usr/bin/env bash
# Store a record run (the --out folder of run_upstream.py) in tests/data/record-run/,
# compressed with zstd like every corpus of tests/data (see tests/data/README.md).
# usage: scripts/record-run/store.sh RUN_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${1:?usage: store.sh RUN_DIR}
DEST=tests/data/record-run
LEVEL=${ZSTD_LEVEL:-19}
command -v zstd >/dev/null || { echo "store: zstd is not installed" >&2; exit 2; }
mkdir -p "$DEST/logs"
rm -f "$DEST"/logs/task_*.json.zst "$DEST"/recording.jsonl.zst "$DEST"/truth.verdicts.jsonl.zst
for f in "$SRC"/logs/task_*.json; do
  zstd -q -"$LEVEL" -f "$f" -o "$DEST/logs/$(basename "$f").zst"
done
zstd -q -"$LEVEL" -f "$SRC/recording.jsonl" -o "$DEST/recording.jsonl.zst"
zstd -q -"$LEVEL" -f "$SRC/truth.verdicts.jsonl" -o "$DEST/truth.verdicts.jsonl.zst"
du -cb "$DEST"/*.zst "$DEST"/logs/*.zst | tail -1
