"""The Ray recipe (mirotrace.ray) on a local Ray cluster against the CLI,
on the same inputs, in one run: a folder of task logs (whole inputs, one
task each) and a JSONL of native traces (cut into lines, shuffled by trace),
each at two sizes, so the fixed cost of a Ray job and the cost per file
and per byte come apart.

usage: python bench/ray_recipe.py [COPIES ...]    (default: 2 8; task-log folder copies)
  MIROTRACE_BIN   the CLI (default target/debug/mirotrace; use the same
                  profile as the installed package for a fair comparison)
  CPUS            the Ray cluster's CPUs (default 2), also the CLI's -j
  REPEAT          rounds, the fastest of each kept (default 2)

Needs the package installed (scripts/test-python.sh or maturin develop)
with ray[data]. Inputs go to bench/out/ray/ (git-ignored); a Markdown table
is printed and saved as bench/out/ray.md. Every Ray report is checked
equal, byte for byte, to the CLI's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out" / "ray"
SRC = REPO / "tests" / "data" / "tasklogs"
CLI = os.environ.get("MIROTRACE_BIN", str(REPO / "target" / "debug" / "mirotrace"))
CPUS = int(os.environ.get("CPUS", "2"))
REPEAT = int(os.environ.get("REPEAT", "2"))


def unzstd(path: Path) -> bytes:
    with pa.CompressedInputStream(pa.OSFile(str(path)), "zstd") as s:
        return s.read()


def tasklog_folder(copies: int) -> Path:
    """COPIES copies of every bundled task log, each with its own task id."""
    out = OUT / f"tasklogs-x{copies}"
    if out.is_dir():
        return out
    tmp = out.with_suffix(".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    task_id = re.compile(r'("task_id": ")((?:[^"\\]|\\.)*)"')
    for src in sorted((SRC / "logs").glob("*.json.zst")):
        text = unzstd(src).decode()
        for c in range(copies):
            renamed = task_id.sub(lambda m: f'{m.group(1)}{m.group(2)}~{c}"', text, count=1)
            (tmp / f"{src.name[:-len('.json.zst')]}~{c}.json").write_text(renamed)
    tmp.rename(out)
    return out


def jsonl_like(folder: Path) -> Path:
    """The run's native traces replicated, fresh trace ids, to the folder's bytes."""
    out = OUT / f"traces-like-{folder.name}.jsonl"
    if out.is_file():
        return out
    want = sum(f.stat().st_size for f in folder.iterdir())
    lines = unzstd(SRC / "traces.jsonl.zst").decode().splitlines()
    written, copy = 0, 0
    with open(out.with_suffix(".tmp"), "w") as f:
        while written < want:
            for line in lines:
                record = json.loads(line)
                record["trace_id"] = f"{record['trace_id']}~{copy}"
                text = json.dumps(record) + "\n"
                f.write(text)
                written += len(text.encode())
            copy += 1
    out.with_suffix(".tmp").rename(out)
    return out


def timed(fn):
    best, result = None, None
    for _ in range(REPEAT):
        t = time.perf_counter()
        result = fn()
        took = time.perf_counter() - t
        best = took if best is None else min(best, took)
    return best, result


def main() -> None:
    import ray

    import mirotrace
    import mirotrace.ray

    copies = [int(a) for a in sys.argv[1:]] or [2, 8]
    OUT.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    ray.init(num_cpus=CPUS, include_dashboard=False, log_to_driver=False, configure_logging=False)
    init_s = time.perf_counter() - started
    # A first, tiny job: Ray starts its workers and imports the package.
    mirotrace.ray.analyze([str(REPO / "fixtures" / "model-a.jsonl")])
    rows = []
    for n in copies:
        folder = tasklog_folder(n)
        jsonl = jsonl_like(folder)
        for kind, path, files in [
            ("task logs", folder, len(list(folder.iterdir()))),
            ("JSONL", jsonl, 1),
        ]:
            size = sum(f.stat().st_size for f in folder.iterdir()) if path.is_dir() else path.stat().st_size
            cli_s, cli = timed(
                lambda: subprocess.run(
                    [CLI, "analyze", "-q", "--format", "json", "-j", str(CPUS), str(path)],
                    capture_output=True,
                    check=True,
                ).stdout.decode()
            )
            ray_s, merged = timed(lambda: mirotrace.ray.analyze([str(path)]))
            assert merged.render("json") == cli, f"{path}: the Ray report differs from the CLI's"
            traces = merged.traces
            rows.append((kind, files, traces, size, cli_s, ray_s))
    ray.shutdown()
    load = os.getloadavg()
    lines = [
        f"CLI {CLI}, -j {CPUS}; Ray {ray.__version__} local cluster of {CPUS} CPUs "
        f"(started in {init_s:.1f} s, not counted); best of {REPEAT}; "
        f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
        "",
        "| input | files | traces | MB | CLI s | Ray s | Ray / CLI | CLI MB/s | Ray MB/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, files, traces, size, cli_s, ray_s in rows:
        mb = size / 1e6
        lines.append(
            f"| {kind} | {files} | {traces} | {mb:.2f} | {cli_s:.2f} | {ray_s:.2f} | "
            f"{ray_s / cli_s:.1f}× | {mb / cli_s:.2f} | {mb / ray_s:.2f} |"
        )
    # Fixed and proportional costs from the two sizes of each kind.
    lines.append("")
    for kind in ("task logs", "JSONL"):
        pair = [r for r in rows if r[0] == kind]
        if len(pair) < 2:
            continue
        (_, f1, t1, b1, c1, r1), (_, f2, t2, b2, c2, r2) = pair[0], pair[-1]
        ray_per_mb = (r2 - r1) / ((b2 - b1) / 1e6)
        ray_fixed = r1 - ray_per_mb * b1 / 1e6
        cli_per_mb = (c2 - c1) / ((b2 - b1) / 1e6)
        unit, units = ("file", (f2 - f1)) if kind == "task logs" else ("trace", (t2 - t1))
        lines.append(
            f"- {kind}: Ray {ray_fixed:.2f} s a job + {ray_per_mb:.2f} s/MB "
            f"({(r2 - r1) / units * 1000:.1f} ms a {unit}); CLI {cli_per_mb:.2f} s/MB "
            f"({(c2 - c1) / units * 1000:.2f} ms a {unit})"
        )
    text = "\n".join(lines)
    print(text)
    (REPO / "bench" / "out" / "ray.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
