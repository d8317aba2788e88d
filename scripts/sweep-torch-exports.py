#!/usr/bin/python3
# ===- scripts/sweep-torch-exports.py - PyTorch exports against ORT -------===#
#
# An import sweep beside loom-bench-cpu's PyTorch set: architectures and
# torch.nn blocks that set does not hold, exported by PyTorch's own exporter
# (Debian's python3-torch 1.13, python3-torchvision 0.14) and checked with
# scripts/check-onnx-vs-ort.sh (COMPILED=1): each must import, run in the
# interpreter and compiled, and match ONNX Runtime within the tolerance
# (|loom - ort| / max(1, |ort|), issue 30's 1e-3 by default).
#
#   sweep-torch-exports.py OUT_DIR [--only NAME,...] [--set blocks|models|all]
#                          [--list] [--json FILE] [--timeout S]
#
# Weights and calibration are export-torch-models.py's (its export()); a
# model is exported again only when its .onnx is missing. Integer inputs
# (token ids, indices) are drawn in [0, the case's bound]. Prints a table,
# one row a case; exits 1 when a case that PyTorch exported fails in Loom.
# A case PyTorch cannot export is reported and not counted against Loom.
# Needs scripts/setup-bench.sh's ONNX Runtime (check-onnx-vs-ort.sh's).
#
# ===----------------------------------------------------------------------===#

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "export_torch_models", os.path.join(ROOT, "scripts",
                                        "export-torch-models.py"))
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)


class Block(nn.Module):
    """A function of the inputs and a few torch.nn modules."""

    def __init__(self, fn, mods):
        super().__init__()
        self.fn = fn
        self.m = nn.ModuleList(mods)

    def forward(self, *x):
        return self.fn(self.m, *x)


class Flow(nn.Module):
    """torchvision's RAFT \\p name on two images, \\p updates flow updates,
    the last flow."""

    def __init__(self, name, updates):
        super().__init__()
        import torchvision
        self.model = getattr(torchvision.models.optical_flow, name)(
            weights=None)
        self.updates = updates
        # export-torch-models.py calibrates batch norms on one input;
        # raft_large's keep their initial statistics.
        self.calibrate = False

    def forward(self, a, b):
        return self.model(a, b, num_flow_updates=self.updates)[-1]


CASES = {}


def block(name, shapes, mods=(), ints=None):
    """A torch.nn block; \\p ints maps an input's position to the largest
    integer it holds (an index or token input)."""
    ints = ints or {}

    def deco(fn):
        def example():
            xs = tuple(torch.randint(0, ints[i] + 1, s) if i in ints
                       else torch.randn(*s) for i, s in enumerate(shapes))
            return xs if len(xs) > 1 else xs[0]
        CASES[name] = ("blocks", f"block {name} {shapes}",
                       lambda: Block(fn, mods), example,
                       max(ints.values(), default=0), None)
        return fn
    return deco


def model(name, recipe, tolerance=None):
    """An architecture; \\p tolerance replaces --tolerance for it (a model
    whose f32 results are that far from its f64 ones in ONNX Runtime too)."""
    text, build, example = recipe
    CASES[name] = ("models", text, build, example, 0, tolerance)


def flow(name, updates):
    """Optical flow \\p name on two 128x128 images."""
    return (f"torchvision {name} 2x1x3x128x128 {updates} updates",
            lambda: Flow(name, updates),
            lambda: (torch.rand(1, 3, 128, 128), torch.rand(1, 3, 128, 128)))


def torchvision_video(name, shape):
    def build():
        import torchvision
        return getattr(torchvision.models.video, name)(weights=None)
    return (f"torchvision video {name} {shape}", build,
            lambda: torch.randn(*shape))


def spread_scores(recipe, scale):
    """A detector recipe whose classification head's weights are scaled by
    \\p scale and biases zeroed: SSD's softmax scores saturate to 1.0 with
    export-torch-models.py's initialisation, and the order of tied scores
    (and so the detections kept) depends on the last bit."""
    text, build, example = recipe

    def spread():
        detector = build()
        with torch.no_grad():
            for m in detector.model.head.classification_head.modules():
                if isinstance(m, nn.Conv2d):
                    m.weight.mul_(scale)
                    m.bias.zero_()
        return detector
    return (f"{text} classification head x{scale}", spread, example)


X4 = (1, 8, 17, 23)


@block("convtranspose-pixelshuffle", [X4], [
    nn.ConvTranspose2d(8, 16, 3, stride=2, padding=1, output_padding=1),
    nn.PixelShuffle(2)])
def _(m, x):
    return m[1](m[0](x))


@block("groupnorm-instnorm", [X4], [nn.GroupNorm(4, 8),
                                    nn.InstanceNorm2d(8, affine=True)])
def _(m, x):
    return m[1](F.silu(m[0](x)))


