"""The Ray Data recipe (mirotrace.ray) on a local two-CPU Ray cluster: lines
grouped by trace, one partial per trace, merged: the same report, byte for
byte, as one `mirotrace analyze` of the same files."""

from __future__ import annotations

import gzip
import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

if os.environ.get("MIROTRACE_REQUIRE_RAY"):
    import ray  # CI: a missing Ray is a failure, not a skip
else:
    ray = pytest.importorskip("ray")

import mirotrace.ray  # noqa: E402

DATA = Path(__file__).parent / "data"
#: The whole module's budget on a 2-core machine (CI has 90 minutes for everything).
TIME_LIMIT_S = 300


@pytest.fixture(scope="module")
def cluster():
    started = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield started
    ray.shutdown()
    assert time.monotonic() - started < TIME_LIMIT_S


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """JSONL files of every kind the recipe reads: native traces with
    sub-agents, a line that is not JSON, NaN and huge ints in arguments, and
    a gzip-compressed file."""
    d = tmp_path_factory.mktemp("ray-inputs")
    files = []
    for src in [FIXTURES / "analyze" / "sample.jsonl", FIXTURES / "model-a.jsonl", DATA / "hostile.jsonl"]:
        dst = d / src.name
        shutil.copy(src, dst)
        files.append(str(dst))
    gz = d / "model-b.jsonl.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "model-b.jsonl").read_bytes()))
    files.append(str(gz))
    return files


@pytest.mark.parametrize(
    "options, args",
    [({}, []), ({"group_by": "file", "top": 3, "seed": 5}, ["--group-by", "file", "--top", "3", "--seed", "5"])],
)
def test_the_recipe_gives_the_report_of_one_analyze(cluster, inputs, options, args):
    merged = mirotrace.ray.analyze(inputs, **options)
    want = run_cli("analyze", "-q", "--format", "json", *inputs, *args, ok_codes=(3,)).stdout.decode()
    assert merged.render("json") == want
    assert merged.traces > 40


def test_unknown_options_are_refused(cluster, inputs):
    with pytest.raises(TypeError, match="colour"):
        mirotrace.ray.analyze(inputs, colour="red")
