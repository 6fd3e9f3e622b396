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

Errors are typed as the CLI's exit codes are (docs/python.md, "Errors"):
:class:`UsageError` (2), :class:`SkippedInputError` under ``strict=True``
(3; otherwise a :class:`SkippedInputWarning`), :class:`InputError` (4: no
input could be read) and :class:`NothingToReportError` (4: it was read but
holds no trace). No function returns a report of nothing.

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
    "MirotraceError",
    "UsageError",
    "PolicyError",
    "SkippedInputError",
    "InputError",
    "NothingToReportError",
    "__version__",
]

__version__: str = _mirotrace.version()

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, Sequence[PathLike], pa.Table, pa.RecordBatch]


class SkippedInputWarning(UserWarning):
    """Some lines or inputs could not be read and were skipped (the CLI's exit code 3)."""


class MirotraceError(Exception):
    """Base of every error this package raises on its own; ``exit_code`` is
    what the CLI exits with in the same case."""

    exit_code: int = 1


class UsageError(MirotraceError, ValueError):
    """Bad arguments: an unknown format, group or option, a table of the
    wrong shape (the CLI's exit code 2)."""

    exit_code = 2


class PolicyError(UsageError, OSError):
    """A policy file that cannot be read or parsed (exit code 2)."""


class SkippedInputError(MirotraceError):
    """With ``strict=True``: some lines or inputs were skipped (exit code 3).
    ``problems`` lists them."""

    exit_code = 3

    def __init__(self, message: str, problems: List[str]) -> None:
        super().__init__(message)
        self.problems = problems


class InputError(MirotraceError, OSError):
    """No input could be read: missing, unreadable, or every line broken
    (exit code 4). ``problems`` lists why."""

    exit_code = 4

    def __init__(self, message: str, problems: List[str]) -> None:
        super().__init__(message)
        self.problems = problems


class NothingToReportError(MirotraceError):
    """The input was read but holds no trace (an empty file or table;
    exit code 4)."""

    exit_code = 4


def _native(call, *args, **kwargs):
    """Calls the native module, its errors typed: ``ValueError`` is a
    usage error, ``OSError`` an unreadable policy."""
    try:
        return call(*args, **kwargs)
    except MirotraceError:
        raise
    except OSError as e:
        raise PolicyError(str(e)) from e
    except ValueError as e:
        raise UsageError(str(e)) from e


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
        raise UsageError("the table of trace lines needs a `text` column")
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
            raise UsageError("give either a source or lines, not both")
        args: Dict[str, Any] = {"table": _table_bytes(lines_table(lines))}
    elif source is None:
        raise UsageError("nothing to read: give paths, a table or lines=")
    elif isinstance(source, (pa.Table, pa.RecordBatch)):
        args = {"table": _table_bytes(source)}
    elif isinstance(source, (str, os.PathLike)):
        args = {"paths": [os.fspath(source)]}
    else:
        args = {"paths": [os.fspath(p) for p in source]}
    if files is not None:
        args["files"] = [os.fspath(f) for f in files]
    return args


