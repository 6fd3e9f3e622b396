#!/usr/bin/env python3
"""Builds a large trace file by replicating the dev corpus with fresh trace ids.

usage: make_input.py SOURCE.jsonl OUT.jsonl SIZE
SIZE is a byte count with an optional K/M/G suffix (e.g. 1G, 50M). Every copy
of SOURCE gets its trace ids suffixed with `~<copy>`, so traces stay distinct
and contiguous; the output stops at the first whole copy that reaches SIZE.
"""
import re
import sys

PREFIX = re.compile(rb'^\{"trace_id": "((?:[^"\\]|\\.)*)"')


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    source, out_path, size = sys.argv[1], sys.argv[2], parse_size(sys.argv[3])
    with open(source, "rb") as f:
        lines = [line if line.endswith(b"\n") else line + b"\n" for line in f if line.strip()]
    for line in lines:
        if not PREFIX.match(line):
            sys.exit(f"{source}: a line does not start with a trace_id key; cannot re-id it")
    written, copy = 0, 0
    with open(out_path, "wb") as out:
        while written < size:
            tag = b"~%d" % copy
            chunk = b"".join(PREFIX.sub(lambda m: m.group(0)[:-1] + tag + b'"', line, count=1) for line in lines)
            out.write(chunk)
            written += len(chunk)
            copy += 1
    print(f"{out_path}: {written} bytes, {copy} copies of {source}", file=sys.stderr)


if __name__ == "__main__":
    main()
