#!/usr/bin/env bash
# Time and peak memory of mirotrace on the hostile inputs of issue 14
# (docs/limits.md): each linear-time case is run at size N and 2N in the
# same run and the time ratio printed (≈ 2 when linear, ≈ 4 when
# quadratic); each memory case prints its peak RSS (target < 300 MB, 1 GB
# for the 3 M-attempt trace). Nothing here is a test: it prints figures.
#
# usage: bench/limits.sh [SCALE] [23|40]   SCALE multiplies every N (default 1);
#        a second argument 23 runs only issue 23's rows (policy-driven bounds),
#        40 only issue 40's time shapes (N and 2N, with their ratios)
# Output: a Markdown table on stdout, also saved as bench/out/limits.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE=${1:-1}
OUT=bench/out/limits
TARGET=${CARGO_TARGET_DIR:-target}
BIN=$(realpath -m "$TARGET/profiling/mirotrace")
TIME=/usr/bin/time
if [ ! -x "$TIME" ]; then
  echo "bench: $TIME is missing (apt-get install time)" >&2
  exit 2
fi
mkdir -p "$OUT"
cargo build --profile profiling --quiet --locked --bin mirotrace

n() { echo $(($1 * SCALE)); }

# run NAME CMD…: one run under /usr/bin/time; prints "NAME|cpu_s|rss_mb|exit".
# CPU time (user + system), not wall time: on a shared machine the wall
# time of a run is mostly other people's work.
run() {
  local name=$1
  shift
  local code=0
  "$TIME" -f "%U %S %M" -o "$OUT/time.txt" "$@" > /dev/null 2> "$OUT/stderr.txt" || code=$?
  # /usr/bin/time writes "Command exited with non-zero status N" first.
  read -r user sys rss < <(tail -1 "$OUT/time.txt")
  echo "$name|$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')|$((rss / 1024))|$code"
}

# Inputs -------------------------------------------------------------------
bad_lines() { head -n "$1" < <(yes 'not json'); }
sessions() { # one trace, $1 sub-agent sessions of one attempt each
  python3 -c '
import sys
n = int(sys.argv[1])
out = sys.stdout
out.write("{\"trace_id\": \"t\", \"content\": \"\\\\boxed{1}\"}\n")
for i in range(n):
    out.write("{\"trace_id\": \"t\", \"session\": \"agent-browsing_%d\", \"content\": \"<use_mcp_tool>\"}\n" % i)
' "$1"
}
tiny_traces() { # $1 traces of one attempt
  python3 -c '
import sys
for i in range(int(sys.argv[1])):
    sys.stdout.write("{\"trace_id\": \"t%d\", \"content\": \"x\"}\n" % i)
' "$1"
}
one_trace() { # one trace of $1 attempts
  python3 -c '
import sys
line = "{\"trace_id\": \"big\", \"content\": \"\\\\boxed{1}\"}\n"
sys.stdout.write(line * int(sys.argv[1]))
' "$1"
}
phrases() { seq 1 "$1" | sed 's/^/phrase number /'; }
deep_tree() { # $1 levels, one trace file at the bottom
  local d=$2
  rm -rf "$d"
  python3 -c '
import os, sys
depth, root = int(sys.argv[1]), sys.argv[2]
os.makedirs(root)
os.chdir(root)
for i in range(depth):
    os.mkdir("d")
    os.chdir("d")
open("t.jsonl", "w").write("{\"trace_id\": \"t\", \"content\": \"x\"}\n")
' "$1" "$d"
}

