#!/usr/bin/env bash
# Writes trace files with the current releases of the harnesses that run
# offline and reads them, so a format change upstream turns CI red:
#
#   Inspect AI   `pip install -U inspect_ai` into the virtualenv of
#                scripts/test-python.sh (target/venv); tests/writers/inspect_log.py
#                runs a small task on Inspect's mockllm model (scripted tool calls,
#                parallel ones, an attachment, a wrong answer), writes the .eval log
#                and counts it with Inspect's own read_eval_log; mirotrace's verdicts
#                must match (tests/writers/check_inspect.py), and its usage, durations
#                and scores are checked by tests/real_writers.rs.
#
# Without network the install fails: skipped with a message, except under
# CI=true, where it fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=target/venv
OUT=target/writers
step() { echo "== writers: $*"; }

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
fi
step "installing the current inspect_ai (pip)"
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -U inspect_ai; then
  if [ "${CI:-}" = "true" ]; then
    echo "test-writers: pip install inspect_ai failed (CI=true: a failure, not a skip)" >&2
    exit 1
  fi
  echo "test-writers: pip install inspect_ai failed; Inspect's writer not tested (no network?)" >&2
  exit 0
fi
version=$("$VENV/bin/python" -c 'import inspect_ai; print(inspect_ai.__version__)')

step "building the CLI"
cargo build --locked --quiet --bin mirotrace
bin=target/debug/mirotrace

step "Inspect $version: writing a log on mockllm"
rm -rf "$OUT/inspect" && mkdir -p "$OUT/inspect"
"$VENV/bin/python" tests/writers/inspect_log.py "$OUT/inspect" > /dev/null
log=$("$VENV/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["log"])' "$OUT/inspect/expected.json")

step "Inspect $version: replaying $(basename "$log")"
"$bin" replay "$log" --format jsonl > "$OUT/inspect/verdicts.jsonl"
"$VENV/bin/python" tests/writers/check_inspect.py "$OUT/inspect/expected.json" "$OUT/inspect/verdicts.jsonl"
MIROTRACE_WRITER_INSPECT="$OUT/inspect/expected.json" cargo test --locked --quiet --test real_writers
step "done"
