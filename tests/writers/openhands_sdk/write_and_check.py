"""Drives a conversation with the current openhands-sdk release, its LLM
call answered by a mocked LiteLLM (no network): two responses, each calling
one of the SDK's built-in tools (`think`, then `finish`). The SDK persists
the conversation's events (one JSON file per event) and, with
`log_completions`, one completion log per LLM call. Then checks that
mirotrace reads them: the events (gathered into events.jsonl, one event a
line, in the SDK's order) give one verdict per LLM response with its call
parsed; each completion log gives one verdict with its call.

usage: write_and_check.py MIROTRACE_BIN OUT_DIR
"""
import glob
import json
import os

# Offline: LiteLLM's bundled cost map, no banner.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
import shutil
import subprocess
import sys
from unittest.mock import patch

from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, ModelResponse, Usage
from litellm.types.utils import Message as LiteLLMMessage
from pydantic import SecretStr

from openhands.sdk import LLM, Agent, Conversation


def response(n, name, arguments):
    call = ChatCompletionMessageToolCall(id=f"call_{n}", type="function",
                                         function=Function(name=name, arguments=json.dumps(arguments)))
    message = LiteLLMMessage(role="assistant", content=f"Step {n}.", tool_calls=[call])
    return ModelResponse(id=f"resp-{n}", created=0, model="gpt-4o", object="chat.completion",
                         choices=[Choices(index=0, message=message, finish_reason="tool_calls")],
                         usage=Usage(prompt_tokens=100 + n, completion_tokens=10, total_tokens=110 + n))


def write(out):
    shutil.rmtree(out, ignore_errors=True)
    logs = os.path.join(out, "completions")
    llm = LLM(usage_id="writer-test", model="gpt-4o", api_key=SecretStr("offline"),
              log_completions=True, log_completions_folder=logs)
    agent = Agent(llm=llm, tools=[])
    conversation = Conversation(agent=agent, workspace=out, persistence_dir=os.path.join(out, "state"),
                                visualizer=None)
    replies = [response(1, "think", {"thought": "Nothing to run."}),
               response(2, "finish", {"message": "Done."})]
    with patch("openhands.sdk.llm.llm.litellm_completion", side_effect=replies):
        conversation.send_message("Say done.")
        conversation.run()
    conversation.close()
    files = sorted(glob.glob(os.path.join(out, "state", "**", "events", "*.json"), recursive=True))
    assert files, "the SDK persisted no events"
    events = os.path.join(out, "events.jsonl")
    with open(events, "w", encoding="utf-8") as f:
        for name in files:
            with open(name, encoding="utf-8") as e:
                f.write(json.dumps(json.load(e)) + "\n")
    return events, sorted(glob.glob(os.path.join(logs, "*.json")))


def replay(binary, path):
    run = subprocess.run([binary, "replay", "--plain-reply", "continue", "--format", "jsonl", path],
                         capture_output=True, text=True)
    assert run.returncode == 0, (path, run.returncode, run.stderr)
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def main():
    binary, out = sys.argv[1], sys.argv[2]
    events, logs = write(out)
    verdicts = replay(binary, events)
    assert [len(v["calls"]) for v in verdicts] == [1, 1], verdicts
    assert all(v["outcome"] != "llm_failed" for v in verdicts), verdicts
    assert len(logs) == 2, logs
    for log in logs:
        v = replay(binary, log)
        assert len(v) == 1 and len(v[0]["calls"]) == 1, (log, v)
    print(f"openhands_sdk: {len(verdicts)} verdicts from the events, {len(logs)} completion logs read")


if __name__ == "__main__":
    main()
