"""Writes an Inspect AI `.eval` log with the installed (current) release,
on its offline `mockllm` model, and the figures mirotrace must read from
it, computed with Inspect's own `read_eval_log`.

    python inspect_log.py OUT_DIR   → OUT_DIR/<log>.eval, OUT_DIR/expected.json

Every scripted output carries a `usage`: without one, mockllm counts tokens
with tiktoken, which downloads its encoding and fails offline.
"""

import json
import sys
from pathlib import Path

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import ToolCall, tool

MODEL = "mockllm/model"


@tool
def add():
    async def execute(x: int, y: int):
        """Adds two numbers.

        Args:
            x: The first number.
            y: The second number.
        """
        return str(x + y)

    return execute


@tool
def page():
    async def execute(n: int):
        """Returns a long page of text (stored by Inspect as an attachment).

        Args:
            n: The page number.
        """
        return f"page {n}: " + "lorem ipsum dolor sit amet " * 40

    return execute


def usage(i, o):
    return ModelUsage(input_tokens=i, output_tokens=o, total_tokens=i + o)


def calls_output(calls, text=""):
    """One response with these tool calls (several: a parallel call)."""
    message = ChatMessageAssistant(
        content=text,
        model="model",
        source="generate",
        tool_calls=[
            ToolCall(id=f"call_{name}_{n}", function=name, arguments=args)
            for n, (name, args) in enumerate(calls)
        ],
    )
    out = ModelOutput(
        model="model",
        choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")],
    )
    out.usage = usage(50, 10)
    return out


def script(input, tools, tool_choice, config):
    """Turn by turn, from the conversation so far: tool calls, then an answer."""
    question = next(m.text for m in input if m.role == "user")
    turns = sum(1 for m in input if m.role == "assistant")
    a, b = (int(t) for t in question.split()[-2:])
    if "page" in question and turns == 0:
        return calls_output([("page", {"n": a}), ("page", {"n": b})])
    if turns == 0:
        out = ModelOutput.for_tool_call(MODEL, "add", {"x": a, "y": b}, tool_call_id="c0")
    elif turns == 1 and a % 2 == 0:
        out = ModelOutput.for_tool_call(MODEL, "add", {"x": b, "y": a}, tool_call_id="c1")
    else:
        # Sample 3's answer is wrong on purpose: an `I` score.
        answer = a + b + (1 if a == 3 else 0)
        out = ModelOutput.from_content(MODEL, f"The answer is {answer}.")
    out.usage = usage(40 + 10 * turns, 7)
    return out


def main(out_dir: Path) -> None:
    questions = ["add 1 2", "add 2 5", "add 3 4", "add 4 4", "page 5 6"]
    dataset = [
        Sample(id=n + 1, input=q, target=str(sum(int(t) for t in q.split()[-2:])))
        for n, q in enumerate(questions)
    ]
    task = Task(dataset=dataset, solver=[use_tools([add(), page()]), generate()], scorer=includes())
    model = get_model(MODEL, custom_outputs=script)
    [log] = inspect_eval(task, model=model, log_dir=str(out_dir), log_format="eval", display="none")
    log = read_eval_log(log.location)
    samples = {}
    for s in log.samples:
        assistants = [m for m in s.messages if m.role == "assistant"]
        score = next(iter(s.scores.values())).value if s.scores else None
        samples[f"{s.id}_epoch_{s.epoch}"] = {
            "assistant_messages": len(assistants),
            "tool_calls": sum(len(m.tool_calls or []) for m in assistants),
            "score": score,
            "output_tokens": sum(
                e.output.usage.output_tokens
                for e in s.events
                if e.event == "model" and e.output.usage is not None
            ),
            "attachments": len(s.attachments),
        }
    expected = {"log": log.location, "samples": samples}
    (out_dir / "expected.json").write_text(json.dumps(expected, indent=1))
    print(json.dumps(expected))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
