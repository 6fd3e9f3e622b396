"""A small fake LLM provider for the `mirotrace record` tests (standard library only).

It speaks the three APIs the proxy is put in front of, the way the real services
put them on the wire:

  POST .../chat/completions   OpenAI Chat Completions: pretty-printed JSON, or with
                              `"stream": true` Server-Sent Events (`data: {chunk}`,
                              tool-call deltas, a usage chunk when
                              `stream_options.include_usage`, `data: [DONE]`)
  POST .../responses          OpenAI Responses: JSON, or `event: response.*` SSE
  POST .../messages           Anthropic Messages: JSON, or SSE (message_start,
                              content_block_start/delta/stop with text_delta and
                              input_json_delta, ping, message_delta, message_stop)

A request that carries tools gets a tool call back; otherwise a text whose UTF-8
has multi-byte characters. Every SSE event is written in two pieces, split inside a
multi-byte character where it has one, so a proxy that decodes per chunk shows it.

Every exchange is kept (`Upstream.exchanges`): what arrived (method, path, query,
headers, body bytes) and the exact body bytes sent back, so a test can compare both
ends of the proxy. Bodies over KEEP_LIMIT are kept as length and sha256 only.

Hostile and special modes, per request, by the header `x-fake-upstream: MODE[;k=v...]`
(a name the proxy has no reason to redact):

  echo                the request's body back, byte for byte, with its content-type
  hang                never answer (until the server closes)
  disconnect;after=N  stream N SSE events of the API's stream in one write, then
                      drop the connection without ending the chunked body
                      (burst=0: the events written piece by piece first)
  short               a content-length JSON answer cut off halfway (the connection drops)
  big;size=N          a streamed text/event-stream body of N bytes (default 100 MB)
  slow;delay=S;repeat=N  the API's stream with S seconds between events, its
                      events sent N times over (default once)
  gate;name=G         the API's stream: the first event, then wait (20 s at most)
                      until the test opens gate G, then the rest
  status;code=C       an error body of the API's shape with status C
  fail-once;id=X      status 500 (with `retry-after-ms: 1`) the first time X is
                      seen, the normal answer after
  gzip                the normal JSON answer gzip-compressed (when the client
                      accepts gzip, as the real services do)
  count               the request body's length and sha256 as JSON (for huge bodies)

and any mode takes `head_delay=S` (sleep before the response head); a normal stream
takes `tail_delay=S` (the body's end S seconds after its last event); `idle_close=S`
closes the connection when no request came S seconds after the answer, as servers
drop idle keep-alive connections (no `connection: close` was sent).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

KEEP_LIMIT = 16 * 1024 * 1024
CREATED = 1764780000


@dataclass
class Exchange:
    seq: int
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes | None = None  # None when over KEEP_LIMIT
    body_len: int = 0
    body_sha256: str = ""
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    sent: bytearray | None = field(default_factory=bytearray)  # body bytes, None when over KEEP_LIMIT
    sent_len: int = 0
    sent_sha256: str = ""
    finished: bool = False  # the whole response went out
    note: str = ""  # what the mode did (e.g. "disconnected", "hung")

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def json(self):
        return json.loads(self.body)


def parse_mode(value: str | None) -> tuple[str, dict[str, str]]:
    if not value:
        return "", {}
    parts = [p.strip() for p in value.split(";") if p.strip()]
    params = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        params[k] = v
    return parts[0], params


def api_of(path: str) -> str:
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "anthropic"
    return "other"


def split_point(data: bytes) -> int:
    """An index inside the first multi-byte UTF-8 character, else the middle."""
    for i, b in enumerate(data):
        if b >= 0xC0:  # a lead byte: cut right after it
            return i + 1
    return max(1, len(data) // 2)


# ---------------------------------------------------------------- content


def last_user_text(api: str, req: dict) -> str:
    items = []
    if api in ("chat", "anthropic"):
        items = req.get("messages") or []
    elif api == "responses":
        inp = req.get("input")
        if isinstance(inp, str):
            return inp
        items = inp or []
    for m in reversed(items):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                for part in c:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        return part["text"]
    return ""


def answer_text(seq: int, req: dict, api: str) -> str:
    return f"Antwort {seq}: grüße aus 東京 ✓ — {last_user_text(api, req)[:40]}"


def tool_name(api: str, req: dict) -> str | None:
    tools = req.get("tools") or []
    if not tools:
        return None
    t = tools[0]
    if api == "chat":
        return t.get("function", {}).get("name")
    return t.get("name")


TOOL_ARGS = '{"city": "Zürich", "days": 3}'


def pieces(text: str, n: int = 4) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def chat_json(seq: int, req: dict) -> bytes:
    model = req.get("model", "gpt-test")
    tool = tool_name("chat", req)
    if tool:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"call_{seq:04d}", "type": "function", "function": {"name": tool, "arguments": TOOL_ARGS}}
            ],
            "refusal": None,
            "annotations": [],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": answer_text(seq, req, "chat"), "refusal": None, "annotations": []}
        finish = "stop"
    body = {
        "id": f"chatcmpl-fake{seq:06d}",
        "object": "chat.completion",
        "created": CREATED + seq,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 19,
            "completion_tokens": 10,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    }
    # The real service pretty-prints its JSON with two-space indentation.
    return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()


def chat_events(seq: int, req: dict) -> list[bytes]:
    model = req.get("model", "gpt-test")
    usage = bool((req.get("stream_options") or {}).get("include_usage"))
    base = {
        "id": f"chatcmpl-fake{seq:06d}",
        "object": "chat.completion.chunk",
        "created": CREATED + seq,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    }

    def chunk(delta: dict, finish=None) -> dict:
        c = dict(base, choices=[{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])
        if usage:
            c["usage"] = None
        return c

    chunks = []
    tool = tool_name("chat", req)
    if tool:
        chunks.append(chunk({"role": "assistant", "content": None, "refusal": None}))
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": f"call_{seq:04d}",
                            "type": "function",
                            "function": {"name": tool, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for p in pieces(TOOL_ARGS):
            chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
        chunks.append(chunk({}, "tool_calls"))
    else:
        chunks.append(chunk({"role": "assistant", "content": "", "refusal": None}))
        for p in pieces(answer_text(seq, req, "chat")):
            chunks.append(chunk({"content": p}))
        chunks.append(chunk({}, "stop"))
    if usage:
        chunks.append(
            dict(
                base,
                choices=[],
                usage={
                    "prompt_tokens": 19,
                    "completion_tokens": 10,
                    "total_tokens": 29,
                    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
                },
            )
        )
    out = [b"data: " + json.dumps(c, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n" for c in chunks]
    out.append(b"data: [DONE]\n\n")
    return out


def responses_parts(seq: int, req: dict) -> tuple[dict, list[tuple[str, dict]]]:
    """The final response object and the stream's events (type, data) leading to it."""
    model = req.get("model", "gpt-test")
    tool = tool_name("responses", req)
    resp_id = f"resp_fake{seq:06d}"
    usage = {
        "input_tokens": 21,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 33,
    }

    def response(status: str, output: list, with_usage: bool) -> dict:
        return {
            "id": resp_id,
            "object": "response",
            "created_at": CREATED + seq,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": req.get("instructions"),
            "max_output_tokens": req.get("max_output_tokens"),
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": req.get("tools") or [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage if with_usage else None,
            "user": None,
            "metadata": {},
        }

    events: list[tuple[str, dict]] = []
    events.append(("response.created", {"response": response("in_progress", [], False)}))
    events.append(("response.in_progress", {"response": response("in_progress", [], False)}))
    if tool:
        item_id = f"fc_fake{seq:06d}"
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": f"call_{seq:04d}",
            "name": tool,
        }
        done = dict(item, status="completed", arguments=TOOL_ARGS)
        events.append(("response.output_item.added", {"output_index": 0, "item": item}))
        for p in pieces(TOOL_ARGS):
            events.append(
                ("response.function_call_arguments.delta", {"item_id": item_id, "output_index": 0, "delta": p})
            )
        events.append(
            ("response.function_call_arguments.done", {"item_id": item_id, "output_index": 0, "arguments": TOOL_ARGS})
        )
        events.append(("response.output_item.done", {"output_index": 0, "item": done}))
    else:
        text = answer_text(seq, req, "responses")
        item_id = f"msg_fake{seq:06d}"
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
        done_part = dict(part, text=text)
        done = dict(item, status="completed", content=[done_part])
        events.append(("response.output_item.added", {"output_index": 0, "item": item}))
        events.append(
            ("response.content_part.added", {"item_id": item_id, "output_index": 0, "content_index": 0, "part": part})
        )
        for p in pieces(text):
            events.append(
                (
                    "response.output_text.delta",
                    {"item_id": item_id, "output_index": 0, "content_index": 0, "delta": p, "logprobs": []},
                )
            )
        events.append(
            (
                "response.output_text.done",
                {"item_id": item_id, "output_index": 0, "content_index": 0, "text": text, "logprobs": []},
            )
        )
        events.append(
            (
                "response.content_part.done",
                {"item_id": item_id, "output_index": 0, "content_index": 0, "part": done_part},
            )
        )
        events.append(("response.output_item.done", {"output_index": 0, "item": done}))
    final = response("completed", [done], True)
    events.append(("response.completed", {"response": final}))
    return final, events


