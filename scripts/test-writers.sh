#!/usr/bin/env bash
# Writes trace files with the current releases of other harnesses' own
# writers and reads them, so a format change upstream turns CI red. Two sets:
#
#   Inspect AI   `pip install -U inspect_ai` into the virtualenv of
#                scripts/test-python.sh (target/venv); tests/writers/inspect_log.py
#                runs a small task on Inspect's mockllm model (scripted tool calls,
#                parallel ones, an attachment, a wrong answer), writes the .eval log
#                and counts it with Inspect's own read_eval_log; mirotrace's verdicts
#                must match (tests/writers/check_inspect.py), and its usage, durations
#                and scores are checked by tests/suite/inputs/real_writers.rs.
#   the others   tests/writers/<name>/ (requirements.txt, write_and_check.py
#                BIN OUT_DIR, optionally python-version, the interpreter it
#                needs): each gets a virtualenv under target/writers/<name>.
#
# A writer that cannot be installed or run here (no network, no such Python)
# is skipped with the reason, except under CI=true, where it fails the run.
#
#   ONLY=NAME   run only that writer (`inspect`, or a tests/writers/ folder)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=target/venv
OUT=target/writers
step() { echo "== writers: $*"; }
failed=0
skip() {
  echo "== writers: $1: cannot run here: $2" >&2
  if [ "${CI:-}" = "true" ]; then failed=1; fi
}

step "building the CLI"
cargo build --locked --quiet --bin mirotrace
bin="$PWD/target/debug/mirotrace"

inspect() {
  if [ ! -x "$VENV/bin/python" ]; then
    step "creating $VENV with $("$PYTHON" --version)"
    "$PYTHON" -m venv "$VENV"
  fi
  step "installing the current inspect_ai (pip)"
  if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -U inspect_ai; then
    skip inspect "pip install inspect_ai failed (no network?)"
    return 0
  fi
  local version log
  version=$("$VENV/bin/python" -c 'import inspect_ai; print(inspect_ai.__version__)')
  step "Inspect $version: writing a log on mockllm"
  rm -rf "$OUT/inspect" && mkdir -p "$OUT/inspect"
  "$VENV/bin/python" tests/writers/inspect_log.py "$OUT/inspect" > /dev/null
  log=$("$VENV/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["log"])' "$OUT/inspect/expected.json")
  step "Inspect $version: replaying $(basename "$log")"
  "$bin" replay "$log" --format jsonl > "$OUT/inspect/verdicts.jsonl"
  "$VENV/bin/python" tests/writers/check_inspect.py "$OUT/inspect/expected.json" "$OUT/inspect/verdicts.jsonl"
  MIROTRACE_WRITER_INSPECT="$OUT/inspect/expected.json" cargo test --locked --quiet --test suite inputs::real_writers::
}

if [ -z "${ONLY:-}" ] || [ "$ONLY" = inspect ]; then
  inspect
fi

for dir in tests/writers/*/; do
  name=$(basename "$dir")
  if [ -n "${ONLY:-}" ] && [ "$name" != "$ONLY" ]; then continue; fi
  want=$(cat "$dir/python-version" 2>/dev/null || echo 3)
  # The first candidate that runs: a pyenv shim for a version not selected
  # is on PATH but fails, so each is tried.
  python=""
  for candidate in $(ls "$HOME"/.pyenv/versions/"$want"*/bin/python 2>/dev/null) "$(command -v "python$want" || true)"; do
    if [ -n "$candidate" ] && "$candidate" --version >/dev/null 2>&1; then python=$candidate; break; fi
  done
  venv="$OUT/$name"
  if [ -z "$python" ]; then skip "$name" "no Python $want"; continue; fi
  if [ ! -x "$venv/bin/python" ] && ! "$python" -m venv "$venv"; then skip "$name" "no virtualenv"; continue; fi
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$dir/requirements.txt"; then
    skip "$name" "pip install -r $dir/requirements.txt failed"
    continue
  fi
  step "$name ($("$venv/bin/python" --version))"
  if ! "$venv/bin/python" "$dir/write_and_check.py" "$bin" "$OUT/$name-out"; then
    echo "== writers: $name: FAILED" >&2
    failed=1
  fi
done
step "done"
exit $failed