@block("unet-block", [(1, 3, 64, 64)], [
    nn.Conv2d(3, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1),
    nn.ConvTranspose2d(32, 16, 2, stride=2), nn.Conv2d(32, 1, 1)])
def _(m, x):
    a = F.relu(m[0](x))
    b = F.relu(m[1](F.max_pool2d(a, 2)))
    return torch.sigmoid(m[3](torch.cat([a, m[2](b)], 1)))


@block("interpolation-modes", [X4])
def _(m, x):
    return (F.interpolate(x, scale_factor=2, mode="bilinear",
                          align_corners=True)[..., :5, :5].sum()
            + F.interpolate(x, size=(9, 31), mode="nearest").mean()
            + F.interpolate(x, size=(30, 40), mode="bicubic").std())


@block("trilinear", [(1, 2, 3, 5, 4)])
def _(m, x):
    return F.interpolate(x, scale_factor=2, mode="trilinear")


@block("embeddingbag", [(4, 7)], [nn.EmbeddingBag(100, 16, mode="mean"),
                                  nn.Embedding(100, 16)], ints={0: 99})
def _(m, i):
    return m[0](i) + m[1](i).max(1).values


@block("embedding-padding-idx", [(3, 11)],
       [nn.Embedding(20, 6, padding_idx=0)], ints={0: 19})
def _(m, i):
    return m[0](i).sum(1)


@block("transformer-decoder-causal", [(2, 10, 32), (2, 13, 32)], [
    nn.TransformerDecoder(nn.TransformerDecoderLayer(
        32, 4, 64, batch_first=True, norm_first=True), 2)])
def _(m, t, mem):
    mask = torch.triu(torch.full((10, 10), float("-inf")), 1)
    return m[0](t, mem, tgt_mask=mask)


@block("cumsum-where-argmax-sort", [(5, 33)])
def _(m, x):
    w = torch.where(x > 0, x, torch.cumsum(x, 1) * 0.5)
    v, i = torch.sort(x, 1, descending=True)
    return w + v, torch.argmax(w, 1), i


@block("topk-gather", [(4, 50)])
def _(m, x):
    v, i = torch.topk(x, 7, 1)
    return v, torch.gather(x * 2, 1, i)


@block("rnn-relu-bidirectional", [(15, 3, 10)], [
    nn.RNN(10, 20, 2, nonlinearity="relu", bidirectional=True)])
def _(m, x):
    return m[0](x)[0]


@block("conv1d-dilated-grouped", [(2, 12, 100)], [
    nn.Conv1d(12, 24, 3, dilation=4, padding=4, groups=3),
    nn.BatchNorm1d(24), nn.Conv1d(24, 5, 1)])
def _(m, x):
    return m[2](F.gelu(m[1](m[0](x)), approximate="tanh"))


@block("roll-flip-einsum", [(2, 5, 6), (2, 6, 4)])
def _(m, a, b):
    return (torch.roll(a, 2, 1).flip(2) @ b
            + torch.einsum("bij,bjk->bik", a, b),
            torch.einsum("bii->b", a[:, :5, :5]))


@block("activations", [(3, 40)])
def _(m, x):
    return (F.mish(x) + F.hardswish(x) + F.softplus(x, beta=2) + F.elu(x)
            + F.selu(x) + F.celu(x, 0.5) + F.leaky_relu(x, 0.1)
            + F.hardsigmoid(x) + F.logsigmoid(x) + F.softsign(x)
            + torch.erf(x) + F.glu(x.repeat(1, 2), 1)
            + F.hardtanh(x, -0.5, 0.7) + F.hardshrink(x) + F.softshrink(x)
            + F.tanhshrink(x) + F.rrelu(x, training=False))


@block("layernorm-2d", [(2, 7, 9, 11)], [nn.LayerNorm([9, 11])])
def _(m, x):
    return m[0](x).log_softmax(-1)


@block("pad-modes", [X4])
def _(m, x):
    return (F.pad(x, (1, 2, 3, 1), mode="reflect").sum()
            + F.pad(x, (2, 2, 1, 1), mode="replicate").mean()
            + F.pad(x, (1, 1, 1, 1), value=3.0).std())


@block("index-put-select-fill", [(6, 8), (3,)], ints={1: 5})
def _(m, x, i):
    y = x.clone()
    y[i] = 0.5
    return x[i], x.index_select(1, i), y, x.masked_fill(x < 0, -1.0)


@block("unfold", [(1, 4, 10, 10)])
def _(m, x):
    return F.unfold(x, 3, padding=1).transpose(1, 2)


@block("convtranspose3d-avgpool3d", [(1, 3, 8, 10, 10)], [
    nn.ConvTranspose3d(3, 4, 2, stride=2), nn.AvgPool3d(2)])
def _(m, x):
    return m[1](m[0](x))