def responses_json(seq: int, req: dict) -> bytes:
    final, _ = responses_parts(seq, req)
    return (json.dumps(final, indent=2, ensure_ascii=False) + "\n").encode()


def responses_events(seq: int, req: dict) -> list[bytes]:
    _, events = responses_parts(seq, req)
    out = []
    for n, (kind, data) in enumerate(events):
        payload = {"type": kind, "sequence_number": n, **data}
        out.append(
            f"event: {kind}\ndata: ".encode()
            + json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
            + b"\n\n"
        )
    return out


def anthropic_parts(seq: int, req: dict) -> tuple[dict, list[tuple[str, dict]]]:
    model = req.get("model", "claude-test")
    tool = tool_name("anthropic", req)
    msg_id = f"msg_fake{seq:06d}"
    text = answer_text(seq, req, "anthropic")
    content = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "tool_use", "id": f"toolu_fake{seq:06d}", "name": tool, "input": json.loads(TOOL_ARGS)})
    stop = "tool_use" if tool else "end_turn"
    usage = {
        "input_tokens": 25,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 15,
        "service_tier": "standard",
    }
    final = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    start = dict(final, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    events: list[tuple[str, dict]] = [("message_start", {"message": start})]
    events.append(("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
    events.append(("ping", {}))
    for p in pieces(text):
        events.append(("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}}))
    events.append(("content_block_stop", {"index": 0}))
    if tool:
        block = {"type": "tool_use", "id": f"toolu_fake{seq:06d}", "name": tool, "input": {}}
        events.append(("content_block_start", {"index": 1, "content_block": block}))
        events.append(("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}))
        for p in pieces(TOOL_ARGS):
            events.append(
                ("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": p}})
            )
        events.append(("content_block_stop", {"index": 1}))
    events.append(
        (
            "message_delta",
            {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage["output_tokens"]}},
        )
    )
    events.append(("message_stop", {}))
    return final, events


def anthropic_json(seq: int, req: dict) -> bytes:
    final, _ = anthropic_parts(seq, req)
    return json.dumps(final, separators=(",", ":"), ensure_ascii=False).encode()


def anthropic_events(seq: int, req: dict) -> list[bytes]:
    _, events = anthropic_parts(seq, req)
    return [
        f"event: {kind}\ndata: ".encode()
        + json.dumps({"type": kind, **data}, separators=(",", ":"), ensure_ascii=False).encode()
        + b"\n\n"
        for kind, data in events
    ]


def error_body(api: str, code: int, message: str) -> bytes:
    if api == "anthropic":
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(code, "api_error")
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    kind = "invalid_request_error" if code < 500 else "server_error"
    body = {
        "error": {
            "message": message,
            "type": kind,
            "param": None,
            "code": "context_length_exceeded" if code == 400 else None,
        }
    }
    return (json.dumps(body, indent=2) + "\n").encode()


def events_for(api: str, seq: int, req: dict) -> list[bytes]:
    if api == "chat":
        return chat_events(seq, req)
    if api == "responses":
        return responses_events(seq, req)
    if api == "anthropic":
        return anthropic_events(seq, req)
    return [b"data: {}\n\n"]


def json_for(api: str, seq: int, req: dict) -> bytes:
    if api == "chat":
        return chat_json(seq, req)
    if api == "responses":
        return responses_json(seq, req)
    if api == "anthropic":
        return anthropic_json(seq, req)
    return b"{}"


# ---------------------------------------------------------------- the server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format, *args):  # quiet
        pass

    def do_GET(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def do_DELETE(self):
        self._handle()

    # -- reading

    def _read_body(self, ex: Exchange) -> None:
        h = hashlib.sha256()
        kept = bytearray()
        total = 0

        def take(data: bytes):
            nonlocal total
            h.update(data)
            total += len(data)
            if total <= KEEP_LIMIT:
                kept.extend(data)

        te = (self.headers.get("transfer-encoding") or "").lower()
        if "chunked" in te:
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    raise ConnectionError("eof in chunk size")
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                left = size
                while left:
                    data = self.rfile.read(min(left, 1 << 20))
                    if not data:
                        raise ConnectionError("eof in chunk")
                    take(data)
                    left -= len(data)
                self.rfile.readline(3)
        else:
            left = int(self.headers.get("content-length") or 0)
            while left:
                data = self.rfile.read(min(left, 1 << 20))
                if not data:
                    raise ConnectionError("eof in body")
                take(data)
                left -= len(data)
        ex.body_len = total
        ex.body_sha256 = h.hexdigest()
        ex.body = bytes(kept) if total <= KEEP_LIMIT else None

    # -- writing

    def _head(self, ex: Exchange, status: int, headers: dict[str, str]) -> None:
        ex.status = status
        ex.response_headers = dict(headers)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()

    def _sent(self, ex: Exchange, data: bytes, h) -> None:
        h.update(data)
        ex.sent_len += len(data)
        if ex.sent is not None:
            if ex.sent_len <= KEEP_LIMIT:
                ex.sent.extend(data)
            else:
                ex.sent = None

    def _send_whole(self, ex: Exchange, status: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
        headers = {"content-type": ctype, "content-length": str(len(body))}
        headers.update(extra or {})
        self._head(ex, status, headers)
        # Kept before it goes out: the client may read it before this thread runs on.
        h = hashlib.sha256()
        self._sent(ex, body, h)
        ex.sent_sha256 = h.hexdigest()
        ex.finished = True
        try:
            self.wfile.write(body)
        except OSError:
            ex.finished = False
            raise

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _stream(
        self,
        ex: Exchange,
        events: list[bytes],
        *,
        delay=0.0,
        gate: str | None = None,
        stop_after: int | None = None,
        burst: bool = True,
        tail_delay: float = 0.0,
    ) -> None:
        self._head(
            ex,
            200,
            {
                "content-type": "text/event-stream; charset=utf-8",
                "transfer-encoding": "chunked",
                "cache-control": "no-cache",
                "x-request-id": f"req_fake{ex.seq:06d}",
            },
        )
        h = hashlib.sha256()
        if stop_after is not None and burst:
            # The first events in one write, then the connection drops at once, with
            # no terminating chunk: the body is cut short right after its last bytes.
            burst = b"".join(b"%x\r\n%s\r\n" % (len(ev), ev) for ev in events[:stop_after])
            for ev in events[:stop_after]:
                self._sent(ex, ev, h)
            ex.sent_sha256 = h.hexdigest()
            ex.note = "disconnected"
            self.close_connection = True
            self.wfile.write(burst)
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        for n, ev in enumerate(events):
            if stop_after is not None and n >= stop_after:
                # Event by event (as in every stream here), then the connection drops.
                ex.sent_sha256 = h.hexdigest()
                ex.note = "disconnected"
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if n > 0 and delay:
                time.sleep(delay)
            if n == 1 and gate is not None:
                ex.note = "gated"
                opened = self.server.upstream.gate(gate).wait(20)
                ex.note = "gate opened" if opened else "gate timed out"
            cut = split_point(ev)
            if n < len(events) - 1:
                for piece in (ev[:cut], ev[cut:]):
                    if piece:  # an empty chunk would end the body
                        self._sent(ex, piece, h)
                        self._chunk(piece)
                continue
            # The last event's second piece goes out in one write with the body's
            # end, as a server does when its generator ends (a client such as the
            # openai SDK stops reading at `data: [DONE]`). Kept before it goes out.
            self._sent(ex, ev, h)
            ex.sent_sha256 = h.hexdigest()
            ex.finished = True
            try:
                if ev[:cut]:
                    self._chunk(ev[:cut])
                tail = ev[cut:]
                if tail_delay:
                    # The last event, then the body's end a moment later.
                    self._chunk(tail)
                    tail = b""
                    time.sleep(tail_delay)
                self.wfile.write((b"%x\r\n%s\r\n" % (len(tail), tail) if tail else b"") + b"0\r\n\r\n")
            except OSError:
                ex.finished = False
                raise

    def _big(self, ex: Exchange, size: int) -> None:
        self._head(ex, 200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"})
        line = b"data: " + b"x" * 1000 + b"\n\n"
        block = line * 64  # ~64 KiB
        h = hashlib.sha256()
        left = size
        while left:
            piece = block[: min(left, len(block))]
            self._sent(ex, piece, h)
            self._chunk(piece)
            left -= len(piece)
        ex.sent_sha256 = h.hexdigest()
        ex.finished = True
        try:
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            ex.finished = False
            raise

    # -- dispatch

    def _handle(self) -> None:
        up = self.server.upstream
        url = urlsplit(self.path)
        ex = up._new(self.command, url.path, url.query, list(self.headers.items()))
        try:
            self._read_body(ex)
        except (ConnectionError, ValueError, OSError) as e:
            ex.note = f"request body: {e}"
            self.close_connection = True
            return
        mode, params = parse_mode(ex.header("x-fake-upstream"))
        if "head_delay" in params:
            time.sleep(float(params["head_delay"]))
        api = api_of(url.path)
        try:
            self._respond(ex, api, mode, params)
        except (BrokenPipeError, ConnectionResetError, OSError) as e:
            ex.note = ex.note or f"client gone: {type(e).__name__}"
            self.close_connection = True
            return
        if "idle_close" in params and not self.close_connection:
            # Keep-alive as far as the client knows; the server closes it after
            # idling that long (a request that comes sooner is served as usual).
            ready, _, _ = select.select([self.connection], [], [], float(params["idle_close"]))
            if not ready:
                self.close_connection = True

    def _respond(self, ex: Exchange, api: str, mode: str, params: dict[str, str]) -> None:
        up = self.server.upstream
        if mode == "hang":
            ex.note = "hung"
            up.release.wait(300)
            self.close_connection = True
            return
        if mode == "echo":
            ctype = ex.header("content-type") or "application/octet-stream"
            self._send_whole(ex, 200, ex.body or b"", ctype)
            return
        if mode == "count":
            body = json.dumps({"received_bytes": ex.body_len, "sha256": ex.body_sha256}).encode()
            self._send_whole(ex, 200, body, "application/json")
            return
        if mode == "short":
            # A content-length body cut short: half of it, then the connection drops.
            body = json_for(api, ex.seq, json.loads(ex.body or b"{}"))
            half = body[: len(body) // 2]
            self._head(ex, 200, {"content-type": "application/json", "content-length": str(len(body))})
            h = hashlib.sha256()
            self._sent(ex, half, h)
            ex.sent_sha256 = h.hexdigest()
            ex.note = "disconnected"
            self.close_connection = True
            self.wfile.write(half)
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode == "big":
            self._big(ex, int(params.get("size", 100 * 1024 * 1024)))
            return
        if mode == "status":
            code = int(params.get("code", 500))
            msg = params.get("message", "This model's maximum context length is 8192 tokens.")
            self._send_whole(
                ex, code, error_body(api, code, msg), "application/json", {"x-request-id": f"req_fake{ex.seq:06d}"}
            )
            return
        if mode == "fail-once":
            key = params.get("id", "")
            with up.lock:
                first = key not in up.failed_once
                up.failed_once.add(key)
            if first:
                self._send_whole(
                    ex,
                    500,
                    error_body(api, 500, "The server had an error."),
                    "application/json",
                    {"retry-after-ms": "1"},
                )
                return

        if self.command == "GET":
            listing = {
                "object": "list",
                "data": [{"id": "gpt-test", "object": "model", "created": CREATED, "owned_by": "fake"}],
            }
            self._send_whole(ex, 200, json.dumps(listing).encode(), "application/json")
            return
        try:
            req = json.loads(ex.body or b"")
            if not isinstance(req, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_whole(
                ex, 400, error_body(api, 400, "We could not parse the JSON body of your request."), "application/json"
            )
            return

        if req.get("stream"):
            events = events_for(api, ex.seq, req)
            if mode == "disconnect":
                self._stream(ex, events, stop_after=int(params.get("after", 3)), burst=params.get("burst", "1") == "1")
            elif mode == "slow":
                self._stream(ex, events * int(params.get("repeat", 1)), delay=float(params.get("delay", 0.1)))
            elif mode == "gate":
                self._stream(ex, events, gate=params.get("name", ""))
            else:
                self._stream(ex, events, tail_delay=float(params.get("tail_delay", 0)))
            return

        body = json_for(api, ex.seq, req)
        extra = {
            "x-request-id": f"req_fake{ex.seq:06d}",
            "openai-processing-ms": "12",
            # A credential-like response header: passed to the client, never recorded.
            "set-cookie": f"__cf_bm=fakecookie{ex.seq}; path=/; HttpOnly",
        }
        if mode == "gzip" and "gzip" in (ex.header("accept-encoding") or ""):
            body = gzip.compress(body, mtime=0)
            extra["content-encoding"] = "gzip"
        self._send_whole(ex, 200, body, "application/json", extra)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    upstream: "Upstream"

    def handle_error(self, request, client_address):
        pass  # a client (the proxy) that hangs up is one of the cases under test


class Upstream:
    """The fake provider on 127.0.0.1, serving from a background thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        self.failed_once: set[str] = set()
        self.release = threading.Event()
        self._gates: dict[str, threading.Event] = {}
        self._server = _Server((host, port), _Handler)
        self._server.upstream = self
        self.port = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-upstream", daemon=True)
        self._thread.start()

    def _new(self, method, path, query, headers) -> Exchange:
        with self.lock:
            ex = Exchange(len(self.exchanges) + 1, method, path, query, headers)
            self.exchanges.append(ex)
            return ex

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self._gates.setdefault(name, threading.Event())

    def find(self, header: str, value: str) -> list[Exchange]:
        with self.lock:
            return [ex for ex in self.exchanges if ex.header(header) == value]

    def close(self) -> None:
        self.release.set()
        for g in list(self._gates.values()):
            g.set()
        self._server.shutdown()
        self._server.server_close()


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="the fake LLM provider of tests/record")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    up = Upstream(port=args.port)
    print(f"listening on {up.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        up.close()