# Issue 23's inputs: policies that ask for much, traces that exercise them.
policy_tools() { # server_fix_tools of $1 entries
  python3 -c '
import sys
n = int(sys.argv[1])
print("server_fix_tools = [" + ", ".join("\"tool_%d\"" % i for i in range(n)) + "]")
' "$1"
}
policy_keywords() { # $1 refusal keywords, match mode $2
  python3 -c '
import sys
n, mode = int(sys.argv[1]), sys.argv[2]
print("refusal_match = \"%s\"" % mode)
print("refusal_keywords = [" + ", ".join("\"no way number %d\"" % i for i in range(n)) + "]")
' "$1" "$2"
}
policy_defaults() { # $1 [[arg_defaults]] tables
  python3 -c '
import sys
for i in range(int(sys.argv[1])):
    print("[[arg_defaults]]\ntool = \"tool_%d\"\nkey = \"k\"\nvalue = \"v\"" % i)
' "$1"
}
calls_trace() { # $1 attempts, each one MCP tool call (then a final answer)
  python3 -c '
import sys
call = "<use_mcp_tool>\\n<server_name>s</server_name>\\n<tool_name>tool_%d</tool_name>\\n<arguments>{\\\"q\\\": \\\"%d\\\"}</arguments>\\n</use_mcp_tool>"
for i in range(int(sys.argv[1])):
    sys.stdout.write("{\"trace_id\": \"t%d\", \"content\": \"%s\"}\n" % (i // 20, call % (i % 50, i)))
' "$1"
}
answers() { # about $1 MB of varied answers without a tool call
  python3 -c '
import random, sys
random.seed(7)
# Letters only: a word with a digit is never part of a candidate phrase.
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 9))) for _ in range(20000)]
size, i = int(sys.argv[1]) << 20, 0
out = sys.stdout
while size > 0:
    text = " ".join(random.choice(words) for _ in range(40))
    line = "{\"trace_id\": \"t%d\", \"content\": \"I cannot %s\"}\n" % (i, text)
    out.write(line)
    size -= len(line)
    i += 1