@block("norms-statistics", [(4, 30)])
def _(m, x):
    return (x.norm(dim=1), x.var(1, unbiased=True), F.normalize(x, dim=1),
            x.amax(1) - x.amin(1), torch.logsumexp(x, 1))


@block("cosine-cdist", [(5, 16), (7, 16)])
def _(m, a, b):
    return F.cosine_similarity(a[:, None], b[None], dim=-1), torch.cdist(a, b)


@block("prelu-lrn", [(2, 8, 17, 19)], [nn.PReLU(8), nn.LocalResponseNorm(3)])
def _(m, x):
    return m[1](m[0](x))


@block("adaptive-pools", [(1, 5, 24, 16)])
def _(m, x):
    return F.adaptive_avg_pool2d(x, (6, 4)), F.adaptive_max_pool2d(x, (3, 4))


@block("grid-sample", [(2, 3, 9, 11), (2, 5, 7, 2)])
def _(m, x, g):
    g = torch.tanh(g)
    return (F.grid_sample(x, g, mode="bilinear", align_corners=False)
            + F.grid_sample(x, g, mode="nearest", padding_mode="border",
                            align_corners=True))


@block("tril-triu-onehot", [(4, 9), (4,)], ints={1: 8})
def _(m, x, i):
    return (torch.tril(x, -1) + torch.triu(x, 2) * 0.5
            + F.one_hot(i, 9).float())


@block("scatter-add", [(4, 6), (4, 6)], ints={1: 4})
def _(m, x, i):
    return torch.zeros(5, 6).scatter_add(0, i, x)


@block("reductions-with-indices", [(3, 7, 5)])
def _(m, x):
    return torch.cat([torch.max(x, 1)[0].flatten(),
                      torch.min(x, 1)[1].float().flatten(),
                      x.amax((0, 2)), torch.cumsum(x, 2).flatten()[:5]])


@block("pixel-unshuffle-normalize", [(1, 3, 8, 6)])
def _(m, x):
    return F.normalize(F.pixel_unshuffle(x, 2), dim=1) + x.softmax(-1).sum()


def lengths_mask(lengths, size):
    """True past each row's length (1 + the input's value): a key padding
    mask computed in the graph from run-time lengths."""
    return torch.arange(size)[None] > lengths[:, None]


@block("transformer-masks", [(2, 9, 32), (2, 7, 32), (2,)], [
    nn.Transformer(32, 4, 2, 2, 64, batch_first=True)], ints={2: 8})
def _(m, src, tgt, lengths):
    causal = m[0].generate_square_subsequent_mask(7)
    pad = lengths_mask(lengths, 9)
    return m[0](src, tgt, tgt_mask=causal, src_key_padding_mask=pad,
                memory_key_padding_mask=pad)


@block("mha-padding-weights", [(3, 6, 32), (3, 11, 24), (3,)], [
    nn.MultiheadAttention(32, 4, batch_first=True),
    nn.MultiheadAttention(32, 2, kdim=24, vdim=24, add_bias_kv=True,
                          batch_first=True),
    nn.MultiheadAttention(24, 3, add_zero_attn=True)], ints={2: 10})
def _(m, q, kv, lengths):
    out, w = m[0](q, q, q, need_weights=True)
    pad = lengths_mask(lengths, 11)
    out2, w2 = m[1](out, kv, kv, key_padding_mask=pad, need_weights=True,
                    average_attn_weights=False)
    t = kv.transpose(0, 1)
    out3, w3 = m[2](t, t, t, key_padding_mask=pad)
    return out2, w, w2, out3, w3


@block("gru-lstm-batch-first-states", [(3, 13, 16), (2, 3, 24)], [
    nn.GRU(16, 24, 2, batch_first=True, dropout=0.3),
    nn.LSTM(24, 20, 1, batch_first=True, bidirectional=True)])
def _(m, x, h0):
    y, h = m[0](x, h0)
    z, (hn, cn) = m[1](y)
    return z, h, hn + cn


@block("audio-conv1d-stack", [(2, 1, 1001)], [
    nn.Conv1d(1, 16, 11, stride=5, padding=3), nn.BatchNorm1d(16),
    nn.Conv1d(16, 32, 5, stride=2), nn.BatchNorm1d(32),
    nn.Conv1d(32, 32, 3, padding="same", dilation=2, padding_mode="reflect"),
    nn.InstanceNorm1d(32, affine=True)])
def _(m, x):
    x = F.max_pool1d(F.relu(m[1](m[0](x))), 3, 2, ceil_mode=True)
    x = F.avg_pool1d(F.gelu(m[3](m[2](x))), 4, 3, padding=1,
                     count_include_pad=False)
    return m[5](m[4](x)).amax(-1)


