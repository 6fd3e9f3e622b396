"""mirotrace.replay: the same verdicts as the CLI, from paths, lines and tables."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest

import mirotrace
from conftest import FIXTURES, cli_jsonl, run_cli
from verdict_lines import jsonl_lines

DATA = Path(__file__).parent / "data"


def test_paths_give_the_cli_verdicts_byte_for_byte():
    inputs = [str(FIXTURES), str(DATA / "hostile.jsonl")]
    with pytest.warns(mirotrace.SkippedInputWarning):
        table = mirotrace.replay(inputs)
    want = cli_jsonl(*inputs)
    assert table.num_rows == len(want) > 300
    assert list(jsonl_lines(table)) == want


def test_columns_and_origins():
    path = FIXTURES / "model-a.jsonl"
    table = mirotrace.replay(path)
    assert table.schema.metadata[b"mirotrace.schema"] == b"mirotrace.verdicts/1"
    assert table.column("file").to_pylist() == [str(path)] * table.num_rows
    assert table.column("line").to_pylist() == list(range(1, table.num_rows + 1))
    outcomes = set(table.column("outcome").to_pylist())
    assert "rollback" in outcomes and outcomes <= {
        "ok", "final", "rollback", "end", "llm_failed", "context_exceeded", "crash", "unreachable"
    }


def test_lines_read_as_the_file_does():
    path = FIXTURES / "model-b.jsonl"
    from_file = mirotrace.replay(path)
    from_lines = mirotrace.replay(lines=path.read_text().splitlines())
    assert from_lines.column("file").unique().to_pylist() == ["<lines>"]
    drop = ["file"]
    assert from_lines.drop_columns(drop).equals(from_file.drop_columns(drop))


def test_a_table_keeps_its_files_and_line_numbers():
    """Rows of several files, with gaps in the numbering (blank or dropped
    lines): each verdict carries its row's origin."""
    paths = [FIXTURES / "model-a.jsonl", FIXTURES / "model-b.jsonl"]
    rows = {"text": [], "file": [], "line": []}
    for p in paths:
        for n, text in enumerate(p.read_text().splitlines(), start=1):
            rows["text"].append(text)
            rows["file"].append(str(p))
            rows["line"].append(n * 10)
    table = mirotrace.replay(pa.table(rows))
    from_files = mirotrace.replay([str(p) for p in paths])
    assert table.column("line").to_pylist() == [n * 10 for n in from_files.column("line").to_pylist()]
    # A duplicate query's `why.first_line` names a line too: the row's.
    def whys(t, scale):
        out = []
        for w in t.column("why").to_pylist():
            w = json.loads(w) if w else None
            if w and w.get("first_line") is not None:
                w["first_line"] *= scale
            out.append(w)
        return out

    assert whys(table, 1) == whys(from_files, 10)
    assert any(w and "first_line" in w for w in whys(table, 1))
    drop = ["line", "why"]
    assert table.drop_columns(drop).equals(from_files.drop_columns(drop))


def test_traces_regrouped_in_any_order_give_the_same_verdicts():
    """A distributed job hands over one trace per group, groups in any order:
    per trace, the verdicts are those of the whole file."""
    path = FIXTURES / "analyze" / "sample.jsonl"
    whole = mirotrace.replay(path).to_pylist()
    texts = path.read_text().splitlines()
    table = mirotrace.lines_table(texts, file=str(path))
    by_trace = {}
    for row in table.to_pylist():
        key = row["text"].split('"trace_id": ', 1)[1].split(",", 1)[0]
        by_trace.setdefault(key, []).append(row)
    groups = list(by_trace.values())
    random.Random(7).shuffle(groups)
    got = []
    for g in groups:
        got.extend(mirotrace.replay(pa.Table.from_pylist(g, schema=table.schema)).to_pylist())
    key = lambda r: (r["file"], r["line"])
    assert sorted(got, key=key) == sorted(whole, key=key)


