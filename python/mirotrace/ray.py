"""Running mirotrace on Ray Data: replay traces across a cluster, one
partial report per piece of work, merged into the report that
``mirotrace analyze`` gives on the same inputs.

The recipe, step by step (docs/python.md, "Distributed: Ray Data"):

1. :func:`plan` expands the paths as the CLI does (the engine's own folder
   walk, through the binding) and asks the engine how it reads each input:
   *line by line* (JSONL of trace lines, plain, ``.gz`` or ``.zst``) or
   *whole* (a task log or any JSON document, an ``.eval`` archive, a Claude
   Code session, OTLP spans, an OpenHands ``events/`` folder, an empty or
   unreadable input).
2. Whole inputs are mapped one per task straight into a partial report
   (:func:`mirotrace.partial` of the path): no shuffle, a whole input is
   already whole traces.
3. Line inputs are cut into rows of ``file``, ``line`` (1-based, numbered
   as the CLI numbers them) and ``text``, with a ``trace`` key: which trace
   the library's reader puts the line in, reading the input once on the
   worker that cuts it (a line in no trace stands alone); the rows are grouped by
   ``(file, trace)``, each group sorted by line and made into a partial
   (the group of an input's first line counts it as opened). A compressed
   input whose stream ends early is one row, read whole by the library
   (the CLI reads it up to the cut and says so).
4. The partials of each block are merged on the workers, the rest on the
   driver.

:func:`replay` runs the same plan into a dataset of verdict rows, the
columns of ``mirotrace replay --format parquet`` (write it with
``write_parquet``).

Paths with a scheme (``s3://…``) are not the CLI's: Ray reads them and
they are cut into lines as JSONL (plain, gzip or zstd).

Ray is imported only when these functions are called.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import pyarrow as pa

import mirotrace
from mirotrace import _mirotrace

__all__ = ["Plan", "plan", "read_lines", "partials", "analyze", "replay"]

#: Options of :func:`mirotrace.partial` that :func:`analyze` passes on.
PARTIAL_OPTIONS = (
    "policy",
    "input_format",
    "max_line_bytes",
    "trace_header",
    "top",
    "group_by",
    "seed",
    "iterations",
)
#: Options of :func:`replay`.
REPLAY_OPTIONS = ("policy", "input_format", "max_line_bytes", "trace_header")

Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]


class Plan(NamedTuple):
    """How a run is spread: each list in input order."""

    #: (ordinal, label, path) of inputs read line by line: cut and grouped
    #: by trace. The ordinal is the input's place in the CLI's order.
    lines: List[Tuple[int, str, str]]
    #: (ordinal, label, path) of inputs read whole: one task each.
    whole: List[Tuple[int, str, str]]
    #: Paths with a scheme, read by Ray as JSONL.
    remote: List[str]
    #: The inputs that cannot be opened (a missing path, a folder without
    #: trace files), as the CLI reports them.
    problems: List[str]


def _listed(paths: Paths) -> List[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def plan(paths: Paths, input_format: str = "auto", max_line_bytes: Optional[int] = None) -> Plan:
    """The inputs ``paths`` expand to, as ``mirotrace analyze`` expands
    them, split by how the engine reads each (see the module's notes)."""
    listed = _listed(paths)
    remote = [p for p in listed if "://" in p]
    local = [p for p in listed if "://" not in p]
    inputs, problems = ([], []) if not local else mirotrace._native(
        _mirotrace.inputs, local, input_format=input_format, max_line_bytes=max_line_bytes
    )
    listed_inputs = [(i, label, os.fspath(path), by) for i, (label, path, by) in enumerate(inputs)]
    lines = [(i, label, path) for i, label, path, by_lines in listed_inputs if by_lines]
    whole = [(i, label, path) for i, label, path, by_lines in listed_inputs if not by_lines]
    return Plan(lines, whole, remote, list(problems))


#: What Rust's ``is_ascii_whitespace`` (the CLI's blank-line test) strips.
_ASCII_WHITESPACE = b" \t\n\x0c\r"
_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"


def _decompressed(data: bytes) -> bytes:
    """By magic bytes, as the CLI decides (a name can lie; Ray may have
    decompressed it already)."""
    if data[:2] == _GZIP:
        return gzip.decompress(data)
    if data[:4] == _ZSTD:
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            return stream.read()
    return data


#: The trace key of the one row standing for an input read whole after all
#: (its ``text`` is the path): a compressed stream that ends early is read
#: by the CLI up to the cut and reported there; the library does it here.
_WHOLE = "whole:"


def _split(
    file: str, ordinal: int, data: bytes, read: Dict[str, Any], path: Optional[str] = None
) -> List[Dict[str, Any]]:
    """One input's bytes → one row per line, numbered as the CLI numbers
    them, keyed by the trace the library's reader puts the line in (a line
    in no trace stands alone); the first row counts the input as opened."""
    try:
        data = _decompressed(data)
    except Exception:
        if path is None:
            raise
        return [
            {"file": file, "ordinal": ordinal, "line": 0, "text": path, "first": True, "trace": _WHOLE}
        ]
    out = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip(_ASCII_WHITESPACE):
            continue  # blank: the CLI skips it too
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text: Optional[str] = raw.rstrip(b"\r").decode("utf-8")
        except UnicodeDecodeError:
            text = None  # read back as a skipped line, as the CLI reads it
        out.append({"file": file, "ordinal": ordinal, "line": number, "text": text, "first": not out})
    if out:
        table = mirotrace._table_bytes(
            pa.table(
                {
                    "text": pa.array([r["text"] for r in out], pa.string()),
                    "line": pa.array([r["line"] for r in out], pa.int64()),
                }
            )
        )
        traces = mirotrace._native(_mirotrace.trace_ordinals, table, **read)
        for row, trace in zip(out, traces):
            row["trace"] = f"line:{row['line']}" if trace is None else f"trace:{trace}"
    return out


#: The columns of the line rows.
LINE_SCHEMA = pa.schema(
    [
        ("file", pa.string()),
        ("ordinal", pa.int64()),
        ("line", pa.int64()),
        ("text", pa.string()),
        ("first", pa.bool_()),
        ("trace", pa.string()),
    ]
)


def _rows(rows: List[Dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=LINE_SCHEMA)


def _split_local(batch: pa.Table, read: Dict[str, Any]) -> pa.Table:
    rows = []
    for item in batch.to_pylist():
        with open(item["path"], "rb") as f:
            rows += _split(item["file"], item["ordinal"], f.read(), read, item["path"])
    return _rows(rows)


def _split_remote(batch: pa.Table, ordinal: int, read: Dict[str, Any]) -> pa.Table:
    rows = []
    for item in batch.to_pylist():
        rows += _split(item["path"], ordinal, item["bytes"], read)
    return _rows(rows)


def _by_trace(lines):
    """The line rows grouped by ``(file, trace)``, in two partitions per CPU
    of the cluster (Ray's default, 200, makes 200 reduce tasks of any job)."""
    import ray

    cpus = int(ray.cluster_resources().get("CPU", 1))
    return lines.groupby(["file", "trace"], num_partitions=max(2, 2 * cpus))


def _read_options(options: Dict[str, Any]) -> Dict[str, Any]:
    return {k: options[k] for k in ("input_format", "max_line_bytes") if k in options}


def _lines(p: Plan, read: Dict[str, Any], **read_args: Any):
    """The dataset of line rows (``None`` when no input is read by line)."""
    import ray

    datasets = []
    if p.lines:
        items = [{"file": f, "path": path, "ordinal": i} for i, f, path in p.lines]
        datasets.append(
            ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
                _split_local, fn_args=(read,), batch_size=1, batch_format="pyarrow"
            )
        )
    if p.remote:
        files = ray.data.read_binary_files(p.remote, include_paths=True, **read_args)
        # After every local input: their problems are listed after them.
        ordinal = len(p.lines) + len(p.whole)
        datasets.append(
            files.map_batches(
                _split_remote, fn_args=(ordinal, read), batch_size=1, batch_format="pyarrow"
            )
        )
    if not datasets:
        return None
    return datasets[0] if len(datasets) == 1 else datasets[0].union(*datasets[1:])


def read_lines(paths: Paths, **read_args: Any):
    """A dataset of the trace lines (``file``, ``ordinal``: the input's
    place in the run, ``line``, ``text``, ``trace``, ``first``: the input's
    first line) of the inputs that are read line by line."""
    return _lines(plan(paths), {}, **read_args)


def _problem_rows(ordinal: int, line: int, problems: Sequence[str]) -> str:
    """Problems as JSON text, with where they sort: (input, first line, order)."""
    return json.dumps([[ordinal, line, i, m] for i, m in enumerate(problems)])


def _partial_row(part: "mirotrace.Partial", problems: str) -> pa.Table:
    return pa.table(
        {
            "partial": pa.array([part.to_bytes()], pa.binary()),
            "problems": pa.array([problems], pa.string()),
        }
    )


def _group_partial(group: pa.Table, options: Dict[str, Any]) -> pa.Table:
    group = group.sort_by([("line", "ascending")])
    first = group.column("line")[0].as_py()
    ordinal = group.column("ordinal")[0].as_py()
    if group.column("trace")[0].as_py() == _WHOLE:
        part = _whole_partial({"path": group.column("text")[0].as_py(), "ordinal": ordinal}, options)
        return _partial_row(mirotrace.Partial.from_bytes(part["partial"]), part["problems"])
    # The input is counted as opened once: by the group of its first line.
    files = group.column("file")[0].as_py()
    opened = [files] if any(group.column("first").to_pylist()) else []
    table = mirotrace._table_bytes(group.select(["text", "file", "line"]))
    native, problems = mirotrace._native(
        _mirotrace.partial, table=table, files=opened, threads=1, **options
    )
    return _partial_row(mirotrace.Partial(native), _problem_rows(ordinal, first, problems))


def _whole_partial(row: Dict[str, Any], options: Dict[str, Any]) -> Dict[str, Any]:
    native, problems = mirotrace._native(
        _mirotrace.partial, paths=[row["path"]], threads=1, **options
    )
    return {
        "partial": native.to_bytes(),
        "problems": _problem_rows(row["ordinal"], 0, problems),
    }


def _merge_block(block: pa.Table) -> pa.Table:
    parts = block.column("partial").to_pylist()
    if not parts:
        return block
    merged = mirotrace.merge(mirotrace.Partial.from_bytes(b) for b in parts)
    problems = [p for text in block.column("problems").to_pylist() for p in json.loads(text)]
    return _partial_row(merged, json.dumps(problems))


def _whole_items(p: Plan) -> List[Dict[str, Any]]:
    return [{"file": f, "path": path, "ordinal": i} for i, f, path in p.whole]


def _spread(p: Plan, options: Dict[str, Any]):
    """The dataset of merged partials and their problems."""
    import ray

    lines = _lines(p, _read_options(options))
    datasets = []
    if lines is not None:
        datasets.append(
            _by_trace(lines).map_groups(
                _group_partial, fn_args=(options,), batch_format="pyarrow"
            )
        )
    if p.whole:
        # One input per task: a whole input is whole traces already.
        whole = ray.data.from_items(_whole_items(p), override_num_blocks=len(p.whole))
        datasets.append(whole.map(_whole_partial, fn_args=(options,)))
    if not datasets:
        return None
    parts = datasets[0] if len(datasets) == 1 else datasets[0].union(*datasets[1:])
    return parts.map_batches(_merge_block, batch_format="pyarrow", batch_size=None)


def partials(paths: Paths, **options: Any):
    """One merged partial report per block of work: a dataset of
    ``partial`` bytes and ``problems`` (JSON text: ``[input, line, order,
    message]`` each, where they sort)."""
    _check_options(options, PARTIAL_OPTIONS)
    p = plan(paths, options.get("input_format", "auto"), options.get("max_line_bytes"))
    return _spread(p, options)


def _check_options(options: Dict[str, Any], known: Sequence[str]) -> None:
    """Refuses options the functions do not take; a policy path as text."""
    unknown = set(options) - set(known)
    if unknown:
        raise TypeError(f"unknown options: {', '.join(sorted(unknown))}")
    if options.get("policy") is not None:
        options["policy"] = os.fspath(options["policy"])


def analyze(paths: Paths, strict: bool = False, **options: Any) -> "mirotrace.Partial":
    """The merged partial report of ``paths`` (files and folders, every
    input the CLI reads) replayed on Ray Data; ``.report()`` gives the dict
    of ``analyze --format json`` of the same paths.

    Options are those of :func:`mirotrace.partial` (``policy``,
    ``input_format``, ``max_line_bytes``, ``trace_header``, ``top``, ``group_by``, ``seed``,
    ``iterations``). Skipped lines and inputs warn
    (:class:`mirotrace.SkippedInputWarning`) or, with ``strict=True``,
    raise :class:`mirotrace.SkippedInputError`, their messages in input
    order; nothing readable raises as :func:`mirotrace.analyze` does.
    """
    _check_options(options, PARTIAL_OPTIONS)
    p = plan(paths, options.get("input_format", "auto"), options.get("max_line_bytes"))
    parts = _spread(p, options)
    rows = [] if parts is None else parts.take_all()
    # Nothing to count or replay (every path missing) is still a partial.
    nothing, _ = mirotrace._native(
        _mirotrace.partial, table=mirotrace._table_bytes(mirotrace.lines_table([])),
        files=[], **options
    )
    merged = mirotrace.merge(
        [mirotrace.Partial(nothing), *(mirotrace.Partial.from_bytes(r["partial"]) for r in rows)]
    )
    found = sorted(
        (tuple(x) for r in rows for x in json.loads(r["problems"])), key=lambda x: x[:3]
    )
    problems = p.problems + [m for *_, m in found]
    mirotrace._check_read(merged.traces, problems, strict)
    return merged


def _verdicts(data: bytes, problems: Sequence[str], strict: bool) -> pa.Table:
    if problems:
        if strict:
            raise mirotrace.SkippedInputError(mirotrace._summary(list(problems)), list(problems))
        warnings.warn(mirotrace._summary(list(problems)), mirotrace.SkippedInputWarning)
    return pa.ipc.open_stream(data).read_all()


def _group_verdicts(group: pa.Table, options: Dict[str, Any], strict: bool) -> pa.Table:
    group = group.sort_by([("line", "ascending")])
    if group.column("trace")[0].as_py() == _WHOLE:
        return _whole_verdicts(pa.table({"path": group.column("text")}), options, strict)
    table = mirotrace._table_bytes(group.select(["text", "file", "line"]))
    data, problems = mirotrace._native(_mirotrace.replay, table=table, threads=1, **options)
    return _verdicts(data, problems, strict)


def _whole_verdicts(batch: pa.Table, options: Dict[str, Any], strict: bool) -> pa.Table:
    tables = []
    for path in batch.column("path").to_pylist():
        data, problems = mirotrace._native(_mirotrace.replay, paths=[path], threads=1, **options)
        tables.append(_verdicts(data, problems, strict))
    return pa.concat_tables(tables)


def replay(paths: Paths, strict: bool = False, **options: Any):
    """A Ray dataset of verdict rows, one per attempt, with the columns of
    ``mirotrace replay --format parquet`` (``.write_parquet(dir)`` writes
    them as the CLI's Parquet; rows in no particular order). Options:
    ``policy``, ``input_format``, ``max_line_bytes``, ``trace_header``. Skipped lines warn on
    the workers, or fail the job with ``strict=True``; inputs that cannot
    be opened warn (raise) on the driver."""
    import ray

    _check_options(options, REPLAY_OPTIONS)
    p = plan(paths, options.get("input_format", "auto"), options.get("max_line_bytes"))
    mirotrace._warn(p.problems, strict)
    lines = _lines(p, _read_options(options))
    datasets = []
    if lines is not None:
        datasets.append(
            _by_trace(lines).map_groups(
                _group_verdicts, fn_args=(options, strict), batch_format="pyarrow"
            )
        )
    if p.whole:
        whole = ray.data.from_items(_whole_items(p), override_num_blocks=len(p.whole))
        datasets.append(
            whole.map_batches(
                _whole_verdicts, fn_args=(options, strict), batch_format="pyarrow", batch_size=1
            )
        )
    if not datasets:
        raise mirotrace.InputError(
            f"nothing readable: {mirotrace._summary(p.problems)}", p.problems
        )
    return datasets[0] if len(datasets) == 1 else datasets[0].union(*datasets[1:])
