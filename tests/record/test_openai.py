"""The `openai` SDK (Chat Completions and Responses, plain and streamed) through
`mirotrace record` to the fake upstream: the SDK gets exactly what the upstream sent,
and the recording has the call, its session header, its timings and no credential."""

from __future__ import annotations

import json
import threading
import time

import openai
import pytest

from harness import (
    OPENAI_KEY,
    Proxy,
    TeeTransport,
    assert_no_secrets,
    check_line,
    check_passthrough,
    check_recorded,
    header,
    started_at,
)
from upstream import TOOL_ARGS, answer_text

SESSION = "x-upstream-session-id"
MESSAGES = [
    {"role": "system", "content": "You are a careful agent."},
    {"role": "user", "content": "Wie wird das Wetter in Zürich?"},
]
CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "the forecast",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "the forecast",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        "strict": False,
    }
]


def client(proxy: Proxy, session: str, tee: TeeTransport, style: str = "default_headers", **kw) -> openai.OpenAI:
    """An OpenAI client through the proxy, the session header set either way MiroThinker-like code does."""
    if style == "default_headers":
        return openai.OpenAI(
            api_key=OPENAI_KEY,
            base_url=proxy.url + "/v1",
            default_headers={SESSION: session},
            http_client=openai.DefaultHttpxClient(transport=tee),
            max_retries=kw.pop("max_retries", 0),
            **kw,
        )
    # MiroThinker's OpenAIClient: DefaultHttpxClient(headers={"x-upstream-session-id": task_id})
    return openai.OpenAI(
        api_key=OPENAI_KEY,
        base_url=proxy.url + "/v1",
        http_client=openai.DefaultHttpxClient(headers={SESSION: session}, transport=tee),
        max_retries=kw.pop("max_retries", 0),
        **kw,
    )


def one_exchange(upstream, session):
    found = upstream.find(SESSION, session)
    assert len(found) == 1, [(e.path, e.status) for e in found]
    return found[0]


@pytest.mark.parametrize("style", ["default_headers", "http_client"])
def test_chat_plain(proxy, upstream, session_id, tee, style):
    t0 = time.time()
    oc = client(proxy, session_id, tee, style)
    completion = oc.chat.completions.create(model="gpt-test", messages=MESSAGES, max_tokens=256, temperature=0.3)
    t1 = time.time()
    ex = one_exchange(upstream, session_id)
    req = ex.json()
    assert completion.choices[0].message.content == answer_text(ex.seq, req, "chat")
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == 29
    assert ex.header("authorization") == f"Bearer {OPENAI_KEY}", "the proxy must forward the credential"
    check_passthrough(ex, tee.exchanges[0])

    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex)
    assert header(c["request"], SESSION) == session_id
    assert c["request"]["body"]["messages"] == MESSAGES
    assert c["request"]["body"]["max_tokens"] == 256
    assert c["response"]["body"]["choices"][0]["message"]["content"] == completion.choices[0].message.content
    assert header(c["request"], "x-stainless-retry-count") == "0"
    assert c["upstream"].rstrip("/") == upstream.url
    assert t0 - 1 <= started_at(c) <= t1 + 1
    assert c["seconds"] <= t1 - t0 + 1
    assert_no_secrets(proxy.recording)


def test_chat_stream_text(proxy, upstream, session_id, tee):
    oc = client(proxy, session_id, tee)
    stream = oc.chat.completions.create(model="gpt-test", messages=MESSAGES, stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    ex = one_exchange(upstream, session_id)
    assert text == answer_text(ex.seq, ex.json(), "chat")
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, stream=True)
    assert c["request"]["body"]["stream"] is True
    assert header(c["response"], "content-type").startswith("text/event-stream")
    assert c["response"]["body_text"].endswith("data: [DONE]\n\n")
    assert_no_secrets(proxy.recording)


