"""Running mirotrace on Ray Data: replay traces across a cluster, one
partial report per group of traces, merged into the report that
``mirotrace analyze`` gives on the same files.

The recipe, step by step (docs/python.md, "Ray Data"):

1. :func:`read_lines` reads JSONL files (plain or ``.gz``) into rows of
   ``file``, ``line`` (1-based) and ``text``, and a ``trace`` key: the
   line's ``trace_id`` (lines without one stand alone).
2. :func:`partials` groups the rows by ``(file, trace)``, sorts each group
   by line number (a trace must stay whole and in order), replays it with
   :func:`mirotrace.partial` and keeps the serialized partial report; the
   partials of each block are merged on the workers.
3. :func:`analyze` merges what is left on the driver and returns a
   :class:`mirotrace.Partial`; ``.report()`` is the dict of
   ``analyze --format json``.

Ray is imported only when these functions are called.
"""

from __future__ import annotations

import gzip
import json
from typing import Any, Dict, List, Optional, Sequence, Union

import pyarrow as pa

import mirotrace

__all__ = ["read_lines", "partials", "analyze"]

#: Options of :func:`mirotrace.partial` that :func:`analyze` passes on.
PARTIAL_OPTIONS = ("policy", "input_format", "top", "group_by", "seed", "iterations")


def _trace_key(text: Optional[str], file: str, line: int) -> str:
    """The group of a line: its ``trace_id``, else the line alone."""
    if text is not None:
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("trace_id"), str):
            return "id:" + record["trace_id"]
    return f"line:{line}"


#: What Rust's ``is_ascii_whitespace`` (the CLI's blank-line test) strips.
_ASCII_WHITESPACE = b" \t\n\x0c\r"


def _split_file(row: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One file's bytes → one row per line, numbered as the CLI numbers them."""
    path = row["path"]
    data = row["bytes"]
    # By magic bytes, as the CLI decides: Ray may have decompressed it already.
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
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
        out.append(
            {
                "file": path,
                "line": number,
                "text": text,
                "trace": _trace_key(text, path, number),
            }
        )
    return out


def read_lines(paths: Union[str, Sequence[str]], **read_args: Any):
    """A dataset of trace lines (``file``, ``line``, ``text``, ``trace``)
    from JSONL files or folders; ``file`` is the path as Ray lists it."""
    return _read(paths, **read_args)[0]


def _read(paths: Union[str, Sequence[str]], **read_args: Any):
    """(lines, the files read, as their ``file`` labels)."""
    import ray

    files = ray.data.read_binary_files(paths, include_paths=True, **read_args)
    return files.flat_map(_split_file), list(files.input_files())


def _group_partial(group: pa.Table, options: Dict[str, Any]) -> pa.Table:
    group = group.sort_by([("file", "ascending"), ("line", "ascending")])
    # Files are counted once, on the driver: not per trace.
    part = mirotrace.partial(group.select(["text", "file", "line"]), files=[], **options)
    return pa.table({"partial": pa.array([part.to_bytes()], pa.binary())})


def _merge_block(block: pa.Table) -> pa.Table:
    parts = block.column("partial").to_pylist()
    if not parts:
        return pa.table({"partial": pa.array([], pa.binary())})
    merged = mirotrace.merge(mirotrace.Partial.from_bytes(b) for b in parts)
    return pa.table({"partial": pa.array([merged.to_bytes()], pa.binary())})


def partials(lines, **options: Any):
    """One merged partial report per block of traces (a dataset of ``partial`` bytes)."""
    per_trace = lines.groupby(["file", "trace"]).map_groups(
        _group_partial, fn_args=(options,), batch_format="pyarrow"
    )
    return per_trace.map_batches(_merge_block, batch_format="pyarrow", batch_size=None)


def analyze(paths: Union[str, Sequence[str]], **options: Any) -> "mirotrace.Partial":
    """The merged partial report of JSONL files (plain or ``.gz``) replayed
    on Ray Data; ``.report()`` gives the dict of ``analyze --format json``.

    Options are those of :func:`mirotrace.partial` (``policy``,
    ``input_format``, ``top``, ``group_by``, ``seed``, ``iterations``).
    """
    unknown = set(options) - set(PARTIAL_OPTIONS)
    if unknown:
        raise TypeError(f"unknown options: {', '.join(sorted(unknown))}")
    lines, files = _read(paths)
    rows = partials(lines, **options).take_all()
    # The inputs opened, counted once (empty files included, as the CLI counts them).
    opened = mirotrace.partial(lines=[], files=files, **options)
    return mirotrace.merge([opened, *(mirotrace.Partial.from_bytes(r["partial"]) for r in rows)])
