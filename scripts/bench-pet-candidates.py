#!/usr/bin/python3
# ===- scripts/bench-pet-candidates.py - PET candidates, measured first ---===#
#
# Partially equivalent transformations that a PET rule would make, written
# by hand in PyTorch and measured through Loom before any is built
# (docs/Superopt/PET.md, "Candidates measured and not built"). Each case is
# an operator as the model writes it and the same operator transformed; both
# are checked equal in PyTorch (largest difference printed), exported to
# ONNX, compiled with `loom-compile --superopt=none` and run alternately
# with `loom-run --repeat R` (ROUNDS rounds), 2 threads by default.
#
#   bench-pet-candidates.py BUILD_DIR [--only CASE,...] [--repeat R]
#                           [--rounds N] [--threads T] [--out DIR] [--list]
#
# Cases (the shapes of torchvision's deeplabv3_resnet50 at a 224 input,
# output stride 8: its ASPP's 3x3 convolutions 2048->256 of dilation 12, 24
# and 36 on 28x28 maps, and the backbone's dilated 3x3 convolutions):
#
#   rows-dD    output rows grouped by the kernel rows that read real input;
#              each group a convolution with the kernel shrunk to those rows
#              and no vertical padding, joined by a concat (PET's kernel
#              shrunk on a box, the boxes its corrections)
#   cols-dD    the same along the columns
#   boxes-dD   both: one convolution per box of rows x columns
#   taps-dD    one 1x1 convolution per kernel tap on the input window where
#              the tap reads real input, padded to the output and summed
#   s2b-CcDd   space-to-batch: the d x d phases of the input in the batch,
#              the convolution undilated (winograd-eligible), and back
#
# Prints one row a case: the best and the median of each round's median,
# transformed / as written (> 1: the transformation is slower). Run by
# /usr/bin/python3 (Debian's python3-torch 1.13). Measure on an idle
# machine; on a shared one only the alternated ratios mean anything.
#
# ===----------------------------------------------------------------------===#

import argparse
import os
import re
import statistics
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

SIZE = 28  # the ASPP's map at a 224 input, output stride 8


def tap_groups(size, kernel, dilation, pad):
    """Output indices grouped by the interval of taps that read real input:
    [start, end, (first tap, last tap)] per run of equal intervals."""
    groups = []
    for o in range(size + 2 * pad - dilation * (kernel - 1)):
        valid = [j for j in range(kernel)
                 if 0 <= o - pad + j * dilation < size]
        interval = (valid[0], valid[-1])
        if groups and groups[-1][2] == interval:
            groups[-1][1] = o + 1
        else:
            groups.append([o, o + 1, interval])
    return groups


def window(a, b, taps, dilation, pad):
    """Input indices [lo, hi) that outputs [a, b) read with taps t0..t1."""
    return a - pad + taps[0] * dilation, b - 1 - pad + taps[1] * dilation + 1


class Conv(nn.Module):
    """The operator as written: a 3x3 convolution, padding = dilation."""

    def __init__(self, weight, dilation):
        super().__init__()
        self.w = nn.Parameter(weight)
        self.d = dilation

    def forward(self, x):
        return F.relu(F.conv2d(x, self.w, padding=self.d, dilation=self.d))


class Bands(Conv):
    """Bands of rows, of columns, or boxes of both, each a convolution with
    the kernel shrunk to its valid taps and no padding along the split."""

    def __init__(self, weight, dilation, rows, cols):
        super().__init__(weight, dilation)
        self.rows, self.cols = rows, cols

    def forward(self, x):
        d = self.d
        full = [[0, SIZE, (0, 2)]]
        rgroups = tap_groups(SIZE, 3, d, d) if self.rows else full
        cgroups = tap_groups(SIZE, 3, d, d) if self.cols else full
        out_rows = []
        for a, b, rt in rgroups:
            r0, r1 = window(a, b, rt, d, d) if self.rows else (0, SIZE)
            cols = []
            for c, e, ct in cgroups:
                c0, c1 = window(c, e, ct, d, d) if self.cols else (0, SIZE)
                w = self.w[:, :, rt[0]:rt[1] + 1, ct[0]:ct[1] + 1]
                pad = (0 if self.rows else d, 0 if self.cols else d)
                cols.append(F.conv2d(x[:, :, r0:r1, c0:c1], w, padding=pad,
                                     dilation=d))
            out_rows.append(torch.cat(cols, 3))
        return F.relu(torch.cat(out_rows, 2))


