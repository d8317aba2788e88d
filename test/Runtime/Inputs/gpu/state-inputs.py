# The inputs of Inputs/gpu/state.json.in's entry (test/Runtime/Cuda/state.test):
# a (the state, c = a + b updated in place) all 1 and b all 2, N f32 each,
# as a safetensors file: state-inputs.py OUT N.
import json
import struct
import sys

out, n = sys.argv[1], int(sys.argv[2])
blob_a = struct.pack("<%df" % n, *([1.0] * n))
blob_b = struct.pack("<%df" % n, *([2.0] * n))
header = {"a": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]},
          "b": {"dtype": "F32", "shape": [n], "data_offsets": [4 * n, 8 * n]}}
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + blob_a + blob_b)
