#!/usr/bin/python3
#===- scripts/export-decoder.py - The zoo's decoders in torch.nn, to ONNX -===#
#
# Part of Loom. GPT-2 and Llama written in torch.nn with exactly the math of
# loom-zoo's decoders (python-free-examples/zoo/models/{GPT2,Llama}.cpp), on
# the safetensors weights `loom-zoo ... --weights W.safetensors` writes
# (HuggingFace names, dense weights [in, out]), so that Loom, PyTorch and
# ONNX Runtime compute one function. The shape is read from the weights (the
# layers, the widths, the vocabulary, GPT-2's position rows = the zoo's
# --context); the heads follow the zoo's rule (heads of 64, of hidden / 2
# below a hidden of 128; Llama: 8 query heads per key/value head where there
# are 8 or more).
#
# The module's form is the common past/present one of decoder exports:
#
#   forward(input_ids i64 [B, S], position_ids i64 [B, S],
#           past_key_values.N.key / .value f32 [B, Hkv, past, D] ...)
#     -> logits f32 [B, V] (of the last token, as the zoo's entries),
#        present.N.key / .value = concat(past, new) [B, Hkv, past + S, D]
#
# Attention of query i sees keys 0..past + i (causal over the past and the
# new tokens). Run as a script it exports the module to ONNX (opset 17, the
# batch, the new tokens and the past length dynamic):
#
#   /usr/bin/python3 scripts/export-decoder.py --weights W.safetensors
#       --arch gpt2|llama -o DIR/model.onnx
#
# (a model past 2 GB is written with external data beside the .onnx).
# bench/decode/torch-decode.py imports it as PyTorch's peer of
# loom-bench-decode.
#
#===----------------------------------------------------------------------===#
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch

EPSILON = 1e-5
ROPE_THETA = 10000.0


def read_safetensors(path):
    """{name: float32 numpy array} of a safetensors file of F32 tensors."""
    with open(path, 'rb') as f:
        (size,) = struct.unpack('<Q', f.read(8))
        header = json.loads(f.read(size))
        start = 8 + size
        tensors = {}
        for name, info in header.items():
            if name == '__metadata__':
                continue
            if info['dtype'] != 'F32':
                sys.exit(f'{path}: {name} is {info["dtype"]}, not F32')
            begin, end = info['data_offsets']
            f.seek(start + begin)
            count = (end - begin) // 4
            tensors[name] = np.fromfile(f, dtype=np.float32,
                                        count=count).reshape(info['shape'])
    return tensors


def head_dim(hidden):
    return 64 if hidden >= 128 else hidden // 2


def kv_heads(heads, group):
    group = min(group, heads)
    while heads % group:
        group -= 1
    return heads // group


def attend(q, k, v, past_len, groups):
    """Causal attention of q [B, H, S, D] over k, v [B, Hkv, past + S, D]:
    query i sees keys 0..past + i; query head h reads key/value head
    h // groups. The query heads of a key/value head are one group of rows
    [B, Hkv, groups * S, D], so that the cache is never copied per head."""
    b, heads, s, d = q.shape
    q = q.reshape(b, k.shape[1], -1, d)
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(d))
    rows = torch.arange(q.shape[2]).unsqueeze(1) % s + past_len
    cols = torch.arange(k.shape[2]).unsqueeze(0)
    scores = scores.masked_fill(cols > rows, float('-inf'))
    return torch.matmul(torch.softmax(scores, dim=-1), v).reshape(b, heads, s, d)


def split_heads(x, heads):
    b, s, _ = x.shape
    return x.reshape(b, s, heads, -1).transpose(1, 2)


def merge_heads(x):
    b, _, s, _ = x.shape
    return x.transpose(1, 2).reshape(b, s, -1)


class Decoder(torch.nn.Module):
    """What both models share: the weights as parameters by HuggingFace
    name, the cache's shape and the past/present plumbing."""

    def __init__(self, weights, layers, hidden, heads, kv):
        super().__init__()
        self.w = torch.nn.ParameterDict({
            name.replace('.', '__'): torch.nn.Parameter(
                torch.from_numpy(value), requires_grad=False)
            for name, value in weights.items()})
        self.layers, self.hidden, self.heads, self.kv = layers, hidden, heads, kv
        self.dim = hidden // heads

    def p(self, name):
        return self.w[name.replace('.', '__')]

    def forward(self, input_ids, position_ids, *past):
        past_len = past[0].shape[2] if past else 0
        x = self.embed(input_ids, position_ids)
        presents = []
        for layer in range(self.layers):
            cache = (past[2 * layer], past[2 * layer + 1]) if past else None
            x, key, value = self.layer(layer, x, position_ids, cache, past_len)
            presents += [key, value]
        return (self.head(x[:, -1, :]), *presents)

    def append(self, cache, k, v):
        if cache is None:
            return k, v
        return torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)

    def empty_past(self, batch, length):
        shape = (batch, self.kv, length, self.dim)
        return [torch.zeros(shape) for _ in range(2 * self.layers)]


