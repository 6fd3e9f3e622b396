"""Replay recorded LLM agent traces through MiroThinker's error-correction
layer, from Python.

The work is done by the mirotrace Rust library inside this package
(``mirotrace._mirotrace``); this module only moves data between it and
Python: paths and pyarrow tables in, pyarrow tables and dicts out.

- :func:`replay` -> a ``pyarrow.Table`` of verdicts, one row per attempt
  (the columns of ``mirotrace replay --format parquet``, docs/columnar.md).
- :func:`analyze` -> the report as a dict, the schema of
  ``mirotrace analyze --format json``.

Inputs are either paths (files or directories, read exactly as the CLI
reads them), a list of trace lines (JSONL strings), or a pyarrow table of
trace lines with a ``text`` column and, optionally, ``file`` and ``line``
columns saying where each line came from.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _mirotrace

__all__ = [
    "replay",
    "analyze",
    "lines_table",
    "SkippedInputWarning",
    "__version__",
]

__version__: str = _mirotrace.version()

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, Sequence[PathLike], pa.Table, pa.RecordBatch]


class SkippedInputWarning(UserWarning):
    """Some lines or inputs could not be read and were skipped (the CLI's exit code 3)."""


def lines_table(
    lines: Iterable[str], file: str = "<lines>", first_line: int = 1
) -> pa.Table:
    """A table of trace lines (``text``, ``file``, ``line``) from JSONL strings."""
    texts = list(lines)
    return pa.table(
        {
            "text": pa.array(texts, pa.string()),
            "file": pa.array([file] * len(texts), pa.string()),
            "line": pa.array(range(first_line, first_line + len(texts)), pa.int64()),
        }
    )


def _table_bytes(table: Union[pa.Table, pa.RecordBatch]) -> bytes:
    """The ``text``/``file``/``line`` columns as an Arrow IPC stream."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if "text" not in table.column_names:
        raise ValueError("the table of trace lines needs a `text` column")
    columns = {"text": table.column("text").cast(pa.string())}
    if "file" in table.column_names:
        columns["file"] = table.column("file").cast(pa.string())
    if "line" in table.column_names:
        columns["line"] = table.column("line").cast(pa.int64())
    narrow = pa.table(columns)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, narrow.schema) as writer:
        writer.write_table(narrow)
    return sink.getvalue().to_pybytes()


def _source_args(source: Optional[Source], lines: Optional[Iterable[str]]) -> Dict[str, Any]:
    if lines is not None:
        if source is not None:
            raise ValueError("give either a source or lines, not both")
        return {"table": _table_bytes(lines_table(lines))}
    if source is None:
        raise ValueError("nothing to read: give paths, a table or lines=")
    if isinstance(source, (pa.Table, pa.RecordBatch)):
        return {"table": _table_bytes(source)}
    if isinstance(source, (str, os.PathLike)):
        return {"paths": [os.fspath(source)]}
    return {"paths": [os.fspath(p) for p in source]}


def _warn(problems: List[str]) -> None:
    if problems:
        shown = "; ".join(problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        warnings.warn(
            f"{len(problems)} skipped: {shown}{more}", SkippedInputWarning, stacklevel=3
        )


def _common(policy: Optional[PathLike], input_format: str, threads: Optional[int],
            max_line_bytes: Optional[int]) -> Dict[str, Any]:
    return {
        "policy": None if policy is None else os.fspath(policy),
        "input_format": input_format,
        "threads": threads,
        "max_line_bytes": max_line_bytes,
    }


def replay(
    source: Optional[Source] = None,
    *,
    lines: Optional[Iterable[str]] = None,
    policy: Optional[PathLike] = None,
    input_format: str = "auto",
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
) -> pa.Table:
    """Replays every attempt; returns one verdict row per attempt, in input order.

    ``source`` is a path, a list of paths, or a pyarrow table of trace lines
    (``text`` [, ``file``, ``line``]); ``lines`` is a list of JSONL strings.
    Lines that cannot be read are skipped with a :class:`SkippedInputWarning`.
    """
    data, problems = _mirotrace.replay(
        **_source_args(source, lines), **_common(policy, input_format, threads, max_line_bytes)
    )
    _warn(problems)
    return pa.ipc.open_stream(data).read_all()


def analyze(
    source: Optional[Source] = None,
    *,
    lines: Optional[Iterable[str]] = None,
    policy: Optional[PathLike] = None,
    input_format: str = "auto",
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    top: int = 10,
    group_by: Optional[str] = None,
    seed: int = 42,
    iterations: int = 1000,
) -> Dict[str, Any]:
    """The report of ``mirotrace analyze --format json`` as a dict."""
    text, problems = _mirotrace.analyze(
        **_source_args(source, lines),
        **_common(policy, input_format, threads, max_line_bytes),
        top=top,
        group_by=group_by,
        seed=seed,
        iterations=iterations,
    )
    _warn(problems)
    return json.loads(text)
