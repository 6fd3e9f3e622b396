#!/usr/bin/env python3
"""Run upstream MiroThinker's own orchestrator and OpenAI client against a scripted model.

This is the generator of tests/data/record-run (see its README.md). It is run by a developer,
never by CI, inside the virtual environment that scripts/record-run/setup.sh makes (upstream's
code at MiroMindAI/MiroThinker@1c4253f6774b exported outside the project, its pinned
dependencies installed there):

    scripts/record-run/setup.sh
    cargo build --bin mirotrace
    /tmp/mtvenv/bin/python scripts/record-run/run_upstream.py \
        --upstream /tmp/mt --conformance /work/shared/conformance/tasklogs --out /tmp/run \
        --proxy target/debug/mirotrace --direct-recording /tmp/run/direct.jsonl
    python3 scripts/record-run/compare_logs.py /tmp/run/logs /work/shared/conformance/tasklogs/logs
    python3 scripts/record-run/compare_recordings.py /tmp/run/recording.jsonl /tmp/run/direct.jsonl
    scripts/record-run/store.sh /tmp/run      # into tests/data/record-run, zstd
    python3 scripts/record-run/figures.py /tmp/run

It takes about 3 minutes for the 17 tasks of SUBSET (most of it upstream's timeouts, shortened),
about 10 for `--tasks all`. Without --proxy the scripted server writes the recording itself.

What runs is upstream's own code: `execute_task_pipeline` (TaskLog, Orchestrator, AnswerGenerator,
ToolExecutor) and its real `OpenAIClient` (the real `openai` SDK, non-streaming, header
`x-upstream-session-id: {task_id}-{uuid4}`) with `llm.base_url` pointing at a scripted model
server of ours (directly, or through `mirotrace record` with --proxy). Only these are replaced:

- the tool managers: scripted ones that return the tool results recorded in traces.jsonl for the
  attempt being executed (upstream's ToolManager would start MCP servers);
- monkeypatches (no upstream file is edited): `asyncio.sleep` in the client and the orchestrator
  (upstream waits 30 s between its retries and 5 s after a failed call) returns at once;
  `date.today()` in the orchestrator is 2025-06-01 (the date in the conformance logs' prompts);
  `tiktoken.get_encoding` returns a 4-characters-a-token estimator (tiktoken downloads its
  encodings, there is no network); the OpenAI SDK's timeout is 1 s and its retry back-off
  10-50 ms, and the 600 s `with_timeout` around `create_message` is 40 s, so that timeouts can be
  played in seconds.

The scripted model answers each call with the next attempt of traces.jsonl for that task and
agent session, which it recognises from the conversation alone (a first user message ending in
upstream's subtask suffix is a sub-agent's, a sub-agent conversation starting with a new subtask
opens the next session, the summarize prompt as last message marks a summary call), and plays each attempt's failure the way a
real server would make upstream's client see it (see `attempt_plan`). The injections listed in
INJECT add what a real run has and the conformance run lacked, without changing any decision.
"""
import argparse
import ast
import asyncio
import collections
import datetime as dt
import glob
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SUBTASK_SUFFIX = "\n\nPlease provide the answer and detailed supporting information of the subtask given to you."
FILLER = "No further recorded attempts."
T_HTTP = 1.0  # the SDK's timeout (upstream: 600 s)
T_ASYNC = 40.0  # upstream's with_timeout around create_message (upstream: 600 s)

