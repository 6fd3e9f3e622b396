#!/usr/bin/env python3
"""Builds one benchmark input per input format from fixtures/harnesses/,
each about SIZE bytes, by repeating the fixture's traces with fresh ids.

usage: make_formats.py OUT_DIR [SIZE]      SIZE: bytes, K/M suffix (default 30M)
Writes OUT_DIR/<format>.<ext> and prints their names.
"""
import copy
import io
import json
import os
import sys
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "harnesses")


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def load(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return json.load(f)


def lines_of(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def repeat(size, make):
    """Calls make(i) -> text until the texts add up to size bytes."""
    out, total, i = [], 0, 0
    while total < size:
        text = make(i)
        out.append(text)
        total += len(text.encode())
        i += 1
    return out


def tau_bench(size):
    runs = load("tau-bench/gpt-4o-airline.first-3.json")
    def run(i):
        r = copy.copy(runs[i % len(runs)])
        r["task_id"] = i
        return json.dumps(r, ensure_ascii=False)
    return "[\n" + ",\n".join(repeat(size, run)) + "\n]\n"


def chat_jsonl(size):
    runs = load("tau-bench/gpt-4o-airline.first-3.json")
    return "".join(repeat(size, lambda i: json.dumps(
        {"id": f"conv-{i}", "messages": runs[i % len(runs)]["traj"]}, ensure_ascii=False) + "\n"))


def inspect_json(size):
    log = load("inspect/2025-05-12T20-27-36-04-00_browser.json")
    sample = log["samples"][0]
    one = len(json.dumps(sample, ensure_ascii=False).encode())
    samples = []
    for i in range(max(1, size // one)):
        s = copy.copy(sample)
        s["id"] = i
        samples.append(s)
    log = dict(log, samples=samples)
    return json.dumps(log, indent=2, ensure_ascii=False)


def inspect_eval(size, path):
    log = load("inspect/2025-05-12T20-27-36-04-00_browser.json")
    sample = log["samples"][0]
    header = {k: v for k, v in log.items() if k != "samples"}
    text = json.dumps(sample, ensure_ascii=False)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps(header))
        for i in range(max(1, size // len(text.encode()))):
            z.writestr(f"samples/{i}_epoch_1.json", json.dumps(dict(sample, id=i), ensure_ascii=False))


def zstd_zipfile():
    """Python's zipfile with ZIP method 93 (zstd), as Inspect writes it: the
    standard library's from Python 3.14, else the `zipfile_zstd` patch that
    Inspect itself installs (run with scripts/test-writers.sh's venv)."""
    if not hasattr(zipfile, "ZIP_ZSTANDARD"):
        try:
            import zipfile_zstd  # noqa: F401  (patches zipfile)
        except ImportError:
            return None
    return zipfile.ZIP_ZSTANDARD


def eval_samples(path):
    """The header and samples of an .eval archive."""
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read("header.json"))
        names = [n for n in z.namelist() if n.startswith("samples/")]
        return header, [json.loads(z.read(n)) for n in sorted(names)]


def inspect_zstd(size, path, method):
    """The samples Inspect 0.3.285 wrote (events, usage, scores), repeated."""
    header, samples = eval_samples(os.path.join(ROOT, "inspect", "mockllm-0.3.285.eval"))
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("header.json", json.dumps(header))
        total, i = 0, 0
        while total < size:
            s = dict(samples[i % len(samples)], id=i + 1)
            text = json.dumps(s)
            z.writestr(f"samples/{i + 1}_epoch_1.json", text)
            total += len(text)
            i += 1


def inspect_big_samples(path, method, count, sample_bytes):
    """`count` samples of about `sample_bytes` each, for peak memory: a tool
    call whose result is a long text (a large file read), highly
    compressible as such logs are."""
    header, samples = eval_samples(os.path.join(ROOT, "inspect", "mockllm-0.3.285.eval"))
    base = samples[0]
    line = "src/module_{:06d}.py: def handler(request): return render(request, 'page.html')\n"
    text = "".join(line.format(n) for n in range(sample_bytes // len(line.format(0))))
    messages = [dict(m, content=text) if m.get("role") == "tool" else m for m in base["messages"]]
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("header.json", json.dumps(header))
        for i in range(count):
            s = dict(base, id=i + 1, messages=messages, events=[])
            z.writestr(f"samples/{i + 1}_epoch_1.json", json.dumps(s))


def openhands(size):
    events = load("openhands/basic.json") + load("openhands/wrong_initial_state.json")
    return "".join(repeat(size, lambda i: json.dumps({"instance_id": f"run-{i}", "history": events}) + "\n"))


def swe_agent(size):
    trajs = [load("swe-agent/function_calling_simple.traj"), load("swe-agent/networking_1.traj")]
    return "".join(repeat(size, lambda i: json.dumps(dict(trajs[i % 2], instance_id=f"i-{i}")) + "\n"))


def mini_swe_agent(size):
    trajs = [load("mini-swe-agent/text-actions.traj.json"), load("mini-swe-agent/tool-calls.traj.json")]
    return "".join(repeat(size, lambda i: json.dumps(dict(trajs[i % 2], instance_id=f"i-{i}")) + "\n"))


def claude_code(size):
    lines = lines_of("claude-code/session.jsonl")
    def session(i):
        out = []
        for l in lines:
            l = dict(l)
            if "sessionId" in l:
                l["sessionId"] = f"s-{i}"
            if isinstance(l.get("message"), dict) and "id" in l["message"]:
                l["message"] = dict(l["message"], id=f'{l["message"]["id"]}-{i}')
            out.append(json.dumps(l) + "\n")
        return "".join(out)
    return "".join(repeat(size, session))


def otel(size):
    docs = [load("otel/genai-weather.otlp.json")] + lines_of("otel/openinference.otlp.jsonl")
    def doc(i):
        d = docs[i % len(docs)]
        text = json.dumps(d)
        return text.replace('"traceId": "', f'"traceId": "{i:08x}') + "\n"
    return "".join(repeat(size, doc))


def openhands_v1_events(size):
    """One long V1 conversation (events.jsonl): the fixture's events again
    and again, with fresh event, call and response ids."""
    events = lines_of("openhands-v1/events.jsonl")
    def round_(i):
        out = []
        for e in events:
            if i and e["kind"] == "SystemPromptEvent":
                continue
            text = json.dumps(e)
            for key in ("chatcmpl-", "toolu_0", '"e'):
                text = text.replace(key, f"{key}{i}x")
            out.append(text + "\n")
        return "".join(out)
    return "".join(repeat(size, round_))


def openhands_v1_eval(size):
    events = lines_of("openhands-v1/events.jsonl")
    return "".join(repeat(size, lambda i: json.dumps(
        {"instance_id": f"run-{i}", "history": events, "report": {"resolved": i % 2 == 0}}) + "\n"))


def completion_logs(size):
    logs = [load("openhands-v1/gpt-4o-1762178521.410-a1b2.json"),
            load("openhands-v1/qwen3-coder-1762178531.020-c3d4.json")]
    return "".join(repeat(size, lambda i: json.dumps(dict(logs[i % 2], id=f"log-{i}")) + "\n"))


def tau2(size):
    doc = load("tau2/telecom-results.json")
    sims = doc["simulations"]
    def sim(i):
        return json.dumps(dict(sims[i % len(sims)], trial=i), ensure_ascii=False)
    body = ",\n".join(repeat(size, sim))
    head = json.dumps({k: v for k, v in doc.items() if k != "simulations"})[:-1]
    return head + ', "simulations": [\n' + body + "\n]}\n"


def otel_plain_lines(size):
    """Plain-JSON spans one a line, each trace with fresh ids."""
    docs = [load("otel/any-agent-openai.spans.json")["spans"],
            load("otel/any-agent-smolagents.spans.json")]
    def trace(i):
        out = []
        for s in docs[i % 2]:
            s = copy.deepcopy(s)
            s["context"]["trace_id"] = i
            if isinstance(s.get("parent"), dict) and s["parent"].get("trace_id") is not None:
                s["parent"]["trace_id"] = i
            out.append(json.dumps(s) + "\n")
        return "".join(out)
    return "".join(repeat(size, trace))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[1]
    size = parse_size(sys.argv[2] if len(sys.argv) == 3 else "30M")
    os.makedirs(out, exist_ok=True)
    texts = {
        "chat-tau-bench.json": tau_bench,
        "chat.jsonl": chat_jsonl,
        "inspect.json": inspect_json,
        "openhands.jsonl": openhands,
        "swe-agent.jsonl": swe_agent,
        "mini-swe-agent.jsonl": mini_swe_agent,
        "claude-code.jsonl": claude_code,
        "otel.jsonl": otel,
        "openhands-v1-events.jsonl": openhands_v1_events,
        "openhands-v1-eval.jsonl": openhands_v1_eval,
        "completion-logs.jsonl": completion_logs,
        "tau2.json": tau2,
        "otel-plain.jsonl": otel_plain_lines,
    }
    for name, make in texts.items():
        path = os.path.join(out, name)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(make(size))
        print(path)
    path = os.path.join(out, "inspect.eval")
    if not os.path.exists(path):
        inspect_eval(size, path)
    print(path)
    method = zstd_zipfile()
    if method is None:
        print("make_formats: no zstd for zipfile (Python < 3.14 without zipfile_zstd): "
              "inspect-zstd.eval not built", file=sys.stderr)
        return
    path = os.path.join(out, "inspect-zstd.eval")
    if not os.path.exists(path):
        inspect_zstd(size, path, method)
    print(path)
    # Peak memory: 80 samples of 25 MB (2 GB unpacked), issue 23's case.
    path = os.path.join(out, "big-samples.eval")
    if not os.path.exists(path):
        inspect_big_samples(path, method, 80, 25 << 20)


if __name__ == "__main__":
    main()