@block("convtranspose-1d-2d-odd", [(2, 6, 13), (1, 6, 7, 9)], [
    nn.ConvTranspose1d(6, 4, 4, stride=3, padding=1, output_padding=2,
                       groups=2, dilation=2),
    nn.ConvTranspose2d(6, 9, (3, 2), stride=(2, 3), padding=(1, 0),
                       output_padding=(1, 2), groups=3, dilation=(1, 2)),
    nn.ConvTranspose3d(6, 2, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1),
                       bias=False)])
def _(m, a, b):
    return m[0](a), m[1](b), m[2](b.unsqueeze(2).repeat(1, 1, 3, 1, 1))


@block("norms-3d-groups", [(2, 6, 5, 7, 3)], [
    nn.GroupNorm(1, 6), nn.GroupNorm(6, 6, affine=False),
    nn.InstanceNorm3d(6), nn.BatchNorm3d(6),
    nn.LayerNorm(3)])
def _(m, x):
    return (m[0](x) + m[1](x) * 0.5 + m[2](x) - m[3](x)) * m[4](x)


@block("upsample-variants", [(1, 3, 7, 5), (2, 4, 19)], [
    nn.Upsample(scale_factor=(1.5, 2.3), mode="nearest"),
    nn.Upsample(size=(11, 4), mode="bilinear", align_corners=False),
    nn.UpsamplingBilinear2d(scale_factor=3),
    nn.UpsamplingNearest2d(size=(3, 2))])
def _(m, x, s):
    return (m[0](x).flatten(), m[1](x), m[2](x), m[3](x),
            F.interpolate(x, scale_factor=0.5, mode="bilinear",
                          align_corners=False, recompute_scale_factor=True),
            F.interpolate(x, size=(4, 9), mode="bicubic", align_corners=True),
            F.interpolate(s, size=7, mode="linear"),
            F.interpolate(s, scale_factor=2.5, mode="nearest"))


@block("gather-scatter-index", [(4, 9, 6), (4, 3, 6), (5,)],
       ints={1: 8, 2: 8})
def _(m, x, i, j):
    g = torch.gather(x, 1, i)
    t = torch.gather(x, 2, x.argsort(2))
    s = x.scatter(1, i, torch.ones_like(g))
    picked = x[:, j, 2:5]
    cs = torch.flip(torch.cumsum(torch.flip(x, [1]), 1), [1])
    r = torch.roll(x, (1, -2), (0, 2))
    w = torch.where(x > x.mean(), x, torch.zeros(()))
    return g, t, s, picked, cs - r, w.clamp(min=-0.5, max=x.max())


@block("shapes-odd-sizes", [(1, 3, 1, 1), (3, 5, 31, 2)], [
    nn.Conv2d(3, 8, 1), nn.Conv2d(5, 7, (7, 3), stride=3, padding=2),
    nn.Conv2d(5, 5, 3, padding=1, padding_mode="circular", groups=5)])
def _(m, a, b):
    y = m[1](b)
    parts = torch.split(y, [2, 5], 1)
    return (F.relu6(m[0](a)).flatten(), parts[0].sum((2, 3)),
            torch.stack(list(parts[1].chunk(3, 2)[:2]), 0).mean(0),
            m[2](b).view(3, 5, 1, 31, 2).max(2).values,
            b.repeat_interleave(2, dim=3))


@block("masked-select-nonzero", [(4, 7)])
def _(m, x):
    return x.masked_select(x > 0.3) * 2, torch.nonzero(x < -1.0)


@block("matmul-broadcast-baddbmm", [(2, 3, 5, 7), (7, 4), (3, 5, 4)])
def _(m, a, b, c):
    return (a @ b, torch.baddbmm(c, a[0], b.expand(3, 7, 4), beta=0.5,
                                 alpha=2.0),
            torch.addmm(c[0], a[1, 0], b), torch.einsum("nchw,wk->nkch", a, b))


@block("unique-counts", [(3, 20)])
def _(m, x):
    v, inverse, counts = torch.unique(x.mul(2).round(), sorted=True,
                                      return_inverse=True,
                                      return_counts=True)
    return v, inverse, counts


@block("maxpool-indices-lppool", [(1, 3, 17, 15), (2, 4, 21)])
def _(m, x, s):
    v, i = F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True,
                        return_indices=True)
    return (v, i, F.lp_pool2d(x, 2, 3, 2), F.lp_pool1d(s, 3, 4, 3),
            F.max_pool1d(s, 5, 2, 2, return_indices=True)[1])


@block("losses", [(6, 5), (6,), (6, 5)], ints={1: 4})
def _(m, x, t, y):
    w = torch.tensor([1.0, 0.5, 2.0, 1.5, 0.25])
    return (F.nll_loss(F.log_softmax(x, 1), t, ignore_index=1),
            F.cross_entropy(x, t, weight=w, reduction="none"),
            F.cross_entropy(x, t, reduction="sum"),
            F.binary_cross_entropy_with_logits(x, torch.sigmoid(y)),
            F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1),
                     reduction="batchmean"))


