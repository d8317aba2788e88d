#!/usr/bin/python3
# ===- scripts/gpu-sweep.py - The PyTorch sweep through the GPU targets ---===#
#
# scripts/sweep-torch-exports.py's cases (its 28 torch.nn blocks as they
# are, its 16 torchvision architectures at the small sizes below; Mask and
# Keypoint R-CNN with --set detectors) through both GPU targets: each is
# compiled for cuda:sm_90a (ptxas accepts every kernel; none may spill:
# scripts/ptxas-report.py --no-spills) and for vulkan (spirv-val accepts
# the module), and the Vulkan artifact runs on the Vulkan device (lavapipe
# where there is no GPU) with `loom-run --check` against the interpreter
# (relative error at most 1e-4). Prints one Markdown row a case (the table
# of docs/Codegen/GPU.md); exits 1 when a case fails.
#
#   gpu-sweep.py OUT_DIR [--only NAME,...] [--set blocks|models|detectors|all]
#                [--full DIR] [--no-run] [--timeout S] [--list]
#
# --full DIR: compile (no run) sweep-torch-exports.py's own exports in DIR
# (NAME.onnx, the sweep's sizes) instead, for the kernel and ptxas columns.
# Exports with /usr/bin/python3 (Debian's torch and torchvision); weights
# and calibration are export-torch-models.py's.
#
# ===----------------------------------------------------------------------===#

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "sweep_torch_exports", os.path.join(ROOT, "scripts",
                                        "sweep-torch-exports.py"))
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)
ex = sweep.ex


def mvit_small(spatial, temporal):
    """torchvision's mvit_v1_b for a smaller video (it fixes 224 x 224 x 16
    in the call to _mvit that its builder makes)."""
    def build():
        from torchvision.models.video import mvit
        made = mvit._mvit

        def sized(**kwargs):
            kwargs["spatial_size"] = (spatial, spatial)
            kwargs["temporal_size"] = temporal
            return made(**kwargs)
        mvit._mvit = sized
        try:
            return mvit.mvit_v1_b(weights=None)
        finally:
            mvit._mvit = made
    shape = (1, 3, temporal, spatial, spatial)
    return (f"torchvision video mvit_v1_b {shape}", build,
            lambda: torch.randn(*shape))


