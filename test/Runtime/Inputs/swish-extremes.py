# Writes the weights and input of test/Runtime/swish-extremes.test as
# safetensors: a 1x1 convolution of one channel with weight 1 and no bias
# (its result is its input), and an input of 65x65 floats cycling through
# values where x * sigmoid(x) saturates, underflows or is exact (and the
# rest a ramp), so the SiLU pass's clamping is checked against the
# interpreter. Usage: swish-extremes.py WEIGHTS INPUTS
import json
import struct
import sys


def write(path, name, shape, values):
    data = struct.pack("<%df" % len(values), *values)
    header = json.dumps({name: {"dtype": "F32", "shape": shape,
                                "data_offsets": [0, len(data)]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + data)


edges = [-1e30, -1e4, -100.0, -88.8, -87.5, -20.0, -1.0, -1e-20, -0.0, 0.0,
         1e-20, 1.0, 20.0, 87.5, 88.8, 100.0, 1e4, 1e30]
n = 65 * 65
x = [edges[(i // 8) % len(edges)] if i % 8 == 0 else -30.0 + 60.0 * i / n
     for i in range(n)]
write(sys.argv[1], "w", [1, 1, 1, 1], [1.0])
write(sys.argv[2], "x", [1, 1, 65, 65], x)
