#!/usr/bin/env python3
"""Checks a loom-train --json summary: the loss fell and the accuracy is above
chance. Prints one line per check and exits 1 when one fails."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("json")
p.add_argument("--step-loss-ratio", type=float, required=True,
               help="mean loss of the last 5 steps < RATIO * mean of the first 5")
p.add_argument("--min-test-accuracy", type=float, required=True)
a = p.parse_args()
d = json.load(open(a.json))
epochs, steps = d["epochs"], d["step_loss"]
failed = False


def check(ok, what):
    global failed
    failed |= not ok
    print(("ok: " if ok else "FAILED: ") + what)


first5, last5 = sum(steps[:5]) / 5, sum(steps[-5:]) / 5
check(len(steps) >= 10 and last5 < a.step_loss_ratio * first5,
      f"{len(steps)} steps: mean loss of the first 5 {first5:.4f}, of the last 5 {last5:.4f} "
      f"(below {a.step_loss_ratio} times the first)")
check(epochs[-1]["loss"] < epochs[0]["loss"] or len(epochs) == 1,
      f"{len(epochs)} epochs: loss {epochs[0]['loss']:.4f} -> {epochs[-1]['loss']:.4f}")
acc = epochs[-1]["test_accuracy"]
check(acc >= a.min_test_accuracy,
      f"test accuracy {acc:.4f} on {d['test_images']} images (at least {a.min_test_accuracy})")
sys.exit(1 if failed else 0)
