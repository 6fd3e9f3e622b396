"""Bad input through `mirotrace record`: bodies that are not JSON or are huge, a client
that hangs up mid-stream, an upstream that breaks off, hangs or refuses. Each gives a
clear record, the proxy keeps serving, and its memory stays bounded."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import time
import uuid

import httpx2
import openai
import pytest

from harness import (
    OPENAI_KEY,
    Proxy,
    assert_body,
    assert_no_secrets,
    check_line,
    header,
)

SESSION = "x-upstream-session-id"
MiB = 1024 * 1024
CHAT = "/v1/chat/completions"


def new_session() -> str:
    return f"task-9-{uuid.uuid4()}"


def headers(session: str, **extra: str) -> dict[str, str]:
    return {"authorization": f"Bearer {OPENAI_KEY}", "content-type": "application/json", SESSION: session, **extra}


def one_exchange(upstream, session):
    found = upstream.find(SESSION, session)
    assert len(found) == 1, [(e.path, e.status) for e in found]
    return found[0]


def still_serves(proxy: Proxy) -> None:
    """A plain call after the bad one goes through and is recorded."""
    session = new_session()
    with httpx2.Client(timeout=30) as http:
        r = http.post(
            proxy.url + CHAT,
            headers=headers(session),
            json={"model": "gpt-test", "messages": [{"role": "user", "content": "ok?"}]},
        )
    assert r.status_code == 200, r.text
    [c] = proxy.calls_of(session)
    assert c["error"] is None and c["response"]["status"] == 200


# A proxy may hold up to --max-body bytes of a body to record it; past that its memory
# must not grow with the body. The bound: --max-body plus this much for the process
# (a debug build idles at about 25 MiB) and its transfer buffers.
SLACK = 56 * MiB
DEFAULT_MAX_BODY = 32 * MiB


@pytest.fixture
def lean_proxy(upstream, tmp_path, request):
    """A proxy of its own, so that its peak memory is that of one huge body alone
    (extra arguments by indirect parametrisation)."""
    p = Proxy(upstream.url, tmp_path / "huge.jsonl", "-q", *getattr(request, "param", ()))
    yield p
    p.kill()


# ---------------------------------------------------------------- odd bodies


def test_non_json_request_body(proxy, upstream):
    session = new_session()
    body = b"this is {not json at all \xc3\xbc"
    with httpx2.Client(timeout=30) as http:
        r = http.post(proxy.url + CHAT, headers=headers(session), content=body)
    ex = one_exchange(upstream, session)
    assert ex.body == body
    assert r.status_code == 400 and r.content == bytes(ex.sent)
    [c] = proxy.calls_of(session)
    check_line(c)
    assert c["request"]["body_text"] == body.decode()
    assert "body" not in c["request"]
    assert c["request"]["bytes"] == len(body)
    assert c["response"]["status"] == 400
    assert c["response"]["body"] == json.loads(bytes(ex.sent))
    assert c["error"] is None


def test_binary_request_body(proxy, upstream):
    session = new_session()
    body = bytes(range(256)) * 4 + b"\xff\xfe\x00"
    with httpx2.Client(timeout=30) as http:
        r = http.post(
            proxy.url + CHAT,
            headers=headers(session, **{"content-type": "application/octet-stream", "x-fake-upstream": "echo"}),
            content=body,
        )
    ex = one_exchange(upstream, session)
    assert ex.body == body and r.content == body
    [c] = proxy.calls_of(session)
    check_line(c)
    assert base64.b64decode(c["request"]["body_base64"]) == body
    assert base64.b64decode(c["response"]["body_base64"]) == body
    assert c["request"]["bytes"] == c["response"]["bytes"] == len(body)


def test_request_bytes_are_forwarded_as_they_are(proxy, upstream):
    """Whitespace, key order, escapes and a float's spelling survive (the upstream echoes
    the body): the proxy forwards bytes, it does not re-serialise; the record holds the value."""
    session = new_session()
    body = '{ "model" : "gpt-test",\n  "messages":[{"role":"user","content":"\\u00fc ü \\ud83d\\ude00"}] , "z": 1.50, "a": 1e2 }'.encode()
    with httpx2.Client(timeout=30) as http:
        r = http.post(proxy.url + CHAT, headers=headers(session, **{"x-fake-upstream": "echo"}), content=body)
    ex = one_exchange(upstream, session)
    assert ex.body == body
    assert r.content == body
    [c] = proxy.calls_of(session)
    check_line(c)
    assert c["request"]["body"] == json.loads(body)
    assert c["response"]["body"] == json.loads(body)
    assert c["request"]["bytes"] == len(body)


def test_credentials_are_forwarded_never_recorded(proxy, upstream):
    session = new_session()
    secret_headers = {
        "authorization": f"Bearer {OPENAI_KEY}",
        "x-api-key": "SECRET-x-api-key",
        "api-key": "SECRET-azure",
        "proxy-authorization": "Basic SECRETbasic",
        "cookie": "session=SECRETcookie",
        "x-goog-api-key": "SECRET-goog",
        "x-my-token": "SECRET-token",
        "x-client-secret": "SECRET-client",
        "x-db-password": "SECRET-password",
        "x-custom-auth": "SECRET-auth",
    }
    plain = {
        "x-stainless-lang": "python",
        "x-stainless-retry-count": "0",
        "openai-organization": "org-test",
        SESSION: session,
    }
    hdrs = [(k, v) for k, v in {**secret_headers, **plain, "content-type": "application/json"}.items()]
    hdrs += [("x-multi", "one"), ("x-multi", "two")]
    query = "api-version=2024-10-21&x=%20a%2Fb&x=2&api_key=SECRETquery&key=SECRETkey&token=SECRETtok"
    with httpx2.Client(timeout=30) as http:
        r = http.post(proxy.url + CHAT + "?" + query, headers=hdrs, json={"model": "gpt-test", "messages": []})
    assert r.status_code == 200
    # Passed through: every header and the query reach the upstream unchanged.
    ex = one_exchange(upstream, session)
    for k, v in secret_headers.items():
        if k != "proxy-authorization":  # addressed to the proxy itself: it need not go on
            assert ex.header(k) == v, k
    assert ex.query == query
    assert [v for k, v in ex.headers if k.lower() == "x-multi"] == ["one", "two"]
    assert r.headers.get("set-cookie", "").startswith("__cf_bm=fakecookie")

    [c] = proxy.calls_of(session)
    check_line(c)
    req = c["request"]
    for k in secret_headers:
        assert k not in req["headers"], k
        assert k in req["redacted"], k
    for k, v in plain.items():
        assert header(req, k) == v, k
    assert header(req, "x-multi") == ["one", "two"]
    assert req["query"] == "api-version=2024-10-21&x=%20a%2Fb&x=2&api_key=REDACTED&key=REDACTED&token=REDACTED"
    assert "set-cookie" not in c["response"]["headers"]
    assert "set-cookie" in c["response"]["redacted"]
    assert header(c["response"], "x-request-id") == ex.response_headers["x-request-id"]
    assert_no_secrets(proxy.recording)


def test_upstream_path_prefix_and_userinfo(upstream, workdir):
    """--upstream with a path prefix: the request goes to prefix + path. Userinfo in the
    URL is never written (the recorded upstream has none)."""
    host = upstream.url.removeprefix("http://")
    p = Proxy(f"http://user:SECRETpw@{host}/prefix/api", workdir / "prefix.jsonl", "-q")
    try:
        session = new_session()
        with httpx2.Client(timeout=30) as http:
            r = http.post(p.url + CHAT, headers=headers(session), json={"model": "gpt-test", "messages": []})
        assert r.status_code == 200
        ex = one_exchange(upstream, session)
        assert ex.path == "/prefix/api" + CHAT
        [c] = p.calls_of(session)
        check_line(c)
        assert c["upstream"].rstrip("/") == f"http://{host}/prefix/api"
        assert c["request"]["path"].endswith(CHAT)
        assert p.stop(timeout=20) == 0
        assert_no_secrets(p.recording)
    finally:
        p.kill()


# ---------------------------------------------------------------- huge bodies


def test_request_body_of_200_mb(lean_proxy, upstream):
    """Passes through whole (the upstream counts and hashes it), is recorded as omitted,
    and the proxy's peak memory stays far below the body's size."""
    session = new_session()
    size = 200 * MiB
    block = (b'{"filler": "' + b"y" * (MiB - 32) + b'"}\n').ljust(MiB, b" ")
    assert len(block) == MiB
    digest = hashlib.sha256()

    def chunks():
        for _ in range(size // MiB):
            digest.update(block)
            yield block

    with httpx2.Client(timeout=120) as http:
        r = http.post(
            lean_proxy.url + CHAT,
            headers=headers(session, **{"x-fake-upstream": "count", "content-length": str(size)}),
            content=chunks(),
        )
    assert r.status_code == 200, r.text
    assert r.json() == {"received_bytes": size, "sha256": digest.hexdigest()}
    [c] = lean_proxy.calls_of(session)
    check_line(c)
    req = c["request"]
    assert req["bytes"] == size
    assert not {"body", "body_text", "body_base64"} & set(req)
    assert str(size) in req["omitted"] and "33554432" in req["omitted"], req["omitted"]
    assert c["response"]["body"] == r.json()
    peak = lean_proxy.peak_rss_bytes()
    print(f"proxy peak RSS after a 200 MB request body: {peak / MiB:.1f} MiB")
    assert peak < DEFAULT_MAX_BODY + SLACK, f"peak RSS {peak / MiB:.0f} MiB for a {size // MiB} MiB body"


def test_chunked_request_body_over_max_body(lean_proxy, upstream):
    """A chunked upload (no content-length) over --max-body is omitted just the same."""
    session = new_session()
    size = 40 * MiB
    block = b"z" * MiB

    with httpx2.Client(timeout=120) as http:
        r = http.post(
            lean_proxy.url + CHAT,
            headers=headers(session, **{"x-fake-upstream": "count"}),
            content=(block for _ in range(size // MiB)),
        )
    assert r.status_code == 200, r.text
    assert r.json()["received_bytes"] == size
    ex = one_exchange(upstream, session)
    assert ex.header("content-length") or ex.header("transfer-encoding")
    [c] = lean_proxy.calls_of(session)
    check_line(c)
    assert c["request"]["bytes"] == size
    assert "omitted" in c["request"] and "body_text" not in c["request"]


@pytest.mark.parametrize("lean_proxy", [("--max-body", str(MiB))], indirect=True)
def test_streamed_response_of_100_mb(lean_proxy, upstream):
    """Reaches the client whole and unchanged (hashed), is recorded as omitted; with
    --max-body 1 MiB the proxy's peak memory stays under 1 MiB + SLACK."""
    session = new_session()
    size = 100 * MiB
    digest = hashlib.sha256()
    got = 0
    with httpx2.Client(timeout=120) as http:
        with http.stream(
            "POST",
            lean_proxy.url + CHAT,
            headers=headers(session, **{"x-fake-upstream": f"big;size={size}"}),
            json={"stream": True},
        ) as r:
            assert r.status_code == 200
            for chunk in r.iter_raw():
                digest.update(chunk)
                got += len(chunk)
    ex = one_exchange(upstream, session)
    assert ex.finished and ex.sent_len == size
    assert got == size and digest.hexdigest() == ex.sent_sha256
    [c] = lean_proxy.calls_of(session)
    check_line(c)
    resp = c["response"]
    assert resp["bytes"] == size
    assert not {"body", "body_text", "body_base64"} & set(resp)
    assert str(size) in resp["omitted"] and str(MiB) in resp["omitted"], resp["omitted"]
    assert c["error"] is None
    peak = lean_proxy.peak_rss_bytes()
    print(f"proxy peak RSS after a 100 MB response: {peak / MiB:.1f} MiB")
    assert peak < MiB + SLACK, f"peak RSS {peak / MiB:.0f} MiB for a {size // MiB} MiB response"


