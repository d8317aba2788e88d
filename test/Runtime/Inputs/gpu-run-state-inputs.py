# The inputs of test/Runtime/gpu-run-state.test: the decode step's token ids and
# positions alone, the same with a zero cache (for loom-run), with a cache
# of other values (for --keep-state), and without the positions.
import json
import os
import struct
import sys


def write(path, tensors):
    header, blobs, at = {}, [], 0
    for name, (dtype, code, shape, values) in tensors.items():
        blob = struct.pack("<%d%s" % (len(values), code), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [at, at + len(blob)]}
        blobs.append(blob)
        at += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


out = sys.argv[1]
ids = {"input_ids": ("I64", "q", [2, 1], [3, 5])}
positions = {"positions": ("I64", "q", [2], [0, 0])}
zero = [0.0] * (2 * 2 * 12 * 4)
cache = {name: ("F32", "f", [2, 2, 12, 4], zero)
         for name in ("cache.0.key", "cache.0.value")}
write(os.path.join(out, "ids.safetensors"), {**ids, **positions})
write(os.path.join(out, "full.safetensors"), {**ids, **positions, **cache})
filled = [((i * 37) % 23 - 11) / 16.0 for i in range(len(zero))]
past = {name: ("F32", "f", [2, 2, 12, 4], filled)
        for name in ("cache.0.key", "cache.0.value")}
later = {"positions": ("I64", "q", [2], [5, 7])}
write(os.path.join(out, "filled.safetensors"), {**ids, **later, **past})
write(os.path.join(out, "no-positions.safetensors"), ids)
