"""The pieces of the `mirotrace record` tests: the proxy as a child process, the
recording it writes and what the format contract says of every line, and a tee
transport that keeps the exact bytes the SDKs send and receive.

The binary is $MIROTRACE_BIN, else target/debug/mirotrace of this checkout
(scripts/test-record.sh builds it). It is never skipped: no binary is a failure.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx2
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from upstream import Exchange  # noqa: E402

REPO = HERE.parents[1]
BIN = os.environ.get("MIROTRACE_BIN") or str(REPO / "target" / "debug" / "mirotrace")

# Keys as a real client holds them: each must never reach a recording.
OPENAI_KEY = "sk-test-SECRET-" + "0f3a9c" * 6
ANTHROPIC_KEY = "sk-ant-test-SECRET-" + "77b1e2" * 6
SECRETS = [OPENAI_KEY, ANTHROPIC_KEY, "SECRET", "Bearer", "fakecookie"]

ERROR_KINDS = {"connect", "timeout", "upstream", "client_disconnected", "request_body"}
STARTED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
LISTENING = re.compile(r"listening on (http://\S+)")


# ---------------------------------------------------------------- the proxy


class Proxy:
    """`mirotrace record` as a child process; its stderr is drained by a thread."""

    def __init__(self, upstream_url: str, recording: Path, *args: str, start_timeout: float = 30):
        if not os.access(BIN, os.X_OK):
            pytest.fail(f"no mirotrace binary at {BIN} (build it, or set MIROTRACE_BIN)")
        self.recording = Path(recording)
        self.cmd = [BIN, "record", "--upstream", upstream_url, "--listen", "127.0.0.1:0", "-o", str(recording), *args]
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        self.stderr_lines: list[str] = []
        self._listening = threading.Event()
        self.url = ""
        threading.Thread(target=self._drain, args=(self.proc.stderr, True), daemon=True).start()
        self.stdout_lines: list[str] = []
        threading.Thread(target=self._drain, args=(self.proc.stdout, False), daemon=True).start()
        deadline = time.monotonic() + start_timeout
        while not self._listening.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                time.sleep(0.1)
                self.kill()
                pytest.fail(f"the proxy did not say 'listening on' ({' '.join(self.cmd)}):\n{self.stderr()}")

    def _drain(self, pipe, is_err: bool) -> None:
        for raw in iter(pipe.readline, b""):
            line = raw.decode("utf-8", "replace")
            (self.stderr_lines if is_err else self.stdout_lines).append(line)
            if is_err and not self.url:
                m = LISTENING.search(line)
                if m:
                    self.url = m.group(1).rstrip("/")
                    self._listening.set()

    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    # -- the recording

    def raw_lines(self) -> list[str]:
        """The complete lines written so far (a line still being written is left out)."""
        try:
            text = self.recording.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return []
        return text.split("\n")[:-1]

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.raw_lines()]

    def wait_lines(self, pred, count: int = 1, timeout: float = 20) -> list[dict]:
        """The recorded calls matching `pred`, once there are `count` of them."""
        deadline = time.monotonic() + timeout
        while True:
            found = [c for c in self.lines() if pred(c)]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                pytest.fail(
                    f"{len(found)} of {count} expected recorded calls after {timeout} s; stderr:\n{self.stderr()}"
                )
            time.sleep(0.05)

    def calls_of(self, session: str, count: int = 1, timeout: float = 20) -> list[dict]:
        return self.wait_lines(lambda c: header(c["request"], "x-upstream-session-id") == session, count, timeout)

    # -- the process

    def status(self) -> dict[str, str]:
        out = {}
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k] = v.strip()
        return out

    def peak_rss_bytes(self) -> int:
        return int(self.status()["VmHWM"].split()[0]) * 1024

    def stop(self, sig=signal.SIGTERM, timeout: float = 20) -> int:
        """Sends `sig` and waits `timeout` seconds at most for the exit; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(
                f"the proxy did not exit within {timeout} s of {signal.Signals(sig).name}; stderr:\n{self.stderr()}"
            )

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def header(part: dict, name: str):
    return (part.get("headers") or {}).get(name)


# ---------------------------------------------------------------- checks


