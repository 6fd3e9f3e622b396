#!/usr/bin/env bash
# Writes traces with the current releases of other harnesses' own writers and
# checks that mirotrace reads them (tests/writers/<name>/: requirements.txt,
# write_and_check.py BIN OUT_DIR, and optionally python-version, the
# interpreter it needs). Each writer gets a virtualenv under
# target/writers/<name>; installing needs PyPI. A writer that cannot be
# installed or run here is skipped with the reason, except under CI=true,
# where it fails the run (a format change upstream must turn CI red).
#
#   ONLY=NAME   run only that writer
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --locked --bin mirotrace
BIN="$PWD/target/debug/mirotrace"
failed=0
for dir in tests/writers/*/; do
  name=$(basename "$dir")
  if [ -n "${ONLY:-}" ] && [ "$name" != "$ONLY" ]; then continue; fi
  want=$(cat "$dir/python-version" 2>/dev/null || echo 3)
  python=$(command -v "python$want" || ls "$HOME"/.pyenv/versions/"$want"*/bin/python 2>/dev/null | head -1 || true)
  venv="target/writers/$name"
  skip() {
    echo "== writers: $name: cannot run here: $1" >&2
    if [ "${CI:-}" = "true" ]; then failed=1; fi
  }
  if [ -z "$python" ]; then skip "no Python $want"; continue; fi
  if [ ! -x "$venv/bin/python" ] && ! "$python" -m venv "$venv"; then skip "no virtualenv"; continue; fi
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$dir/requirements.txt"; then
    skip "pip install -r $dir/requirements.txt failed"
    continue
  fi
  echo "== writers: $name ($("$venv/bin/python" --version))"
  if ! "$venv/bin/python" "$dir/write_and_check.py" "$BIN" "target/writers/$name-out"; then
    echo "== writers: $name: FAILED" >&2
    failed=1
  fi
done
exit $failed
