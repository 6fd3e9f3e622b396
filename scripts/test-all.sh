#!/usr/bin/env bash
# The whole test suite, as CI runs it (the README's test command):
#   1. cargo test --locked                     the Rust suite (default features) of the
#                                              workspace's default members: the CLI crate,
#                                              crates/engine and crates/json-compat
#   2. cargo test --features parquet --test columnar
#                                              Parquet/Arrow verdicts read back to the JSONL
#   3. scripts/test-record.sh                  `mirotrace record` with the real openai and
#                                              anthropic SDKs against a fake upstream (pytest)
#   4. scripts/test-python.sh                  the Python package (wheel + pytest), the Ray recipe, scripts/test-writers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== test-all: cargo test --locked"
cargo test --locked

echo "== test-all: cargo test --locked --features parquet --test columnar"
cargo test --locked --features parquet --test columnar

echo "== test-all: mirotrace record through the openai and anthropic SDKs"
bash scripts/test-record.sh

echo "== test-all: Python package"
bash scripts/test-python.sh
