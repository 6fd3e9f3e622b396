"""The CLI's Parquet and Arrow files: read back to its JSONL, queried by DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.ipc
import pyarrow.parquet as pq
import pytest

import mirotrace
from conftest import FIXTURES, cli_jsonl, run_cli
from verdict_lines import jsonl_lines

DATA = Path(__file__).parent / "data"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "columnar.md"


def inputs():
    return [str(FIXTURES), str(DATA / "hostile.jsonl")]


def test_parquet_reads_back_to_the_jsonl(tmp_path):
    out = tmp_path / "v.parquet"
    run_cli("replay", *inputs(), "--format", "parquet", "-o", str(out), "-q", ok_codes=(3,))
    table = pq.read_table(out)
    assert list(jsonl_lines(table)) == cli_jsonl(*inputs())
    # The package's table has the file's schema.
    with pytest.warns(mirotrace.SkippedInputWarning):
        assert mirotrace.replay(inputs()).schema.equals(table.schema)


def test_arrow_file_reads_back_to_the_jsonl(tmp_path):
    out = tmp_path / "v.arrow"
    run_cli("replay", *inputs(), "--format", "arrow", "-o", str(out), "-q", ok_codes=(3,))
    table = pyarrow.ipc.open_file(str(out)).read_all()
    assert list(jsonl_lines(table)) == cli_jsonl(*inputs())


def doc_queries():
    """The SQL blocks of docs/columnar.md."""
    text = DOCS.read_text()
    return [block.split("```", 1)[0] for block in text.split("```sql\n")[1:]]


def test_the_documented_duckdb_queries_run_and_add_up(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "verdicts.parquet"
    run_cli("replay", str(FIXTURES / "model-a.jsonl"), str(FIXTURES / "model-b.jsonl"),
            "--format", "parquet", "-o", str(out), "-q")
    monkeypatch.chdir(tmp_path)
    per_model, per_tool = doc_queries()
    rows = duckdb.sql(per_model).fetchall()
    verdicts = [json.loads(l) for l in cli_jsonl(str(FIXTURES / "model-a.jsonl"),
                                                  str(FIXTURES / "model-b.jsonl"))]
    assert sum(r[1] for r in rows) == len(verdicts)
    rollbacks = sum(v["outcome"] == "rollback" for v in verdicts)
    assert abs(sum(r[1] * r[2] for r in rows) - rollbacks) < 1e-6
    tools = duckdb.sql(per_tool).fetchall()
    assert sum(r[1] for r in tools) == sum(len(v["calls"]) for v in verdicts)
    assert sum(r[2] for r in tools) == sum(bool(c["repairs"]) for v in verdicts for c in v["calls"])
