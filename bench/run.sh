#!/usr/bin/env bash
# Throughput and memory of `mirotrace analyze` against the floor of a plain
# serde_json decode, on one core and on all, next to a pure-CPU control and
# analyze's reading alone (examples/read_only: the same reader, no replay),
# which splits one core's time between reading and the replay.
#
# usage: bench/run.sh [SIZE]          SIZE: 1G (default), 200M, 50M, ...
#   REPEAT=N   rounds of measurements, the fastest of each is kept (default 3)
#   CORPUS=F   the corpus replicated into the input (default: the dev corpus)
#   BASE=REV   the build `analyze` is compared with (default: the commit
#              before issue 25's cost figures landed, the first parent of the
#              merge of `25-cost`); BASE=none skips it
#   PGO=0      skips the profile-guided build (scripts/build-pgo.sh), whose
#              one-core analyze is otherwise measured beside the plain build's
#
# Every build here uses Cargo.toml's `profiling` profile: the installed
# binary's `dist` profile (fat LTO, one code unit; scripts/install.sh) with
# line tables, so what is timed is the code that ships, not `--release`.
#
# The input is the corpus repeated with fresh trace ids, every line with the
# cost fields (`usage`, `duration_s`) and every trace with a task result
# (bench/make_input.py --usage), so the cost and task-result figures do their
# work; it is kept in bench/out/ (git-ignored) for later runs. The BASE
# commit's source is exported with `git archive` to bench/out/base-REV/ and
# built in its own target directory ($TARGET/bench-base, seeded with the
# current build's dependencies), then runs round by
# round beside the current tree on the same input. Output: a Markdown table on
# stdout, also saved as bench/out/latest.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${1:-1G}
REPEAT=${REPEAT:-3}
CORPUS=${CORPUS:-tests/data/replay/dev.jsonl.zst}
OUT=bench/out
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$TARGET/profiling/mirotrace
FLOOR=$TARGET/profiling/examples/decode_floor
CONTROL=$TARGET/profiling/examples/cpu_control
READ_ONLY=$TARGET/profiling/examples/read_only
TIME=/usr/bin/time
NPROC=$(nproc)

if [ ! -x "$TIME" ]; then
  echo "bench: $TIME is missing (apt-get install time)" >&2
  exit 2
fi
if [ ! -f "$CORPUS" ]; then
  echo "bench: corpus $CORPUS not found (set CORPUS=...)" >&2
  exit 2
fi
mkdir -p "$OUT"
# The bundled corpora are zstd-compressed: replicate the plain text.
case "$CORPUS" in
  *.zst)
    plain=$OUT/$(basename "${CORPUS%.zst}")
    [ -f "$plain" ] || zstd -q -d -c "$CORPUS" > "$plain"
    CORPUS=$plain
    ;;
esac
INPUT=$OUT/input-$SIZE-usage.jsonl
[ -f "$INPUT" ] || python3 bench/make_input.py --usage "$CORPUS" "$INPUT" "$SIZE"
cargo build --profile profiling --quiet --bin mirotrace --example decode_floor --example cpu_control --example read_only

# The comparison build: BASE's own source and Cargo.lock, its own target dir.
BASE=${BASE:-auto}
if [ "$BASE" = auto ]; then
  MERGE=$(git log --merges -1 --format=%H --grep="^Merge branch '25-cost'")
  if [ -z "$MERGE" ]; then
    echo "bench: no merge of 25-cost in git log (set BASE=REV or BASE=none)" >&2
    exit 2
  fi
  BASE=$MERGE^1
fi
# The profile-guided build of the same source (trained on fixtures/ only).
PGO_BIN=
if [ "${PGO:-1}" != 0 ]; then
  PGO_BIN=$(bash scripts/build-pgo.sh profiling) || {
    echo "bench: scripts/build-pgo.sh failed (PGO=0 skips the profile-guided build)" >&2
    exit 2
  }
fi
BASE_BIN=
BASE_REV=none
if [ "$BASE" != none ]; then
  BASE_REV=$(git rev-parse --short "$BASE")
  BASE_SRC=$OUT/base-$BASE_REV
  if [ ! -f "$BASE_SRC/Cargo.toml" ]; then
    mkdir -p "$BASE_SRC"
    git archive "$BASE_REV" | tar -x -C "$BASE_SRC"
    # A base older than the workspace is a package of its own (not a
    # member of this tree's workspace), and one older than the `profiling`
    # profile gets it as bench/ defines it: release with line tables.
    grep -q '^\[workspace\]' "$BASE_SRC/Cargo.toml" || printf '\n[workspace]\n' >> "$BASE_SRC/Cargo.toml"
    grep -q '^\[profile\.profiling\]' "$BASE_SRC/Cargo.toml" ||
      printf '\n[profile.profiling]\ninherits = "release"\ndebug = 1\n' >> "$BASE_SRC/Cargo.toml"
  fi
  # Seeded once with the current build's compiled dependencies (the same
  # crates at the same versions are reused, only what differs compiles).
  if [ ! -d "$TARGET/bench-base/profiling" ]; then
    mkdir -p "$TARGET/bench-base"
    cp -a "$TARGET/profiling" "$TARGET/bench-base/"
  fi
  cargo build --profile profiling --quiet --locked --bin mirotrace \
    --manifest-path "$BASE_SRC/Cargo.toml" --target-dir "$TARGET/bench-base"
  BASE_BIN=$TARGET/bench-base/profiling/mirotrace
