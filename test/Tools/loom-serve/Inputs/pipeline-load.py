#!/usr/bin/env python3
"""pipeline-load.py URL MODEL REFERENCE N CLIENTS [--ranks FILE]
                    [--signal SIG RANK AFTER]...

A closed-loop load on loom-serve's model MODEL (a served pipeline): N
distinct requests (inputs 'a' and 'b', 1x16 each, from the request's
number), sent by CLIENTS threads on their own keep-alive connections, once
the server says it is ready (at most 30 s). Each --signal sends SIG (KILL,
STOP) once AFTER answers have come back to rank RANK, whose pid FILE (the
ranks' standard output) gives in its line "loom-serve: rank RANK of W
(LAUNCHER, pid PID): ...": a rank failing mid-load. Then every request is sent once more, alone,
to model REFERENCE (the same model compiled whole) and the answers compared.
Prints what came back: requests answered 200 with the reference's values,
with other values, answered with another status, not answered; the answers
per request (each must have exactly one); the latency's median and maximum.
Exits 1 when any request was not answered 200 with the reference's values.
"""
import http.client
import json
import os
import re
import signal
import sys
import threading
import time
import urllib.parse


def body(i):
    a = [((i * 7 + k * 3) % 17 - 8) / 4.0 for k in range(16)]
    b = [((i * 5 + k * 11) % 13 - 6) / 3.0 for k in range(16)]
    return json.dumps({"inputs": [
        {"name": "a", "shape": [1, 16], "datatype": "FP32", "data": a},
        {"name": "b", "shape": [1, 16], "datatype": "FP32", "data": b}]})


def post(conn, model, i):
    conn.request("POST", "/v2/models/%s/infer" % model, body=body(i),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read()
    return r.status, json.loads(text)


def wait_ready(host):
    for _ in range(300):
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
        conn.request("GET", "/v2/health/ready")
        r = conn.getresponse()
        r.read()
        if r.status == 200:
            return
        time.sleep(0.1)
    sys.exit("pipeline-load.py: the server was not ready in 30 s")


def rank_pids(path):
    pids = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"loom-serve: rank (\d+) of \d+ \(.*, pid (\d+)\)",
                         line)
            if m:
                pids[int(m.group(1))] = int(m.group(2))
    return pids


def main():
    args = sys.argv[1:]
    url, model, reference, n, clients = args[:5]
    n, clients = int(n), int(clients)
    signals = []
    ranks = None
    rest = args[5:]
    while rest:
        if rest[0] == "--ranks":
            ranks = rest[1]
            rest = rest[2:]
            continue
        assert rest[0] == "--signal", rest
        signals.append((getattr(signal, "SIG" + rest[1]), int(rest[2]),
                        int(rest[3])))
        rest = rest[4:]
    host = urllib.parse.urlparse(url)
    wait_ready(host)
    if signals:
        # A rank prints its line just after it joins, but a launcher may
        # forward its output later (mpirun's, under a loaded machine, took
        # over 5 s once): wait up to 30 s for every line needed.
        for _ in range(600):
            pids = rank_pids(ranks)
            if all(rank in pids for _, rank, _ in signals):
                break
            time.sleep(0.05)
        missing = sorted({rank for _, rank, _ in signals if rank not in pids})
        if missing:
            sys.exit("pipeline-load.py: rank(s) %s printed no pid line in %s "
                     "within 30 s" % (missing, ranks))
        signals = [(sig, pids[rank], after) for sig, rank, after in signals]
    lock = threading.Lock()
    answers = {}  # request -> list of (status, outputs)
    latencies = []
    failures = []
    state = {"next": 0, "done": 0}

    def client():
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
        while True:
            with lock:
                i = state["next"]
                if i >= n:
                    return
                state["next"] += 1
            start = time.monotonic()
            try:
                status, reply = post(conn, model, i)
            except Exception as e:  # no answer: counted, connection renewed
                with lock:
                    failures.append((i, repr(e)))
                conn = http.client.HTTPConnection(host.hostname, host.port,
                                                  timeout=60)
                continue
            elapsed = (time.monotonic() - start) * 1000
            with lock:
                answers.setdefault(i, []).append((status, reply))
                latencies.append(elapsed)
                state["done"] += 1
                done = state["done"]
                for k, (sig, pid, after) in enumerate(signals):
                    if pid and done >= after:
                        os.kill(pid, sig)
                        signals[k] = (sig, 0, after)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    conn = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
    right = wrong = other = 0
    first_problem = ""
    for i in range(n):
        got = answers.get(i, [])
        for status, reply in got:
            if status != 200:
                other += 1
                first_problem = first_problem or "request %d: %d %s" % (
                    i, status, reply)
                continue
            _, ref = post(conn, reference, i)
            x = reply["outputs"][0]["data"]
            y = ref["outputs"][0]["data"]
            if len(x) == len(y) and all(
                    abs(p - q) <= 1e-5 * max(1.0, abs(q)) for p, q in zip(x, y)):
                right += 1
            else:
                wrong += 1
                first_problem = first_problem or "request %d: %s, not %s" % (
                    i, x, y)
    counts = [len(answers.get(i, [])) for i in range(n)]
    latencies.sort()
    print("sent %d, answered 200 right %d, wrong %d, other status %d, "
          "no answer %d" % (n, right, wrong, other, len(failures)))
    print("answers per request: at least %d, at most %d" %
          (min(counts), max(counts)))
    if latencies:
        print("latency median %.1f ms, max %.1f ms" %
              (latencies[len(latencies) // 2], latencies[-1]))
    if first_problem or failures:
        print("first problem:", first_problem or failures[0])
    return 0 if right == n and min(counts) == max(counts) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
