#!/usr/bin/env python3
"""Compare the task logs of a record run with the conformance run's task logs.

    python3 scripts/record-run/compare_logs.py tests/data/record-run/logs /work/shared/conformance/tasklogs/logs

For each task log of the run (upstream names them task_<id>_<start time>.json), the conformance
log of the same task id: the step logs are compared in order, step name and message, after
setting aside (and counting) the steps only upstream's real OpenAI client writes, and after
normalising what is a timing or a token sum (tool durations, the usage line, the client's
name line). The message histories (main agent, every sub-agent session) are compared exactly.
Prints one line per difference and a summary; exits 1 if any task differs."""
import collections
import glob
import json
import os
import re
import sys

CLIENT_STEPS = (
    "LLM | Token Usage",
    "LLM | Response Status",
    "LLM | Length Limit Reached",
    "LLM | API Error",
    "LLM | Repeat Detected",
    "LLM | Message Retention",
    "LLM | Context Limit Not Reached",
    "LLM | Timeout Error",
    "LLM | Context Length Error",
)


FORMAT_SUFFIX = "\nYou should follow the format instruction in the request strictly and wrap the final answer in \\boxed{}."


def strip_icon(name):
    return re.sub(r"^[^\w]+ ?", "", name) if not name[:1].isalnum() else name


def normalise(step):
    name, msg = strip_icon(step["step_name"]), step["message"]
    msg = re.sub(r"completed in \d+ms", "completed in Nms", msg)
    if name == "Main Agent | Usage Calculation":
        msg = re.sub(r"\[[^\]]*\] Total Input: \d+, Cache Input: \d+, Output: \d+", "[model] usage", msg)
    if name == "task_error_details":
        msg = msg.strip().split("\n")[-1]  # the exception; the frames name the harness's files
    if name == "LLM | Initialization":
        msg = re.sub(r"LLMClient \S+ \S+ initialization", "LLMClient P M initialization", msg)
    return name, msg


def main():
    run_dir, conf_dir = sys.argv[1], sys.argv[2]
    conf = {}
    for p in glob.glob(os.path.join(conf_dir, "task_*.json")):
        d = json.load(open(p, encoding="utf-8"))
        conf[d["task_id"]] = d
    client = collections.Counter()
    bad = 0
    n = 0
    for p in sorted(glob.glob(os.path.join(run_dir, "task_*.json"))):
        d = json.load(open(p, encoding="utf-8"))
        c = conf.get(d["task_id"])
        n += 1
        if c is None:
            print(f"{os.path.basename(p)}: no conformance log for {d['task_id']}")
            bad += 1
            continue
        ours = []
        for s in d["step_logs"]:
            name = strip_icon(s["step_name"])
            if name.startswith(CLIENT_STEPS):
                client[name.split(" - ")[0]] += 1
                continue
            ours.append(normalise(s))
        theirs = [normalise(s) for s in c["step_logs"]]
        diffs = []
        if ours != theirs:
            for i, (a, b) in enumerate(zip(ours, theirs)):
                if a != b:
                    diffs.append(f"step {i}: run {a!r:.300} vs conformance {b!r:.300}")
                    break
            if len(ours) != len(theirs):
                diffs.append(f"{len(ours)} steps vs {len(theirs)}")
        main = json.loads(json.dumps(d["main_agent_message_history"]))
        hist = main.get("message_history") if isinstance(main, dict) else None
        if hist and hist[0]["role"] == "user" and hist[0]["content"].endswith(FORMAT_SUFFIX):
            # upstream's process_input adds this; the conformance run's harness did not call it
            hist[0]["content"] = hist[0]["content"][: -len(FORMAT_SUFFIX)]
            client["(first user message: process_input's format instruction)"] += 1
        if main != c["main_agent_message_history"]:
            diffs.append("main_agent_message_history differs")
        subs_a, subs_b = d["sub_agent_message_history_sessions"], c["sub_agent_message_history_sessions"]
        for k in sorted(set(subs_a) | set(subs_b)):
            a, b = subs_a.get(k), subs_b.get(k)
            if a is None or b is None:
                diffs.append(f"sub-agent session {k}: only in {'the conformance log' if a is None else 'the run'}")
            else:
                for part in ("system_prompt", "message_history"):
                    if a.get(part) != b.get(part):
                        diffs.append(f"sub-agent session {k}: {part} differs")
        for k in ("status", "final_boxed_answer", "error"):
            a, b = d.get(k), c.get(k)
            if k == "error":
                a = re.sub(r'File "[^"]*"', "F", a or "").split("\n")[-2:] if a else a
                b = re.sub(r'File "[^"]*"', "F", b or "").split("\n")[-2:] if b else b
            if a != b:
                diffs.append(f"{k}: {str(a)[:200]!r} vs {str(b)[:200]!r}")
        if diffs:
            bad += 1
            for x in diffs:
                print(f"{os.path.basename(p)}: {x}")
    print(f"client-only steps set aside: {dict(sorted(client.items()))}")
    print(f"task logs equal to the conformance run's (apart from those and timings): {n - bad}/{n}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
