#!/usr/bin/env bash
# Installs mirotrace, every output format included (`--features parquet`),
# built with profile-guided optimisation (scripts/build-pgo.sh, the `dist`
# profile: fat LTO, one code unit): the same program as `cargo install`
# builds, byte for byte the same reports (scripts/check-pgo.sh), faster on
# one core (bench/RESULTS.md, "Profile-guided build").
#
# usage: scripts/install.sh [--root DIR] [--plain]
#   --root DIR  installs DIR/bin/mirotrace; the default is cargo install's:
#               $CARGO_INSTALL_ROOT, else $CARGO_HOME, else ~/.cargo
#   --plain     installs cargo install's own build instead (`dist` profile,
#               no PGO, no llvm-profdata needed)
# The PGO build needs llvm-profdata of rustc's own LLVM (rustup's
# llvm-tools component, added when missing, or $LLVM_PROFDATA); without it
# nothing is installed and the exit code is 3: run again with --plain.
# The binary is copied into place, not registered with cargo: remove it
# with `rm DIR/bin/mirotrace` (`cargo uninstall` removes a --plain one).
# Exit codes: 0 installed, 1 a build failed, 2 a usage error, 3 no
# llvm-profdata (nothing installed).
set -euo pipefail
# Paths the caller typed (--root, a relative $CARGO_INSTALL_ROOT) are the
# caller's: resolved against the folder the script was run from, before it
# moves to the repository.
CALLER_DIR=$PWD
REPO=$(cd "$(dirname "$0")/.." && pwd)

say() { echo "install: $*" >&2; }
ROOT=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
PLAIN=0
while [ $# -gt 0 ]; do
  case $1 in
    --root)
      [ $# -ge 2 ] || { say "--root needs a directory"; exit 2; }
      ROOT=$2
      shift 2
      ;;
    --plain) PLAIN=1; shift ;;
    -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$REPO/scripts/install.sh"; exit 0 ;;
    *) say "unknown argument: $1 (see --help)"; exit 2 ;;
  esac
done
case $ROOT in
  /*) ;;
  *) ROOT=$CALLER_DIR/$ROOT ;;
esac
cd "$REPO"

if [ "$PLAIN" = 1 ]; then
  cargo install --locked --path . --profile dist --features parquet --root "$ROOT" || exit 1
  exit 0
fi

rc=0
BIN=$(bash scripts/build-pgo.sh dist --features parquet) || rc=$?
if [ "$rc" -eq 2 ]; then
  say "nothing installed: the profile-guided build needs llvm-profdata (above); --plain installs the plain build"
  exit 3
fi
[ "$rc" -eq 0 ] || exit 1

# Copied beside the old binary and renamed over it: a running mirotrace
# keeps its file, and an interrupted copy leaves no half-written binary.
mkdir -p "$ROOT/bin"
tmp=$(mktemp "$ROOT/bin/.mirotrace.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cp "$BIN" "$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$ROOT/bin/mirotrace"
trap - EXIT
say "installed $ROOT/bin/mirotrace (profile-guided build, $("$ROOT/bin/mirotrace" --version))"
