"""Shared helpers: the repository's fixtures and the mirotrace CLI built
beside this package (``MIROTRACE_BIN``, else ``target/debug/mirotrace``),
whose output the package's results are compared with."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def cli_path() -> Path:
    given = os.environ.get("MIROTRACE_BIN")
    candidates = [Path(given)] if given else [
        REPO / "target" / "debug" / "mirotrace",
        REPO / "target" / "release" / "mirotrace",
    ]
    for c in candidates:
        if c.is_file():
            return c
    raise RuntimeError(
        "the mirotrace CLI is needed to compare with: build it with "
        "`cargo build --features parquet` or set MIROTRACE_BIN"
    )


def run_cli(*args: str, ok_codes=(0,)) -> subprocess.CompletedProcess:
    done = subprocess.run([str(cli_path()), *args], capture_output=True)
    assert done.returncode in ok_codes, done.stderr.decode(errors="replace")
    return done


def cli_jsonl(*inputs: str) -> List[str]:
    out = run_cli("replay", *inputs, "--format", "jsonl", "-q", ok_codes=(0, 3)).stdout
    return out.decode().splitlines()


def cli_report(*args: str) -> dict:
    out = run_cli("analyze", *args, "--format", "json", "-q", ok_codes=(0, 3)).stdout
    return json.loads(out)


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
