"""SIGINT and SIGTERM end `mirotrace record` promptly with idle keep-alive connections
open, exit 0, and leave the recording whole: every line parses, one per call made.
A call in flight when the signal comes is finished first, and no new connection is
accepted meanwhile. The waits are generous bounds (20 s), not timings."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
import uuid

import anthropic
import httpx2
import openai
import pytest

from harness import ANTHROPIC_KEY, OPENAI_KEY, Proxy, assert_no_secrets, check_line, header

SESSION = "x-upstream-session-id"
CHAT = "/v1/chat/completions"
BODY = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}


def host_port(proxy: Proxy) -> tuple[str, int]:
    host, port = proxy.url.removeprefix("http://").split(":")
    return host, int(port)


def keepalive_socket(proxy: Proxy, session: str) -> socket.socket:
    """A raw connection that made one call and stays open, idle."""
    host, port = host_port(proxy)
    s = socket.create_connection((host, port), timeout=20)
    body = b'{"model": "gpt-test", "messages": []}'
    s.sendall(
        (
            f"POST {CHAT} HTTP/1.1\r\nhost: {host}:{port}\r\nauthorization: Bearer {OPENAI_KEY}\r\n"
            f"content-type: application/json\r\n{SESSION}: {session}\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    head = b""
    while b"\r\n\r\n" not in head:
        data = s.recv(65536)
        assert data, "the proxy closed the connection before answering"
        head += data
    head, _, rest = head.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    lengths = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    while (len(rest) < lengths[0]) if lengths else not rest.endswith(b"0\r\n\r\n"):
        data = s.recv(65536)
        assert data, "the proxy closed the connection mid-response"
        rest += data
    return s


def check_whole(proxy: Proxy, calls: int) -> list[dict]:
    data = proxy.recording.read_bytes()
    assert data.endswith(b"\n"), "the recording ends in a partial line"
    lines = [json.loads(line) for line in data.decode("utf-8").split("\n")[:-1]]
    assert len(lines) == calls, f"{len(lines)} lines for {calls} calls"
    for c in lines:
        check_line(c)
    assert sorted(c["call"] for c in lines) == list(range(1, calls + 1))
    assert_no_secrets(proxy.recording)
    return lines


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_with_idle_keepalive_connections(upstream, tmp_path, sig):
    p = Proxy(upstream.url, tmp_path / "rec.jsonl")  # not -q: stderr is a pipe here
    session = f"task-3-{uuid.uuid4()}"
    made = 0
    try:
        # An httpx client that keeps its pool, as MiroThinker keeps its SDK client.
        http = httpx2.Client(timeout=30, headers={"authorization": f"Bearer {OPENAI_KEY}", SESSION: session})
        for _ in range(3):
            assert http.post(p.url + CHAT, json=BODY).status_code == 200
            made += 1
        with http.stream("POST", p.url + CHAT, json={**BODY, "stream": True}) as r:
            assert r.status_code == 200
            r.read()
        made += 1
        oc = openai.OpenAI(
            api_key=OPENAI_KEY,
            base_url=p.url + "/v1",
            http_client=openai.DefaultHttpxClient(headers={SESSION: session}),
            max_retries=0,
        )
        oc.chat.completions.create(**BODY)
        made += 1
        ac = anthropic.Anthropic(
            api_key=ANTHROPIC_KEY,
            base_url=p.url,
            http_client=anthropic.DefaultHttpxClient(headers={SESSION: session}),
            max_retries=0,
        )
        with ac.messages.stream(model="claude-test", max_tokens=32, messages=BODY["messages"]) as s:
            s.get_final_message()
        made += 1
        raw = keepalive_socket(p, session)
        made += 1
        host, port = host_port(p)
        silent = socket.create_connection((host, port), timeout=20)  # connected, never sends a byte

        t0 = time.monotonic()
        rc = p.stop(sig, timeout=20)
        elapsed = time.monotonic() - t0
        print(f"{signal.Signals(sig).name}: exit {rc} after {elapsed:.2f} s with idle connections open")
        assert rc == 0, p.stderr()
        lines = check_whole(p, made)
        assert all(header(c["request"], SESSION) == session for c in lines)
        assert all(c["error"] is None for c in lines)
        # The idle connections were closed, not left to the client.
        for s in (raw, silent):
            s.settimeout(10)
            try:
                assert s.recv(1) == b""
            except ConnectionResetError:
                pass
            s.close()
        http.close()
        oc.close()
        ac.close()
    finally:
        p.kill()


def test_sigterm_finishes_the_call_in_flight(upstream, tmp_path):
    p = Proxy(upstream.url, tmp_path / "rec.jsonl", "-q")
    session = f"task-4-{uuid.uuid4()}"
    gate = f"gate-{session}"
    got = bytearray()
    outcome: dict[str, object] = {}

    def call():
        try:
            with httpx2.Client(timeout=60) as http:
                with http.stream(
                    "POST",
                    p.url + CHAT,
                    headers={
                        SESSION: session,
                        "x-fake-upstream": f"gate;name={gate}",
                        "authorization": f"Bearer {OPENAI_KEY}",
                    },
                    json={**BODY, "stream": True},
                ) as r:
                    outcome["status"] = r.status_code
                    for chunk in r.iter_raw():
                        got.extend(chunk)
            outcome["done"] = True
        except BaseException as e:  # noqa: BLE001
            outcome["error"] = e

    try:
        t = threading.Thread(target=call)
        t.start()
        deadline = time.monotonic() + 20
        while not any(ex.note == "gated" for ex in upstream.find(SESSION, session)):
            assert time.monotonic() < deadline, "the streamed call never reached the upstream"
            time.sleep(0.02)
        [ex] = upstream.find(SESSION, session)

        p.proc.send_signal(signal.SIGTERM)
        # It stops accepting: a new connection is refused while the call is still in flight.
        host, port = host_port(p)
        refused = False
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection((host, port), timeout=2).close()
            except (ConnectionRefusedError, OSError):
                refused = True
                break
            time.sleep(0.05)
        assert refused, "new connections are still accepted after SIGTERM"
        assert p.proc.poll() is None, "the proxy exited with a call in flight"
        assert ex.note == "gated"

        upstream.gate(gate).set()
        t.join(30)
        assert outcome.get("done"), outcome
        assert outcome["status"] == 200
        assert bytes(got) == bytes(ex.sent) and ex.finished
        assert p.proc.wait(20) == 0
        [c] = check_whole(p, 1)
        assert c["error"] is None
        assert c["response"]["body_text"] == bytes(ex.sent).decode()
    finally:
        upstream.gate(gate).set()
        p.kill()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_second_signal_ends_at_once_with_whole_lines(upstream, tmp_path, sig):
    """A second signal while a call hangs in flight ends the proxy at once (128 + the
    signal's number, docs/record.md): the calls finished before are there, every line
    whole; the call in flight is not."""
    p = Proxy(upstream.url, tmp_path / "rec.jsonl", "-q")
    session = f"task-5-{uuid.uuid4()}"
    gate = f"gate-{session}"
    try:
        with httpx2.Client(timeout=30, headers={SESSION: session}) as http:
            for _ in range(3):
                assert http.post(p.url + CHAT, json=BODY).status_code == 200
        # Lines are written by a thread of their own once a call ends: these three are
        # on disk before the signals (a call whose line is not written yet is in flight).
        p.calls_of(session, count=3)

        def hang():
            try:
                with httpx2.Client(timeout=30) as http:
                    with http.stream(
                        "POST",
                        p.url + CHAT,
                        headers={SESSION: session, "x-fake-upstream": f"gate;name={gate}"},
                        json={**BODY, "stream": True},
                    ) as r:
                        for _ in r.iter_raw():
                            pass
            except httpx2.HTTPError:
                pass

        t = threading.Thread(target=hang, daemon=True)
        t.start()
        deadline = time.monotonic() + 20
        while not any(ex.note == "gated" for ex in upstream.find(SESSION, session)):
            assert time.monotonic() < deadline, "the streamed call never reached the upstream"
            time.sleep(0.02)
        p.proc.send_signal(sig)
        time.sleep(0.3)
        assert p.proc.poll() is None, "the first signal ended the proxy with a call in flight"
        rc = p.stop(sig, timeout=20)
        assert rc == 128 + sig, rc
        check_whole(p, 3)
    finally:
        upstream.gate(gate).set()
        p.kill()
