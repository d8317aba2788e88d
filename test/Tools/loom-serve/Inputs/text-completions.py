#!/usr/bin/env python3
"""text-completions.py: checks loom-serve's text prompts, completion text and
stop strings (a model served with --tokenizer) against loom-tokenize and
loom-generate (standard library only).

DIR NAME TOKENIZE GENERATE MODEL.so TOKENIZER.json PROMPT MAX_TOKENS
    For the text PROMPT, against the server start-server.sh started in DIR:
    - greedy, not streamed: token_ids are loom-generate's for the ids
      loom-tokenize gives PROMPT, "text" is what loom-tokenize --decode
      --skip-special-tokens gives those the tokenizer has after the
      prompt's own text, usage counts the prompt's ids;
    - streamed: the same ids, and the events' texts join to the same text;
    - with "stop" set to a piece of that text: finish_reason "stop", the
      text is what came before the piece's first appearance, the ids a
      prefix of the greedy ones; streamed, the same.
    Prints a line per check; exits 1 on a difference. Every request and run
    has a 60 s bound.
"""
import http.client
import json
import subprocess
import sys
import urllib.parse

(directory, name, tokenize, generate, model, tokenizer, prompt,
 max_tokens) = sys.argv[1:]
max_tokens = int(max_tokens)
with open(directory + "/url") as f:
    url = urllib.parse.urlparse(f.read().strip())
failed = False


def run(command, stdin=None):
    return subprocess.run(command, input=stdin, capture_output=True,
                          timeout=60, check=True).stdout


def post(body):
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    c.request("POST", "/v1/completions", json.dumps(body),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    if not body.get("stream"):
        answer = json.loads(r.read())
        if r.status != 200:
            sys.exit("HTTP %d: %s" % (r.status, answer))
        return answer["choices"][0], answer["usage"]
    ids, text, finish = [], "", None
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        choice = json.loads(line[6:])["choices"][0]
        ids += choice["token_ids"]
        text += choice["text"]
        finish = choice["finish_reason"] or finish
    return {"token_ids": ids, "text": text, "finish_reason": finish}, None


def check(what, ok, detail):
    global failed
    print(("%s: ok" % what) if ok else ("%s: DIFFERS: %s" % (what, detail)))
    failed |= not ok


ids = json.loads(run([tokenize, "-t", tokenizer], prompt.encode()))
expected = [int(t) for t in run(
    [generate, model, "--prompt-ids", ",".join(map(str, ids)), "--tokens",
     str(max_tokens), "--threads", "1"]).decode().strip().split(",")]
# Ids past the tokenizer's (the model's vocabulary is larger) add no text.
with open(tokenizer, encoding="utf-8") as f:
    spec = json.load(f)
size = 1 + max(list(spec["model"]["vocab"].values())
               + [t["id"] for t in spec["added_tokens"]])


def decode(ids):
    return run([tokenize, "-t", tokenizer, "--decode", "--skip-special-tokens"],
               json.dumps(ids).encode()).decode()


# The completion's text follows the prompt's: decoded after it, so that a
# decoder that drops the first token's leading space drops none of it.
before = decode(ids)
text = decode(ids + [t for t in expected if t < size])
assert text.startswith(before)
text = text[len(before):]
request = {"model": name, "prompt": prompt, "max_tokens": max_tokens,
           "temperature": 0}
choice, usage = post(request)
check("text prompt", choice["token_ids"] == expected
      and choice["text"] == text and choice["finish_reason"] == "length"
      and usage["prompt_tokens"] == len(ids),
      "%s %r %s, expected %s %r" % (choice["token_ids"], choice["text"],
                                    usage, expected, text))
streamed, _ = post(dict(request, stream=True))
fields = ["token_ids", "text", "finish_reason"]
check("streamed", all(streamed[k] == choice[k] for k in fields),
      "%s, expected %s" % (streamed, choice))

# A stop string: two characters of the text from its middle, none of them
# U+FFFD (a character the tokens had not finished).
start = next((k for k in range(len(text) // 2, len(text) - 1)
              if "\ufffd" not in text[k:k + 2]), None)
if start is None:
    sys.exit("no stop string to take from %r" % text)
stop = text[start:start + 2]
cut = text[:text.index(stop)]
for stream in [False, True]:
    choice, _ = post(dict(request, stop=[stop, "never appears"],
                          stream=stream))
    n = len(choice["token_ids"])
    check("stop %r%s" % (stop, ", streamed" if stream else ""),
          choice["finish_reason"] == "stop" and choice["text"] == cut
          and choice["token_ids"] == expected[:n],
          "%s %r, expected the text %r" % (choice["token_ids"],
                                           choice["text"], cut))
sys.exit(1 if failed else 0)