fi

BYTES=$(stat -c %s "$INPUT")
LINES=$(wc -l < "$INPUT")
cat "$INPUT" > /dev/null # page cache: every run reads from memory

# Correctness first: the report must count every line of the input.
"$BIN" analyze -q --format json "$INPUT" > "$OUT/analyze.json"
ATTEMPTS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["attempts"])' "$OUT/analyze.json")
if [ "$ATTEMPTS" != "$LINES" ]; then
  echo "bench: analyze counted $ATTEMPTS attempts in $LINES lines" >&2
  exit 1
fi
# ... and the cost section must have read the usage of every attempt made.
python3 - "$OUT/analyze.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
total = report.get("cost", {}).get("total", {})
if not total.get("input_tokens"):
    sys.exit(f"bench: analyze's cost.total has no input tokens: {total}")
PY

# ... and the profile-guided build must write the very same report.
if [ -n "$PGO_BIN" ]; then
  "$PGO_BIN" analyze -q --format json "$INPUT" > "$OUT/analyze-pgo.json"
  if ! cmp -s "$OUT/analyze.json" "$OUT/analyze-pgo.json"; then
    echo "bench: the profile-guided build's report differs from the plain build's" >&2
    exit 1
  fi
fi

# The runs are interleaved, round by round (floor, 1 core, -j 1, all cores,
# then again), and the fastest of each is kept: a busy spell on this shared
# machine then slows every kind of run alike instead of one of them. The
# floor runs on the core the one-core analyze runs on (core 0): left free,
# it could move to whichever core is quieter at the time.
NAMES=("decode floor (1 core, taskset)" "analyze (plain build), 1 core (taskset, -j 1)" "analyze -j 1" "analyze -j $NPROC (all cores)"
  "base $BASE_REV analyze, 1 core (taskset, -j 1)" "base $BASE_REV analyze -j $NPROC (all cores)"
  "profile-guided build (scripts/build-pgo.sh) analyze, 1 core (taskset, -j 1)"
  "reading alone (examples/read_only: no replay), 1 core (taskset)")
RUNS="0 1 2 3 7"
[ -n "$BASE_BIN" ] && RUNS="$RUNS 4 5"
[ -n "$PGO_BIN" ] && RUNS="$RUNS 6"
# timed K: runs measurement K once under /usr/bin/time.
timed() {
  local t=("$TIME" -f "%e %U %S %M" -o "$OUT/time.txt")
  case $1 in
    0) "${t[@]}" taskset -c 0 "$FLOOR" "$INPUT" ;;
    1) "${t[@]}" taskset -c 0 "$BIN" analyze -q -j 1 --format json "$INPUT" ;;
    2) "${t[@]}" "$BIN" analyze -q -j 1 --format json "$INPUT" ;;
    3) "${t[@]}" "$BIN" analyze -q -j "$NPROC" --format json "$INPUT" ;;
    4) "${t[@]}" taskset -c 0 "$BASE_BIN" analyze -q -j 1 --format json "$INPUT" ;;
    5) "${t[@]}" "$BASE_BIN" analyze -q -j "$NPROC" --format json "$INPUT" ;;
    6) "${t[@]}" taskset -c 0 "$PGO_BIN" analyze -q -j 1 --format json "$INPUT" ;;
    7) "${t[@]}" taskset -c 0 "$READ_ONLY" "$INPUT" ;;
  esac > /dev/null
}
declare -a BEST
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# Every run's wall time by round, for the paired ratios below.
: > "$OUT/rounds.txt"
for round in $(seq "$REPEAT"); do
  for k in $RUNS; do
    timed "$k"
    line=$(tail -1 "$OUT/time.txt")
    echo "$round $k ${line%% *}" >> "$OUT/rounds.txt"
    if [ -z "${BEST[$k]:-}" ] || awk -v a="${line%% *}" -v b="${BEST[$k]%% *}" 'BEGIN { exit !(a < b) }'; then
      BEST[$k]=$line
    fi
  done
done
: > "$OUT/runs.txt"
for k in $RUNS; do
  read -r WALL USER SYS RSS_KB <<< "${BEST[$k]}"
  CPU=$(awk -v u="$USER" -v s="$SYS" 'BEGIN { printf "%.2f", u + s }')
  RSS_MB=$(awk -v k="$RSS_KB" 'BEGIN { printf "%.0f", k / 1024 }')
  echo "${NAMES[$k]} $WALL $CPU $RSS_MB" >> "$OUT/runs.txt"
