"""The CLI's Parquet and Arrow files: read back to its JSONL, queried by DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.ipc
import pyarrow.parquet as pq
import pytest

import mirotrace
from conftest import FIXTURES, cli_jsonl, cli_report, run_cli
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


def doc_blocks(lang):
    """The ``lang`` code blocks of docs/columnar.md."""
    text = DOCS.read_text()
    return [block.split("```", 1)[0] for block in text.split(f"```{lang}\n")[1:]]


def corpora():
    """Replayed corpora to check the documented queries on: the bundled
    fixtures, and the shared conformance corpus when it is there."""
    out = [[str(FIXTURES / "model-a.jsonl"), str(FIXTURES / "model-b.jsonl"),
            str(FIXTURES / "analyze" / "sample.jsonl")]]
    dev = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "replay" / "dev.jsonl"
    if dev.is_file():
        out.append([str(dev)])
    return out


def analyze_figures(tmp_path, inputs):
    """(rollbacks, reached, attempts) per model group and (calls, repaired)
    per tool, from `analyze --format json` and from the docs' queries on the
    Parquet file of the same input, run in `tmp_path`."""
    report = cli_report(*inputs, "--group-by", "model")
    per_model = {
        g["key"]: (g["rollbacks"], g["attempts"] - g["outcomes"]["unreachable"], g["attempts"],
                   g["rollback_rate"]["value"])
        for g in report["groups"]["items"]
    }
    per_tool = {
        name: (t["calls"], t["repaired"])
        for name, t in report["tools"].items()
        if t["calls"] > 0
    }
    out = tmp_path / "verdicts.parquet"
    run_cli("replay", *inputs, "--format", "parquet", "-o", str(out), "-q", ok_codes=(0, 3))
    return per_model, per_tool


@pytest.mark.parametrize("inputs", corpora())
def test_the_documented_duckdb_queries_reproduce_analyze(tmp_path, monkeypatch, inputs):
    duckdb = pytest.importorskip("duckdb")
    want_model, want_tool = analyze_figures(tmp_path, inputs)
    monkeypatch.chdir(tmp_path)
    per_model_sql, per_tool_sql = doc_blocks("sql")
    rel = duckdb.sql(per_model_sql)
    cols = rel.columns
    got_model = {}
    for row in rel.fetchall():
        r = dict(zip(cols, row))
        got_model[r["model"]] = (r["rollbacks"], r["reached"], r["attempts"], r["rollback_rate"])
    assert set(got_model) == set(want_model)
    for key, (rb, reached, attempts, rate) in want_model.items():
        g = got_model[key]
        assert g[:3] == (rb, reached, attempts), key
        assert rate is None or abs(g[3] - rate) < 1e-12, key
    rel = duckdb.sql(per_tool_sql)
    got_tool = {r[0]: (r[1], r[2]) for r in rel.fetchall()}
    assert got_tool == want_tool


@pytest.mark.parametrize("inputs", corpora())
def test_the_documented_polars_queries_reproduce_analyze(tmp_path, monkeypatch, inputs):
    pytest.importorskip("polars")
    want_model, want_tool = analyze_figures(tmp_path, inputs)
    monkeypatch.chdir(tmp_path)
    (code,) = doc_blocks("python")
    scope: dict = {}
    exec(compile(code, str(DOCS), "exec"), scope)
    got_model = {
        r["model"]: (r["rollbacks"], r["reached"], r["attempts"], r["rollback_rate"])
        for r in scope["per_model"].to_dicts()
    }
    assert set(got_model) == set(want_model)
    for key, (rb, reached, attempts, rate) in want_model.items():
        g = got_model[key]
        assert g[:3] == (rb, reached, attempts), key
        assert rate is None or abs(g[3] - rate) < 1e-12, key
    got_tool = {r["tool"]: (r["calls"], r["repaired"]) for r in scope["per_tool"].to_dicts()}
    assert got_tool == want_tool
