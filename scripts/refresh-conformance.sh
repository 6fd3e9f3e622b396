#!/usr/bin/env bash
# Refresh the conformance corpora in tests/data/ from the folder they are
# published in, compressed with zstd (see tests/data/README.md).
#
# usage: scripts/refresh-conformance.sh [SOURCE]
#   SOURCE   the published conformance folder; default: $MIROTRACE_CONFORMANCE,
#            else ../shared/conformance (beside the checkout)
#   ZSTD_LEVEL=N   compression level (default 19)
#
# A file whose content is unchanged is left as it is (so a different zstd
# version does not rewrite it). Task logs no longer in SOURCE are removed.
# Prints one line per file it wrote or removed and a summary with the total
# size of the compressed files; then run `cargo test --locked` and commit
# tests/data/ and crates/json-compat/tests/data/.
set -euo pipefail
cd "$(dirname "$0")/.."

SRC=${1:-${MIROTRACE_CONFORMANCE:-../shared/conformance}}
DEST=tests/data
# The json-repair corpus belongs to the json-compat crate, which tests on its own.
JSON_COMPAT_DEST=crates/json-compat/tests/data
LEVEL=${ZSTD_LEVEL:-19}

command -v zstd >/dev/null || { echo "refresh: zstd is not installed" >&2; exit 2; }
[ -d "$SRC" ] || { echo "refresh: $SRC is not a directory (pass the conformance folder)" >&2; exit 2; }

# The corpora the tests read, relative to SOURCE.
files=(
  replay/sanity.jsonl replay/sanity.verdicts.jsonl
  replay/dev.jsonl replay/dev.verdicts.jsonl
  replay/jsonrepair-dev.jsonl replay/jsonrepair-dev.verdicts.jsonl
  json-repair/dev.jsonl
  tasklogs/traces.jsonl tasklogs/traces.verdicts.jsonl
)
logs=("$SRC"/tasklogs/logs/task_*.json)
[ -e "${logs[0]}" ] || { echo "refresh: no task logs in $SRC/tasklogs/logs/" >&2; exit 2; }
for log in "${logs[@]}"; do
  files+=("tasklogs/logs/$(basename "$log")")
done

new=0 updated=0 unchanged=0 removed=0
for rel in "${files[@]}"; do
  src=$SRC/$rel
  case $rel in
    json-repair/*) out=$JSON_COMPAT_DEST/$rel.zst ;;
    *) out=$DEST/$rel.zst ;;
  esac
  [ -f "$src" ] || { echo "refresh: $src is missing" >&2; exit 2; }
  mkdir -p "$(dirname "$out")"
  if [ -f "$out" ] && zstd -dcq "$out" | cmp -s - "$src"; then
    unchanged=$((unchanged + 1))
    continue
  fi
  if [ -f "$out" ]; then state=updated; updated=$((updated + 1)); else state=new; new=$((new + 1)); fi
  zstd -q -f "-$LEVEL" "$src" -o "$out.tmp"
  mv "$out.tmp" "$out"
  printf '%-8s %s (%s -> %s bytes)\n' "$state" "$out" "$(stat -c %s "$src")" "$(stat -c %s "$out")"
done

for out in "$DEST"/tasklogs/logs/task_*.json.zst; do
  [ -e "$out" ] || continue
  name=$(basename "$out" .zst)
  if [ ! -f "$SRC/tasklogs/logs/$name" ]; then
    rm "$out"
    removed=$((removed + 1))
    echo "removed  $out"
  fi
done

stored=$(find "$DEST" "$JSON_COMPAT_DEST" -name '*.zst' -printf '%s\n' | awk '{ n++; s += $1 } END { print s " bytes in " n " files" }')
echo "refreshed from $SRC: $new new, $updated updated, $unchanged unchanged, $removed removed;" \
  "the corpora in $DEST/ and $JSON_COMPAT_DEST/ are $stored"
