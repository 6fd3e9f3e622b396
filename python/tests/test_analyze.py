"""mirotrace.analyze: the CLI's JSON report, as a dict."""

from __future__ import annotations

import pyarrow as pa
import pytest

import mirotrace
from conftest import FIXTURES, cli_report


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ([], {}),
        (["--group-by", "file", "--top", "3"], {"group_by": "file", "top": 3}),
        (["--group-by", "agent", "--seed", "9", "--iterations", "200"],
         {"group_by": "agent", "seed": 9, "iterations": 200}),
    ],
)
def test_the_report_equals_the_cli_json(args, kwargs):
    inputs = [str(FIXTURES / "analyze"), str(FIXTURES / "model-a.jsonl"), str(FIXTURES / "tasklog")]
    got = mirotrace.analyze(inputs, **kwargs)
    assert got == cli_report(*inputs, *args)
    assert got["schema"] == "mirotrace.analyze/1"
    assert got["traces"] > 10


def test_a_table_reports_as_its_file():
    path = FIXTURES / "analyze" / "sample.jsonl"
    table = mirotrace.lines_table(path.read_text().splitlines(), file=str(path))
    assert mirotrace.analyze(table) == mirotrace.analyze(path)


def test_bad_group_by_raises():
    with pytest.raises(ValueError, match="group_by"):
        mirotrace.analyze(FIXTURES / "model-a.jsonl", group_by="colour")
