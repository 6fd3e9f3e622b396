"""Writes an agent's spans with the current OpenTelemetry Python SDK's
ConsoleSpanExporter (its own `to_json` output, documents one after another),
with GenAI semantic-convention attributes, then checks that mirotrace reads
them: one verdict per LLM span, every call parsed, the tool's result found.

usage: write_and_check.py MIROTRACE_BIN OUT_DIR
"""
import json
import os
import subprocess
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor


def write(path):
    provider = TracerProvider()
    out = open(path, "w", encoding="utf-8")
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
    tracer = provider.get_tracer("writer-test")
    call = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                               "arguments": {"city": "Paris"}}], "finish_reason": "tool_call"}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Rainy in Paris."}],
               "finish_reason": "stop"}]
    with tracer.start_as_current_span("invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}):
        with tracer.start_as_current_span("chat gpt-4o", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.output.messages": json.dumps(call),
            "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 7}):
            pass
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.result": "rainy"}):
            pass
        with tracer.start_as_current_span("chat gpt-4o", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.output.messages": json.dumps(answer)}):
            pass
    provider.shutdown()
    out.close()


def main():
    binary, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "console-spans.json")
    write(path)
    run = subprocess.run([binary, "replay", "--plain-reply", "continue", "--format", "jsonl", path],
                         capture_output=True, text=True)
    assert run.returncode == 0, (run.returncode, run.stderr)
    verdicts = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert len(verdicts) == 2, verdicts
    assert [len(v["calls"]) for v in verdicts] == [1, 0], verdicts
    assert verdicts[0]["outcome"] == "ok", verdicts[0]
    print(f"otel_console: {len(verdicts)} verdicts from the SDK's console exporter")


if __name__ == "__main__":
    main()
