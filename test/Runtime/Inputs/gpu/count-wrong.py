#!/usr/bin/env python3
"""Usage: count-wrong.py GOT.safetensors WANT.safetensors TENSOR [TOL]

Prints how many elements of the f32 tensor TENSOR differ by more than TOL
(relative: |got - want| / max(1, |want|), as loom-run's --tolerance) and
exits 0; the tests compare the count (a must-fail check says how wrong).
"""
import json
import struct
import sys


def read(path, name):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    t = header[name]
    assert t["dtype"] == "F32", t
    begin, end = t["data_offsets"]
    raw = data[8 + n + begin:8 + n + end]
    return struct.unpack("<%df" % (len(raw) // 4), raw)


got = read(sys.argv[1], sys.argv[3])
want = read(sys.argv[2], sys.argv[3])
tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
wrong = sum(1 for g, w in zip(got, want) if abs(g - w) / max(1.0, abs(w)) > tol)
print("wrong: %d of %d" % (wrong, len(want)))
