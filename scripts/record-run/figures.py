#!/usr/bin/env python3
"""The figures of a record run, for its README: the truth's (as check.py counts them) and the
recording's and task logs' (calls, retries, summary calls, failures).

    python3 scripts/record-run/figures.py tests/data/record-run
"""
import collections
import glob
import json
import os
import re
import sys

MAIN_SUMMARY = "Summarize the above conversation, and output the FINAL ANSWER"
SUB_SUMMARY = "This is a direct instruction to you (the assistant), not the result of a tool call."


def truth(path):
    outcomes, reasons, limit, hist = (collections.Counter() for _ in range(4))
    best, prev = {}, {}
    for line in open(path, encoding="utf-8"):
        v = json.loads(line)
        key = (v["trace_id"], v["session"])
        outcomes[v["outcome"]] += 1
        if v["outcome"] == "rollback":
            reasons[v["reason"]] += 1
        if v["outcome"] == "end":
            limit["loop_ended"] += 1
        flags = v.get("flags") or []
        limit["duplicate_allowed"] += "allowed_duplicate" in flags
        limit["result_passed"] += "tool_error_passed" in flags
        c, p = v.get("consecutive_rollbacks") or 0, prev.get(key, 0)
        if c > 0:
            best[key] = c if p == 0 else max(best.get(key, 0), c)
        if c == 0 and p > 0:
            hist[best.pop(key)] += 1
        prev[key] = c
    for b in best.values():
        hist[b] += 1
    return outcomes, reasons, limit, hist


def main():
    root = sys.argv[1]
    outcomes, reasons, limit, hist = truth(os.path.join(root, "truth.verdicts.jsonl"))
    print(f"attempts in the truth: {sum(outcomes.values())}, outcomes: {dict(sorted(outcomes.items()))}")
    print(f"rollbacks: {outcomes['rollback']} {dict(reasons.most_common())}")
    print(f"llm_failed: {outcomes['llm_failed']}")
    print(f"streaks: {dict(sorted(hist.items()))} (max {max(hist) if hist else 0})")
    print(f"limit events: {dict(limit)}")

    calls, sdk_retries, summaries = 0, 0, collections.Counter()
    status, errors, sessions, tasks = collections.Counter(), collections.Counter(), set(), collections.Counter()
    size = os.path.getsize(os.path.join(root, "recording.jsonl"))
    for line in open(os.path.join(root, "recording.jsonl"), encoding="utf-8"):
        r = json.loads(line)
        calls += 1
        h = r["request"]["headers"]
        sessions.add(h.get("x-upstream-session-id"))
        if int(h.get("x-stainless-retry-count", "0") or 0) > 0:
            sdk_retries += 1
        msgs = (r["request"].get("body") or {}).get("messages") or []
        last = msgs[-1]["content"] if msgs else ""
        if isinstance(last, str) and last.startswith(MAIN_SUMMARY):
            summaries["main final summary"] += 1
        elif isinstance(last, str) and last.startswith(SUB_SUMMARY):
            summaries["sub-agent final summary"] += 1
        if r.get("response"):
            status[r["response"]["status"]] += 1
        if r.get("error"):
            errors[r["error"]["kind"]] += 1
    print(f"recording: {calls} calls, {size} bytes, {len(sessions)} session header values")
    print(f"  response status: {dict(sorted(status.items()))}; errors: {dict(errors)}")
    print(f"  SDK retries (x-stainless-retry-count > 0): {sdk_retries}")
    print(f"  summary calls: {dict(summaries)}")

    steps = collections.Counter()
    logs = sorted(glob.glob(os.path.join(root, "logs", "task_*.json")))
    for p in logs:
        d = json.load(open(p, encoding="utf-8"))
        tasks[d["task_id"]] += 1
        for s in d["step_logs"]:
            name = re.sub(r"^\W+ ?", "", s["step_name"])
            if name.startswith("LLM | ") or " | LLM Call" in name or name.startswith("FATAL ERROR"):
                name = re.sub(r"Turn: \d+", "Turn: N", name)
                name = re.sub(r"attempt \d+/", "attempt k/", name)
                steps[name] += 1
    print(f"task logs: {len(logs)} of {len(tasks)} tasks ({sum(1 for n in tasks.values() if n > 1)} run twice)")
    for k, n in sorted(steps.items()):
        print(f"  {n:5d}  {k}")


if __name__ == "__main__":
    main()
