"""Compares two JSON-lines outputs of the same corpus line by line: prints
'N texts, M differ' and, for the first few that differ, the text and both
sides. Exits 1 when any differ.

usage: compare.py CORPUS.jsonl REFERENCE.jsonl LOOM.jsonl
"""
import json
import sys

corpus, ref, loom = [
    [json.loads(l) for l in open(p, encoding="utf-8") if l.strip()]
    for p in sys.argv[1:]]
if not (len(corpus) == len(ref) == len(loom)):
    print("line counts differ: corpus %d, reference %d, loom %d"
          % (len(corpus), len(ref), len(loom)))
    sys.exit(1)
bad = [i for i in range(len(ref)) if ref[i] != loom[i]]
print("%d texts, %d differ" % (len(ref), len(bad)))
for i in bad[:3]:
    print("text %d: %r\n  reference %s\n  loom      %s"
          % (i, corpus[i], json.dumps(ref[i]), json.dumps(loom[i])))
sys.exit(1 if bad else 0)