def test_chat_stream_tool_call_deltas_and_usage(proxy, upstream, session_id, tee):
    oc = client(proxy, session_id, tee, style="http_client")
    stream = oc.chat.completions.create(
        model="gpt-test",
        messages=MESSAGES,
        tools=CHAT_TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    args, names, usage, finish = "", [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                if tc.function.name:
                    names.append(tc.function.name)
                args += tc.function.arguments or ""
    assert names == ["get_weather"]
    assert json.loads(args) == json.loads(TOOL_ARGS)
    assert finish == "tool_calls"
    assert usage is not None and usage.completion_tokens == 10
    ex = one_exchange(upstream, session_id)
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, stream=True)
    assert c["request"]["body"]["stream_options"] == {"include_usage": True}
    assert c["request"]["body"]["tools"] == CHAT_TOOLS
    assert '"usage":{"prompt_tokens":19' in c["response"]["body_text"]


def test_chat_stream_helper_final_completion(proxy, upstream, session_id, tee):
    oc = client(proxy, session_id, tee)
    with oc.chat.completions.stream(model="gpt-test", messages=MESSAGES, tools=CHAT_TOOLS) as s:
        final = s.get_final_completion()
    [tc] = final.choices[0].message.tool_calls
    assert tc.function.name == "get_weather" and tc.function.arguments == TOOL_ARGS
    ex = one_exchange(upstream, session_id)
    check_passthrough(ex, tee.exchanges[0])
    check_recorded(proxy.calls_of(session_id)[0], ex, stream=True)


def test_responses_plain(proxy, upstream, session_id, tee):
    oc = client(proxy, session_id, tee)
    resp = oc.responses.create(model="gpt-test", input="Sag etwas über Zürich", instructions="Be brief.")
    ex = one_exchange(upstream, session_id)
    assert resp.output_text == answer_text(ex.seq, ex.json(), "responses")
    assert resp.usage.total_tokens == 33
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex)
    assert c["request"]["path"].endswith("/responses")
    assert c["request"]["body"]["instructions"] == "Be brief."
    assert c["response"]["body"]["output"][0]["content"][0]["text"] == resp.output_text


@pytest.mark.parametrize("tools", [False, True], ids=["text", "function_call"])
def test_responses_stream(proxy, upstream, session_id, tee, tools):
    oc = client(proxy, session_id, tee)
    extra = {"tools": RESPONSES_TOOLS} if tools else {}
    kinds = []
    with oc.responses.stream(model="gpt-test", input=[{"role": "user", "content": "Wetter?"}], **extra) as s:
        for event in s:
            kinds.append(event.type)
        final = s.get_final_response()
    ex = one_exchange(upstream, session_id)
    if tools:
        [call] = final.output
        assert call.type == "function_call" and call.arguments == TOOL_ARGS
        assert "response.function_call_arguments.delta" in kinds
    else:
        assert final.output_text == answer_text(ex.seq, ex.json(), "responses")
        assert "response.output_text.delta" in kinds
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, stream=True)
    assert c["response"]["body_text"].startswith("event: response.created\ndata: ")


def test_stream_reaches_the_client_as_it_is_sent(proxy, upstream, session_id, tee):
    """The upstream sends the first event, then waits until the test opens its gate:
    the client must have that event while the gate is still closed (the upstream
    would go on by itself after 20 s, so a proxy that buffers fails, never hangs)."""
    gate = f"gate-{session_id}"
    oc = client(proxy, session_id, tee, timeout=60)
    stream = oc.chat.completions.create(
        model="gpt-test", messages=MESSAGES, stream=True, extra_headers={"x-fake-upstream": f"gate;name={gate}"}
    )
    it = iter(stream)
    first = next(it)
    ex = one_exchange(upstream, session_id)
    assert ex.note == "gated", f"the first event reached the client only after the upstream went on ({ex.note})"
    assert first.choices[0].delta.role == "assistant"
    upstream.gate(gate).set()
    rest = "".join(chunk.choices[0].delta.content or "" for chunk in it if chunk.choices)
    assert rest == answer_text(ex.seq, ex.json(), "chat")
    assert ex.note == "gate opened"
    check_passthrough(ex, tee.exchanges[0])
    check_recorded(proxy.calls_of(session_id)[0], ex, stream=True)


def test_timings(proxy, upstream, session_id, tee):
    """A response head that comes 0.4 s late: first_byte_seconds and seconds say so."""
    oc = client(proxy, session_id, tee)
    oc.chat.completions.create(
        model="gpt-test", messages=MESSAGES, extra_headers={"x-fake-upstream": "plain;head_delay=0.4"}
    )
    [c] = proxy.calls_of(session_id)
    assert c["first_byte_seconds"] >= 0.4
    assert c["seconds"] >= c["first_byte_seconds"]


def test_error_status_reaches_the_sdk(proxy, upstream, session_id, tee):
    """A context-length 400 (which MiroThinker does not retry) comes back as it was sent."""
    oc = client(proxy, session_id, tee)
    with pytest.raises(openai.BadRequestError) as err:
        oc.chat.completions.create(
            model="gpt-test", messages=MESSAGES, extra_headers={"x-fake-upstream": "status;code=400"}
        )
    assert "maximum context length" in str(err.value)
    ex = one_exchange(upstream, session_id)
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex)
    assert c["response"]["status"] == 400
    assert c["response"]["body"]["error"]["code"] == "context_length_exceeded"


