#!/usr/bin/env bash
# Builds `mirotrace` with profile-guided optimisation (PGO): an instrumented
# build runs over the bundled fixtures/ (every input format, analyze and
# replay, one thread and all), LLVM merges what it counted, and the final
# build lays the code out by it. The output is the same program: only where
# the compiler puts code and which branches it expects change, so one core
# spends fewer cycles waiting on the instruction cache (bench/RESULTS.md,
# "Profile-guided build").
#
# usage: scripts/build-pgo.sh [PROFILE] [CARGO BUILD ARGS...]
#   PROFILE       cargo profile of both builds (default: dist, the installed
#                 build's fat LTO and one code unit, Cargo.toml; an argument
#                 starting with `-` is cargo's)
#   e.g.          scripts/build-pgo.sh dist --features parquet
# Prints the path of the binary: target/pgo/PROFILE/mirotrace (the plain
# build in target/PROFILE is left alone). Needs llvm-profdata of rustc's own
# LLVM: taken from $LLVM_PROFDATA, else rustup's llvm-tools component
# (added when missing). Exit codes: 0 built, 1 a build or training run
# failed, 2 no llvm-profdata could be found.
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE=dist
case ${1:-} in
  "" | -*) ;; # no profile given: cargo's arguments start at once
  *) PROFILE=$1; shift ;;
esac
TARGET=${CARGO_TARGET_DIR:-target}
GEN_DIR=$TARGET/pgo-generate
DATA=$GEN_DIR/profiles
MERGED=$GEN_DIR/merged.profdata
say() { echo "build-pgo: $*" >&2; }

# The flags for rustc with FLAG added, as CARGO_ENCODED_RUSTFLAGS (flags
# separated by 0x1f): RUSTFLAGS splits on spaces, so a profile path in a
# checkout whose path holds a space would be cut in two. The caller's
# CARGO_ENCODED_RUSTFLAGS, else RUSTFLAGS, come first.
encoded_rustflags() {
  local sep=$'\x1f' out=${CARGO_ENCODED_RUSTFLAGS:-} flag
  local -a split=()
  if [ -z "$out" ] && [ -n "${RUSTFLAGS:-}" ]; then
    read -ra split <<< "$RUSTFLAGS"
    for flag in "${split[@]}"; do out+=${out:+$sep}$flag; done
  fi
  printf '%s' "${out:+$out$sep}$1"
}

find_profdata() {
  if [ -n "${LLVM_PROFDATA:-}" ]; then
    echo "$LLVM_PROFDATA"
    return
  fi
  local host bin
  host=$(rustc -vV | sed -n 's/^host: //p')
  bin=$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata
  if [ ! -x "$bin" ] && command -v rustup >/dev/null 2>&1; then
    say "adding rustup's llvm-tools component (llvm-profdata)"
    rustup component add llvm-tools >&2 || true
  fi
  [ -x "$bin" ] && echo "$bin"
  return 0
}
PROFDATA=$(find_profdata)
if [ -z "$PROFDATA" ]; then
  say "no llvm-profdata: set LLVM_PROFDATA, or install rustup's llvm-tools component"
  exit 2
fi

# Stage 1: instrumented. Build scripts are instrumented too and write
# profiles when they run, so the folder is emptied after the build.
say "instrumented build ($PROFILE)"
CARGO_ENCODED_RUSTFLAGS=$(encoded_rustflags "-Cprofile-generate=$(realpath -m "$DATA")") \
  cargo build --locked --quiet --profile "$PROFILE" --bin mirotrace \
  --target-dir "$GEN_DIR" "$@" || exit 1
rm -rf "$DATA"
mkdir -p "$DATA"
# Cargo names the output folder of the dev and test profiles "debug".
case $PROFILE in dev | test) OUT_DIR=debug ;; *) OUT_DIR=$PROFILE ;; esac
GEN_BIN=$GEN_DIR/$OUT_DIR/mirotrace

# Stage 2: training on the bundled fixtures only (never on a corpus the
# benchmarks measure), the folder given as it is, so mirotrace's own folder
# expansion picks every trace file of every format. Bad lines in
# fixtures/fuzz make a run exit 3 (it completed, some input was skipped);
# any other failure stops the build.
say "training on fixtures/"
train() {
  local rc=0
  "$GEN_BIN" "$@" > /dev/null 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    say "training run failed (exit $rc): mirotrace $*"
    exit 1
  fi
}
for jobs in 1 2; do
  train analyze -q -j "$jobs" --format json fixtures
  train analyze -q -j "$jobs" fixtures
  train replay -q -j "$jobs" --format jsonl fixtures
done
train diff -q --base fixtures/model-a.jsonl --new fixtures/model-b.jsonl

"$PROFDATA" merge -o "$MERGED" "$DATA"/*.profraw || exit 1

# Stage 3: the optimised build.
say "optimised build ($PROFILE) with $MERGED"
CARGO_ENCODED_RUSTFLAGS=$(encoded_rustflags "-Cprofile-use=$(realpath "$MERGED")") \
  cargo build --locked --quiet --profile "$PROFILE" --bin mirotrace \
  --target-dir "$TARGET/pgo" "$@" || exit 1
echo "$TARGET/pgo/$OUT_DIR/mirotrace"
