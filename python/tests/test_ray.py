"""The Ray Data recipe (mirotrace.ray) on a local two-CPU Ray cluster: lines
grouped by trace, one partial per trace, merged: the same report, byte for
byte, as one `mirotrace analyze` of the same files."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import FIXTURES, REPO, run_cli
from verdict_lines import jsonl_lines

if os.environ.get("MIROTRACE_REQUIRE_RAY"):
    import ray  # CI: a missing Ray is a failure, not a skip
else:
    ray = pytest.importorskip("ray")

import mirotrace  # noqa: E402
import mirotrace.ray  # noqa: E402

DATA = Path(__file__).parent / "data"
#: The whole module's budget on a 2-core machine (CI has 90 minutes for
#: everything): about 12 Ray jobs, 135 s on a machine to itself, more than
#: twice that beside other builds.
TIME_LIMIT_S = 600


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


# --- every input the CLI reads (issue 43) ------------------------------------

TASKLOGS = REPO / "tests" / "data" / "tasklogs"


def _events_folder(root: Path) -> Path:
    """An OpenHands SDK conversation folder: one event file per event,
    named as the SDK names them, some pretty-printed."""
    events = root / "conv-1" / "events"
    events.mkdir(parents=True)
    lines = (FIXTURES / "harnesses" / "openhands-v1" / "events.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        body = json.dumps(json.loads(line), indent=2) if i % 3 == 0 else line
        (events / f"event-{i:05d}-{i * 7919:08x}-0000-4000-8000-000000000000.json").write_text(body)
    return events


def _zstd(src: Path, dst: Path) -> Path:
    with pa.CompressedOutputStream(str(dst), "zstd") as out:
        out.write(src.read_bytes())
    return dst


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    """Named input sets, each a list of paths as the CLI is given them."""
    d = tmp_path_factory.mktemp("ray-formats")
    events = _events_folder(d / "openhands")
    native_zst = _zstd(FIXTURES / "model-a.jsonl", d / "model-a.jsonl.zst")
    # A folder of everything: whole files and line files, compressed or not,
    # an empty file, a broken line, an events folder found by the walk.
    mixed = d / "mixed"
    shutil.copytree(FIXTURES / "mixed", mixed / "fixtures")
    shutil.copytree(TASKLOGS / "logs", mixed / "logs")
    shutil.copytree(events.parent.parent, mixed / "openhands")
    shutil.copy(FIXTURES / "harnesses" / "claude-code" / "session.jsonl", mixed / "session.jsonl")
    shutil.copy(FIXTURES / "harnesses" / "inspect" / "mockllm-0.3.285.eval", mixed / "run.eval")
    shutil.copy(DATA / "hostile.jsonl", mixed / "hostile.jsonl")
    _zstd(FIXTURES / "model-b.jsonl", mixed / "model-b.jsonl.zst")
    (mixed / "empty.jsonl").write_bytes(b"")
    # A trace id that comes back after another trace: two runs, two traces.
    (mixed / "again.jsonl").write_text(
        "".join(
            json.dumps({"trace_id": t, "content": f"step {i}"}) + "\n"
            for i, t in enumerate(["a", "a", "b", "a"])
        )
    )
    return {
        "tasklogs": [str(TASKLOGS / "logs")],
        "eval": [str(FIXTURES / "harnesses" / "inspect" / "mockllm-0.3.285.eval")],
        "claude-code": [str(FIXTURES / "harnesses" / "claude-code" / "session.jsonl")],
        "events": [str(events)],
        "zst": [str(native_zst), str(TASKLOGS / "traces.jsonl.zst")],
        "mixed": [str(mixed), str(FIXTURES / "analyze" / "sample.jsonl")],
    }


@pytest.mark.parametrize("name", ["tasklogs", "eval", "claude-code", "events", "zst", "mixed"])
def test_every_input_gives_the_report_of_one_analyze(cluster, formats, name):
    paths = formats[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mirotrace.SkippedInputWarning)
        merged = mirotrace.ray.analyze(paths)
    want = run_cli("analyze", "-q", "--format", "json", *paths, ok_codes=(0, 3)).stdout.decode()
    assert merged.render("json") == want
    assert merged.traces > 0


def test_the_plan_cuts_line_inputs_only_and_lists_what_the_cli_reads(formats):
    paths = formats["mixed"]
    p = mirotrace.ray.plan(paths)
    whole = {Path(path).name for _, _, path in p.whole}
    lines = {Path(path).name for _, _, path in p.lines}
    assert {"run.eval", "session.jsonl", "events", "empty.jsonl"} <= whole
    assert "task_tld-71-0000.json.zst" in whole
    assert {"hostile.jsonl", "model-b.jsonl.zst", "native.jsonl", "sample.jsonl", "again.jsonl"} <= lines
    assert not whole & lines
    report = json.loads(run_cli("analyze", "-q", "--format", "json", *paths, ok_codes=(3,)).stdout)
    assert len(p.lines) + len(p.whole) == report["files"]
    # In the CLI's order: the folder walked, then the file named after it.
    assert sorted(i for i, _, _ in p.lines + p.whole) == list(range(report["files"]))
    assert p.lines[-1][1:] == (paths[-1], paths[-1])


def test_mixed_folders_by_file_with_the_cli_problems(cluster, formats):
    paths = formats["mixed"]
    args = ["--group-by", "file", "--top", "4", "--seed", "9"]
    with pytest.raises(mirotrace.SkippedInputError) as raised:
        mirotrace.ray.analyze(paths, strict=True, group_by="file", top=4, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mirotrace.SkippedInputWarning)
        merged = mirotrace.ray.analyze(paths, group_by="file", top=4, seed=9)
    cli = run_cli("analyze", "--format", "json", *paths, *args, ok_codes=(3,))
    assert merged.render("json") == cli.stdout.decode()
    # The same messages, in the same order, as the package reading the paths
    # in one process, and worded as the CLI words them: each one the CLI
    # prints in full (its first few) is on its stderr word for word.
    with pytest.raises(mirotrace.SkippedInputError) as one:
        mirotrace.partial(paths, strict=True, group_by="file", top=4, seed=9)
    assert raised.value.problems == one.value.problems
    assert len(raised.value.problems) >= 3
    stderr = cli.stderr.decode()
    printed = [p for p in raised.value.problems if p in stderr]
    assert len(printed) >= min(3, len(raised.value.problems)), (raised.value.problems, stderr)
    for problem in raised.value.problems:
        assert problem.split(":", 1)[0] in stderr


def test_replay_to_parquet_gives_the_cli_verdicts(cluster, formats, tmp_path):
    paths = formats["mixed"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mirotrace.SkippedInputWarning)
        dataset = mirotrace.ray.replay(paths)
        dataset.write_parquet(str(tmp_path / "ray"))
    got = pq.read_table(str(tmp_path / "ray"))
    cli = tmp_path / "cli.parquet"
    run_cli("replay", "-q", "--format", "parquet", "-o", str(cli), *paths, ok_codes=(3,))
    want = pq.read_table(cli)
    assert got.num_rows == want.num_rows > 100
    assert got.schema.remove_metadata().equals(want.schema.remove_metadata())
    # Rows in no particular order on Ray: the same rows, each byte for byte.
    assert sorted(jsonl_lines(got)) == sorted(jsonl_lines(want))