@block("integer-arithmetic", [(4, 9), (4, 9)], ints={0: 15})
def _(m, i, x):
    j = i - 7
    return (torch.div(j, 3, rounding_mode="floor"), j % 5,
            torch.div(j, -2, rounding_mode="trunc"), torch.remainder(j, -3),
            (j * 3).clamp(-4, 7), torch.bitwise_not(j > 2),
            j.sum(1), j.max(1).values, x[:, :3] * j[:, 3:6],
            torch.bucketize(x, torch.tensor([-1.0, 0.0, 0.5])))


@block("meshgrid-logical-nan", [(3, 4)])
def _(m, x):
    gy, gx = torch.meshgrid(torch.arange(3), torch.arange(4), indexing="ij")
    b = ((x > 0) & (x < 1)) | ~(x > -1) ^ (gx == gy)
    y = x / x.mul(4).round()
    return (b, torch.isnan(y), torch.isinf(y), torch.nan_to_num(y, 0.0, 9.0,
                                                                -9.0),
            torch.any(x > 0, 1), torch.all(x > -2), x.argmax(1, keepdim=True),
            x.prod(1))


@block("elementwise-math", [(3, 17), (3, 17)])
def _(m, x, y):
    u = torch.tanh(x) * 0.9
    return (torch.sin(x) + torch.cos(y) + torch.tan(u) + torch.asin(u)
            + torch.acos(u) + torch.atan(x),
            torch.pow(x.abs() + 0.5, y) + torch.rsqrt(x.abs() + 1)
            + torch.reciprocal(y.abs() + 1) + torch.floor(x * 3)
            + torch.ceil(y * 3) + torch.round(x * 3) + torch.sign(y)
            + torch.addcmul(x, x, y, value=0.5)
            + torch.lerp(x, y, 0.3) + F.softmin(x, 1),
            torch.std_mean(x, 1), torch.var_mean(y, 0, unbiased=False))


@block("pads-pools-more", [(2, 3, 11, 9), (1, 2, 5, 6, 7)], [
    nn.Conv2d(3, 4, 4, padding=3, dilation=2),
    nn.ReflectionPad3d(1), nn.ReplicationPad1d((2, 3)),
    nn.ZeroPad2d((-1, 2, 0, -2)), nn.AdaptiveMaxPool3d((5, 3, 7)),
    nn.Softmax2d(), nn.GLU(1)])
def _(m, x, v):
    return (m[0](x), m[1](v), m[2](x.flatten(2)), m[3](x), m[4](v),
            m[5](x), m[6](x[:, :2]),
            F.pad(x, (2, 1, 1, 2), mode="circular"),
            F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True),
            F.adaptive_max_pool1d(x.flatten(2), 9))


# (nn.Threshold is not here: PyTorch 1.13 exports it only with threshold and
# value 0, which is ReLU; docs/ONNX/Import.md.)
@block("activations-rare", [(3, 40), (2, 6, 5, 5)], [
    nn.Mish(), nn.Softplus(beta=2.0, threshold=5.0), nn.CELU(0.7), nn.SELU(),
    nn.Hardshrink(0.6), nn.Softshrink(0.4), nn.Tanhshrink(),
    nn.LogSigmoid(), nn.Hardtanh(-2.0, 3.0),
    nn.Softsign(), nn.RReLU(0.1, 0.3), nn.ELU(1.7), nn.Hardsigmoid(),
    nn.PReLU(6), nn.LogSoftmax(1)])
def _(m, x, y):
    x = x * 3
    a = sum(f(x) for f in m[:13])
    return a, m[13](y * 3), m[14](y).exp().sum(1)


@block("conv3d-depthwise-dilated", [(2, 8, 6, 9, 11)], [
    nn.Conv3d(8, 8, 3, padding=(1, 2, 2), dilation=(1, 2, 2), groups=8),
    nn.BatchNorm3d(8), nn.Conv3d(8, 12, (1, 3, 3), stride=(1, 2, 2),
                                 groups=4, bias=False),
    nn.AdaptiveAvgPool3d((1, 3, 1))])
def _(m, x):
    y = F.hardswish(m[1](m[0](x)))
    y = F.max_pool3d(m[2](y), (2, 3, 3), (1, 2, 2), (1, 1, 1),
                     ceil_mode=True)
    return m[3](y), y.amax((2, 3, 4))


# A BERT-style encoder written out as Hugging Face's BERT computes it: the
# padding mask from the token ids, positions from arange, an additive -1e4
# mask, heads split with view/permute, tanh-approximated GELU, the pooler's
# tanh on the first token.
@block("bert-style-handwritten", [(2, 19)], [
    nn.Embedding(50, 32, padding_idx=0), nn.Embedding(64, 32),
    nn.Embedding(2, 32), nn.LayerNorm(32, eps=1e-12), nn.Linear(32, 96),
    nn.Linear(32, 32), nn.LayerNorm(32, eps=1e-12), nn.Linear(32, 80),
    nn.Linear(80, 32), nn.LayerNorm(32, eps=1e-12), nn.Linear(32, 32)],
    ints={0: 49})
