#!/usr/bin/env python3
"""A Python asyncio load client doing what `muh load` does, to compare with.

usage: load_client.py URL [--concurrency N] [--requests N] [--prompt-tokens N]
                      [--output-tokens N] [--endpoint PATH]

Stdlib only (asyncio streams and raw HTTP/1.1, json): the shape of the usual
Python benchmark clients (vLLM's benchmark_serving, GuideLLM) without their
dependencies. Closed loop at a concurrency; each request is a streamed POST
(stream, stream_options.include_usage, ignore_eos, min_tokens) on its own
connection, its chunked body split into SSE data: lines, each parsed with
json.loads; TTFT at the first chunk with text. Prints one JSON object: sent,
ok, errors, completion_tokens, wall_s, ttft_p50_s, and its own CPU time
(user + system, resource.getrusage) over the run.
"""
import argparse
import asyncio
import json
import resource
import sys
import time
from urllib.parse import urlsplit

WORDS = ["the", "and", "of", "to", "in", "is", "that", "it", "for", "on",
         "with", "as", "was", "at", "by", "an", "be", "this", "are", "or",
         "from", "one", "all", "we", "you", "can", "will", "not", "have", "but"]


async def one(host, port, path, body, stats):
    """Sends one streamed request; adds its tokens and timings to stats."""
    t0 = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError as e:
        stats["errors"] += 1
        stats["first_error"] = stats["first_error"] or str(e)
        return
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    writer.write(head + body)
    await writer.drain()
    status = await reader.readline()
    ok = status.split(b" ", 2)[1:2] == [b"200"]
    chunked = False
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        if h.lower().startswith(b"transfer-encoding:") and b"chunked" in h.lower():
            chunked = True
    buf = b""
    first = None
    ntok = 0
    usage = None
    done = False

    def lines(data):
        nonlocal buf, first, ntok, usage, done
        buf += data
        *full, buf = buf.split(b"\n")
        for ln in full:
            if not ln.startswith(b"data:"):
                continue
            d = ln[5:].strip()
            if d == b"[DONE]":
                done = True
                continue
            j = json.loads(d)
            ch = j.get("choices") or []
            if ch and ch[0].get("text"):
                if first is None:
                    first = time.monotonic()
                ntok += 1
            if j.get("usage"):
                usage = j["usage"].get("completion_tokens")

    try:
        if chunked:
            while True:
                size = int((await reader.readline()).strip() or b"0", 16)
                if size == 0:
                    break
                lines(await reader.readexactly(size))
                await reader.readline()
        else:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                lines(data)
    except (asyncio.IncompleteReadError, ValueError, ConnectionError) as e:
        ok = False
        stats["first_error"] = stats["first_error"] or repr(e)
    writer.close()
    if ok and done:
        stats["ok"] += 1
        stats["completion_tokens"] += usage if usage is not None else ntok
        if first is not None:
            stats["ttft"].append(first - t0)
    else:
        stats["errors"] += 1


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--prompt-tokens", type=int, default=64)
    ap.add_argument("--output-tokens", type=int, default=32)
    ap.add_argument("--endpoint", default="/v1/completions")
    a = ap.parse_args()
    u = urlsplit(a.url if "://" in a.url else "http://" + a.url)
    stats = {"sent": 0, "ok": 0, "errors": 0, "completion_tokens": 0, "ttft": [], "first_error": None}
    bodies = []
    for i in range(a.requests):
        words = " ".join(WORDS[(i * 7919 + k * 31) % len(WORDS)] for k in range(a.prompt_tokens))
        bodies.append(json.dumps({
            "model": "muh", "prompt": words, "max_tokens": a.output_tokens, "stream": True,
            "stream_options": {"include_usage": True}, "ignore_eos": True,
            "min_tokens": a.output_tokens}).encode())
    queue = list(reversed(bodies))

    async def worker():
        while queue:
            body = queue.pop()
            stats["sent"] += 1
            await one(u.hostname, u.port or 80, a.endpoint, body, stats)

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(a.concurrency)))
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    ttft = sorted(stats.pop("ttft"))
    stats["wall_s"] = wall
    stats["ttft_p50_s"] = ttft[len(ttft) // 2] if ttft else None
    stats["cpu_s"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(json.dumps(stats))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
