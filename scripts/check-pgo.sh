#!/usr/bin/env bash
# Installs the profile-guided binary as a user does (scripts/install.sh,
# into a temporary root) and checks that it writes, byte for byte, what the
# plain build writes: `replay --format jsonl` of the three conformance
# corpora and `analyze --format json` of the fixtures/ folder. CI runs it
# after the test suite.
#
# Exit codes: 0 the same output, 1 a difference or a failed build, 2 no
# llvm-profdata to build with (scripts/build-pgo.sh says why).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
rc=0
bash scripts/install.sh --root "$WORK/root" || rc=$?
case $rc in
  0) ;;
  3) exit 2 ;; # no llvm-profdata (install.sh says so)
  *) exit 1 ;;
esac
PGO_BIN=$WORK/root/bin/mirotrace
cargo build --locked --quiet --bin mirotrace
PLAIN_BIN=$TARGET/debug/mirotrace

failed=0
# same NAME ARGS...: both binaries run with ARGS; their stdout and exit
# code must be equal.
same() {
  local name=$1 a=0 b=0
  shift
  "$PLAIN_BIN" "$@" > "$WORK/plain" 2> /dev/null || a=$?
  "$PGO_BIN" "$@" > "$WORK/pgo" 2> /dev/null || b=$?
  if [ "$a" -ne "$b" ] || ! cmp -s "$WORK/plain" "$WORK/pgo"; then
    echo "check-pgo: $name: the profile-guided build differs (exit $b, plain $a)" >&2
    failed=1
  else
    echo "check-pgo: $name: same output ($(wc -c < "$WORK/pgo") bytes, exit $a)"
  fi
}
for corpus in tests/data/replay/{dev,sanity,jsonrepair-dev}.jsonl.zst; do
  same "replay $corpus" replay -q -j 2 --format jsonl "$corpus"
done
same "analyze of fixtures/" analyze -q --format json fixtures
exit "$failed"