def test_sdk_retries_are_separate_calls_marked_by_the_sdk(proxy, upstream, session_id, tee):
    """The SDK's own retry after a 500: two calls, the second with x-stainless-retry-count 1."""
    oc = client(proxy, session_id, tee, max_retries=2)
    completion = oc.chat.completions.create(
        model="gpt-test", messages=MESSAGES, extra_headers={"x-fake-upstream": f"fail-once;id={session_id}"}
    )
    exs = upstream.find(SESSION, session_id)
    assert [e.status for e in exs] == [500, 200]
    assert completion.choices[0].message.content == answer_text(exs[1].seq, exs[1].json(), "chat")
    for ex, tee_ex in zip(exs, tee.exchanges, strict=True):
        check_passthrough(ex, tee_ex)
    calls = sorted(proxy.calls_of(session_id, count=2), key=lambda c: c["call"])
    assert len(calls) == 2
    assert [c["response"]["status"] for c in calls] == [500, 200]
    assert [header(c["request"], "x-stainless-retry-count") for c in calls] == ["0", "1"]
    assert calls[0]["call"] < calls[1]["call"]
    for c, ex in zip(calls, exs, strict=True):
        check_recorded(c, ex)


def test_gzip_response(proxy, upstream, session_id, tee):
    """A gzip-compressed answer (the real services compress when the client accepts it)
    reaches the client compressed and unchanged; the SDK decodes it. The recording keeps
    the bytes that passed: the JSON itself, or its compressed bytes in body_base64."""
    import base64
    import gzip

    oc = client(proxy, session_id, tee)
    completion = oc.chat.completions.create(
        model="gpt-test", messages=MESSAGES, extra_headers={"x-fake-upstream": "gzip"}
    )
    ex = one_exchange(upstream, session_id)
    assert ex.response_headers.get("content-encoding") == "gzip"
    request, response, raw = tee.exchanges[0]
    assert response.headers["content-encoding"] == "gzip"
    check_passthrough(ex, tee.exchanges[0])
    plain = gzip.decompress(bytes(ex.sent))
    assert completion.choices[0].message.content == json.loads(plain)["choices"][0]["message"]["content"]
    [c] = proxy.calls_of(session_id)
    check_line(c)
    resp = c["response"]
    assert header(resp, "content-encoding") == "gzip"
    if "body" in resp:
        assert resp["body"] == json.loads(plain)
    else:
        assert gzip.decompress(base64.b64decode(resp["body_base64"])) == plain, sorted(resp)
        assert resp["bytes"] == ex.sent_len


def test_models_list_get_without_body(proxy, upstream, session_id, tee):
    oc = client(proxy, session_id, tee)
    models = oc.models.list()
    assert [m.id for m in models.data] == ["gpt-test"]
    ex = one_exchange(upstream, session_id)
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_line(c)
    assert c["request"]["method"] == "GET"
    assert c["request"]["bytes"] == 0
    assert not {"body", "body_text", "body_base64"} & set(c["request"])
    assert c["response"]["body"]["data"][0]["id"] == "gpt-test"


