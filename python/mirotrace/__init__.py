"""Replay recorded LLM agent traces through MiroThinker's error-correction
layer, from Python.

The work is done by the mirotrace Rust library inside this package
(``mirotrace._mirotrace``); this module only moves data between it and
Python: paths and pyarrow tables in, pyarrow tables and dicts out.

- :func:`replay` -> a ``pyarrow.Table`` of verdicts, one row per attempt
  (the columns of ``mirotrace replay --format parquet``, docs/columnar.md).
- :func:`analyze` -> the report as a dict, the schema of
  ``mirotrace analyze --format json``.
- :func:`partial` -> a :class:`Partial` report of some traces; partials
  merge (:func:`merge`, ``+``) into exactly the report of all their traces
  (docs/partial.md); ``mirotrace.ray`` runs that on Ray Data.

Inputs are either paths (files or directories, read exactly as the CLI
reads them), a list of trace lines (JSONL strings), or a pyarrow table of
trace lines with a ``text`` column and, optionally, ``file`` and ``line``
columns saying where each line came from.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _mirotrace

__all__ = [
    "replay",
    "analyze",
    "partial",
    "merge",
    "Partial",
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


def _source_args(
    source: Optional[Source], lines: Optional[Iterable[str]], files: Optional[Sequence[str]] = None
) -> Dict[str, Any]:
    """The native functions' ``paths``/``table`` (and ``files``) arguments."""
    if lines is not None:
        if source is not None:
            raise ValueError("give either a source or lines, not both")
        args: Dict[str, Any] = {"table": _table_bytes(lines_table(lines))}
    elif source is None:
        raise ValueError("nothing to read: give paths, a table or lines=")
    elif isinstance(source, (pa.Table, pa.RecordBatch)):
        args = {"table": _table_bytes(source)}
    elif isinstance(source, (str, os.PathLike)):
        args = {"paths": [os.fspath(source)]}
    else:
        args = {"paths": [os.fspath(p) for p in source]}
    if files is not None:
        args["files"] = [os.fspath(f) for f in files]
    return args


def _warn(problems: List[str]) -> None:
    if problems:
        shown = "; ".join(problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        warnings.warn(
            f"{len(problems)} skipped: {shown}{more}", SkippedInputWarning, stacklevel=_user_level()
        )


def _user_level() -> int:
    """The ``stacklevel`` of the first caller outside this package (for
    :func:`_warn`), however many of its functions lie in between."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("mirotrace"):
        level += 1
        frame = frame.f_back
    return level


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
    files: Optional[Sequence[str]] = None,
    policy: Optional[PathLike] = None,
    input_format: str = "auto",
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    top: int = 10,
    group_by: Optional[str] = None,
    seed: int = 42,
    iterations: int = 1000,
) -> Dict[str, Any]:
    """The report of ``mirotrace analyze --format json`` as a dict (the
    report of one :func:`partial` of all of it)."""
    return partial(
        source,
        lines=lines,
        files=files,
        policy=policy,
        input_format=input_format,
        threads=threads,
        max_line_bytes=max_line_bytes,
        top=top,
        group_by=group_by,
        seed=seed,
        iterations=iterations,
    ).report(threads)


class Partial:
    """A partial report: the state of one ``analyze`` over some traces.

    Partials of disjoint sets of traces merge (:meth:`merge`, ``+``,
    :func:`merge`) in any order into exactly the report of all of them;
    merging partials made with other options, another policy or another
    mirotrace version raises ``ValueError``. They pickle (as their bytes),
    so they travel between processes.
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_mirotrace.Partial") -> None:
        self._native = native

    @classmethod
    def from_bytes(cls, data: bytes) -> "Partial":
        """Reads ``to_bytes()`` output or a file of ``analyze --format partial``."""
        return cls(_mirotrace.Partial.from_bytes(bytes(data)))

    @classmethod
    def load(cls, path: PathLike) -> "Partial":
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())

    def to_bytes(self) -> bytes:
        """The ``mirotrace.partial/2`` JSON text (what ``mirotrace merge`` reads)."""
        return self._native.to_bytes()

    def save(self, path: PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    def merge(self, other: "Partial") -> "Partial":
        """Both added up (a new partial)."""
        return Partial(self._native.merge(other._native))

    __add__ = merge

    def report(self, threads: Optional[int] = None) -> Dict[str, Any]:
        """The finished report as a dict (``analyze --format json``)."""
        return json.loads(self._native.render("json", threads))

    def render(self, format: str = "table", threads: Optional[int] = None) -> str:
        """The finished report as text: ``table``, ``markdown``, ``json`` or ``html``."""
        return self._native.render(format, threads)

    @property
    def traces(self) -> int:
        """Traces it holds."""
        return self._native.traces

    def __reduce__(self):
        return (Partial.from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        return f"<mirotrace.Partial of {self.traces} traces>"


def partial(
    source: Optional[Source] = None,
    *,
    lines: Optional[Iterable[str]] = None,
    files: Optional[Sequence[str]] = None,
    policy: Optional[PathLike] = None,
    input_format: str = "auto",
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    top: int = 10,
    group_by: Optional[str] = None,
    seed: int = 42,
    iterations: int = 1000,
) -> Partial:
    """The partial report of some whole traces (the arguments of :func:`analyze`).

    For a table or lines, ``files`` lists the inputs to count as opened
    (default: the distinct ``file`` values of the rows); a job that splits
    files into many partials passes ``files=[]`` for each and counts the
    files once, in a partial of no lines.
    """
    native, problems = _mirotrace.partial(
        **_source_args(source, lines, files),
        **_common(policy, input_format, threads, max_line_bytes),
        top=top,
        group_by=group_by,
        seed=seed,
        iterations=iterations,
    )
    _warn(problems)
    return Partial(native)


def merge(partials: Iterable[Union[Partial, bytes]]) -> Partial:
    """All the partials added up; ``ValueError`` if there are none or they
    were made differently."""
    merged: Optional[Partial] = None
    for p in partials:
        part = p if isinstance(p, Partial) else Partial.from_bytes(p)
        merged = part if merged is None else merged.merge(part)
    if merged is None:
        raise ValueError("no partial reports to merge")
    return merged