def check_line(c: dict) -> None:
    """What the format contract (docs/record.md) says of every line."""
    assert c["mirotrace_recording"] == 1
    assert isinstance(c["call"], int) and c["call"] >= 1
    assert STARTED.match(c["started"]), c["started"]
    assert isinstance(c["seconds"], (int, float)) and c["seconds"] >= 0
    if "first_byte_seconds" in c:
        assert 0 <= c["first_byte_seconds"] <= c["seconds"] + 1e-6
    assert "@" not in c["upstream"]
    req = c["request"]
    assert req["method"] in {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}
    assert req["path"].startswith("/")
    for part in [req] + ([c["response"]] if c.get("response") is not None else []):
        check_part(part)
    if c.get("response") is not None:
        assert isinstance(c["response"]["status"], int)
    err = c["error"]
    assert err is None or (err["kind"] in ERROR_KINDS and isinstance(err["message"], str)), err


CREDENTIAL_NAMES = {
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "x-goog-api-key",
}


def check_part(part: dict) -> None:
    for name, value in part["headers"].items():
        assert name == name.lower(), name
        assert isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)), (
            name,
            value,
        )
        assert name not in CREDENTIAL_NAMES, name
    assert isinstance(part.get("redacted", []), list)
    assert isinstance(part["bytes"], int) and part["bytes"] >= 0
    bodies = [k for k in ("body", "body_text", "body_base64", "omitted") if k in part]
    assert len(bodies) <= 1, bodies
    if part["bytes"] == 0:
        assert bodies == [], bodies  # an absent or empty body has no body field


def assert_no_secrets(path: Path, extra: tuple[str, ...] = ()) -> None:
    data = Path(path).read_bytes()
    for s in SECRETS + list(extra):
        assert s.encode() not in data, f"{s!r} is in the recording {path}"


def assert_body(part: dict, sent: bytes) -> None:
    """The recorded body is the one that passed: JSON as its value, other UTF-8 as text."""
    assert part["bytes"] == len(sent)
    try:
        value = json.loads(sent)
    except ValueError:
        value = None
        try:
            text = sent.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None:
            assert part.get("body_text") == text
        else:
            import base64

            assert base64.b64decode(part["body_base64"]) == sent
        return
    assert "body" in part, sorted(part)
    assert part["body"] == value


# ---------------------------------------------------------------- tee transport


class _Tee(httpx2.SyncByteStream):
    def __init__(self, inner, sink: bytearray):
        self.inner, self.sink = inner, sink

    def __iter__(self):
        for chunk in self.inner:
            self.sink.extend(chunk)
            yield chunk

    def close(self):
        self.inner.close()


class TeeTransport(httpx2.HTTPTransport):
    """The default transport, keeping each request's bytes and the raw (undecoded)
    response bytes exactly as the client read them."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.exchanges: list[tuple[httpx2.Request, httpx2.Response, bytearray]] = []

    def handle_request(self, request):
        response = super().handle_request(request)
        sink = bytearray()
        response.stream = _Tee(response.stream, sink)
        self.exchanges.append((request, response, sink))
        return response


# ---------------------------------------------------------------- one call, both ends

# Framing and connection headers a proxy may set anew; every other header of the
# upstream's response must reach the client unchanged.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "date",
    "server",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
}


def started_at(c: dict) -> float:
    return datetime.strptime(c["started"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def check_passthrough(ex: Exchange, tee_exchange) -> None:
    """The client sent what the upstream received and received what it sent, byte for byte."""
    request, response, got = tee_exchange
    assert ex.finished, ex.note
    assert request.content == ex.body, "the request body changed on its way through the proxy"
    assert response.status_code == ex.status
    for name, value in ex.response_headers.items():
        if name.lower() not in HOP_BY_HOP:
            assert response.headers.get(name) == value, name
    assert len(got) == ex.sent_len
    assert bytes(got) == bytes(ex.sent), "the response body changed on its way through the proxy"


def check_recorded(c: dict, ex: Exchange, *, key_header: str = "authorization", stream: bool = False) -> None:
    """The recorded call is the exchange the upstream saw: request body, response body, status, headers."""
    check_line(c)
    req, resp = c["request"], c["response"]
    assert req["method"] == ex.method
    assert req["path"] == ex.path
    assert req["bytes"] == ex.body_len
    assert_body(req, ex.body)
    assert key_header in req["redacted"], req["redacted"]
    assert header(req, "content-type") == ex.header("content-type")
    assert resp["status"] == ex.status
    assert header(resp, "content-type") == ex.response_headers["content-type"]
    assert resp["bytes"] == ex.sent_len
    if stream:
        assert resp["body_text"] == bytes(ex.sent).decode("utf-8")
    else:
        assert_body(resp, bytes(ex.sent))
    assert c["error"] is None, c["error"]
    assert "first_byte_seconds" in c