' "$1"
}
cjk_answers() { # about $1 MB of varied Chinese answers without a tool call
  python3 -c '
import random, sys
random.seed(11)
chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
words = ["".join(random.choice(chars) for _ in range(random.choice((1, 2, 2, 3)))) for _ in range(20000)]
size, i = int(sys.argv[1]) << 20, 0
out = sys.stdout
while size > 0:
    text = "".join(random.choice(words) for _ in range(40))
    line = "{\"trace_id\": \"t%d\", \"content\": \"很抱歉，我不能%s\"}\n" % (i, text)
    out.write(line)
    size -= len(line.encode())
    i += 1
' "$1"
}
first_then() { # FILE N KIND: FILE's first line, then N native (KIND=native) or bad lines
  head -n 1 "$1"
  if [ "$3" = native ]; then tiny_traces "$2"; else bad_lines "$2"; fi
}
mixed_trace() { # 82 attempts: streaks of leaked tags between answers
  python3 -c '
import sys
for i in range(82):
    c = "<use_mcp_tool>" if i % 9 else "\\\\boxed{1}"
    sys.stdout.write("{\"trace_id\": \"t%d\", \"content\": \"%s\"}\n" % (i // 9, c))
'
}

# Issue 40's shapes: one response of many calls, an events/ folder of many
# files, a partial of many kinds.
chat_calls() { # one chat record: one response of $1 parallel calls, each answered
  python3 -c '
import json, sys
n = int(sys.argv[1])
calls = [{"id": "c%d" % i, "type": "function", "function": {"name": "search", "arguments": json.dumps({"q": str(i)})}} for i in range(n)]
msgs = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": calls}]
msgs += [{"role": "tool", "tool_call_id": "c%d" % i, "content": "r%d" % i} for i in reversed(range(n))]
msgs.append({"role": "assistant", "content": "\\boxed{1}"})
print(json.dumps({"trace_id": "t", "messages": msgs}))
' "$1"
}
claude_calls() { # a Claude Code session: one response written as $1 tool_use lines, each result between them
  python3 -c '
import json, sys
s = "s1"
print(json.dumps({"type": "user", "sessionId": s, "message": {"role": "user", "content": "hi"}}))
for i in range(int(sys.argv[1])):
    print(json.dumps({"type": "assistant", "sessionId": s, "message": {"id": "m1", "model": "claude-x", "role": "assistant", "content": [{"type": "tool_use", "id": "t%d" % i, "name": "Bash", "input": {"command": "ls %d" % i}}], "stop_reason": "tool_use"}}))
    print(json.dumps({"type": "user", "sessionId": s, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t%d" % i, "content": "out %d" % i}]}}))
print(json.dumps({"type": "assistant", "sessionId": s, "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}}))
' "$1"
}
event_folder() { # $2/conv/events: the V1 fixture's events repeated into $1 event files
  rm -rf "$2"
  python3 -c '
import os, sys
n, root = int(sys.argv[1]), sys.argv[2]
d = os.path.join(root, "conv", "events")
os.makedirs(d)
src = open("fixtures/harnesses/openhands-v1/events.jsonl").read().splitlines()
for i in range(n):
    line = src[i % len(src)].replace("\"id\": \"", "\"id\": \"x%d" % i, 1)
    open(os.path.join(d, "event-%05d-0000abcd-%04d.json" % (i, i)), "w").write(line)
' "$1" "$2"
}
kinds_partial() { # $2: a partial of fixtures/analyze/sample.jsonl whose tool_error family holds $1 more kinds
  "$BIN" analyze -q --format partial -o "$2.base" fixtures/analyze/sample.jsonl
  python3 -c '
import json, sys
n, base, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
d = json.load(open(base))
family = d["collector"]["overall"]["mistakes"]["tool_error"]
for i in range(n):
    family["tool_x: kind %d" % i] = 1
json.dump(d, open(out, "w"))
' "$1" "$2.base" "$2"
}

if [ "${2:-}" = "40" ]; then
  # Only issue 40's rows (time shapes, N and 2N): bench/limits.sh SCALE 40
  N_CALLS=$(n 75000)
  N_EVENTS=$(n 15000)
  N_KINDS=$(n 24000)
  N_CC=$(n 20000)
  for k in 1 2; do
    chat_calls $((k * N_CALLS)) > "$OUT/calls40-$k.jsonl"
    claude_calls $((k * N_CC)) > "$OUT/claude40-$k.jsonl"
    event_folder $((k * N_EVENTS)) "$OUT/events40-$k"
    kinds_partial $((k * N_KINDS)) "$OUT/kinds40-$k.json"
  done
  "$BIN" analyze -q --format partial -o "$OUT/kinds40-0.json" fixtures/analyze/sample.jsonl
  : > "$OUT/pairs40.txt"
  pair40() { # NAME FILE1 FILE2 CMD… (the file goes last)
    local name=$1 f1=$2 f2=$3
    shift 3
    echo "$(run "$name, N" "$@" "$f1")#$(run "$name, 2N" "$@" "$f2")" >> "$OUT/pairs40.txt"
  }
  A=(analyze -q -j 1 --format json)
  pair40 "analyze, one chat response of $N_CALLS parallel calls (results in reverse)" "$OUT/calls40-1.jsonl" "$OUT/calls40-2.jsonl" "$BIN" "${A[@]}"
  pair40 "analyze, one Claude Code response written as $N_CC tool_use lines" "$OUT/claude40-1.jsonl" "$OUT/claude40-2.jsonl" "$BIN" "${A[@]}"
  pair40 "analyze, an events/ folder of $N_EVENTS event files" "$OUT/events40-1/conv/events" "$OUT/events40-2/conv/events" "$BIN" "${A[@]}"
  pair40 "merge, a partial of $N_KINDS kinds with another" "$OUT/kinds40-1.json" "$OUT/kinds40-2.json" "$BIN" merge -q --format json "$OUT/kinds40-0.json"
  {
    echo "$(date -u +%F), commit $(git rev-parse --short HEAD), profiling (release) build; machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); SCALE=$SCALE; issue 40's rows; CPU s = user + system; MB = MiB of peak RSS"
    echo
    echo "| case | CPU s (N) | CPU s (2N) | ratio | peak RSS MB (N) | peak RSS MB (2N) | exit |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    awk -F'[|#]' '{ ratio = ($2 > 0) ? $6 / $2 : 0
      sub(/, N$/, "", $1)
      printf "| %s | %.2f | %.2f | %.2f | %s | %s | %s |\n", $1, $2, $6, ratio, $3, $7, $8 }' "$OUT/pairs40.txt"
  } | tee bench/out/limits-40.md
  exit 0
fi

if [ "${2:-}" = "23" ]; then
  # Only issue 23's rows: bench/limits.sh 1 23
  [ -f "$OUT/mixed-82.jsonl" ] || mixed_trace > "$OUT/mixed-82.jsonl"
  for l in 1000000 1000000000; do echo "rollback_limit = $l" > "$OUT/limit-$l.toml"; done
  policy_tools 20000 > "$OUT/tools-20k.toml"
  policy_tools 200000 > "$OUT/tools-200k.toml"
  policy_keywords 100000 normalized > "$OUT/kw-normalized.toml"
  policy_keywords 100000 exact > "$OUT/kw-exact.toml"
  policy_defaults 40000 > "$OUT/defaults-40k.toml"
  [ -f "$OUT/calls-20k.jsonl" ] || calls_trace 20000 > "$OUT/calls-20k.jsonl"
  [ -f "$OUT/answers-2.jsonl" ] || answers 2 > "$OUT/answers-2.jsonl"
  [ -f "$OUT/answers-11.jsonl" ] || answers 11 > "$OUT/answers-11.jsonl"
  [ -f "$OUT/cjk-2.jsonl" ] || cjk_answers 2 > "$OUT/cjk-2.jsonl"
  [ -f "$OUT/cjk-11.jsonl" ] || cjk_answers 11 > "$OUT/cjk-11.jsonl"
  CLAUDE=fixtures/harnesses/claude-code/session.jsonl
  OTLP=fixtures/harnesses/otel/openinference.otlp.jsonl
  for f in claude otlp; do
    src=$CLAUDE
    [ $f = otlp ] && src=$OTLP
    [ -f "$OUT/$f-native-1M.jsonl" ] || first_then "$src" 1000000 native > "$OUT/$f-native-1M.jsonl"
    [ -f "$OUT/$f-bad-4M.jsonl.gz" ] || first_then "$src" 4000000 bad | gzip -9 > "$OUT/$f-bad-4M.jsonl.gz"
  done
  [ -f "$OUT/native-1M.jsonl" ] || tiny_traces 1000000 > "$OUT/native-1M.jsonl"
  A=(analyze -q -j 1)
  : > "$OUT/single23.txt"
  sized() { # NAME FILE CMD…: the run, and the size of what it wrote to FILE
    local name=$1 file=$2
    shift 2
    local row
    row=$(run "$name" "$@")
    echo "${row%%|*} ($(stat -c %s "$file") bytes written)|${row#*|}" >> "$OUT/single23.txt"
  }
  for l in 1000000 1000000000; do
    for f in table html; do
      sized "analyze --format $f, rollback_limit $l, 82 attempts" "$OUT/report.$f" \
        "$BIN" "${A[@]}" --format "$f" --policy "$OUT/limit-$l.toml" -o "$OUT/report.$f" "$OUT/mixed-82.jsonl"
    done
  done
  for t in 20k 200k; do
    run "analyze, $t server_fix_tools, 20 000 calls" "$BIN" "${A[@]}" --format json --policy "$OUT/tools-$t.toml" "$OUT/calls-20k.jsonl" >> "$OUT/single23.txt"
  done
  for m in exact normalized; do
    run "analyze, 100 000 refusal keywords ($m), 2 MB of answers" "$BIN" "${A[@]}" --format json --policy "$OUT/kw-$m.toml" "$OUT/answers-2.jsonl" >> "$OUT/single23.txt"
  done
  run "analyze, 40 000 arg_defaults tables, 20 000 calls" "$BIN" "${A[@]}" --format json --policy "$OUT/defaults-40k.toml" "$OUT/calls-20k.jsonl" >> "$OUT/single23.txt"
  for mb in 2 11; do
    run "keywords --suggest, $mb MB of answers" "$BIN" keywords -q -j 1 --suggest --format json "$OUT/answers-$mb.jsonl" >> "$OUT/single23.txt"
  done
  for mb in 2 11; do
    run "keywords --suggest, $mb MB of CJK answers" "$BIN" keywords -q -j 1 --suggest --format json "$OUT/cjk-$mb.jsonl" >> "$OUT/single23.txt"
  done
  run "analyze, 1 M native lines (the control)" "$BIN" "${A[@]}" --format json "$OUT/native-1M.jsonl" >> "$OUT/single23.txt"
  for f in claude otlp; do
    name=Claude\ Code
    [ $f = otlp ] && name=OTLP
    run "analyze, a $name first line + 1 M native lines" "$BIN" "${A[@]}" --format json "$OUT/$f-native-1M.jsonl" >> "$OUT/single23.txt"
    run "analyze, a $name first line + 4 M bad lines ($(stat -c %s "$OUT/$f-bad-4M.jsonl.gz")-byte .gz)" "$BIN" "${A[@]}" --format json "$OUT/$f-bad-4M.jsonl.gz" >> "$OUT/single23.txt"
  done
  run "merge /dev/zero" "$BIN" merge /dev/zero >> "$OUT/single23.txt"
  {
    echo "$(date -u +%F), commit $(git rev-parse --short HEAD), profiling (release) build; machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg); issue 23's rows; CPU s = user + system; MB = MiB of peak RSS"
    echo
    echo "| case | CPU s | peak RSS MB | exit |"
    echo "|---|---:|---:|---:|"
    awk -F'|' '{ printf "| %s | %.2f | %s | %s |\n", $1, $2, $3, $4 }' "$OUT/single23.txt"
  } | tee bench/out/limits-23.md
  exit 0
fi

N_BAD=$(n 4000000)
N_SESS=$(n 96000)
N_DIFF=$(n 250000)
N_PHRASES=$(n 100000)
N_DEPTH=$((500 * SCALE))
[ -f "$OUT/bad-1.jsonl" ] || bad_lines "$N_BAD" > "$OUT/bad-1.jsonl"
[ -f "$OUT/bad-2.jsonl" ] || bad_lines $((2 * N_BAD)) > "$OUT/bad-2.jsonl"
[ -f "$OUT/bad-10M.jsonl.gz" ] || bad_lines 10000000 | gzip -9 > "$OUT/bad-10M.jsonl.gz"
[ -f "$OUT/sess-1.jsonl" ] || sessions "$N_SESS" > "$OUT/sess-1.jsonl"
[ -f "$OUT/sess-2.jsonl" ] || sessions $((2 * N_SESS)) > "$OUT/sess-2.jsonl"
[ -f "$OUT/tiny-1.jsonl" ] || tiny_traces "$N_DIFF" > "$OUT/tiny-1.jsonl"
[ -f "$OUT/tiny-2.jsonl" ] || tiny_traces $((2 * N_DIFF)) > "$OUT/tiny-2.jsonl"
[ -f "$OUT/tiny-1k.jsonl" ] || tiny_traces 1000 > "$OUT/tiny-1k.jsonl"
[ -f "$OUT/trace-3M.jsonl.zst" ] || one_trace 3000000 | zstd -q -19 > "$OUT/trace-3M.jsonl.zst"
[ -f "$OUT/trace-99k.jsonl" ] || one_trace 99999 > "$OUT/trace-99k.jsonl"
[ -f "$OUT/list-1.txt" ] || phrases "$N_PHRASES" > "$OUT/list-1.txt"
[ -f "$OUT/list-2.txt" ] || phrases $((2 * N_PHRASES)) > "$OUT/list-2.txt"
deep_tree "$N_DEPTH" "$OUT/deep-1"
deep_tree $((2 * N_DEPTH)) "$OUT/deep-2"
SPECIAL=$OUT/special
rm -rf "$SPECIAL" && mkdir -p "$SPECIAL"
cp "$OUT/trace-99k.jsonl" "$SPECIAL/good.jsonl"
mkfifo "$SPECIAL/pipe.jsonl"
ln -s /dev/zero "$SPECIAL/zero.jsonl"
echo '{"trace_id": "t", "content": "x"}' > "$OUT/one.jsonl"

# Runs ---------------------------------------------------------------------
A=(analyze -q -j 1 --format json)
: > "$OUT/pairs.txt"
pair() { # NAME FILE1 FILE2 CMD… (the file goes last)
  local name=$1 f1=$2 f2=$3
  shift 3
  echo "$(run "$name, N" "$@" "$f1")#$(run "$name, 2N" "$@" "$f2")" >> "$OUT/pairs.txt"
}
pair "analyze, $N_BAD bad lines" "$OUT/bad-1.jsonl" "$OUT/bad-2.jsonl" "$BIN" "${A[@]}"
pair "analyze -j 2, $N_BAD bad lines" "$OUT/bad-1.jsonl" "$OUT/bad-2.jsonl" "$BIN" analyze -q -j 2 --format json
pair "analyze, one trace of $N_SESS sessions" "$OUT/sess-1.jsonl" "$OUT/sess-2.jsonl" "$BIN" "${A[@]}"
pair "replay, one trace of $N_SESS sessions" "$OUT/sess-1.jsonl" "$OUT/sess-2.jsonl" "$BIN" replay -q -j 1
pair "diff, one trace of $N_SESS sessions" "$OUT/sess-1.jsonl" "$OUT/sess-2.jsonl" "$BIN" diff -q -j 1 --format json --base "$OUT/one.jsonl" --new
pair "diff, $N_DIFF one-attempt traces a side" "$OUT/tiny-1.jsonl" "$OUT/tiny-2.jsonl" "$BIN" diff -q -j 1 --format json --iterations 200 --base "$OUT/one.jsonl" --new
pair "keywords, a list of $N_PHRASES phrases" "$OUT/list-1.txt" "$OUT/list-2.txt" "$BIN" keywords -q -j 1 --format json "$OUT/one.jsonl" --list
pair "folder scan, $N_DEPTH levels deep" "$OUT/deep-1" "$OUT/deep-2" "$BIN" "${A[@]}"

: > "$OUT/single.txt"
single() { run "$@" >> "$OUT/single.txt"; }
single "analyze, 10 M bad lines in a $(stat -c %s "$OUT/bad-10M.jsonl.gz")-byte .gz" "$BIN" "${A[@]}" "$OUT/bad-10M.jsonl.gz"
single "analyze --strict, same file" "$BIN" "${A[@]}" --strict "$OUT/bad-10M.jsonl.gz"
single "analyze /dev/urandom" "$BIN" "${A[@]}" /dev/urandom
single "analyze /dev/zero" "$BIN" "${A[@]}" /dev/zero
single "analyze a folder with a FIFO and a link to /dev/zero" "$BIN" "${A[@]}" "$SPECIAL"
single "analyze, one trace of 3 M attempts ($(stat -c %s "$OUT/trace-3M.jsonl.zst")-byte .zst)" "$BIN" "${A[@]}" "$OUT/trace-3M.jsonl.zst"
single "export, same file" "$BIN" export -q -j 1 "$OUT/trace-3M.jsonl.zst"
single "analyze, one trace of 99 999 attempts (one session, under the limit)" "$BIN" "${A[@]}" "$OUT/trace-99k.jsonl"
single "export, same file" "$BIN" export -q -j 1 "$OUT/trace-99k.jsonl"
single "diff, same file on both sides" "$BIN" diff -q -j 1 --format json --base "$OUT/trace-99k.jsonl" --new "$OUT/trace-99k.jsonl"
single "analyze --policy /dev/zero" "$BIN" "${A[@]}" --policy /dev/zero "$OUT/one.jsonl"
single "keywords --list /dev/zero" "$BIN" keywords -q --list /dev/zero "$OUT/one.jsonl"
single "keywords --labels /dev/zero" "$BIN" keywords -q --labels /dev/zero "$OUT/one.jsonl"
single "analyze -j 100000" "$BIN" "${A[@]}" -j 100000 "$OUT/one.jsonl"
single "analyze --iterations 1e8" "$BIN" "${A[@]}" --iterations 100000000 "$OUT/one.jsonl"
single "analyze --iterations 100000 (the maximum), 1000 traces" "$BIN" "${A[@]}" --iterations 100000 "$OUT/tiny-1k.jsonl"

{
  echo "machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); SCALE=$SCALE; CPU s = user + system; MB = MiB of peak RSS"
  echo
  echo "Linear time: the same command on N and 2N, one run each."
  echo
  echo "| case | CPU s (N) | CPU s (2N) | ratio | peak RSS MB (N) | peak RSS MB (2N) | exit |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  awk -F'[|#]' '{ ratio = ($2 > 0) ? $6 / $2 : 0
    sub(/, N$/, "", $1)
    printf "| %s | %.2f | %.2f | %.2f | %s | %s | %s |\n", $1, $2, $6, ratio, $3, $7, $8 }' "$OUT/pairs.txt"
  echo
  echo "Memory and hangs: one run each."
  echo
  echo "| case | CPU s | peak RSS MB | exit |"
  echo "|---|---:|---:|---:|"
  awk -F'|' '{ printf "| %s | %.2f | %s | %s |\n", $1, $2, $3, $4 }' "$OUT/single.txt"
} | tee bench/out/limits.md
