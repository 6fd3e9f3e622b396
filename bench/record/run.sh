#!/usr/bin/env bash
# The recording proxy's figures (issue 42): the latency `mirotrace record`
# adds to a call (p50, p90, p99) and calls per second on loopback, against
# the same calls straight to the same upstream in the same run, and the
# proxy's peak RSS while a 100 MB Server-Sent-Event response streams
# through it. The load generator and the upstream are
# crates/record/examples/record_bench.rs (std sockets, keep-alive).
#
# usage: bench/record/run.sh [CALLS] [ROUNDS] [STREAM_MIB]   (default 5000 3 100)
#   CALLS 0 measures only the streamed response
#   BIN=PATH   the mirotrace binary (default: target/release/mirotrace,
#              built here with --features parquet if missing: the same
#              build bench/size.sh measures)
# Output: Markdown on stdout, also saved as bench/out/record.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

CALLS=${1:-5000}
ROUNDS=${2:-3}
STREAM_MIB=${3:-100}
TARGET=${CARGO_TARGET_DIR:-target}
BIN=${BIN:-$TARGET/release/mirotrace}
OUT=bench/out

if [ ! -x "$BIN" ]; then
  cargo build --release --locked --features parquet
fi
cargo build --release --locked -p mirotrace-record --example record_bench --quiet
mkdir -p "$OUT"
{
  echo "$(date -u +%F), commit $(git rev-parse --short HEAD), $(rustc --version)"
  echo "machine: $(uname -sm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "binary: $BIN ($(stat -c %s "$BIN") bytes)"
  echo
  "$TARGET/release/examples/record_bench" "$BIN" "$OUT/record" "$CALLS" "$ROUNDS" "$STREAM_MIB"
  echo
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/record.md"