class GPT2(Decoder):
    """GPT2.cpp: pre-LN blocks, GELU (tanh), the head tied to wte."""

    def __init__(self, weights):
        vocab, hidden = weights['transformer.wte.weight'].shape
        layers = sum(1 for n in weights if n.endswith('.attn.c_attn.weight'))
        heads = hidden // head_dim(hidden)
        super().__init__(weights, layers, hidden, heads, heads)

    def norm(self, x, name):
        return torch.nn.functional.layer_norm(
            x, (self.hidden,), self.p(name + '.weight'), self.p(name + '.bias'),
            EPSILON)

    def linear(self, x, name):
        return torch.matmul(x, self.p(name + '.weight')) + self.p(name + '.bias')

    def embed(self, ids, positions):
        return (self.p('transformer.wte.weight')[ids] +
                self.p('transformer.wpe.weight')[positions])

    def layer(self, i, x, positions, cache, past_len):
        n = f'transformer.h.{i}.'
        q, k, v = self.linear(self.norm(x, n + 'ln_1'),
                              n + 'attn.c_attn').split(self.hidden, dim=2)
        key, value = self.append(cache, split_heads(k, self.kv),
                                 split_heads(v, self.kv))
        a = attend(split_heads(q, self.heads), key, value, past_len, 1)
        x = x + self.linear(merge_heads(a), n + 'attn.c_proj')
        h = self.linear(self.norm(x, n + 'ln_2'), n + 'mlp.c_fc')
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                        (h + 0.044715 * h * h * h)))
        return x + self.linear(h, n + 'mlp.c_proj'), key, value

    def head(self, last):
        last = self.norm(last, 'transformer.ln_f')
        return torch.matmul(last, self.p('transformer.wte.weight').t())


def rope_tables(capacity, dim):
    """Llama.cpp's tables [C, D]: angle p * theta^(-2 (c mod D/2) / D), in
    double, rounded to f32."""
    cols = np.arange(dim) % (dim // 2)
    inverse = np.power(ROPE_THETA, -2.0 * cols / dim)
    angles = np.arange(capacity, dtype=np.float64)[:, None] * inverse[None, :]
    return (torch.from_numpy(np.cos(angles).astype(np.float32)),
            torch.from_numpy(np.sin(angles).astype(np.float32)))


class Llama(Decoder):
    """Llama.cpp: RMSNorm, rotary (rotate-half), grouped-query attention,
    SwiGLU, an untied head. `capacity`: the rotary tables' rows."""

    def __init__(self, weights, capacity):
        vocab, hidden = weights['model.embed_tokens.weight'].shape
        layers = sum(1 for n in weights if n.endswith('.self_attn.q_proj.weight'))
        heads = hidden // head_dim(hidden)
        super().__init__(weights, layers, hidden, heads, kv_heads(heads, 8))
        self.cos, self.sin = rope_tables(capacity, self.dim)

    def norm(self, x, name):
        mean_square = (x * x).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(mean_square + EPSILON) * self.p(name + '.weight')

    def linear(self, x, name):
        return torch.matmul(x, self.p(name + '.weight'))

    def rope(self, x, positions):
        cos = self.cos[positions].unsqueeze(1)
        sin = self.sin[positions].unsqueeze(1)
        half = self.dim // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    def embed(self, ids, positions):
        return self.p('model.embed_tokens.weight')[ids]

    def layer(self, i, x, positions, cache, past_len):
        n = f'model.layers.{i}.'
        h = self.norm(x, n + 'input_layernorm')
        q = self.rope(split_heads(self.linear(h, n + 'self_attn.q_proj'),
                                  self.heads), positions)
        k = self.rope(split_heads(self.linear(h, n + 'self_attn.k_proj'),
                                  self.kv), positions)
        v = split_heads(self.linear(h, n + 'self_attn.v_proj'), self.kv)
        key, value = self.append(cache, k, v)
        a = attend(q, key, value, past_len, self.heads // self.kv)
        x = x + self.linear(merge_heads(a), n + 'self_attn.o_proj')
        h = self.norm(x, n + 'post_attention_layernorm')
        gate = self.linear(h, n + 'mlp.gate_proj')
        mlp = torch.nn.functional.silu(gate) * self.linear(h, n + 'mlp.up_proj')
        return x + self.linear(mlp, n + 'mlp.down_proj'), key, value

    def head(self, last):
        return self.linear(self.norm(last, 'model.norm'), 'lm_head')


def load(weights_path, arch, capacity):
    """The module of `arch` (gpt2 | llama) on the weights of a file."""
    weights = read_safetensors(weights_path)
    model = GPT2(weights) if arch == 'gpt2' else Llama(weights, capacity)
    return model.eval()


def export(model, out):
    """torch.onnx.export in the past/present form, opset 17."""
    names = [f'past_key_values.{l}.{p}' for l in range(model.layers)
             for p in ('key', 'value')]
    presents = [n.replace('past_key_values', 'present') for n in names]
    dynamic = {'input_ids': {0: 'batch', 1: 'tokens'},
               'position_ids': {0: 'batch', 1: 'tokens'},
               'logits': {0: 'batch'}}
    for n in names:
        dynamic[n] = {0: 'batch', 2: 'past'}
    for n in presents:
        dynamic[n] = {0: 'batch', 2: 'total'}
    ids = torch.zeros((1, 2), dtype=torch.int64)
    positions = torch.tensor([[3, 4]], dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(model, (ids, positions, *model.empty_past(1, 3)),
                          out, opset_version=17,
                          input_names=['input_ids', 'position_ids', *names],
                          output_names=['logits', *presents],
                          dynamic_axes=dynamic, do_constant_folding=True)


def main():
    parser = argparse.ArgumentParser(description='The zoo decoders in torch.nn, exported to ONNX')
    parser.add_argument('--weights', required=True)
    parser.add_argument('--arch', choices=['gpt2', 'llama'], required=True)
    parser.add_argument('--capacity', type=int, default=2048,
                        help='rows of the rotary tables (llama)')
    parser.add_argument('-o', dest='out', required=True)
    args = parser.parse_args()
    torch.set_grad_enabled(False)
    model = load(args.weights, args.arch, args.capacity)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    export(model, args.out)
    print(json.dumps({'onnx': args.out, 'layers': model.layers,
                      'heads': model.heads, 'kv_heads': model.kv,
                      'head_dim': model.dim}))


if __name__ == '__main__':
    main()