def test_concurrent_calls(proxy, upstream, tee):
    """Eight SDK calls at once, streamed and plain: each gets its own answer; the
    recording has eight lines with distinct call numbers, each the call that upstream saw."""
    import uuid

    sessions = [f"task-{n}-{uuid.uuid4()}" for n in range(8)]
    results: dict[str, str] = {}
    errors: list[BaseException] = []

    def run(n: int, session: str):
        try:
            oc = client(proxy, session, TeeTransport(), timeout=60)
            if n % 2:
                s = oc.chat.completions.create(
                    model="gpt-test",
                    messages=MESSAGES,
                    stream=True,
                    extra_headers={"x-fake-upstream": "slow;delay=0.02"},
                )
                results[session] = "".join(ch.choices[0].delta.content or "" for ch in s if ch.choices)
            else:
                results[session] = (
                    oc.chat.completions.create(model="gpt-test", messages=MESSAGES).choices[0].message.content
                )
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(n, s)) for n, s in enumerate(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    numbers = []
    for n, session in enumerate(sessions):
        ex = one_exchange(upstream, session)
        [c] = proxy.calls_of(session)
        check_recorded(c, ex, stream=bool(n % 2))
        if not n % 2:
            assert results[session] == answer_text(ex.seq, ex.json(), "chat")
        numbers.append(c["call"])
    assert len(set(numbers)) == 8


def test_async_client(proxy, upstream, session_id):
    """AsyncOpenAI as MiroThinker builds it with async_client (DefaultAsyncHttpxClient with
    the session header): the raw bytes of a plain and a streamed call are the upstream's."""
    import asyncio

    async def run():
        oc = openai.AsyncOpenAI(
            api_key=OPENAI_KEY,
            base_url=proxy.url + "/v1",
            http_client=openai.DefaultAsyncHttpxClient(headers={SESSION: session_id}),
            max_retries=0,
        )
        raw = await oc.chat.completions.with_raw_response.create(model="gpt-test", messages=MESSAGES)
        completion = raw.parse()
        async with oc.chat.completions.with_streaming_response.create(
            model="gpt-test", messages=MESSAGES, stream=True
        ) as r:
            streamed = b"".join([chunk async for chunk in r.iter_bytes()])
        await oc.close()
        return completion, raw.http_response.content, streamed

    completion, plain, streamed = asyncio.run(run())
    exs = upstream.find(SESSION, session_id)
    assert len(exs) == 2
    assert plain == bytes(exs[0].sent)
    assert streamed == bytes(exs[1].sent)
    assert completion.choices[0].message.content == answer_text(exs[0].seq, exs[0].json(), "chat")
    calls = sorted(proxy.calls_of(session_id, count=2), key=lambda c: c["call"])
    check_recorded(calls[0], exs[0])
    check_recorded(calls[1], exs[1], stream=True)


def test_sdk_timeout_and_its_retry(proxy, upstream, session_id, tee):
    """The SDK gives up on a slow upstream (its timeout, as MiroThinker's 'LLM | Timeout
    Error') and retries once: two calls, both client_disconnected with their request,
    the second marked x-stainless-retry-count 1."""
    oc = client(proxy, session_id, tee, max_retries=1, timeout=1.0)
    with pytest.raises(openai.APITimeoutError):
        oc.chat.completions.create(
            model="gpt-test", messages=MESSAGES, extra_headers={"x-fake-upstream": "plain;head_delay=4"}
        )
    calls = sorted(proxy.calls_of(session_id, count=2, timeout=30), key=lambda c: c["call"])
    assert len(calls) == 2
    for c in calls:
        check_line(c)
        assert c["error"]["kind"] == "client_disconnected", c["error"]
        assert c.get("response") is None
        assert c["request"]["body"]["messages"] == MESSAGES
    assert [header(c["request"], "x-stainless-retry-count") for c in calls] == ["0", "1"]
    assert_no_secrets(proxy.recording)


def test_sdk_stops_at_done_before_the_body_ends(proxy, upstream, session_id, tee):
    """The openai SDK stops reading at `data: [DONE]` and closes; here the upstream ends
    its body 0.3 s later. The SDK has the whole answer and so must the recording: every
    byte of the stream, whatever `error` says of the hang-up (today client_disconnected)."""
    oc = client(proxy, session_id, tee)
    stream = oc.chat.completions.create(
        model="gpt-test", messages=MESSAGES, stream=True, extra_headers={"x-fake-upstream": "plain;tail_delay=0.3"}
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    ex = one_exchange(upstream, session_id)
    assert text == answer_text(ex.seq, ex.json(), "chat")
    [c] = proxy.calls_of(session_id)
    check_line(c)
    assert c["error"] is None or c["error"]["kind"] == "client_disconnected", c["error"]
    assert c["response"]["bytes"] == ex.sent_len
    assert c["response"]["body_text"] == bytes(ex.sent).decode()


def test_upstream_drops_idle_connections(proxy, upstream, session_id, tee):
    """The upstream closes a keep-alive connection after 0.1 s idle, as servers do, while
    the SDK's calls come 0 to 0.3 s apart: the proxy never sends a call down a connection
    the upstream has closed (every call gets its 200, one recorded call each)."""
    oc = client(proxy, session_id, tee)
    gaps = [0.3, 0.0, 0.3, 0.01] * 3
    for gap in gaps:
        oc.chat.completions.create(
            model="gpt-test", messages=MESSAGES, extra_headers={"x-fake-upstream": "plain;idle_close=0.1"}
        )
        time.sleep(gap)
    exs = upstream.find(SESSION, session_id)
    assert [e.status for e in exs] == [200] * len(gaps)
    calls = proxy.calls_of(session_id, count=len(gaps))
    assert len(calls) == len(gaps) and all(c["error"] is None for c in calls)