# ---------------------------------------------------------------- hang-ups


def test_client_disconnects_mid_stream(proxy, upstream):
    """The SDK stops reading after three chunks and closes: the record says
    client_disconnected and keeps what had arrived."""
    session = new_session()
    oc = openai.OpenAI(
        api_key=OPENAI_KEY, base_url=proxy.url + "/v1", default_headers={SESSION: session}, max_retries=0, timeout=60
    )
    stream = oc.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "long"}],
        stream=True,
        extra_headers={"x-fake-upstream": "slow;delay=0.05;repeat=60"},
    )
    it = iter(stream)
    first = [next(it) for _ in range(3)]
    assert first[0].choices[0].delta.role == "assistant"
    stream.close()
    [c] = proxy.calls_of(session, timeout=30)
    check_line(c)
    assert c["error"]["kind"] == "client_disconnected", c["error"]
    assert c["response"]["status"] == 200
    ex = one_exchange(upstream, session)
    kept = c["response"]["body_text"]
    first_event = bytes(ex.sent).split(b"\n\n")[0].decode() + "\n\n"
    assert kept.startswith(first_event)
    deadline = time.monotonic() + 30
    while not (ex.finished or ex.note.startswith("client gone")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bytes(ex.sent).decode("utf-8", "ignore").startswith(kept)
    assert len(kept.encode()) == c["response"]["bytes"]
    still_serves(proxy)


def read_until_broken(url: str, session: str, mode: str, body: dict, timeout: float = 30) -> bytes:
    """POSTs `body` to the proxy's chat path with the fake upstream in `mode`, and reads
    the raw body of its 200 until it breaks off: the client must see an error, never a
    clean end. Returns the bytes that arrived."""
    got = bytearray()
    with httpx2.Client(timeout=timeout) as http:
        with pytest.raises(httpx2.HTTPError):
            with http.stream("POST", url + CHAT, headers=headers(session, **{"x-fake-upstream": mode}), json=body) as r:
                assert r.status_code == 200
                for chunk in r.iter_raw():
                    got.extend(chunk)
    return bytes(got)


@pytest.mark.parametrize("burst", ["1", "0"], ids=["one-write", "piece-by-piece"])
def test_upstream_breaks_off_mid_stream(proxy, upstream, burst):
    """The upstream drops the connection after three events: the client gets every byte
    the upstream sent, then sees the body end in an error, not a clean end; the record
    says upstream and keeps those bytes. 24 times over: the end of a stream is where a
    proxy's race shows."""
    for _ in range(24):
        session = new_session()
        got = read_until_broken(
            proxy.url,
            session,
            f"disconnect;after=3;burst={burst}",
            {"model": "gpt-test", "messages": [{"role": "user", "content": "x"}], "stream": True},
        )
        ex = one_exchange(upstream, session)
        assert ex.note == "disconnected"
        [c] = proxy.calls_of(session)
        check_line(c)
        assert c["error"]["kind"] == "upstream", c["error"]
        assert c["response"]["status"] == 200
        assert c["response"]["body_text"] == bytes(ex.sent).decode()
        assert len(got) == ex.sent_len, (
            f"the client got {len(got)} of the {ex.sent_len} bytes the upstream sent before it broke off"
        )
        assert got == bytes(ex.sent)
    still_serves(proxy)


def test_upstream_cuts_a_content_length_body_short(proxy, upstream):
    """Half of a content-length answer, then the connection drops: the client must not
    take the half for the whole; the record says upstream and keeps the half."""
    session = new_session()
    got = read_until_broken(proxy.url, session, "short", {"model": "gpt-test", "messages": []})
    ex = one_exchange(upstream, session)
    assert ex.note == "disconnected"
    assert got == bytes(ex.sent)[: len(got)]
    [c] = proxy.calls_of(session)
    check_line(c)
    assert c["error"]["kind"] == "upstream", c["error"]
    assert c["response"]["status"] == 200
    assert_body(c["response"], bytes(ex.sent))
    still_serves(proxy)


def test_max_body_boundary(upstream, tmp_path):
    """--max-body 1000: a body of exactly 1000 bytes is stored, one of 1001 is omitted,
    both ways (the upstream echoes)."""
    p = Proxy(upstream.url, tmp_path / "boundary.jsonl", "-q", "--max-body", "1000")
    try:
        for size in (1000, 1001):
            session = new_session()
            body = json.dumps({"model": "gpt-test", "pad": ""}).encode()
            body = body.replace(b'"pad": ""', b'"pad": "' + b"p" * (size - len(body)) + b'"')
            assert len(body) == size
            with httpx2.Client(timeout=30) as http:
                r = http.post(p.url + CHAT, headers=headers(session, **{"x-fake-upstream": "echo"}), content=body)
            assert r.content == body
            [c] = p.calls_of(session)
            check_line(c)
            for part in (c["request"], c["response"]):
                assert part["bytes"] == size
                if size <= 1000:
                    assert part["body"] == json.loads(body)
                else:
                    assert "body" not in part and "1001" in part["omitted"] and "1000" in part["omitted"]
        assert p.stop(timeout=20) == 0
    finally:
        p.kill()


def test_upstream_hangs(upstream, workdir):
    """--timeout 2 and an upstream that never answers: the client gets 504, the record
    says timeout and has no response."""
    p = Proxy(upstream.url, workdir / "timeout.jsonl", "-q", "--timeout", "2")
    try:
        session = new_session()
        t0 = time.monotonic()
        with httpx2.Client(timeout=60) as http:
            r = http.post(
                p.url + CHAT,
                headers=headers(session, **{"x-fake-upstream": "hang"}),
                json={"model": "gpt-test", "messages": []},
            )
        waited = time.monotonic() - t0
        assert r.status_code == 504
        assert 2 <= waited < 30
        [c] = p.calls_of(session)
        check_line(c)
        assert c["error"]["kind"] == "timeout", c["error"]
        assert c.get("response") is None
        assert "first_byte_seconds" not in c
        assert c["seconds"] >= 2
        assert c["request"]["body"] == {"model": "gpt-test", "messages": []}

        # A head and one event, then silence: --timeout ends the body with an error
        # (the client must not see a clean end), recorded as upstream with what came.
        session = new_session()
        gate = f"never-{session}"
        try:
            got = read_until_broken(
                p.url,
                session,
                f"gate;name={gate}",
                {"model": "gpt-test", "messages": [], "stream": True},
                timeout=60,
            )
            ex = one_exchange(upstream, session)
            assert ex.note == "gated"
            [c] = p.calls_of(session)
            check_line(c)
            assert c["error"]["kind"] == "upstream", c["error"]
            assert c["response"]["status"] == 200 and "first_byte_seconds" in c
            assert c["seconds"] >= 2
            assert c["response"]["body_text"] == bytes(ex.sent).decode()
            assert got == bytes(ex.sent)
        finally:
            upstream.gate(gate).set()
        still_serves(p)
        assert p.stop(timeout=20) == 0
    finally:
        p.kill()


def test_upstream_refuses(workdir):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    p = Proxy(f"http://127.0.0.1:{port}", workdir / "refused.jsonl", "-q")
    try:
        session = new_session()
        with httpx2.Client(timeout=30) as http:
            r = http.post(p.url + CHAT, headers=headers(session), json={"model": "gpt-test", "messages": []})
        assert r.status_code == 502
        [c] = p.calls_of(session)
        check_line(c)
        assert c["error"]["kind"] == "connect", c["error"]
        assert c.get("response") is None
        assert c["request"]["body"] == {"model": "gpt-test", "messages": []}
        # The SDK sees a 502 as an API error, not a hang.
        oc = openai.OpenAI(
            api_key=OPENAI_KEY, base_url=p.url + "/v1", default_headers={SESSION: session}, max_retries=0, timeout=30
        )
        with pytest.raises(openai.APIStatusError) as err:
            oc.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "x"}])
        assert err.value.status_code == 502
        assert len(p.calls_of(session, count=2)) == 2
        assert p.stop(timeout=20) == 0
        assert_no_secrets(p.recording)
    finally:
        p.kill()


def test_request_body_cut_short(proxy, upstream):
    """A client that announces 100 000 bytes, sends 10 and hangs up."""
    session = new_session()
    host, port = proxy.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(
            (
                f"POST {CHAT} HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
                f"{SESSION}: {session}\r\ncontent-length: 100000\r\n\r\n"
            ).encode()
            + b'{"model": '
        )
        time.sleep(0.3)
    [c] = proxy.calls_of(session)
    check_line(c)
    assert c["error"]["kind"] == "request_body", c["error"]
    still_serves(proxy)


def test_garbage_on_the_socket(proxy):
    host, port = proxy.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"\x16\x03\x01\x02\x00 not http at all\r\n\r\n")
        try:
            s.recv(4096)
        except OSError:
            pass
    assert proxy.proc.poll() is None
    still_serves(proxy)
