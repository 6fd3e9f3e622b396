"""Fixtures of the `mirotrace record` tests (the pieces are in harness.py)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Proxy, TeeTransport  # noqa: E402
from upstream import Upstream  # noqa: E402


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def upstream():
    up = Upstream()
    yield up
    up.close()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("record")


@pytest.fixture(scope="session")
def proxy(upstream, workdir):
    """One proxy for the tests that need no special option."""
    p = Proxy(upstream.url, workdir / "main.jsonl", "-q")
    yield p
    p.kill()


@pytest.fixture
def session_id() -> str:
    """A session header value as MiroThinker makes it: task id, '-', a uuid4."""
    return f"task-{uuid.uuid4().int % 1000}-{uuid.uuid4()}"


@pytest.fixture
def tee() -> TeeTransport:
    return TeeTransport()