class Taps(Conv):
    """Sum over the taps of 1x1 convolutions on the windows they read."""

    def forward(self, x):
        d, y = self.d, None
        for i in range(3):
            for j in range(3):
                dh, dw = (i - 1) * d, (j - 1) * d
                r0, r1 = max(0, -dh), min(SIZE, SIZE - dh)
                c0, c1 = max(0, -dw), min(SIZE, SIZE - dw)
                if r0 >= r1 or c0 >= c1:
                    continue
                t = F.conv2d(x[:, :, r0 + dh:r1 + dh, c0 + dw:c1 + dw],
                             self.w[:, :, i:i + 1, j:j + 1])
                t = F.pad(t, (c0, SIZE - c1, r0, SIZE - r1))
                y = t if y is None else y + t
        return F.relu(y)


class SpaceToBatch(Conv):
    """The d x d phases in the batch, the convolution undilated."""

    def forward(self, x):
        d = self.d
        n, c, h, w = x.shape
        y = x.reshape(n * c, h // d, d, w // d, d).permute(2, 4, 0, 1, 3)
        y = y.reshape(d * d * n, c, h // d, w // d)
        y = F.relu(F.conv2d(y, self.w, padding=1))
        k = y.shape[1]
        y = y.reshape(d, d, n * k, h // d, w // d).permute(2, 3, 0, 4, 1)
        return y.reshape(n, k, h, w)


def cases():
    """name -> (input channels, output channels, dilation, transformed)."""
    out = {}
    for d in (12, 24):
        out[f"rows-d{d}"] = (2048, 256, d, lambda w, d: Bands(w, d, 1, 0))
        out[f"cols-d{d}"] = (2048, 256, d, lambda w, d: Bands(w, d, 0, 1))
        out[f"boxes-d{d}"] = (2048, 256, d, lambda w, d: Bands(w, d, 1, 1))
        out[f"taps-d{d}"] = (2048, 256, d, Taps)
    out["boxes-d36"] = (2048, 256, 36, lambda w, d: Bands(w, d, 1, 1))
    for c, d in ((256, 2), (512, 2), (512, 4)):
        out[f"s2b-c{c}d{d}"] = (c, c, d, SpaceToBatch)
    return out


def run_median(binary, artifact, repeat, threads):
    text = subprocess.run(
        [binary, artifact, "--repeat", str(repeat), "--num-threads",
         str(threads)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"median ([0-9.e+-]+) s", text)
    if not m:
        sys.exit(f"bench-pet-candidates: no time in loom-run's output:\n"
                 f"{text}")
    return float(m.group(1)) * 1e3


def measure(name, case, args):
    cin, cout, d, make = case
    torch.manual_seed(0)
    x = torch.randn(1, cin, SIZE, SIZE)
    weight = torch.randn(cout, cin, 3, 3) * 0.02
    models = {"written": Conv(weight, d).eval(),
              "pet": make(weight, d).eval()}
    with torch.no_grad():
        diff = (models["pet"](x) - models["written"](x)).abs().max().item()
    artifacts = {}
    for kind, model in models.items():
        stem = os.path.join(args.out, f"{name}-{kind}")
        torch.onnx.export(model, x, stem + ".onnx", opset_version=13,
                          input_names=["x"])
        subprocess.run([os.path.join(args.build, "bin", "loom-compile"),
                        stem + ".onnx", "--superopt=none", "-o",
                        stem + ".so"], check=True)
        artifacts[kind] = stem + ".so"
    run = os.path.join(args.build, "bin", "loom-run")
    times = {"written": [], "pet": []}
    for _ in range(args.rounds):
        for kind in ("written", "pet"):
            times[kind].append(run_median(run, artifacts[kind], args.repeat,
                                          args.threads))
    best = {k: min(v) for k, v in times.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"| {name} | {diff:.1e} | {best['written']:.2f} | "
          f"{best['pet']:.2f} | {med['written']:.2f} | {med['pet']:.2f} | "
          f"{med['pet'] / med['written']:.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(
        description="PET candidates measured through Loom before building")
    parser.add_argument("build", nargs="?")
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="/tmp/bench-pet-candidates")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    table = cases()
    if args.list:
        print("\n".join(table))
        return 0
    if not args.build:
        parser.error("BUILD_DIR is required")
    names = [n for n in args.only.split(",") if n] or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    os.makedirs(args.out, exist_ok=True)
    print("| case | max diff | best written ms | best PET ms | median "
          "written ms | median PET ms | PET / written |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        measure(name, table[name], args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
