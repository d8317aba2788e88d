#!/usr/bin/python3
# ===- scripts/check-detector-vulkan.py - A detector on lavapipe ---------===#
#
# Checks a torchvision detector compiled --target=vulkan against Loom's
# interpreter, detection by detection, with scores that are not ties.
#
# The benchmark's recipe (scripts/export-torch-models.py, detector())
# saturates RetinaNet's classification head (every score 1.0: which boxes
# survive the top-k and NMS is then decided by ties) and leaves Faster
# R-CNN's scores at 1/91 (nothing above its 0.05 threshold), so a check of
# those exports compares ties or nothing. This script builds the same
# detector with the recipe's builder, then rescales the last layers of its
# heads so the scores spread (RetinaNet: cls_logits and bbox_reg weights
# x0.02, biases zeroed; Faster R-CNN: cls_score x300), exports it to ONNX at
# SIZE x SIZE, and runs it four ways on one image (torch.rand, seed 1):
# PyTorch, Loom's interpreter (loom-run on the imported module), the CPU
# artifact and the Vulkan artifact on lavapipe (both with loom-run --check).
# It prints, for each run against the interpreter, the number of
# detections, how many of the interpreter's it matches (same label, box
# within the tolerance), how many of those sit at another rank (near-ties:
# the largest gap between the wanted scores of the two ranks), and the
# largest box and score errors; the CPU path's errors are the yardstick of
# what the order of summation alone gives.
#
#   check-detector-vulkan.py retinanet|fasterrcnn WORK_DIR [--size N]
#                            [--recipe-head]   (the recipe's heads, unscaled)
#
#   LOOM_BUILD_DIR        build directory (default: <repo>/build)
#   LOOM_DEVICE_TIMEOUT   passed on (default here 3000 s: lavapipe is slow)
#
# Exit status 1 when the CPU or Vulkan run's detections differ from the
# interpreter's: another number, one unmatched, a box or score error or a
# reordering between scores further apart than TOLERANCE (default 1e-4,
# relative to max(1, |want|): the interpreter check's own).
#
# ===----------------------------------------------------------------------===#

import argparse
import importlib.util
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(os.environ.get("LOOM_BUILD_DIR",
                                  os.path.join(ROOT, "build")), "bin")

# name -> the torchvision builder (the rescaling: rescale_head)
DETECTORS = {
    "retinanet": "retinanet_resnet50_fpn",
    "fasterrcnn": "fasterrcnn_mobilenet_v3_large_320_fpn",
}


def recipe_module():
    path = os.path.join(ROOT, "scripts", "export-torch-models.py")
    spec = importlib.util.spec_from_file_location("export_torch_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rescale_head(kind, model):
    """Spreads the scores: see the header."""
    with torch.no_grad():
        if kind == "retinanet":
            head = model.head
            for conv in (head.classification_head.cls_logits,
                         head.regression_head.bbox_reg):
                conv.weight.mul_(0.02)
                conv.bias.zero_()
        else:
            model.roi_heads.box_predictor.cls_score.weight.mul_(300.0)


def export(kind, size, work, spread):
    etm = recipe_module()
    _, build, example = etm.detector(DETECTORS[kind], size, min_size=size,
                                     max_size=size)
    torch.manual_seed(etm.SEED)
    detector = build()
    if spread:
        rescale_head(kind, detector.model)
    detector.eval()
    torch.manual_seed(1)
    x = example()
    with torch.no_grad():
        want = [t.numpy() for t in detector(x)]
    path = os.path.join(work, kind + ".onnx")
    torch.onnx.export(detector, (x,), path, opset_version=etm.OPSET,
                      input_names=["input"], output_names=list(OUTPUTS),
                      do_constant_folding=True)
    write_safetensors(os.path.join(work, "input.safetensors"),
                      {"input": x.numpy()})
    return path, want


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64,
          "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + lo:8 + n + hi],
                                  dtype=DTYPES[info["dtype"]]).reshape(
                                      info["shape"])
    return out


OUTPUTS = ("boxes", "scores", "labels")


def detections(tensors):
    """(boxes, scores, labels) from loom-run's outputs."""
    missing = [name for name in OUTPUTS if name not in tensors]
    if missing:
        sys.exit(f"check-detector-vulkan: no output {missing[0]} in "
                 f"{sorted(tensors)}")
    return [tensors[name] for name in OUTPUTS]


