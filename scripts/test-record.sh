#!/usr/bin/env bash
# The `mirotrace record` tests (tests/record/): the real `openai` and `anthropic`
# Python SDKs, plain and streaming, through the proxy to a fake upstream of the
# test's own (tests/record/upstream.py, standard library only), and the hostile
# cases (huge bodies, hang-ups, a hanging or refusing upstream, SIGINT/SIGTERM).
# Uses the virtualenv of scripts/test-python.sh (target/venv) and the pinned
# releases of tests/record/requirements.txt; needs PyPI for the first install.
#
#   MIROTRACE_BIN=PATH   the binary under test (default: target/debug/mirotrace,
#                        built here)
#   PYTHON=python3.12    the interpreter of the virtualenv, when it is created
#   PYTEST_ARGS="-k x"   extra pytest arguments
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=target/venv
step() { echo "== record: $*"; }
started=$(date +%s)

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
fi
step "installing tests/record/requirements.txt (pip)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/record/requirements.txt

if [ -z "${MIROTRACE_BIN:-}" ]; then
  step "building the CLI"
  cargo build --locked --quiet --bin mirotrace
  MIROTRACE_BIN="$PWD/target/debug/mirotrace"
fi
export MIROTRACE_BIN

step "pytest tests/record ($MIROTRACE_BIN)"
# shellcheck disable=SC2086
"$VENV/bin/python" -m pytest tests/record -q -p no:cacheprovider ${PYTEST_ARGS:-}

step "done in $(( $(date +%s) - started )) s"
