#!/usr/bin/env python3
"""Compare the recording `mirotrace record` wrote with the one the scripted server wrote itself
in the same run (run_upstream.py --proxy BINARY --direct-recording FILE).

    python3 scripts/record-run/compare_recordings.py RUN/recording.jsonl RUN/direct.jsonl

Calls are paired in order of arrival (the proxy's `call` order and the server's are the same:
upstream's calls are sequential). Compared: the request's method, path, query, body and the
headers the client sent (less those a proxy does not forward as they came: host, connection,
content-length, accept-encoding); the response's status, headers and body; the error kind. Set
aside: timings (started, seconds, first_byte_seconds) and `upstream`. Prints each difference
and a count of them by kind; exits 1 when a request or a successful answer differs."""
import collections
import json
import sys

HOP = {"host", "connection", "keep-alive", "content-length", "accept-encoding", "transfer-encoding", "te"}


def load(path):
    calls = [json.loads(l) for l in open(path, encoding="utf-8")]
    return sorted(calls, key=lambda r: r["call"])


def body(part):
    if part is None:
        return None
    for k in ("body", "body_text", "body_base64", "omitted"):
        if k in part:
            return (k, part[k])
    return None


def main():
    proxy, direct = load(sys.argv[1]), load(sys.argv[2])
    kinds = collections.Counter()
    hard = 0
    print(f"calls: proxy {len(proxy)}, scripted server {len(direct)}")
    for i, (p, d) in enumerate(zip(proxy, direct)):
        rp, rd = p["request"], d["request"]
        for k in ("method", "path", "query"):
            if rp.get(k) != rd.get(k):
                kinds[f"request.{k}"] += 1
                hard += 1
        if body(rp) != body(rd) or rp.get("bytes") != rd.get("bytes"):
            kinds["request body"] += 1
            hard += 1
            print(f"call {p['call']}: request body differs")
        hp = {k: v for k, v in rp["headers"].items() if k not in HOP}
        hd = {k: v for k, v in rd["headers"].items() if k not in HOP}
        if hp != hd:
            kinds["request headers"] += 1
            hard += 1
            print(f"call {p['call']}: request headers {sorted(set(hp.items()) ^ set(hd.items()))}")
        if sorted(rp.get("redacted") or []) != sorted(rd.get("redacted") or []):
            kinds["request.redacted"] += 1
        sp, sd = p.get("response"), d.get("response")
        ep, ed = (p.get("error") or {}).get("kind"), (d.get("error") or {}).get("kind")
        if (sp is None) != (sd is None):
            kinds[f"response only in the {'proxy' if sp else 'server'}'s record (errors: proxy {ep}, server {ed})"] += 1
        elif sp is not None:
            if sp["status"] != sd["status"] or body(sp) != body(sd):
                key = f"response differs (status {sd['status']}, errors: proxy {ep}, server {ed})"
                kinds[key] += 1
                if sd["status"] == 200 and not ep and not ed:
                    hard += 1
                    print(f"call {p['call']}: {key}")
            hp = {k: v for k, v in sp["headers"].items() if k not in HOP}
            hd = {k: v for k, v in sd["headers"].items() if k not in HOP}
            if hp != hd:
                kinds[f"response headers: proxy {sorted(set(hp) - set(hd))}, server {sorted(set(hd) - set(hp))}"] += 1
        if ep != ed:
            kinds[f"error kind: proxy {ep}, server {ed}"] += 1
    if len(proxy) != len(direct):
        hard += 1
    for k, n in kinds.most_common():
        print(f"{n:5d}  {k}")
    print(f"requests and successful answers: {'equal' if not hard else f'{hard} differences'}")
    sys.exit(1 if hard else 0)


if __name__ == "__main__":
    main()
