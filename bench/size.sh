#!/usr/bin/env bash
# The size of what `cargo install --features parquet` ships (issue 27: at
# most 30 MB), and of the same binary fully stripped, with the date,
# commit and machine, as bench/RESULTS.md ("Release binary size") records.
#
#   bench/size.sh                 build (release, --features parquet) and measure
#   TARGET=DIR bench/size.sh      use another target directory (default: target)
#   WHEEL=1 bench/size.sh         also build the release wheel (maturin, in PATH)
#                                 and measure it and its installed .so
#   JOBS=1 bench/size.sh          cargo -j (default: cargo's own)
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${TARGET:-target}
jobs=()
if [ -n "${JOBS:-}" ]; then jobs=(-j "$JOBS"); fi
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB (%.1f MiB)", b / 1e6, b / 1048576 }'; }
size_of() { stat -c %s "$1"; }

CARGO_TARGET_DIR=$TARGET cargo build --release --locked --features parquet --quiet "${jobs[@]}"
bin=$TARGET/release/mirotrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$bin" "$tmp/mirotrace"
strip "$tmp/mirotrace"

echo "$(date -u +%F), commit $(git rev-parse --short HEAD), $(rustc --version)"
echo "machine: $(uname -sm), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "release profile: $(sed -n '/^\[profile.release\]/,/^$/p' Cargo.toml | grep -v '^\[' | grep -v '^#' | paste -sd ' ' | sed 's/ *$//')"
echo "binary (--features parquet):     $(mb "$(size_of "$bin")")"
echo "the same, strip (all symbols):   $(mb "$(size_of "$tmp/mirotrace")")"

if [ -n "${WHEEL:-}" ]; then
  CARGO_TARGET_DIR=$TARGET maturin build --locked -m python/Cargo.toml --profile release \
    --out "$tmp/wheels" "${jobs[@]}" >"$tmp/maturin.log" 2>&1 || { cat "$tmp/maturin.log" >&2; exit 1; }
  wheel=$(ls "$tmp"/wheels/mirotrace-*.whl)
  (cd "$tmp" && python3 -m zipfile -e "$wheel" unpacked)
  so=$(find "$tmp/unpacked" -name '*.so' | head -1)
  echo "wheel ($(basename "$wheel")): $(mb "$(size_of "$wheel")")"
  echo "its installed .so:               $(mb "$(size_of "$so")")"
fi
