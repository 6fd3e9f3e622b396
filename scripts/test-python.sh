#!/usr/bin/env bash
# Builds the Python package (maturin) into a virtualenv under target/ and
# runs its tests (pytest), the Ray Data recipe's included. Needs network
# access to PyPI for the first install; later runs reuse the virtualenv.
#
#   MIROTRACE_PY_PROFILE=dev      build an unoptimised wheel, faster to build while
#                                 iterating (default: release, the wheel a user installs)
#   PYTHON=python3.12             the interpreter of the virtualenv
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=target/venv
PROFILE=${MIROTRACE_PY_PROFILE:-release}
step() { echo "== python: $*"; }
started=$(date +%s)

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV with $("$PYTHON" --version)"
  "$PYTHON" -m venv "$VENV"
fi
step "installing maturin, pytest, pyarrow, duckdb, ray[data] (pip)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  "maturin>=1.5,<2" pytest pyarrow duckdb "ray[data]"

step "building the CLI with --features parquet (the tests compare with it)"
cargo build --locked --features parquet

step "building the wheel (maturin, profile $PROFILE)"
rm -rf target/wheels
"$VENV/bin/maturin" build --locked -m python/Cargo.toml --profile "$PROFILE" \
  --interpreter "$VENV/bin/python" --out target/wheels
# One abi3 wheel for every CPython >= 3.9, as docs/python.md promises.
wheel=$(ls target/wheels/mirotrace-*.whl)
case "$wheel" in
  *-cp39-abi3-*.whl) step "built $(basename "$wheel")" ;;
  *) echo "test-python: $wheel is not a cp39-abi3 wheel" >&2; exit 1 ;;
esac
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"

step "pytest python/tests"
MIROTRACE_REQUIRE_RAY=1 MIROTRACE_BIN="$PWD/target/debug/mirotrace" "$VENV/bin/python" -m pytest python/tests -q -p no:cacheprovider

step "other harnesses' writers (scripts/test-writers.sh)"
scripts/test-writers.sh

step "done in $(( $(date +%s) - started )) s"
