"""The `anthropic` SDK (Messages, plain and streamed, text and tool use) through
`mirotrace record` to the fake upstream: byte-for-byte pass-through, one recorded
call each with its session header, and neither `x-api-key` nor `authorization` kept."""

from __future__ import annotations

import json

import anthropic
import pytest

from harness import (
    ANTHROPIC_KEY,
    Proxy,
    TeeTransport,
    assert_no_secrets,
    check_passthrough,
    check_recorded,
    header,
)
from upstream import TOOL_ARGS, answer_text

SESSION = "x-upstream-session-id"
MESSAGES = [{"role": "user", "content": "Wie wird das Wetter in Zürich?"}]
TOOLS = [
    {
        "name": "get_weather",
        "description": "the forecast",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
    }
]


def client(proxy: Proxy, session: str, tee: TeeTransport, style: str = "default_headers", **kw) -> anthropic.Anthropic:
    if style == "default_headers":
        return anthropic.Anthropic(
            api_key=ANTHROPIC_KEY,
            base_url=proxy.url,
            default_headers={SESSION: session},
            http_client=anthropic.DefaultHttpxClient(transport=tee),
            max_retries=0,
            **kw,
        )
    # MiroThinker's AnthropicClient: DefaultHttpxClient(headers={"x-upstream-session-id": task_id})
    return anthropic.Anthropic(
        api_key=ANTHROPIC_KEY,
        base_url=proxy.url,
        http_client=anthropic.DefaultHttpxClient(headers={SESSION: session}, transport=tee),
        max_retries=0,
        **kw,
    )


def one_exchange(upstream, session):
    found = upstream.find(SESSION, session)
    assert len(found) == 1, [(e.path, e.status) for e in found]
    return found[0]


def key_header(ex) -> str:
    """The header this SDK release carries the key in (x-api-key, or authorization)."""
    if ex.header("x-api-key") == ANTHROPIC_KEY:
        return "x-api-key"
    assert ex.header("authorization") == f"Bearer {ANTHROPIC_KEY}", "the proxy must forward the credential"
    return "authorization"


@pytest.mark.parametrize("style", ["default_headers", "http_client"])
def test_messages_plain(proxy, upstream, session_id, tee, style):
    ac = client(proxy, session_id, tee, style)
    message = ac.messages.create(model="claude-test", max_tokens=512, system="Be brief.", messages=MESSAGES)
    ex = one_exchange(upstream, session_id)
    assert message.content[0].text == answer_text(ex.seq, ex.json(), "anthropic")
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == 15
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, key_header=key_header(ex))
    assert header(c["request"], SESSION) == session_id
    assert c["request"]["path"] == "/v1/messages"
    assert c["request"]["body"]["system"] == "Be brief."
    assert c["request"]["body"]["max_tokens"] == 512
    assert header(c["request"], "anthropic-version")
    assert c["response"]["body"]["content"][0]["text"] == message.content[0].text
    assert_no_secrets(proxy.recording)


def test_messages_stream_raw_events(proxy, upstream, session_id, tee):
    ac = client(proxy, session_id, tee)
    events = list(ac.messages.create(model="claude-test", max_tokens=64, messages=MESSAGES, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "message_delta" in kinds
    ex = one_exchange(upstream, session_id)
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta")
    assert text == answer_text(ex.seq, ex.json(), "anthropic")
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, key_header=key_header(ex), stream=True)
    body = c["response"]["body_text"]
    assert body.startswith("event: message_start\ndata: ")
    assert body.endswith('event: message_stop\ndata: {"type":"message_stop"}\n\n')
    assert_no_secrets(proxy.recording)


def test_messages_stream_tool_use(proxy, upstream, session_id, tee):
    """The SDK's stream helper puts the input_json_delta pieces back together."""
    ac = client(proxy, session_id, tee, style="http_client")
    with ac.messages.stream(model="claude-test", max_tokens=64, messages=MESSAGES, tools=TOOLS) as s:
        final = s.get_final_message()
    assert final.stop_reason == "tool_use"
    [text, tool] = final.content
    assert tool.type == "tool_use" and tool.name == "get_weather"
    assert tool.input == json.loads(TOOL_ARGS)
    ex = one_exchange(upstream, session_id)
    assert text.text == answer_text(ex.seq, ex.json(), "anthropic")
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, key_header=key_header(ex), stream=True)
    assert c["request"]["body"]["tools"] == TOOLS
    assert '"type":"input_json_delta"' in c["response"]["body_text"]


def test_messages_plain_tool_use(proxy, upstream, session_id, tee):
    ac = client(proxy, session_id, tee)
    message = ac.messages.create(model="claude-test", max_tokens=64, messages=MESSAGES, tools=TOOLS)
    assert message.content[1].input == json.loads(TOOL_ARGS)
    ex = one_exchange(upstream, session_id)
    check_passthrough(ex, tee.exchanges[0])
    check_recorded(proxy.calls_of(session_id)[0], ex, key_header=key_header(ex))


def test_overloaded_reaches_the_sdk(proxy, upstream, session_id, tee):
    ac = client(proxy, session_id, tee)
    with pytest.raises(anthropic.APIStatusError) as err:
        ac.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=MESSAGES,
            extra_headers={"x-fake-upstream": "status;code=529;message=Overloaded"},
        )
    assert err.value.status_code == 529
    ex = one_exchange(upstream, session_id)
    check_passthrough(ex, tee.exchanges[0])
    [c] = proxy.calls_of(session_id)
    check_recorded(c, ex, key_header=key_header(ex))
    assert c["response"]["body"]["error"]["type"] == "overloaded_error"


def test_async_client(proxy, upstream, session_id):
    """AsyncAnthropic as MiroThinker builds it with async_client: the raw bytes of a
    plain and a streamed call are the upstream's."""
    import asyncio

    async def run():
        ac = anthropic.AsyncAnthropic(
            api_key=ANTHROPIC_KEY,
            base_url=proxy.url,
            http_client=anthropic.DefaultAsyncHttpxClient(headers={SESSION: session_id}),
            max_retries=0,
        )
        raw = await ac.messages.with_raw_response.create(model="claude-test", max_tokens=64, messages=MESSAGES)
        message = raw.parse()
        if asyncio.iscoroutine(message):  # releases where the async raw response parses asynchronously
            message = await message
        async with ac.messages.with_streaming_response.create(
            model="claude-test", max_tokens=64, messages=MESSAGES, stream=True
        ) as r:
            streamed = b"".join([chunk async for chunk in r.iter_bytes()])
        await ac.close()
        return message, raw.http_response.content, streamed

    message, plain, streamed = asyncio.run(run())
    exs = upstream.find(SESSION, session_id)
    assert len(exs) == 2
    assert plain == bytes(exs[0].sent)
    assert streamed == bytes(exs[1].sent)
    assert message.content[0].text == answer_text(exs[0].seq, exs[0].json(), "anthropic")
    calls = sorted(proxy.calls_of(session_id, count=2), key=lambda c: c["call"])
    check_recorded(calls[0], exs[0], key_header=key_header(exs[0]))
    check_recorded(calls[1], exs[1], key_header=key_header(exs[1]), stream=True)
