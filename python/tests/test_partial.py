"""Partial reports from Python: any split of whole traces merges to the
report of one run, and to the CLI's; partials made differently refuse."""

from __future__ import annotations

import pickle
import random
import subprocess

import pyarrow as pa
import pytest

import mirotrace
from conftest import FIXTURES, cli_path, cli_report

INPUTS = [FIXTURES / "analyze" / "sample.jsonl", FIXTURES / "model-a.jsonl", FIXTURES / "model-b.jsonl"]


def trace_groups(rng: random.Random):
    """The inputs' lines as one table per trace (file, line, text), shuffled."""
    groups = []
    for path in INPUTS:
        rows = []
        last = None
        for n, text in enumerate(path.read_text().splitlines(), start=1):
            tid = text.split('"trace_id": ', 1)[1].split(",", 1)[0]
            if tid != last and rows:
                groups.append(rows)
                rows = []
            last = tid
            rows.append({"text": text, "file": str(path), "line": n})
        groups.append(rows)
    rng.shuffle(groups)
    return [pa.Table.from_pylist(g) for g in groups]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("options", [{}, {"group_by": "file", "top": 3}])
def test_partials_of_single_traces_merge_to_the_cli_report(seed, options):
    rng = random.Random(seed)
    tables = trace_groups(rng)
    # One partial per trace, files counted once in a partial of their own.
    parts = [mirotrace.partial(t, files=[], **options) for t in tables]
    parts.append(mirotrace.partial(lines=[], files=[str(p) for p in INPUTS], **options))
    rng.shuffle(parts)
    # Merged in a tree, through bytes and pickles, as a cluster would.
    half = len(parts) // 2
    left = mirotrace.merge(p.to_bytes() for p in parts[:half])
    right = pickle.loads(pickle.dumps(mirotrace.merge(parts[half:])))
    merged = right + left
    args = [str(p) for p in INPUTS]
    if "group_by" in options:
        args += ["--group-by", options["group_by"], "--top", str(options["top"])]
    assert merged.report() == cli_report(*args)
    assert merged.traces == sum(p.traces for p in parts) > 20
    assert merged.render("json") == subprocess.run(
        [str(cli_path()), "analyze", "-q", "--format", "json", *args], capture_output=True, check=True
    ).stdout.decode()


def test_a_partial_of_paths_equals_analyze_and_reads_in_the_cli(tmp_path):
    part = mirotrace.partial([str(p) for p in INPUTS])
    assert part.report() == mirotrace.analyze([str(p) for p in INPUTS])
    path = tmp_path / "py.part"
    part.save(path)
    merged = subprocess.run(
        [str(cli_path()), "merge", str(path), "--format", "json"], capture_output=True, check=True
    ).stdout
    assert mirotrace.Partial.load(path).report() == part.report()
    assert merged.decode() == part.render("json")
    assert "OVERVIEW" in part.render("table")


def test_partials_made_differently_refuse_to_merge():
    a = mirotrace.partial(INPUTS[1])
    with pytest.raises(ValueError, match="report options"):
        a + mirotrace.partial(INPUTS[2], top=3)
    with pytest.raises(ValueError, match="not a mirotrace partial report"):
        mirotrace.Partial.from_bytes(b'{"trace_id": "x"}')
    with pytest.raises(ValueError, match="no partial reports"):
        mirotrace.merge([])
    with pytest.raises(ValueError, match="paths count themselves"):
        mirotrace.partial(INPUTS[1], files=[])
