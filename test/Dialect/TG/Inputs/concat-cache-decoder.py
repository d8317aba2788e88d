#!/usr/bin/env python3
"""A tiny GPT-2-style decoder exported to ONNX with a concatenated cache.

The tests of --tg-cache-in-place (test/Dialect/TG/cache-in-place.test) make
their model with it at test time (Debian's python3-torch and python3-onnx):
each layer takes past_key_values.N.key/.value [1, 2, past, 4], returns
present.N.key/.value = Concat(past, new, axis=2), and attends as
HuggingFace's GPT-2 does (q . k^T / sqrt(d), a causal mask sliced from a
lower-triangular buffer and applied with Where, softmax, . v), the scores
capped by c * tanh(score / c) with --soft-cap c.

  concat-cache-decoder.py --layers N --past L --seq S --capacity C -o PREFIX

writes PREFIX.onnx and the inputs of one step, as safetensors:
PREFIX-past.safetensors (x and the past, for the exported graph) and
PREFIX-cache.safetensors (x, the caches of C positions holding the past at
0..L-1 and garbage after, and past_length = L, for the rewritten graph).
"""
import argparse
import json
import math
import struct

import torch


class Block(torch.nn.Module):
    def __init__(self, hidden, heads, maxpos, unmasked, soft_cap):
        super().__init__()
        self.heads, self.dim, self.unmasked = heads, hidden // heads, unmasked
        self.soft_cap = soft_cap
        self.ln = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        bias = torch.tril(torch.ones(maxpos, maxpos, dtype=torch.bool))
        self.register_buffer("bias", bias.view(1, 1, maxpos, maxpos))

    def heads_of(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.dim).permute(0, 2, 1, 3)

    def forward(self, x, past_k, past_v, padding=None):
        q, k, v = self.qkv(self.ln(x)).split(x.shape[-1], dim=2)
        q, k, v = self.heads_of(q), self.heads_of(k), self.heads_of(v)
        k = torch.cat((past_k, k), dim=-2)
        v = torch.cat((past_v, v), dim=-2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dim)
        if self.soft_cap:
            w = torch.tanh(w / self.soft_cap) * self.soft_cap
        if not self.unmasked:
            ql, kl = q.size(-2), k.size(-2)
            mask = self.bias[:, :, kl - ql:kl, :kl]
            w = torch.where(mask, w, torch.tensor(torch.finfo(w.dtype).min))
        if padding is not None:
            w = w + padding
        w = torch.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).reshape(x.shape)
        return x + self.proj(a), k, v


class Decoder(torch.nn.Module):
    def __init__(self, layers, hidden=8, heads=2, vocab=11, maxpos=16,
                 unmasked=False, soft_cap=0.0):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            [Block(hidden, heads, maxpos, unmasked, soft_cap)
             for _ in range(layers)])
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, x, *past):
        padding = None
        if len(past) % 2:
            # HuggingFace GPT-2's additive mask from attention_mask [B, L + S].
            padding = past[0][:, None, None, :].to(torch.float32)
            padding = (1.0 - padding) * torch.finfo(torch.float32).min
            past = past[1:]
        presents = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past[2 * i], past[2 * i + 1], padding)
            presents += [k, v]
        return (self.head(x), *presents)


def write_safetensors(path, tensors):
    """The safetensors format: a JSON header, then the raw little-endian data."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        dtype = {torch.float32: "F32", torch.int64: "I64"}[t.dtype]
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--past", type=int, default=3)
    p.add_argument("--seq", type=int, default=2)
    p.add_argument("--capacity", type=int, default=8)
    p.add_argument("--unmasked", action="store_true",
                   help="attend without a mask (every key seen)")
    p.add_argument("--soft-cap", type=float, default=0.0,
                   help="cap the scores with c * tanh(score / c) before "
                   "the mask, as Gemma 2 does (0: no cap)")
    p.add_argument("--attention-mask", action="store_true",
                   help="an attention_mask input [1, L + S] (1: seen) after "
                   "x, as HuggingFace's exports have; position 1 is 0")
    p.add_argument("--max-positions", type=int, default=16,
                   help="the causal table's size (GPT-2's 1,024: too large "
                   "for the importer to inline, a weight it slices)")
    p.add_argument("-o", dest="prefix", required=True)
    a = p.parse_args()
    torch.manual_seed(0)
    model = Decoder(a.layers, maxpos=a.max_positions, unmasked=a.unmasked,
                    soft_cap=a.soft_cap).eval()
    x = torch.randn(1, a.seq, 8)
    past = [torch.randn(1, 2, a.past, 4) for _ in range(2 * a.layers)]
    names = [f"past_key_values.{i}.{kv}" for i in range(a.layers)
             for kv in ("key", "value")]
    presents = [n.replace("past_key_values", "present") for n in names]
    dynamic = {"x": {1: "sequence_length"}}
    dynamic.update({n: {2: "past_sequence_length"} for n in names})
    inputs, masks = {"x": x}, {}
    if a.attention_mask:
        mask = torch.ones(1, a.past + a.seq, dtype=torch.int64)
        mask[0, 1] = 0
        inputs["attention_mask"] = mask
        dynamic["attention_mask"] = {1: "total_sequence_length"}
        # Over the caches' positions; past the live ones, anything.
        tail = torch.randint(0, 2, (1, a.capacity - a.past - a.seq))
        masks["attention_mask"] = torch.cat((mask, tail), dim=1)
    torch.onnx.export(model, (*inputs.values(), *past), a.prefix + ".onnx",
                      opset_version=17, input_names=[*inputs, *names],
                      output_names=["logits", *presents],
                      dynamic_axes=dynamic)
    write_safetensors(a.prefix + "-past.safetensors",
                      {**inputs, **dict(zip(names, past))})
    # Past the live positions the caches hold garbage, which no query may
    # see.
    garbage = [100 * torch.randn(1, 2, a.capacity - a.past, 4) for _ in past]
    caches = {n: torch.cat((t, g), dim=2)
              for n, t, g in zip(names, past, garbage)}
    write_safetensors(a.prefix + "-cache.safetensors",
                      {"x": x, **masks, **caches,
                       "past_length": torch.tensor(a.past, dtype=torch.int64)})


if __name__ == "__main__":
    main()
