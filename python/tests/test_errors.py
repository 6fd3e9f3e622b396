"""Python raises what the CLI exits with: a typed exception per exit code,
never a report of nothing (docs/python.md, "Errors")."""

from __future__ import annotations

import warnings

import pytest

import mirotrace
from conftest import FIXTURES, run_cli

GOOD = FIXTURES / "model-a.jsonl"


def calls():
    """Every function that reads input, as one-argument callables."""
    return {
        "replay": lambda src, **kw: mirotrace.replay(src, **kw),
        "analyze": lambda src, **kw: mirotrace.analyze(src, **kw),
        "partial": lambda src, **kw: mirotrace.partial(src, **kw),
    }


@pytest.mark.parametrize("name", sorted(calls()))
def test_a_missing_input_raises_input_error_where_the_cli_exits_4(name, tmp_path):
    missing = tmp_path / "nosuch.jsonl"
    run_cli("analyze", str(missing), ok_codes=(4,))
    with pytest.raises(mirotrace.InputError, match="nosuch.jsonl") as e:
        calls()[name](str(missing))
    assert isinstance(e.value, OSError) and e.value.exit_code == 4


@pytest.mark.parametrize("name", sorted(calls()))
def test_an_empty_input_raises_nothing_to_report(name, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    run_cli("analyze", str(empty), ok_codes=(4,))
    with pytest.raises(mirotrace.NothingToReportError) as e:
        calls()[name](str(empty))
    assert e.value.exit_code == 4


def test_analyze_of_lines_that_are_all_broken_raises_input_error():
    with pytest.raises(mirotrace.InputError) as e:
        mirotrace.analyze(lines=["not json", "{broken"])
    assert len(e.value.problems) == 2


def test_analyze_of_no_lines_raises_but_an_empty_partial_is_a_piece():
    with pytest.raises(mirotrace.NothingToReportError):
        mirotrace.analyze(lines=[])
    piece = mirotrace.partial(lines=[], files=[])
    assert piece.traces == 0
    with pytest.raises(mirotrace.NothingToReportError):
        piece.report()
    whole = piece + mirotrace.partial(GOOD)
    assert whole.report()["traces"] == mirotrace.analyze(GOOD)["traces"]


@pytest.mark.parametrize("name", sorted(calls()))
def test_skipped_lines_warn_or_raise_under_strict(name, tmp_path):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(GOOD.read_text() + "not json\n")
    run_cli("analyze", str(mixed), ok_codes=(3,))
    with pytest.warns(mirotrace.SkippedInputWarning, match="1 skipped"):
        calls()[name](str(mixed))
    with pytest.raises(mirotrace.SkippedInputError) as e:
        calls()[name](str(mixed), strict=True)
    assert e.value.exit_code == 3 and len(e.value.problems) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calls()[name](str(GOOD), strict=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mirotrace.analyze(GOOD, group_by="colour"),
        lambda: mirotrace.replay(lines=["{}"], input_format="yaml"),
        lambda: mirotrace.replay(),
        lambda: mirotrace.merge([]),
        lambda: mirotrace.partial(GOOD).render("pdf"),
    ],
)
def test_usage_errors_are_usage_error_and_value_error(call):
    with pytest.raises(mirotrace.UsageError) as e:
        call()
    assert isinstance(e.value, ValueError) and e.value.exit_code == 2


def test_an_unreadable_policy_is_a_policy_error():
    with pytest.raises(mirotrace.PolicyError) as e:
        mirotrace.analyze(GOOD, policy="/nonexistent/policy.toml")
    assert isinstance(e.value, OSError) and isinstance(e.value, mirotrace.UsageError)