def _(m, ids):
    n, s = ids.shape
    types = (ids > 25).long()
    pos = torch.arange(s).unsqueeze(0).expand(n, s)
    x = m[3](m[0](ids) + m[1](pos) + m[2](types))
    mask = (1.0 - (ids != 0).float())[:, None, None, :] * -10000.0
    q, k, v = m[4](x).view(n, s, 3, 4, 8).permute(2, 0, 3, 1, 4)
    att = torch.softmax(q @ k.transpose(-1, -2) / 8 ** 0.5 + mask, -1)
    ctx = (att @ v).permute(0, 2, 1, 3).reshape(n, s, 32)
    x = m[6](x + m[5](ctx))
    x = m[9](x + m[8](F.gelu(m[7](x), approximate="tanh")))
    return x, torch.tanh(m[10](x[:, 0]))


# Batchnorms no convolution folds (after a ReLU, before a padded
# convolution; on a residual sum, pre-activation), with and without an
# activation after them, at batch 1 and 2.
@block("batchnorm-unfolded", [(2, 16, 12, 12)], [
    nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32),
    nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32),
    nn.Conv2d(32, 16, 1), nn.BatchNorm2d(16)])
def _(m, x):
    def f(v):
        a = m[1](F.relu(m[0](v)))
        b = m[2](a)
        c = F.relu(m[3](b + a))
        return m[5](m[4](c) + v)
    return f(x[:1]), f(x[:, :, 1:10, 2:11])


@block("einsum-ellipsis-bilinear", [(2, 3, 4, 5), (2, 3, 5, 6), (4, 7)])
def _(m, a, b, c):
    return (torch.einsum("...ij,...jk->...ik", a, b),
            torch.einsum("bhij,bhjk->bhki", a, b),
            torch.einsum("bhij,ik->bhkj", a, c),
            torch.einsum("bhij->bj", a), torch.outer(c[0], c[1]), c @ c.t())


@block("lstm-packed-lengths", [(9, 3, 8), (3,)], [nn.LSTM(8, 12, 2)],
       ints={1: 8})
def _(m, x, lengths):
    lengths = torch.sort(lengths + 1, descending=True).values
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths)
    y, (h, c) = m[0](packed)
    return nn.utils.rnn.pad_packed_sequence(y, total_length=9)[0], h, c


@block("gru-packed-bidirectional", [(3, 10, 6), (3,)], [
    nn.GRU(6, 8, 2, batch_first=True, bidirectional=True)], ints={1: 9})
def _(m, x, lengths):
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths + 1,
                                               batch_first=True,
                                               enforce_sorted=False)
    y, h = m[0](packed)
    return nn.utils.rnn.pad_packed_sequence(y, batch_first=True,
                                            total_length=10)[0], h


# A GRU language model without an initial state (PyTorch passes zeros, a
# constant) at batch 4, hidden 384: the compiled scan once carried its state
# in the constant's read-only buffer (a segmentation fault; docs/Codegen/
# CPU.md, loom-read-only-kernel-inputs).
@block("gru-lm-zero-state", [(4, 48)], [
    nn.Embedding(500, 128), nn.GRU(128, 384, batch_first=True),
    nn.Linear(384, 500)], ints={0: 499})
def _(m, ids):
    return m[2](m[1](m[0](ids))[0])


@block("encoder-padding-norm-first", [(12, 2, 32), (2,)], [
    nn.TransformerEncoder(nn.TransformerEncoderLayer(
        32, 4, 48, activation="gelu", norm_first=True), 2,
        enable_nested_tensor=False)], ints={1: 11})
def _(m, x, lengths):
    return m[0](x, src_key_padding_mask=lengths_mask(lengths, 12))


@block("tcn-gated-causal", [(2, 1, 300)], [
    nn.Conv1d(1, 32, 1), nn.ModuleList(nn.Conv1d(32, 32, 2, dilation=2 ** i)
                                       for i in range(4)),
    nn.ModuleList(nn.Conv1d(32, 32, 2, dilation=2 ** i) for i in range(4)),
    nn.ModuleList(nn.Conv1d(32, 32, 1) for _ in range(4)),
    nn.Conv1d(32, 40, 1)])
def _(m, x):
    # WaveNet's layers: F.pad on the left (folded into the convolutions),
    # tanh * sigmoid gates between them (elementwise kernels in their
    # layout), residual and skip sums.
    x, skip = m[0](x), 0
    for i, (f, g, r) in enumerate(zip(m[1], m[2], m[3])):
        p = F.pad(x, (2 ** i, 0))
        z = r(torch.tanh(f(p)) * torch.sigmoid(g(p)))
        x, skip = x + z, skip + z
    return m[4](F.relu(skip))


