#!/usr/bin/env python3
"""Builds a large trace file by replicating the dev corpus with fresh trace ids.

usage: make_input.py [--usage] SOURCE.jsonl OUT.jsonl SIZE
SIZE is a byte count with an optional K/M/G suffix (e.g. 1G, 50M). Every copy
of SOURCE gets its trace ids suffixed with `~<copy>`, so traces stay distinct
and contiguous; the output stops at the first whole copy that reaches SIZE.

--usage gives every line the cost fields of docs/trace-format.md (`usage` with
input, output and cached tokens, `duration_s`) and every trace's first line a
task result (`meta.success`, `meta.score`), so `analyze`'s cost and
task-result figures have work to do. The values are a deterministic function
of the line's position in SOURCE (same input on every run).
"""
import hashlib
import json
import re
import sys

PREFIX = re.compile(rb'^\{"trace_id": "((?:[^"\\]|\\.)*)"')


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def with_usage(lines):
    """The lines with cost fields and, on each trace's first line, a task result."""
    out, seen = [], set()
    for index, line in enumerate(lines):
        record = json.loads(line)
        digest = hashlib.sha256(b"%d" % index).digest()
        tokens_in = 1000 + int.from_bytes(digest[0:3], "big") % 30000
        record["usage"] = {
            "input_tokens": tokens_in,
            "output_tokens": 50 + int.from_bytes(digest[3:5], "big") % 2000,
            "cached_input_tokens": tokens_in * digest[5] // 512,
        }
        record["duration_s"] = round(0.5 + int.from_bytes(digest[6:8], "big") / 4096, 3)
        trace = record.get("trace_id")
        if trace not in seen:
            seen.add(trace)
            meta = record.get("meta")
            meta = dict(meta) if isinstance(meta, dict) else {}
            meta["success"] = digest[8] % 3 != 0
            meta["score"] = round(digest[9] / 255, 3)
            record["meta"] = meta
        # trace_id stays the first key (json keeps insertion order), as PREFIX needs.
        out.append(json.dumps(record, ensure_ascii=False).encode() + b"\n")
    return out


def main():
    args = sys.argv[1:]
    usage = "--usage" in args
    args = [a for a in args if a != "--usage"]
    if len(args) != 3:
        sys.exit(__doc__)
    source, out_path, size = args[0], args[1], parse_size(args[2])
    with open(source, "rb") as f:
        lines = [line if line.endswith(b"\n") else line + b"\n" for line in f if line.strip()]
    if usage:
        lines = with_usage(lines)
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