def test_bad_lines_warn_and_are_skipped():
    with pytest.warns(mirotrace.SkippedInputWarning, match="not JSON|1 skipped"):
        table = mirotrace.replay(lines=['{"trace_id": "a", "content": "hi"}', "{nope"])
    assert table.num_rows == 1


def test_the_warning_points_at_the_callers_line():
    lines = ['{"trace_id": "a", "content": "hi"}', "{nope"]
    for call in (mirotrace.replay, mirotrace.analyze, mirotrace.partial):
        with pytest.warns(mirotrace.SkippedInputWarning) as caught:
            call(lines=lines)
        assert caught[0].filename == __file__, (call.__name__, caught[0].filename)


def test_empty_input_raises_nothing_to_report_like_the_cli():
    with pytest.raises(mirotrace.NothingToReportError) as e:
        mirotrace.replay(lines=[])
    assert e.value.exit_code == 4


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: mirotrace.replay(pa.table({"x": ["a"]})), ValueError),
        (lambda: mirotrace.replay(lines=["{}"], input_format="yaml"), ValueError),
        (lambda: mirotrace.replay(lines=["a\nb"]), ValueError),
        (lambda: mirotrace.replay(FIXTURES, policy="/nonexistent/policy.toml"), OSError),
        (lambda: mirotrace.replay(), ValueError),
    ],
)
def test_bad_arguments_raise(call, error):
    with pytest.raises(error):
        call()


def test_a_missing_file_raises_like_the_cli():
    with pytest.raises(mirotrace.InputError, match="no such file") as e:
        mirotrace.replay(["/nonexistent/traces.jsonl"])
    assert e.value.exit_code == 4 and e.value.problems


def test_cost_and_task_result_columns():
    """Issue 25: each row's tokens and seconds, and its trace's result on
    every row of the trace, from the lines' own fields; null where absent."""
    lines = [
        '{"trace_id": "a", "meta": {"success": true, "score": 1}, "content": "<use_mcp_tool>",'
        ' "usage": {"input_tokens": 900, "output_tokens": 12, "cached_input_tokens": 800}, "duration_s": 1.5}',
        '{"trace_id": "a", "content": "\\\\boxed{1}", "usage": {"prompt_tokens": 950, "completion_tokens": 4}}',
        '{"trace_id": "b", "content": "\\\\boxed{2}", "duration_s": 0.25}',
    ]
    table = mirotrace.replay(lines=lines)
    got = {name: table.column(name).to_pylist() for name in (
        "input_tokens", "output_tokens", "cached_input_tokens", "duration_s",
        "task_success", "task_score", "task_basis")}
    assert got == {
        "input_tokens": [900, 950, None],
        "output_tokens": [12, 4, None],
        "cached_input_tokens": [800, None, None],
        "duration_s": [1.5, None, 0.25],
        "task_success": [True, True, None],
        "task_score": [1.0, 1.0, None],
        "task_basis": ["meta.success", "meta.success", None],
    }
    assert table.schema.field("duration_s").type == pa.float64()


RECORDINGS = Path(__file__).resolve().parents[2] / "tests" / "data" / "recording"


def test_a_recording_groups_its_calls_by_the_trace_header():
    path = str(RECORDINGS / "anthropic.jsonl")
    table = mirotrace.replay(path, trace_header="Anthropic-Version")
    assert table.column("trace_id").to_pylist() == ["2023-06-01", "2023-06-01", "2023-06-01#2"]
    want = run_cli("replay", path, "--trace-header", "Anthropic-Version", "-q").stdout
    assert list(jsonl_lines(table)) == want.decode().splitlines()
    report = mirotrace.analyze(str(RECORDINGS / "mirothinker.jsonl"))
    assert report["blind_spots"]["results_unseen"] == 1
    assert report["input"]["skipped"]["recording:summary_call"] == 2