model("mobilenet-v2", ex.vision("mobilenet_v2", (1, 3, 224, 224)))
model("mnasnet0.5", ex.vision("mnasnet0_5", (1, 3, 224, 224)))
model("squeezenet1.1", ex.vision("squeezenet1_1", (1, 3, 224, 224)))
model("regnet-x-400mf", ex.vision("regnet_x_400mf", (1, 3, 224, 224)))
model("efficientnet-v2-s", ex.vision("efficientnet_v2_s", (1, 3, 192, 192)))
model("resnext50-32x4d", ex.vision("resnext50_32x4d", (1, 3, 160, 160)))
model("vit-b32-b2", ex.vision("vit_b_32", (2, 3, 224, 224)))
model("inception-v3", ex.vision("inception_v3", (1, 3, 299, 299),
                                init_weights=True, aux_logits=False))
model("googlenet-b2", ex.vision("googlenet", (2, 3, 160, 160),
                                init_weights=True, aux_logits=False))
model("mobilenet-v3l-b4", ex.vision("mobilenet_v3_large", (4, 3, 192, 192)))
model("fcn-r50", ex.vision("fcn_resnet50", (1, 3, 224, 224),
                           segmentation=True, num_classes=21, aux_loss=False))
# Dilated ASPP (output stride 8): 3x3 convolutions of dilation 12, 24, 36 on
# 28x28 maps (docs/Superopt/PET.md, "Candidates measured and not built").
model("deeplabv3-r50", ex.vision("deeplabv3_resnet50", (1, 3, 224, 224),
                                 segmentation=True, num_classes=21,
                                 aux_loss=False))
model("r2plus1d-18", torchvision_video("r2plus1d_18", (1, 3, 8, 112, 112)))
model("mc3-18", torchvision_video("mc3_18", (1, 3, 8, 112, 112)))
model("s3d", torchvision_video("s3d", (1, 3, 16, 224, 224)))
model("mvit-v1-b", torchvision_video("mvit_v1_b", (1, 3, 16, 224, 224)))
model("raft-small", flow("raft_small", 4))
model("alexnet", ex.vision("alexnet", (1, 3, 224, 224)))
model("vgg11-bn", ex.vision("vgg11_bn", (1, 3, 224, 224)))
model("wide-resnet50-2", ex.vision("wide_resnet50_2", (1, 3, 160, 160)))
model("resnet152-b2", ex.vision("resnet152", (2, 3, 128, 128)))
model("regnet-y-800mf", ex.vision("regnet_y_800mf", (1, 3, 224, 224)))
model("efficientnet-b3", ex.vision("efficientnet_b3", (1, 3, 300, 300)))
model("convnext-small", ex.vision("convnext_small", (1, 3, 160, 160)))
model("vit-b16-b4", ex.vision("vit_b_16", (4, 3, 224, 224)))
model("swin-s", ex.vision("swin_s", (1, 3, 224, 224)))
model("deeplabv3-r50-257", ex.vision("deeplabv3_resnet50", (1, 3, 257, 257),
                                     segmentation=True, num_classes=21,
                                     aux_loss=False))
model("lraspp-mnv3-odd", ex.vision("lraspp_mobilenet_v3_large",
                                   (2, 3, 241, 179), segmentation=True,
                                   num_classes=5))
model("r3d-18", torchvision_video("r3d_18", (1, 3, 8, 112, 112)))
model("ssd300-vgg16", spread_scores(ex.detector("ssd300_vgg16", 300), 0.05))
# A box [6.5, 238, 320, 320] (clipped; its x1 is a centre minus half a
# width of ~630) moves with f32 rounding: against Loom's f64
# interpretation ONNX Runtime is 2.7e-3 off (relative to max(1, |x|)),
# Loom's interpreter 3.0e-3, compiled 1.9e-2 (1.8e-2 with
# LOOM_ONEDNN_CONV=direct, the other way); every other box of all three
# within 1.4e-3 (docs/ONNX/Import.md).
model("fasterrcnn-r50-v2", ex.detector("fasterrcnn_resnet50_fpn_v2", 320,
                                       min_size=320, max_size=320),
      tolerance=5e-2)
model("retinanet-r50-v2", ex.detector("retinanet_resnet50_fpn_v2", 320,
                                      min_size=320, max_size=320))
