"""Verdict rows → the JSONL lines of ``mirotrace replay`` (Python's own json)."""

from __future__ import annotations

import json
from typing import Iterator

import pyarrow as pa


def _dumps(value) -> str:
    return json.dumps(value)


def jsonl_lines(table: pa.Table) -> Iterator[str]:
    """Each row as the JSONL verdict line: JSON-text columns pasted verbatim."""
    for row in table.to_pylist():
        calls = ", ".join(
            "{"
            + f'"server_name": {_dumps(c["server_name"])}, "tool_name": {_dumps(c["tool_name"])}, '
            + f'"arguments": {c["arguments"]}, "id": {c["id"] if c["id"] is not None else "null"}, '
            + f'"json": {_dumps(c["json"])}, "repairs": {_dumps(c["repairs"])}'
            + (f', "fixes": {_dumps(c["fixes"])}' if c.get("fixes") is not None else "")
            + "}"
            for c in row["calls"]
        )
        line = (
            f'{{"trace_id": {_dumps(row["trace_id"])}, "session": {_dumps(row["session"])}, '
            f'"index": {row["index"]}, "outcome": {_dumps(row["outcome"])}, '
            f'"reason": {_dumps(row["reason"])}, "turn": {_dumps(row["turn"])}, '
            f'"consecutive_rollbacks": {_dumps(row["consecutive_rollbacks"])}, '
            f'"flags": {_dumps(row["flags"])}, "calls": [{calls}], "executed": {row["executed"]}, '
            f'"source": {_dumps(row["source"])}'
        )
        if row["error"] is not None:
            line += f', "error": {_dumps(row["error"])}'
        if row.get("why") is not None:
            line += f', "why": {row["why"]}'
        if row["logged"] is not None:
            line += f', "logged": {row["logged"]}'
        yield line + "}"