def run(args, env=None):
    start = time.time()
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    wall = time.time() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"check-detector-vulkan: {' '.join(args)} failed:\n"
                 f"{proc.stdout}{proc.stderr}")
    check = [l for l in proc.stdout.splitlines() if l.startswith("check:")]
    return wall, (check[0] if check else "")


def compare(label, got, want, tolerance):
    """Prints got's detections against want's; returns whether they agree:
    as many, each wanted one matched by a detection of its label whose box
    and score are within \p tolerance (relative to max(1, |want|)), at its
    rank or at one whose wanted score is within \p tolerance of its own
    (an order among near-ties that the last bits of the scores decide)."""
    gb, gs, gl = got
    wb, ws, wl = want
    scale = lambda w: np.maximum(1.0, np.abs(w))
    used, box, score, gap, moved = set(), 0.0, 0.0, 0.0, 0
    for i in range(len(ws)):
        free = [j for j in np.nonzero(gl == wl[i])[0] if j not in used]
        if not free:
            continue
        errors = [float(np.max(np.abs(gb[j] - wb[i]) / scale(wb[i])))
                  for j in free]
        j = free[int(np.argmin(errors))]
        if min(errors) > tolerance:
            continue
        used.add(j)
        box = max(box, min(errors))
        score = max(score, float(abs(gs[j] - ws[i]) / scale(ws[i])))
        if j != i:
            moved += 1
            gap = max(gap, float(abs(ws[min(j, len(ws) - 1)] - ws[i])))
    ok = (len(gs) == len(ws) and len(used) == len(ws) and
          max(box, score, gap) <= tolerance)
    print(f"  {label:<22} {len(gs):>4} detections ({len(ws)} wanted), "
          f"{len(used)} matched (label, box), {moved} at another rank "
          f"(wanted scores {gap:.2g} apart), box error {box:.3g}, score "
          f"error {score:.3g}{'' if ok else '  MISMATCH'}")
    return ok


def main():
    parser = argparse.ArgumentParser(
        description="A detector on lavapipe against the interpreter")
    parser.add_argument("kind", choices=sorted(DETECTORS))
    parser.add_argument("work")
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--recipe-head", action="store_true",
                        help="keep the benchmark recipe's heads (no "
                             "rescaling: saturated or tied scores)")
    args = parser.parse_args()
    tolerance = float(os.environ.get("TOLERANCE", "1e-4"))
    os.makedirs(args.work, exist_ok=True)
    w = lambda name: os.path.join(args.work, name)
    onnx_path, torch_out = export(args.kind, args.size, args.work,
                                not args.recipe_head)
    inputs = ["--inputs", w("input.safetensors")]
    run([os.path.join(BIN, "loom-translate"), "--import-onnx", onnx_path,
         "-o", w("model.mlir")])
    wall, _ = run([os.path.join(BIN, "loom-run"), w("model.mlir"), *inputs,
                   "--outputs", w("interpreter.safetensors")])
    print(f"interpreter: {wall:.1f} s")
    env = dict(os.environ)
    env.setdefault("LOOM_DEVICE_TIMEOUT", "3000")
    for target, device in (("cpu", "cpu"), ("vulkan", "vulkan")):
        so = w(f"{args.kind}-{target}.so")
        wall, _ = run([os.path.join(BIN, "loom-compile"), onnx_path,
                       f"--target={target}", "-o", so])
        print(f"compile --target={target}: {wall:.1f} s")
        wall, check = run([os.path.join(BIN, "loom-run"), so,
                           f"--device={device}", "--check", "--repeat=1",
                           *inputs, "--outputs",
                           w(f"{target}.safetensors")], env)
        print(f"run on {device}: {wall:.1f} s; {check}")
    want = detections(read_safetensors(w("interpreter.safetensors")))
    print(f"against the interpreter ({len(want[1])} detections, scores "
          f"{want[1].min() if len(want[1]) else 0:.4f} to "
          f"{want[1].max() if len(want[1]) else 0:.4f}, "
          f"{len(set(want[1].tolist()))} distinct):")
    ok = True
    for target in ("cpu", "vulkan"):
        got = detections(read_safetensors(w(f"{target}.safetensors")))
        ok &= compare(f"{target} artifact", got, want, tolerance)
    compare("PyTorch (not gating)", torch_out, want, tolerance)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