model("raft-large", flow("raft_large", 3))
# Architectures of torchvision 0.14 not in the lists above (seventeenth
# session): other attention forms (MaxViT's block/grid attention with
# relative position bias, Swin V2's cosine attention with a continuous
# position-bias MLP; PyTorch cannot export it), other widths and depths.
# (mvit_v2_s is not here: PyTorch 1.13's exporter ran out of 23 GB on it.)
model("maxvit-t", ex.vision("maxvit_t", (1, 3, 224, 224)))
model("swin-v2-t", ex.vision("swin_v2_t", (1, 3, 256, 256)))
model("densenet161-b2", ex.vision("densenet161", (2, 3, 128, 128)))
model("shufflenet-v2-x2", ex.vision("shufflenet_v2_x2_0", (1, 3, 224, 224)))
model("efficientnet-b1-b3", ex.vision("efficientnet_b1", (3, 3, 240, 240)))
model("regnet-y-1.6gf", ex.vision("regnet_y_1_6gf", (1, 3, 224, 224)))
model("mnasnet1.3", ex.vision("mnasnet1_3", (1, 3, 224, 224)))
model("squeezenet1.0-b2", ex.vision("squeezenet1_0", (2, 3, 227, 227)))
model("resnet34-256", ex.vision("resnet34", (1, 3, 256, 192)))
model("vgg16", ex.vision("vgg16", (1, 3, 224, 224)))
model("convnext-base-b2", ex.vision("convnext_base", (2, 3, 128, 128)))


def largest_errors(log):
    """The interpreter's and the compiled model's largest errors."""
    found = re.findall(r"compare: largest error ([0-9.e+-]+|nan|inf)", log)
    return [float(v) for v in found]


def check(name, path, ints, tolerance, args):
    env = dict(os.environ, COMPILED="1", TOLERANCE=str(tolerance),
               INT_HIGH=str(ints))
    start = time.time()
    try:
        run = subprocess.run(
            [os.path.join(ROOT, "scripts", "check-onnx-vs-ort.sh"), path],
            env=env, capture_output=True, text=True, timeout=args.timeout)
        log, code = run.stdout + run.stderr, run.returncode
    except subprocess.TimeoutExpired as e:
        log, code = f"timed out after {args.timeout} s", 124
    with open(os.path.join(args.out_dir, name + ".log"), "w") as f:
        f.write(log)
    errors = largest_errors(log)
    first = next((line for line in log.splitlines()
                  if "error:" in line and "largest" not in line), "")
    return {"name": name, "ok": code == 0 and len(errors) == 2,
            "interpreter_error": errors[0] if errors else None,
            "compiled_error": errors[1] if len(errors) > 1 else None,
            "seconds": round(time.time() - start, 1),
            "message": first.strip()[:160]}


def export(name, recipe, build, example, path):
    if os.path.exists(path):
        return None
    try:
        ex.export(name, recipe, build, example, path)
    except Exception as e:  # PyTorch's failure, not Loom's
        text = str(e).strip().splitlines()
        return f"{type(e).__name__}: {text[0][:140] if text else ''}"
    return None


def main():
    parser = argparse.ArgumentParser(
        description="Export PyTorch models and blocks beside the benchmark "
        "set and check Loom against ONNX Runtime on each")
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", default="",
                        help="comma-separated case names (default: the set)")
    parser.add_argument("--set", default="all",
                        choices=["blocks", "models", "all"])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--json", default="", help="write the rows as JSON")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--timeout", type=int, default=1200,
                        help="seconds per case's check")
    args = parser.parse_args()
    if args.list:
        for name, (kind, text, _, _, _, _) in CASES.items():
            print(f"{name} ({kind}): {text}")
        return 0
    if not args.out_dir:
        parser.error("OUT_DIR is required")
    names = [n for n in args.only.split(",") if n] or [
        n for n, c in CASES.items() if args.set in ("all", c[0])]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    os.makedirs(args.out_dir, exist_ok=True)
    rows = []
    print(f"{'case':30} {'interp err':>10} {'compiled':>10} {'s':>6}  result")
    for name in names:
        kind, text, build, example, ints, tolerance = CASES[name]
        path = os.path.join(args.out_dir, name + ".onnx")
        failure = export(name, text, build, example, path)
        if failure:
            row = {"name": name, "ok": None, "message": failure}
            print(f"{name:30} {'':>10} {'':>10} {'':>6}  PyTorch cannot "
                  f"export it: {failure}", flush=True)
        else:
            row = check(name, path, ints,
                        tolerance or args.tolerance, args)
            fmt = lambda v: "-" if v is None else f"{v:.2e}"
            print(f"{name:30} {fmt(row['interpreter_error']):>10} "
                  f"{fmt(row['compiled_error']):>10} {row['seconds']:>6}  "
                  f"{'ok' if row['ok'] else 'FAIL ' + row['message']}",
                  flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    failed = [r["name"] for r in rows if r["ok"] is False]
    print(f"{len(rows)} cases: {sum(r['ok'] is True for r in rows)} match, "
          f"{len(failed)} fail in Loom, "
          f"{sum(r['ok'] is None for r in rows)} not exported by PyTorch")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