def _summary(problems: List[str]) -> str:
    shown = "; ".join(problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"{len(problems)} skipped: {shown}{more}"


def _warn(problems: List[str], strict: bool = False) -> None:
    if problems:
        if strict:
            raise SkippedInputError(_summary(problems), problems)
        warnings.warn(_summary(problems), SkippedInputWarning, stacklevel=_user_level())


def _check_read(traces: int, problems: List[str], strict: bool, empty_ok: bool = False) -> None:
    """What the CLI decides after reading: nothing readable is exit 4 (an
    :class:`InputError` when something could not be read, else
    :class:`NothingToReportError`), skipped lines exit 3 (a warning, or
    :class:`SkippedInputError` under ``strict``)."""
    # An input without an attempt (an empty file) is a problem the readers
    # count; when every problem is one, nothing is unreadable: there is just
    # nothing to report, as the CLI says.
    unreadable = [p for p in problems if ": holds no attempt" not in p]
    if traces == 0 and unreadable and not empty_ok:
        raise InputError(f"nothing readable: {_summary(problems)}", problems)
    if traces == 0 and not empty_ok:
        raise NothingToReportError("no trace in the input: nothing to report")
    _warn(problems, strict)


def _user_level() -> int:
    """The ``stacklevel`` of the first caller outside this package (for
    :func:`_warn`), however many of its functions lie in between."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("mirotrace"):
        level += 1
        frame = frame.f_back
    return level


def _common(policy: Optional[PathLike], input_format: str, threads: Optional[int],
            max_line_bytes: Optional[int], trace_header: Optional[str] = None) -> Dict[str, Any]:
    return {
        "policy": None if policy is None else os.fspath(policy),
        "input_format": input_format,
        "threads": threads,
        "max_line_bytes": max_line_bytes,
        "trace_header": trace_header,
    }


def replay(
    source: Optional[Source] = None,
    *,
    lines: Optional[Iterable[str]] = None,
    policy: Optional[PathLike] = None,
    input_format: str = "auto",
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    trace_header: Optional[str] = None,
    strict: bool = False,
) -> pa.Table:
    """Replays every attempt; returns one verdict row per attempt, in input order.

    ``source`` is a path, a list of paths, or a pyarrow table of trace lines
    (``text`` [, ``file``, ``line``]); ``lines`` is a list of JSONL strings.
    Lines that cannot be read are skipped with a :class:`SkippedInputWarning`
    (:class:`SkippedInputError` with ``strict=True``); nothing readable
    raises :class:`InputError`, no trace at all :class:`NothingToReportError`.
    ``trace_header`` names the request header a recording's calls are
    grouped into traces by (``--trace-header``; default
    ``x-upstream-session-id``).
    """
    data, problems = _native(
        _mirotrace.replay,
        **_source_args(source, lines),
        **_common(policy, input_format, threads, max_line_bytes, trace_header)
    )
    table = pa.ipc.open_stream(data).read_all()
    _check_read(table.num_rows, problems, strict)
    return table


def analyze(
    source: Optional[Source] = None,
    *,
    lines: Optional[Iterable[str]] = None,
    files: Optional[Sequence[str]] = None,
    policy: Optional[PathLike] = None,
    input_format: str = "auto",
    threads: Optional[int] = None,
    max_line_bytes: Optional[int] = None,
    trace_header: Optional[str] = None,
    top: int = _mirotrace.DEFAULT_TOP,
    group_by: Optional[str] = None,
    seed: int = _mirotrace.DEFAULT_SEED,
    iterations: int = _mirotrace.DEFAULT_ITERATIONS,
    strict: bool = False,
) -> Dict[str, Any]:
    """The report of ``mirotrace analyze --format json`` as a dict (the
    report of one :func:`partial` of all of it). Raises as :func:`replay`
    does; never returns a report of no trace."""
    return partial(
        source,
        lines=lines,
        files=files,
        policy=policy,
        input_format=input_format,
        threads=threads,
        max_line_bytes=max_line_bytes,
        trace_header=trace_header,
        top=top,
        group_by=group_by,
        seed=seed,
        iterations=iterations,
        strict=strict,
        _empty_ok=False,
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
        return cls(_native(_mirotrace.Partial.from_bytes, bytes(data)))

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
        return Partial(_native(self._native.merge, other._native))

    __add__ = merge

    def report(self, threads: Optional[int] = None) -> Dict[str, Any]:
        """The finished report as a dict (``analyze --format json``);
        :class:`NothingToReportError` when it holds no trace."""
        return json.loads(self.render("json", threads))

    def render(self, format: str = "table", threads: Optional[int] = None) -> str:
        """The finished report as text: ``table``, ``markdown``, ``json`` or ``html``;
        :class:`NothingToReportError` when it holds no trace."""
        if self.traces == 0:
            raise NothingToReportError("the partial holds no trace: nothing to report")
        return _native(self._native.render, format, threads)

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
    trace_header: Optional[str] = None,
    top: int = _mirotrace.DEFAULT_TOP,
    group_by: Optional[str] = None,
    seed: int = _mirotrace.DEFAULT_SEED,
    iterations: int = _mirotrace.DEFAULT_ITERATIONS,
    strict: bool = False,
    _empty_ok: Optional[bool] = None,
) -> Partial:
    """The partial report of some whole traces (the arguments of :func:`analyze`).

    Raises as :func:`replay` does for paths. A partial of a table (or
    ``lines``) may hold no trace: it is a piece of a larger job (a job
    counting files once makes one of no rows); its report raises.

    For a table or lines, ``files`` lists the inputs to count as opened
    (default: the distinct ``file`` values of the rows); a job that splits
    files into many partials passes ``files=[]`` for each and counts the
    files once, in a partial of no lines.
    """
    args = _source_args(source, lines, files)
    if _empty_ok is None:
        _empty_ok = "table" in args
    native, problems = _native(
        _mirotrace.partial,
        **args,
        **_common(policy, input_format, threads, max_line_bytes, trace_header),
        top=top,
        group_by=group_by,
        seed=seed,
        iterations=iterations,
    )
    _check_read(native.traces, problems, strict, empty_ok=_empty_ok)
    return Partial(native)


def merge(partials: Iterable[Union[Partial, bytes]]) -> Partial:
    """All the partials added up; ``ValueError`` if there are none or they
    were made differently."""
    merged: Optional[Partial] = None
    for p in partials:
        part = p if isinstance(p, Partial) else Partial.from_bytes(p)
        merged = part if merged is None else merged.merge(part)
    if merged is None:
        raise UsageError("no partial reports to merge")
    return merged