class Parts(torch.nn.Module):
    """A two-stage detector's boxes, scores, labels and its masks or
    keypoints (docs/ONNX/Import.md, RoiAlign)."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key
        self.calibrate = False

    def forward(self, x):
        d = self.model(list(x))[0]
        return d["boxes"], d["scores"], d["labels"], d[self.key]


def two_stage(name, key, size):
    text, build, example = ex.detector(name, size, box_score_thresh=0.0,
                                       min_size=size, max_size=size)
    return (f"{text} {key}", lambda: Parts(build().model, key), example)


# The small variants: 64 x 64 images, videos of 8 x 32 x 32 (the smallest
# the video ResNets' strides keep), and where a model fixes its size, the
# smallest it takes (Inception-v3 75 x 75, S3D's pool 16 x 224 x 224,
# RAFT's four-level pyramid 128 x 128).
MODELS = {
    "mobilenet-v2-s64": ex.vision("mobilenet_v2", (1, 3, 64, 64)),
    "mnasnet0.5-s64": ex.vision("mnasnet0_5", (1, 3, 64, 64)),
    "squeezenet1.1-s64": ex.vision("squeezenet1_1", (1, 3, 64, 64)),
    "regnet-x-400mf-s64": ex.vision("regnet_x_400mf", (1, 3, 64, 64)),
    "efficientnet-v2-s-s64": ex.vision("efficientnet_v2_s", (1, 3, 64, 64)),
    "resnext50-32x4d-s64": ex.vision("resnext50_32x4d", (1, 3, 64, 64)),
    "vit-b32-b2-s64": ex.vision("vit_b_32", (2, 3, 64, 64), image_size=64),
    "inception-v3-s75": ex.vision("inception_v3", (1, 3, 75, 75),
                                  init_weights=True, aux_logits=False),
    "inception-v3-default-s75": ex.vision("inception_v3", (1, 3, 75, 75),
                                          init_weights=False,
                                          aux_logits=False),
    "googlenet-b2-s64": ex.vision("googlenet", (2, 3, 64, 64),
                                  init_weights=True, aux_logits=False),
    "mobilenet-v3l-b4-s64": ex.vision("mobilenet_v3_large", (4, 3, 64, 64)),
    "fcn-r50-s64": ex.vision("fcn_resnet50", (1, 3, 64, 64),
                             segmentation=True, num_classes=21,
                             aux_loss=False),
    "r2plus1d-18-s32": sweep.torchvision_video("r2plus1d_18",
                                               (1, 3, 8, 32, 32)),
    "mc3-18-s32": sweep.torchvision_video("mc3_18", (1, 3, 8, 32, 32)),
    "s3d": sweep.torchvision_video("s3d", (1, 3, 16, 224, 224)),
    "mvit-v1-b-s64": mvit_small(64, 8),
    "raft-small-s128": ("torchvision raft_small 2x1x3x128x128 4 updates",
                        sweep.Flow, lambda: (torch.rand(1, 3, 128, 128),
                                             torch.rand(1, 3, 128, 128))),
}
DETECTORS = {
    "keypointrcnn-s128": two_stage("keypointrcnn_resnet50_fpn", "keypoints",
                                   128),
    "maskrcnn-s128": two_stage("maskrcnn_resnet50_fpn", "masks", 128),
}


def cases(kind):
    blocks = {n: c[1:4] for n, c in sweep.CASES.items() if c[0] == "blocks"}
    sets = {"blocks": blocks, "models": MODELS, "detectors": DETECTORS}
    if kind == "all":
        return {**blocks, **MODELS}
    return sets[kind]


def run(cmd, log, timeout=None, env=None):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            f.write(f"timed out after {timeout} s\n")
            return 124


def ptxas(name, directory, log):
    """(kernels, max registers, spill bytes, max shared) of sm_90a, or
    None when ptxas rejects a kernel or one spills."""
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "ptxas-report.py"),
         "--summary", "--no-spills", f"{name}={directory}"],
        capture_output=True, text=True)
    with open(log, "a") as f:
        f.write(out.stdout + out.stderr)
    row = re.search(r"\| sm_90a \| (\d+) \| (\d+) \| (\d+) \| \d+ \| (\d+) \|",
                    out.stdout)
    return row.groups() if row and out.returncode == 0 else None


def check(name, onnx, work, args):
    """One table row for \\p onnx; 'ok' False when anything fails."""
    bin_dir = os.path.join(args.build, "bin")
    log = os.path.join(work, "log.txt")
    row = {"name": name, "ok": False, "ptxas": None, "seconds": None,
           "error": None, "load": None, "message": ""}
    compile_ = [os.path.join(bin_dir, "loom-compile"), onnx]
    if run(compile_ + ["--target=cuda:sm_90a",
                       f"--dump-kernels={work}/cuda",
                       "-o", f"{work}/cuda.so"], log):
        row["message"] = "cuda:sm_90a does not compile"
        return row
    row["ptxas"] = ptxas(name, f"{work}/cuda", log)
    if run(compile_ + ["--target=vulkan", f"--dump-kernels={work}/vulkan",
                       "-o", f"{work}/vulkan.so"], log):
        row["message"] = "vulkan does not compile"
        return row
    if run(["spirv-val", "--target-env", "vulkan1.3",
            f"{work}/vulkan/image.spv"], log):
        row["message"] = "spirv-val rejects the module"
        return row
    if row["ptxas"] is None:
        row["message"] = "ptxas rejects a kernel or one spills"
        return row
    if args.no_run:
        row["ok"] = True
        return row
    row["load"] = round(os.getloadavg()[0], 1)
    start = time.time()
    env = dict(os.environ, LOOM_DEVICE_TIMEOUT=str(args.timeout - 10))
    code = run([os.path.join(bin_dir, "loom-run"), f"{work}/vulkan.so",
                "--device=vulkan", "--check", "--repeat=1"], log,
               timeout=args.timeout, env=env)
    row["seconds"] = round(time.time() - start, 1)
    with open(log) as f:
        text = f.read()
    found = re.findall(r"check: largest error vs the interpreter (\S+)", text)
    row["error"] = found[-1] if found else None
    row["ok"] = code == 0 and bool(found)
    if not row["ok"]:
        errors = [l for l in text.splitlines() if "error" in l]
        row["message"] = errors[-1][:160] if errors else f"exit {code}"
    return row


def main():
    parser = argparse.ArgumentParser(
        description="The PyTorch sweep's cases through cuda:sm_90a (ptxas, "
        "no spills) and vulkan (lavapipe against the interpreter)")
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", default="")
    parser.add_argument("--set", default="all",
                        choices=["blocks", "models", "detectors", "all"])
    parser.add_argument("--full", default="",
                        help="compile the sweep's own exports in this "
                        "directory (implies --no-run)")
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("--timeout", type=int, default=1500,
                        help="seconds per lavapipe run")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    every = {**cases("all"), **DETECTORS}
    if args.list:
        for name, (text, _, _) in every.items():
            print(f"{name}: {text}")
        return 0
    if not args.out_dir:
        parser.error("OUT_DIR is required")
    names = [n for n in args.only.split(",") if n] or list(cases(args.set))
    if args.full:
        args.no_run = True
        names = [n for n in args.only.split(",") if n] or [
            n for n, c in sweep.CASES.items()
            if args.set in ("all", c[0])]
    unknown = [n for n in names if n not in every and n not in sweep.CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    os.makedirs(args.out_dir, exist_ok=True)
    print("| case | sm_90a kernels | max registers | spill bytes | "
          "max shared | lavapipe s | error | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    failed = []
    for name in names:
        work = os.path.join(args.out_dir, name)
        os.makedirs(work, exist_ok=True)
        if args.full:
            onnx = os.path.join(args.full, name + ".onnx")
        else:
            onnx = os.path.join(args.out_dir, name + ".onnx")
            if not os.path.exists(onnx):
                ex.export(name, *every[name], onnx)
        row = check(name, onnx, work, args)
        kernels, registers, spills, shared = row["ptxas"] or ("-",) * 4
        print(f"| {name} | {kernels} | {registers} | {spills} | {shared} | "
              f"{row['seconds'] or '-'} | {row['error'] or '-'} | "
              f"{row['load'] or '-'} |"
              + ("" if row["ok"] else f" FAIL: {row['message']}"),
              flush=True)
        if not row["ok"]:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
