#!/usr/bin/env python3
"""completions.py: a client of loom-serve's POST /v1/completions that checks
its answers against loom-generate (standard library only).

compare DIR GENERATE MODEL.so NAME SPEC... [options]
    Sends one request per SPEC ("IDS[;IDS...]:MAX_TOKENS": its prompts and
    max_tokens) to the server start-server.sh started in DIR, all at once
    (threads released by one barrier), and checks that every choice's
    token_ids are what `GENERATE MODEL.so --prompt-ids IDS --tokens
    MAX_TOKENS` gives for that prompt alone (with --temperature and --seed
    S + i for choice i when sampling), finish_reason "length", and the
    usage counts. Prints one line per request; exits 1 on a difference.
    --stream        every request streams (server-sent events, one token an
                    event, then "data: [DONE]")
    --stop-at K     stop_token_ids [t], t the K-th token (from 0) loom-generate
                    gives the first prompt of the first SPEC: every choice
                    must end at its first t (finish_reason "stop")
    --temperature T --top-k K --top-p P --seed S   sample (default greedy)
Every request and every loom-generate run has a 60 s bound.
"""
import argparse
import http.client
import json
import subprocess
import sys
import threading
import urllib.parse


def server(directory):
    with open(directory + "/url") as f:
        url = urllib.parse.urlparse(f.read().strip())
    return url.hostname, url.port


def generate(args, prompt, tokens, choice):
    command = [args.generate, args.model, "--prompt-ids",
               ",".join(map(str, prompt)), "--tokens", str(tokens),
               "--threads", "1"]
    if args.temperature != 0:
        command += ["--temperature", str(args.temperature), "--top-k",
                    str(args.top_k), "--top-p", str(args.top_p), "--seed",
                    str(args.seed + choice)]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return [int(t) for t in out.strip().split(",")]


def parse_spec(spec):
    ids, tokens = spec.rsplit(":", 1)
    prompts = [[int(t) for t in p.split(",")] for p in ids.split(";")]
    return prompts, int(tokens)


def read_stream(response, choices):
    """The choices of a stream: one token per event, a finish reason on the
    last event of each choice, then [DONE]."""
    result = [{"token_ids": [], "finish_reason": None} for _ in range(choices)]
    done = False
    for raw in response:
        line = raw.decode().rstrip("\n")
        if not line:
            continue
        assert line.startswith("data: "), "not an event: %r" % line
        assert not done, "an event after [DONE]"
        data = line[len("data: "):]
        if data == "[DONE]":
            done = True
            continue
        event = json.loads(data)
        assert "error" not in event, event
        assert event["object"] == "text_completion", event
        (choice,) = event["choices"]
        mine = result[choice["index"]]
        assert mine["finish_reason"] is None, "a token after the finish"
        assert len(choice["token_ids"]) == 1, event
        mine["token_ids"] += choice["token_ids"]
        mine["finish_reason"] = choice["finish_reason"]
    assert done, "no [DONE]"
    return result


def send(host, port, body, stream, choices):
    connection = http.client.HTTPConnection(host, port, timeout=60)
    connection.request("POST", "/v1/completions", json.dumps(body),
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError("HTTP %d: %s" % (response.status,
                                             response.read().decode()))
    if stream:
        assert response.getheader("Content-Type").startswith(
            "text/event-stream")
        return {"choices": read_stream(response, choices)}
    return json.loads(response.read())


def check(args, index, spec, answer, stop):
    prompts, tokens = spec
    problems = []
    choices = answer["choices"]
    if len(choices) != len(prompts):
        return ["%d choices for %d prompts" % (len(choices), len(prompts))]
    for i, prompt in enumerate(prompts):
        want = generate(args, prompt, tokens, i)
        reason = "length"
        if stop is not None and stop in want:
            want = want[:want.index(stop) + 1]
            reason = "stop"
        got = choices[i]
        if got["token_ids"] != want or got["finish_reason"] != reason:
            problems.append("choice %d: %s (%s), loom-generate %s (%s)" % (
                i, got["token_ids"], got["finish_reason"], want, reason))
    if not args.stream:
        usage = answer["usage"]
        prompt_tokens = sum(len(p) for p in prompts)
        completion = sum(len(c["token_ids"]) for c in choices)
        if usage != {"prompt_tokens": prompt_tokens,
                     "completion_tokens": completion,
                     "total_tokens": prompt_tokens + completion}:
            problems.append("usage %s" % usage)
    return problems


def compare(args):
    host, port = server(args.dir)
    specs = [parse_spec(s) for s in args.specs]
    stop = None
    if args.stop_at is not None:
        stop = generate(args, specs[0][0][0], args.stop_at + 1, 0)[-1]
    answers = [None] * len(specs)
    barrier = threading.Barrier(len(specs))

    def run(k):
        prompts, tokens = specs[k]
        body = {"model": args.name, "max_tokens": tokens,
                "prompt": prompts if len(prompts) > 1 else prompts[0],
                "temperature": args.temperature, "top_k": args.top_k,
                "top_p": args.top_p, "seed": args.seed, "stream": args.stream}
        if stop is not None:
            body["stop_token_ids"] = [stop]
        barrier.wait()
        try:
            answers[k] = send(host, port, body, args.stream, len(prompts))
        except Exception as e:  # reported below, with the request
            answers[k] = e

    threads = [threading.Thread(target=run, args=(k,))
               for k in range(len(specs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = False
    for k, spec in enumerate(specs):
        problems = ([str(answers[k])] if isinstance(answers[k], Exception)
                    else check(args, k, spec, answers[k], stop))
        print("request %d: %s" % (k, "; ".join(problems) if problems
                                  else "as loom-generate"))
        failed |= bool(problems)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["compare"])
    parser.add_argument("dir")
    parser.add_argument("generate")
    parser.add_argument("model")
    parser.add_argument("name")
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--stop-at", type=int)
    parser.add_argument("--temperature", type=float, default=0)
    parser.add_argument("--top-k", type=int, default=0)
    parser.add_argument("--top-p", type=float, default=1)
    parser.add_argument("--seed", type=int, default=0)
    return compare(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
