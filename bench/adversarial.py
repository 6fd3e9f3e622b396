#!/usr/bin/env python3
"""Adversarial-input scaling: replay time at 1, 10 and 100 MB.

Each input is one attempt whose MCP `<arguments>` block is a single run of
one hostile pattern (quotes, backslashes, braces, brackets, or a mix that
keeps the JSON repair busy). Linear time means MB/s stays flat as the size
grows; a quadratic spot shows as MB/s falling by ~10x per step.

    python3 bench/adversarial.py [--sizes 1,10,100] [--bin target/profiling/mirotrace]

Prints one row per (pattern, size): seconds and MB/s. Build first with
`cargo build --profile profiling`. Inputs go to a temporary folder and are removed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PATTERNS = {
    "quotes": '"',
    "backslashes": "\\",
    "braces": "{",
    "brackets": "[",
    "mixed": '{"a": "\\"',
}


def write_input(path, unit, megabytes):
    payload = unit * (megabytes * 1024 * 1024 // len(unit))
    content = (
        "<use_mcp_tool><server_name>s</server_name><tool_name>google_search</tool_name><arguments>"
        + payload
        + "</arguments></use_mcp_tool>"
    )
    with open(path, "w") as f:
        f.write(json.dumps({"trace_id": "adversarial", "content": content}) + "\n")


def run(binary, path):
    """Exit code and wall seconds of one single-threaded replay."""
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        proc = subprocess.run([binary, "replay", path, "-j", "1"], stdout=sink, stderr=subprocess.DEVNULL)
    return proc.returncode, time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,100", help="megabytes, comma-separated")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "profiling", "mirotrace"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} not found: run `cargo build --profile profiling` first")
    print(f"{'pattern':<12} {'MB':>5} {'seconds':>9} {'MB/s':>8} exit")
    with tempfile.TemporaryDirectory(prefix="mirotrace-adv-") as tmp:
        for name, unit in PATTERNS.items():
            for mb in sizes:
                path = os.path.join(tmp, f"{name}-{mb}.jsonl")
                write_input(path, unit, mb)
                code, seconds = run(args.bin, path)
                print(f"{name:<12} {mb:>5} {seconds:>9.2f} {mb / seconds:>8.1f} {code}")
                os.remove(path)


if __name__ == "__main__":
    main()