# Injections: (task, session, attempt index or "summary", kind); `task#N` only in the N-th run
# of a task run twice. Each is played before the
# attempt's own answer, inside the same upstream attempt, so no decision changes.
#   length_once: a truncated answer with finish_reason "length" (upstream retries, max_tokens x 1.1)
#   sdk_500:     one HTTP 500 (the OpenAI SDK retries by itself, x-stainless-retry-count: 1)
#   sdk_429x3:   three HTTP 429 (the SDK gives up after 2 retries; upstream logs LLM | API Error)
#   repeat:      an answer whose last 50 characters repeat over 5 times (LLM | Repeat Detected)
#   drop_once:   the server closes the connection without answering (the SDK retries)
INJECT = [
    ("tld-71-0000", "main", 0, "length_once"),
    ("tld-71-0000", "agent-browsing_1", 1, "sdk_500"),
    ("tld-71-0009", "main", 2, "length_once"),
    ("tld-71-0009", "main", 2, "sdk_500"),
    ("tld-71-0022", "main", 2, "drop_once"),
    ("tld-71-0022", "agent-browsing_1", 0, "repeat"),
    ("tld-71-0022", "agent-browsing_1", "summary", "length_once"),
    ("tld-71-0026", "main", 3, "sdk_429x3"),
    ("tld-71-0026", "main", "summary", "sdk_500"),
    ("tld-71-0038#1", "main", 0, "repeat"),
    ("tld-71-0038#2", "main", 1, "sdk_429x3"),
]
# Tasks run with keep_tool_result (upstream's tool-result retention: LLM | Message Retention).
KEEP_TOOL_RESULT = {"tld-71-0026": 2}
# Tasks run twice (two task logs, two uuids).
RUN_TWICE = ["tld-71-0038"]
# The tasks of tests/data/record-run: the fewest conformance tasks (by recording size) that keep
# every kind of event of the 60 (every outcome, rollback reason, flag, llm_error, finish_reason,
# step name, streak length, a crash, a session the script has no attempt for, ...).
SUBSET = [
    "tld-71-0000", "tld-71-0001", "tld-71-0006", "tld-71-0007", "tld-71-0008", "tld-71-0009",
    "tld-71-0019", "tld-71-0022", "tld-71-0026", "tld-71-0030", "tld-71-0036", "tld-71-0038",
    "tld-71-0039", "tld-71-0040", "tld-73-0001", "tld-73-0004", "tld-73-0006",
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# The script: traces.jsonl (every attempt) + the conformance logs (prompts, summaries, config)
# --------------------------------------------------------------------------------------------


def parse_tool_definitions(system_prompt):
    """The MCP server list rendered into a system prompt: upstream's generate_mcp_system_prompt
    (schemas as Python literals) or the native traces' prompt (schemas as JSON)."""
    start = system_prompt.find("\n## Server name: ")
    if start < 0:
        return []
    m = re.search(r"\n# (General Objective|Objective|Agent Specific Objective)", system_prompt[start:])
    body = system_prompt[start : start + m.start()] if m else system_prompt[start:]
    servers = []
    for block in body.split("\n## Server name: ")[1:]:
        name, _, rest = block.partition("\n")
        tools = []
        for t in re.finditer(
            r"### Tool name: (.*?)\nDescription: (.*?)\nInput JSON schema: (.*?)\n(?=### Tool name: |\n|$)",
            rest + "\n",
            re.S,
        ):
            try:
                schema = ast.literal_eval(t.group(3))
            except (ValueError, SyntaxError):
                schema = json.loads(t.group(3))
            tools.append({"name": t.group(1), "description": t.group(2), "schema": schema})
        servers.append({"name": name.strip(), "tools": tools})
    return servers


class Script:
    def __init__(self, conformance):
        self.traces = [json.loads(l) for l in open(os.path.join(conformance, "traces.jsonl"), encoding="utf-8")]
        self.verdicts = [
            json.loads(l) for l in open(os.path.join(conformance, "traces.verdicts.jsonl"), encoding="utf-8")
        ]
        self.attempts = collections.defaultdict(list)  # (task, session) -> [(trace line, verdict)]
        for t, v in zip(self.traces, self.verdicts):
            session = t.get("session") or "main"
            assert v["trace_id"] == t["trace_id"] and v["session"] == session
            self.attempts[(t["trace_id"], session)].append((t, v))
        self.logs = {}
        for path in sorted(glob.glob(os.path.join(conformance, "logs", "task_*.json"))):
            d = json.load(open(path, encoding="utf-8"))
            self.logs[d["task_id"]] = d

    def task_ids(self):
        return sorted(self.logs)

    def main_system_prompt(self, task):
        """The main agent's prompt as the conformance log kept it, else the native trace's."""
        h = self.logs[task]["main_agent_message_history"]
        if isinstance(h, dict) and h.get("system_prompt"):
            return h["system_prompt"]
        return self.attempts[(task, "main")][0][0]["system_prompt"]

    def summary(self, task, session):
        """(summarize prompt, final summary text) of a session, as the conformance log kept them."""
        d = self.logs[task]
        if session == "main":
            h = d["main_agent_message_history"]
            hist = (h.get("message_history") if isinstance(h, dict) else None) or []
        else:
            hist = (d["sub_agent_message_history_sessions"].get(session) or {}).get("message_history") or []
        if len(hist) >= 2 and hist[-1]["role"] == "assistant" and hist[-2]["role"] == "user":
            return hist[-2]["content"], hist[-1]["content"]
        return None, None

    def sub_sessions(self, task):
        """The task's sub-agent sessions in order: those the traces have attempts for, and those
        the conformance log opened (a session the script has no attempt for is answered with
        FILLER, as the conformance run's scripted client did)."""
        names = {s for (t, s) in self.attempts if t == task and s != "main"}
        for step in self.logs[task]["step_logs"]:
            sid = (step.get("metadata") or {}).get("session_id")
            if sid and step["step_name"].endswith("Session Start"):
                names.add(sid)
        return sorted(names, key=lambda s: int(s.rsplit("_", 1)[1]))


# --------------------------------------------------------------------------------------------
# The scripted model server (and, without a proxy, the recording it writes itself)
# --------------------------------------------------------------------------------------------


def chat_completion(n, model, text, finish, usage):
    return {
        "id": f"chatcmpl-scripted-{n}",
        "object": "chat.completion",
        "created": 1764806400 + n,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish, "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


LLM_ERRORS = {
    # the traces' llm_error -> what the server does, and how many calls upstream's client makes
    # (10 attempts of its own, each with the SDK's 2 retries when the SDK retries that error)
    "Error code: 429 - rate limit exceeded": ("status", 429, "rate limit exceeded", 30),
    "Error code: 500 - {'error': 'upstream model overloaded'}": (
        "status",
        500,
        {"error": "upstream model overloaded"},
        30,
    ),
    "Error code: 400 - This model's maximum context length is 131072 tokens, however your messages were longer than the model's limit": (
        "status",
        400,
        "This model's maximum context length is 131072 tokens, however your messages were longer than the model's limit",
        1,
    ),
    "Request timed out.": ("hang", None, None, 30),
    "Connection error.": ("drop", None, None, 30),
    "asyncio.TimeoutError after 600s": ("trickle", None, None, 1),
}


def attempt_plan(trace_line):
    """The server's answers to the calls upstream's client makes for one attempt."""
    meta = trace_line.get("meta") or {}
    usage = (meta.get("prompt_tokens") or 0, meta.get("completion_tokens") or 0)
    if "llm_error" in trace_line:
        kind, status, body, n = LLM_ERRORS[trace_line["llm_error"]]
        return [(kind, status, body)] * n
    finish = trace_line.get("finish_reason") or "stop"
    text = trace_line.get("content") or ""
    if finish == "length":
        # upstream's client retries a truncated answer 9 times, then returns the 10th
        return [("ok", text, finish, usage)] * 10
    return [("ok", text, finish, usage)]


def injection_plan(kind, text, usage):
    if kind == "length_once":
        return [("ok", text[: max(1, len(text) // 2)], "length", (usage[0], 4096))]
    if kind == "sdk_500":
        return [("status", 500, {"error": {"message": "The server had an error while processing your request."}})]
    if kind == "sdk_429x3":
        return [("status", 429, {"error": {"message": "Rate limit reached, retry later.", "type": "rate_limit"}})] * 3
    if kind == "repeat":
        unit = "the answer is almost there, let me check it again. "
        return [("ok", "<think>\n" + unit * 8, "stop", (usage[0], 800))]
    if kind == "drop_once":
        return [("drop", None, None)]
    raise ValueError(kind)


class RunState:
    """One run of one task, recognised by its x-upstream-session-id."""

    def __init__(self, script, task, header, ordinal=1):
        self.script = script
        self.ordinal = ordinal  # 2 for the second run of a task run twice
        self.task = task
        self.header = header
        self.cursor = collections.defaultdict(lambda: -1)  # session -> index of the current attempt
        self.pending = collections.defaultdict(list)  # session -> answers left for the current call
        self.tool_index = collections.defaultdict(int)  # session -> next call of the attempt
        self.sub_names = script.sub_sessions(task)
        self.sub_opened = 0
        self.active_sub = None  # (session, subtask)
        self.served = collections.Counter()
        self.fillers = []  # (session, index) of the calls answered with FILLER

    def current(self, session):
        i = self.cursor[session]
        lst = self.script.attempts[(self.task, session)]
        return lst[i] if 0 <= i < len(lst) else None

    def classify(self, messages):
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        convo = messages[1:] if system else messages
        first = convo[0]["content"] if convo else ""
        if not first.endswith(SUBTASK_SUFFIX):
            session = "main"
        else:
            if self.active_sub is None or (len(convo) == 1 and first != self.active_sub[1]):
                session = self.sub_names[self.sub_opened] if self.sub_opened < len(self.sub_names) else None
                self.sub_opened += 1
                if session is None:
                    session = f"unscripted_{self.sub_opened}"
                self.active_sub = (session, first)
            session = self.active_sub[0]
        prompt, _ = self.script.summary(self.task, session)
        last = convo[-1] if convo else {}
        is_summary = prompt is not None and last.get("role") == "user" and last.get("content") == prompt
        return session, is_summary

    def next_answer(self, messages):
        session, is_summary = self.classify(messages)
        key = (session, "summary") if is_summary else session
        if not self.pending[key]:
            if is_summary:
                _, text = self.script.summary(self.task, session)
                usage = (sum(len(m["content"]) for m in messages) // 4, len(text) // 4)
                plan = [("ok", text, "stop", usage)]
                index = "summary"
            else:
                self.cursor[session] += 1
                self.tool_index[session] = 0
                cur = self.current(session)
                index = self.cursor[session]
                if cur is None:
                    # the script has no attempt left: the conformance run's scripted client
                    # answered this (no tool call, so upstream ends the loop); kept as it was
                    plan = [("ok", FILLER, "stop", (sum(len(m["content"]) for m in messages) // 4, 6))]
                    self.fillers.append((session, index))
                else:
                    plan = attempt_plan(cur[0])
            injected = []
            for t, s, i, kind in INJECT:
                mine = t in (self.task, f"{self.task}#{self.ordinal}")
                if mine and s == session and i == index and self.served[(session, index, kind)] == 0:
                    self.served[(session, index, kind)] += 1
                    ok = next((p for p in plan if p[0] == "ok"), None)
                    text = ok[1] if ok else ""
                    usage = ok[3] if ok else (1000, 100)
                    injected += injection_plan(kind, text, usage)
            self.pending[key] = injected + plan
        answer = self.pending[key].pop(0)
        if is_summary and not self.pending[key] and session != "main":
            self.active_sub = None  # a sub-agent session ends with its summary
        return session, is_summary, answer

    def tool_result(self, session, server_name, tool_name):
        cur = self.current(session)
        if cur is None:
            raise RuntimeError(f"{self.task}/{session}: tool call without an attempt")
        line, verdict = cur
        calls = verdict.get("calls") or []
        results = line.get("tool_results") or []
        j = self.tool_index[session]
        while j < len(calls) and calls[j].get("tool_name") != tool_name:
            j += 1
        self.tool_index[session] = j + 1
        if j >= len(results):
            # a call the native run never executed (its own parser refused the text) that
            # upstream's parser accepts: the conformance run's tools returned an empty result
            return {"result": ""}
        return results[j]


class Server:
    def __init__(self, script, recording_path):
        self.script = script
        self.lock = threading.Lock()
        self.runs = {}  # header -> RunState
        self.latest = {}  # task -> RunState
        self.calls = 0
        self.recording = open(recording_path, "w", encoding="utf-8") if recording_path else None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.log = []  # (call, task, session, is_summary, kind)

    def start(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def run_for(self, header):
        with self.lock:
            if header not in self.runs:
                task = header[:-37]
                ordinal = 1 + sum(1 for r in self.runs.values() if r.task == task)
                self.runs[header] = RunState(self.script, task, header, ordinal)
                self.latest[task] = self.runs[header]
            return self.runs[header]

    def record(self, line):
        if self.recording:
            with self.lock:
                self.recording.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                self.recording.flush()

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                arrived = time.time()
                started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                body = json.loads(raw)
                header = self.headers.get("x-upstream-session-id", "")
                with server.lock:
                    server.calls += 1
                    call = server.calls
                run = server.run_for(header)
                with server.lock:
                    session, is_summary, answer = run.next_answer(body["messages"])
                server.log.append((call, run.task, session, is_summary, answer[0]))
                req_headers, redacted = {}, []
                for k, v in self.headers.items():
                    k = k.lower()
                    if k in ("authorization", "proxy-authorization", "x-api-key", "api-key", "cookie") or (
                        not k.startswith("x-stainless") and any(s in k for s in ("token", "secret", "password", "auth", "key"))
                    ):
                        redacted.append(k)
                        continue
                    if k in req_headers:
                        prev = req_headers[k]
                        req_headers[k] = (prev if isinstance(prev, list) else [prev]) + [v]
                    else:
                        req_headers[k] = v
                line = {
                    "mirotrace_recording": 1,
                    "call": call,
                    "started": started,
                    "seconds": None,
                    "upstream": server.url,
                    "request": {
                        "method": "POST",
                        "path": self.path.split("?")[0],
                        "headers": req_headers,
                        "redacted": sorted(set(redacted)),
                        "bytes": len(raw),
                        "body": body,
                    },
                }
                if "?" in self.path:
                    line["request"]["query"] = self.path.split("?", 1)[1]
                kind = answer[0]
                if kind in ("ok", "status"):
                    if kind == "ok":
                        _, text, finish, usage = answer
                        status, payload = 200, chat_completion(call, body.get("model"), text, finish, usage)
                    else:
                        _, status, payload = answer
                    out = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                    sent_date = self.date_time_string()
                    self.send_response_only(status)
                    self.send_header("server", self.version_string())
                    self.send_header("date", sent_date)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(out)))
                    self.end_headers()
                    first = time.time() - arrived
                    self.wfile.write(out)
                    self.wfile.flush()
                    line["first_byte_seconds"] = round(first, 6)
                    line["response"] = {
                        "status": status,
                        "headers": {
                            "server": self.version_string(),
                            "date": sent_date,
                            "content-type": "application/json",
                            "content-length": str(len(out)),
                        },
                        "redacted": [],
                        "bytes": len(out),
                        "body": payload,
                    }
                    line["error"] = None
                elif kind == "drop":
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    line["error"] = {"kind": "upstream", "message": "connection closed before a response head"}
                elif kind == "hang":
                    # no response head until the client gives up (its timeout is T_HTTP)
                    deadline = time.time() + 30
                    self.connection.settimeout(0.05)
                    gone = False
                    while time.time() < deadline and not gone:
                        try:
                            gone = self.connection.recv(1) == b""
                        except socket.timeout:
                            pass
                        except OSError:
                            gone = True
                    self.close_connection = True
                    line["error"] = {"kind": "client_disconnected", "message": "the client hung up"}
                elif kind == "trickle":
                    # a response head, then a body (JSON whitespace) so slow that only the
                    # asyncio timeout around the whole call ends it
                    sent_date = self.date_time_string()
                    self.send_response_only(200)
                    self.send_header("server", self.version_string())
                    self.send_header("date", sent_date)
                    self.send_header("content-type", "application/json")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    line["first_byte_seconds"] = round(time.time() - arrived, 6)
                    sent = 0
                    deadline = time.time() + T_ASYNC + 30
                    try:
                        while time.time() < deadline:
                            self.wfile.write(b"1\r\n \r\n")
                            self.wfile.flush()
                            sent += 1
                            time.sleep(0.2)
                    except OSError:
                        pass
                    self.close_connection = True
                    line["response"] = {
                        "status": 200,
                        "headers": {
                            "server": self.version_string(),
                            "date": sent_date,
                            "content-type": "application/json",
                            "transfer-encoding": "chunked",
                        },
                        "redacted": [],
                        "bytes": sent,
                        "body_text": " " * sent,
                    }
                    line["error"] = {"kind": "client_disconnected", "message": "the client hung up"}
                line["seconds"] = round(time.time() - arrived, 6)
                server.record(line)

        return Handler


# --------------------------------------------------------------------------------------------
# Upstream, monkeypatched (never edited)
# --------------------------------------------------------------------------------------------


def load_upstream(upstream_root):
    sys.path.insert(0, os.path.join(upstream_root, "apps", "miroflow-agent"))
    sys.path.insert(0, os.path.join(upstream_root, "libs", "miroflow-tools", "src"))
    import httpx
    import openai._base_client as ob
    import tiktoken

    ob.DEFAULT_TIMEOUT = httpx.Timeout(T_HTTP, connect=T_HTTP)
    ob.INITIAL_RETRY_DELAY = 0.01
    ob.MAX_RETRY_DELAY = 0.05

    class Estimator:
        def encode(self, text, *a, **k):
            return [0] * (len(text) // 4)

    tiktoken.get_encoding = lambda name: Estimator()

    import src.core.orchestrator as orch
    import src.core.pipeline as pipeline
    import src.llm.base_client as base_client
    import src.llm.providers.openai_client as oc

    real_sleep = asyncio.sleep

    class FastAsyncio:
        def __getattr__(self, name):
            return getattr(asyncio, name)

        @staticmethod
        async def sleep(seconds, *a, **k):
            return await real_sleep(0)

    oc.asyncio = FastAsyncio()
    orch.asyncio = FastAsyncio()

    class Date(dt.date):
        @classmethod
        def today(cls):
            return dt.date(2025, 6, 1)

    orch.date = Date

    inner = base_client.BaseClient.create_message.__wrapped__

    async def create_message(self, *a, **k):
        return await asyncio.wait_for(inner(self, *a, **k), timeout=T_ASYNC)

    base_client.BaseClient.create_message = create_message
    return pipeline


class ScriptedToolManager:
    """Stands in for upstream's ToolManager: returns the attempt's recorded tool results."""

    def __init__(self, server, task, agent):
        self.server = server
        self.task = task
        self.agent = agent
        self.task_log = None

    def set_task_log(self, task_log):
        self.task_log = task_log

    async def get_all_tool_definitions(self):
        return []

    async def execute_tool_call(self, server_name, tool_name, arguments):
        run = self.server.latest[self.task]
        session = "main" if self.agent == "main" else run.active_sub[0]
        r = run.tool_result(session, server_name, tool_name)
        out = {"server_name": server_name, "tool_name": tool_name}
        if "error" in r:
            out["error"] = r["error"]
        else:
            v = r.get("result")
            out["result"] = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        return out


class SessionToolDefinitions(dict):
    """upstream reads `sub_agent_tool_definitions[name]` when a sub-agent session starts; the
    conformance run gave each session its own tool list (the servers differ between sessions),
    so the list is the one of the session about to open, as its log (or trace) shows it."""

    def __init__(self, script, server, task):
        super().__init__()
        self.script, self.server, self.task = script, server, task
        d = script.logs[task]
        self.saved = {k: v["system_prompt"] for k, v in (d.get("sub_agent_message_history_sessions") or {}).items()}

    def __contains__(self, key):
        return True

    def __bool__(self):
        return True

    def __getitem__(self, agent):
        run = self.server.latest[self.task]
        names = run.sub_names
        session = names[run.sub_opened] if run.sub_opened < len(names) else None
        prompt = self.saved.get(session)
        if prompt is None:
            lines = self.script.attempts.get((self.task, session)) or []
            prompt = next((t["system_prompt"] for t, _ in lines if t.get("system_prompt")), None)
        defs = parse_tool_definitions(prompt or "")
        if not defs:
            # a session with no tool list of its own (one in the conformance logs, whose prompt
            # lists no tool, which upstream never does without logging `No Tools`): the
            # task's other sub-agent sessions' list
            for other in reversed(names):
                defs = parse_tool_definitions(self.saved.get(other) or "")
                if defs:
                    break
        return defs


def make_cfg(script, task, base_url):
    from omegaconf import OmegaConf

    env = script.logs[task]["env_info"]
    model = script.attempts[(task, "main")][0][0]["meta"].get("model") or "replay"
    sub_turns = {k[len("sub_") : -len("_max_turns")]: v for k, v in env.items() if k.startswith("sub_") and k.endswith("_max_turns")}
    return OmegaConf.create(
        {
            "llm": {
                "provider": "openai",
                "model_name": model,
                "async_client": True,
                "temperature": env.get("llm_temperature", 0.0),
                "top_p": env.get("llm_top_p", 1.0),
                "min_p": env.get("llm_min_p", 0.0),
                "top_k": env.get("llm_top_k", -1),
                "max_tokens": env.get("llm_max_tokens", 4096),
                "max_context_length": 262144,
                "api_key": "sk-scripted-not-a-secret",
                "base_url": base_url,
                "repetition_penalty": env.get("llm_repetition_penalty", 1.0),
            },
            "agent": {
                "main_agent": {"tools": [], "max_turns": env["main_agent_max_turns"]},
                "sub_agents": {name: {"tools": [], "max_turns": n} for name, n in sub_turns.items()},
                "keep_tool_result": KEEP_TOOL_RESULT.get(task, env.get("keep_tool_result", -1)),
                "context_compress_limit": 0,
            },
            "benchmark": {},
        }
    )


async def run_task(pipeline, script, server, task, base_url, log_dir):
    from src.io.output_formatter import OutputFormatter

    cfg = make_cfg(script, task, base_url)
    d = script.logs[task]
    main_defs = parse_tool_definitions(script.main_system_prompt(task))
    sub_defs = SessionToolDefinitions(script, server, task)
    main_tm = ScriptedToolManager(server, task, "main")
    sub_tms = {agent: ScriptedToolManager(server, task, agent) for agent in cfg.agent.sub_agents}
    inp = d["input"]
    return await pipeline.execute_task_pipeline(
        cfg=cfg,
        task_id=task,
        task_description=inp["task_description"],
        task_file_name=inp.get("task_file_name") or "",
        main_agent_tool_manager=main_tm,
        sub_agent_tool_managers=sub_tms,
        output_formatter=OutputFormatter(),
        ground_truth=d.get("ground_truth"),
        log_dir=log_dir,
        tool_definitions=main_defs,
        sub_agent_tool_definitions=sub_defs,
    )


def start_proxy(binary, upstream_url, recording):
    proc = subprocess.Popen(
        [binary, "record", "--upstream", upstream_url, "--listen", "127.0.0.1:0", "-o", recording, "-q"],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    m = re.search(r"listening on (http://\S+)", line)
    if not m:
        proc.kill()
        raise RuntimeError(f"mirotrace record did not start: {line!r}")
    return proc, m.group(1)


def write_truth(script, server, path):
    """The run's truth: the conformance truth of each task run (a task run twice twice), plus a
    verdict for each call answered with FILLER (upstream took it as a final answer)."""
    by_key = collections.defaultdict(list)
    for v in script.verdicts:
        by_key[(v["trace_id"], v["session"])].append(v)
    with open(path, "w", encoding="utf-8") as out:
        for run in server.runs.values():
            fillers = collections.defaultdict(list)
            for session, index in run.fillers:
                fillers[session].append(index)
            sessions = [s for (t, s) in by_key if t == run.task]
            sessions += [s for s in fillers if s not in sessions]
            for session in sessions:
                lines = by_key.get((run.task, session), [])
                for v in lines:
                    out.write(json.dumps(v, ensure_ascii=False) + "\n")
                for index in fillers.pop(session, []):
                    last = lines[-1] if lines else {"outcome": "ok", "turn": 0, "consecutive_rollbacks": 0}
                    rolled = last["outcome"] == "rollback"
                    v = {
                        "trace_id": run.task,
                        "session": session,
                        "index": index,
                        "outcome": "final",
                        "reason": None,
                        "turn": (last["turn"] or 0) + (0 if last["outcome"] == "llm_failed" else 1),
                        "consecutive_rollbacks": last["consecutive_rollbacks"] if rolled else 0,
                        "flags": [],
                        "calls": [],
                        "executed": 0,
                    }
                    out.write(json.dumps(v, ensure_ascii=False) + "\n")
            assert not fillers, fillers


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="upstream MiroThinker checkout (1c4253f6774b)")
    ap.add_argument("--conformance", required=True, help="the conformance tasklogs folder")
    ap.add_argument("--out", required=True, help="output folder (logs/, recording.jsonl)")
    ap.add_argument("--tasks", default="subset", help="comma-separated task ids, 'subset' (default) or 'all'")
    ap.add_argument("--proxy", default="", help="mirotrace binary: record through `mirotrace record`")
    ap.add_argument("--direct-recording", default="", help="where the server writes its own recording")
    args = ap.parse_args()

    script = Script(args.conformance)
    if args.tasks == "subset":
        tasks = SUBSET
    elif args.tasks == "all":
        tasks = script.task_ids()
    else:
        tasks = [t for t in args.tasks.split(",") if t]
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    for f in glob.glob(os.path.join(args.out, "logs", "task_*.json")):
        os.remove(f)
    recording = os.path.join(args.out, "recording.jsonl")
    for f in (recording, args.direct_recording):
        if f and os.path.exists(f):
            os.remove(f)
    direct = args.direct_recording or (None if args.proxy else recording)
    server = Server(script, direct)
    server.start()
    proxy = None
    base = server.url
    if args.proxy:
        proxy, base = start_proxy(args.proxy, server.url, recording)
    pipeline = load_upstream(args.upstream)
    import logging

    from src.logging import task_logger

    task_logger.bootstrap_logger().setLevel(logging.CRITICAL)  # the task logs say it all
    order = []
    for t in tasks:
        order.append(t)
        if t in RUN_TWICE:
            order.append(t)
    for t in order:
        t0 = time.time()
        res = asyncio.run(run_task(pipeline, script, server, t, base.rstrip("/") + "/v1", os.path.join(args.out, "logs")))
        log(f"{t}: {res[2]} ({time.time() - t0:.1f}s, {server.calls} calls so far)")
        time.sleep(1.1)  # upstream names a log by its start second: a task run twice needs two
    if proxy:
        proxy.send_signal(2)
        proxy.wait(timeout=30)
    write_truth(script, server, os.path.join(args.out, "truth.verdicts.jsonl"))
    kinds = collections.Counter(k[4] for k in server.log)
    log(f"calls: {server.calls} (answers: {dict(kinds)}), truth: {len(server.runs)} runs")


if __name__ == "__main__":
    main()