done
"$CONTROL" "$NPROC" > "$OUT/control.txt"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "input: $INPUT, $BYTES bytes, $LINES lines (corpus $CORPUS replicated)"
  echo "machine: nproc $NPROC, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $LOAD_BEFORE before, $LOAD_AFTER after"
  echo "best of $REPEAT interleaved rounds (by wall time); MB = 10^6 bytes; CPU s = user + system time of all threads"
  echo
  echo "| run | wall s | CPU s | MB/s | % of floor | MB per CPU-s | % of floor (CPU) | peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  awk -v bytes="$BYTES" '
    { name = $1; for (i = 2; i <= NF - 3; i++) name = name " " $i
      wall = $(NF - 2); cpu = $(NF - 1); rss = $NF
      rate = bytes / wall / 1e6; cpu_rate = bytes / cpu / 1e6
      if (NR == 1) { floor = rate; cpu_floor = cpu_rate }
      printf "| %s | %.2f | %.2f | %.0f | %.0f%% | %.0f | %.0f%% | %s |\n",
        name, wall, cpu, rate, 100 * rate / floor, cpu_rate, 100 * cpu_rate / cpu_floor, rss }
  ' "$OUT/runs.txt"
  echo
  # Best wall times by run number (runs.txt lists only the runs made).
  J1=${BEST[2]%% *}
  JN=${BEST[3]%% *}
  CONTROL_SPEEDUP=$(sed -n 's/^speedup=//p' "$OUT/control.txt")
  awk -v a="$J1" -v b="$JN" -v c="$CONTROL_SPEEDUP" -v n="$NPROC" \
    'BEGIN { printf "speed-up from 1 to %d threads: analyze %.2fx, pure-CPU control %sx\n", n, a / b, c }'
  # Paired: each round's ratio of two runs made seconds apart, then the
  # median over rounds. A slow spell on a shared machine (another tenant on
  # the same core) lasts longer than a round and slows both runs of a pair;
  # the best-of figures can pair a quiet floor run with a busy analyze run.
  python3 - "$OUT/rounds.txt" "$BASE_REV" "$NPROC" <<'PY'
import collections, statistics, sys
walls = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    round_, run, wall = line.split()
    walls[int(round_)][int(run)] = float(wall)
def median(a, b):
    ratios = [r[a] / r[b] for r in walls.values() if a in r and b in r and r[b] > 0]
    return statistics.median(ratios) if ratios else None
speed = median(0, 1)
print(f"paired (median over {len(walls)} rounds of one round's ratio): analyze on 1 core {speed:.2f}x the floor's speed (goal >= 0.8x)")
base = median(1, 4)
if base is not None:
    print(f"paired: analyze on 1 core {base:.3f}x the time of base {sys.argv[2]} ({100 * (base - 1):+.1f}%, goal: at most +5%)")
all_cores = median(3, 5)
if all_cores is not None:
    print(f"paired: analyze -j {sys.argv[3]} {all_cores:.3f}x the time of base {sys.argv[2]} ({100 * (all_cores - 1):+.1f}%, goal: at most +5%)")
reading = median(7, 1)
print(f"paired: reading alone (no replay) takes {reading:.2f} of analyze's time on 1 core, the replay and its figures the rest")
pgo = median(0, 6)
if pgo is not None:
    print(f"paired: the profile-guided build's analyze on 1 core {pgo:.2f}x the floor's speed ({median(6, 1):.3f}x the plain build's time)")
PY
  FLOOR_WALL=${BEST[0]%% *}
  ONE=${BEST[1]%% *}
  awk -v f="$FLOOR_WALL" -v a="$ONE" \
    'BEGIN { printf "analyze on 1 core against the serde_json decode of the same lines: %.2fx the floor'"'"'s speed (goal >= 0.8x)\n", f / a }'
  if [ -n "$BASE_BIN" ]; then
    BASE_ONE=${BEST[4]%% *}
    BASE_JN=${BEST[5]%% *}
    awk -v a="$ONE" -v b="$BASE_ONE" -v c="$JN" -v d="$BASE_JN" -v r="$BASE_REV" -v n="$NPROC" \
      'BEGIN { printf "analyze against base %s (before issue 25): 1 core %.3fx its time (%+.1f%%), -j %d %.3fx (%+.1f%%) (goal: at most +5%%)\n", r, a / b, 100 * (a / b - 1), n, c / d, 100 * (c / d - 1) }'
  fi
  if [ -n "$PGO_BIN" ]; then
    awk -v f="$FLOOR_WALL" -v a="${BEST[6]%% *}" \
      'BEGIN { printf "the profile-guided build (scripts/build-pgo.sh) on 1 core: %.2fx the floor'"'"'s speed\n", f / a }'
  fi
} | tee "$OUT/latest.md"
