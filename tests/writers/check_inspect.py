"""Checks `mirotrace replay LOG.eval --format jsonl` against the figures
inspect_log.py computed with Inspect's own reader: one verdict per
assistant message of each sample, and every tool call parsed.

    python check_inspect.py EXPECTED.json VERDICTS.jsonl
"""

import json
import sys
from collections import Counter


def main(expected_path, verdicts_path):
    expected = json.load(open(expected_path))["samples"]
    verdicts, calls = Counter(), Counter()
    with open(verdicts_path) as f:
        for line in f:
            v = json.loads(line)
            verdicts[v["trace_id"]] += 1
            calls[v["trace_id"]] += len(v["calls"])
            if v["outcome"] == "llm_failed" and v["calls"]:
                sys.exit(f"check_inspect: a tool-call turn judged llm_failed: {line}")
    problems = []
    for trace, want in expected.items():
        if verdicts[trace] != want["assistant_messages"]:
            problems.append(f"{trace}: {verdicts[trace]} verdicts, {want['assistant_messages']} assistant messages")
        if calls[trace] != want["tool_calls"]:
            problems.append(f"{trace}: {calls[trace]} calls parsed, {want['tool_calls']} tool calls")
    extra = set(verdicts) - set(expected)
    if extra:
        problems.append(f"traces not in the log: {sorted(extra)}")
    if problems:
        sys.exit("check_inspect: " + "; ".join(problems))
    print(f"check_inspect: {len(expected)} samples, {sum(verdicts.values())} verdicts, "
          f"{sum(calls.values())} calls: as Inspect's read_eval_log counts them")


if __name__ == "__main__":
    main(*sys.argv[1:])
